#!/usr/bin/env bash
set -eu
git log --format=%H -S'DEBUG = True' --reverse -- app/settings.py | head -1 > answer.txt
