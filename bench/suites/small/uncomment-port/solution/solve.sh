#!/usr/bin/env bash
set -eu
sed -i 's/^# port = 8080$/port = 8080/' server.conf
