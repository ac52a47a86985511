#!/usr/bin/env bash
set -eu
cut -d, -f2 users.csv | tail -n +2 > emails.txt
