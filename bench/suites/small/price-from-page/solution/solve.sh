#!/usr/bin/env bash
set -eu
printf '18.75\n' > price.txt
