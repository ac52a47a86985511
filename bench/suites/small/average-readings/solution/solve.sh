#!/usr/bin/env bash
set -eu
echo 6.6 > average.txt
