#!/usr/bin/env bash
set -eu
for f in photos/*.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done
