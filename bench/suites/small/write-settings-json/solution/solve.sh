#!/usr/bin/env bash
set -eu
printf '{"debug": true, "level": 3}\n' > settings.json
