#!/usr/bin/env bash
set -eu
awk '!seen[$0]++' visitors.txt > unique_visitors.txt
