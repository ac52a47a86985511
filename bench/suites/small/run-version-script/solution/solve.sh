#!/usr/bin/env bash
set -eu
python3 version.py > version.txt
