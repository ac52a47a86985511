#!/usr/bin/env bash
set -eu
printf '1234.56\n' > total.txt
