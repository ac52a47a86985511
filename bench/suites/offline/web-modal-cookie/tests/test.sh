#!/usr/bin/env bash
set -u
[ -f code.txt ] || { echo "no code.txt"; exit 1; }
[ "$(tr -d ' \n\r\t' < code.txt)" = "K7Q-2291" ] || { echo "wrong code: $(cat code.txt)"; exit 1; }
