#!/usr/bin/env bash
set -eu
sed -i 's/^- eggs$/- eggs\n- milk/' lists.md
