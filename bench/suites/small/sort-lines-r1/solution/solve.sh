#!/usr/bin/env bash
set -eu
sort names.txt > sorted_names.txt
