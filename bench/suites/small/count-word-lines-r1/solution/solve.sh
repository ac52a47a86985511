#!/usr/bin/env bash
set -eu
grep -c 'ERROR' server.log > errors.txt
