#!/usr/bin/env bash
set -eu
mkdir -p logs && mv ./*.log logs/
