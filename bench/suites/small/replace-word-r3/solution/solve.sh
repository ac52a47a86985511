#!/usr/bin/env bash
set -eu
sed -i -E 's/\brecieve\b/receive/g' letter.txt
