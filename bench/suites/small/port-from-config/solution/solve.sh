#!/usr/bin/env bash
set -eu
printf '8437\n' > port.txt
