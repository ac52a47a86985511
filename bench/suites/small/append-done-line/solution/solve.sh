#!/usr/bin/env bash
set -eu
printf 'DONE\n' >> todo.txt
