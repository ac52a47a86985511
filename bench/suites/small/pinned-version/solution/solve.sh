#!/usr/bin/env bash
set -eu
echo 2.31.0 > version.txt
