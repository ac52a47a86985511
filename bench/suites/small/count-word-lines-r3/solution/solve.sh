#!/usr/bin/env bash
set -eu
grep -c 'TIMEOUT' worker.log > timeouts.txt
