#!/usr/bin/env bash
set -eu
printf 'Hello from ga\n' > greeting.txt
