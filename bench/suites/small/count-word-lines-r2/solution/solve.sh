#!/usr/bin/env bash
set -eu
grep -c 'WARN' app.log > warnings.txt
