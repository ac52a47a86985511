#!/usr/bin/env bash
set -eu
sed -i 's/Untitled/My Shop/' index.html
