#!/usr/bin/env bash
set -eu
first=$(grep -m1 'pool exhausted' service.log)
request=$(echo "$first" | awk '{print $4}')
cause=$(echo "$first" | grep -o 'db\.pool\.max_connections')
printf 'request: %s\ncause: %s\n' "$request" "$cause" > answer.txt
