#!/usr/bin/env bash
set -eu
sed -i 's/^timeout: 30$/timeout: 45/' service.yaml
