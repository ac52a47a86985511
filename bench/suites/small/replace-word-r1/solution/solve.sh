#!/usr/bin/env bash
set -eu
sed -i -E 's/\bcolour\b/color/g' notes.txt
