#!/usr/bin/env bash
set -eu
sed -i -E 's/\bteh\b/the/g' readme.txt
