#!/usr/bin/env bash
set -u
expected=$(git log --format=%H -S'DEBUG = True' --reverse -- app/settings.py | head -1)
[ -n "$expected" ] || { echo "the history was changed"; exit 1; }
[ "$(git rev-list --count HEAD)" = 8 ] || { echo "the history was changed"; exit 1; }
[ -f answer.txt ] || { echo "no answer.txt"; exit 1; }
got=$(tr -d ' \n\r\t' < answer.txt)
[ "$got" = "$expected" ] || { echo "expected $expected, got $got"; exit 1; }
