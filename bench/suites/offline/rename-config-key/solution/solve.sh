#!/usr/bin/env bash
set -eu
sed -i 's/db_host/database_host/g' config.json settings.py docs/configuration.md
