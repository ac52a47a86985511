#!/usr/bin/env bash
set -eu
echo extraordinary > longest.txt
