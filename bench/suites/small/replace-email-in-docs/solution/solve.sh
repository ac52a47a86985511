#!/usr/bin/env bash
set -eu
sed -i 's/old@example.com/help@example.com/g' docs/*.md
