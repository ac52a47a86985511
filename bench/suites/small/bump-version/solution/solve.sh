#!/usr/bin/env bash
set -eu
sed -i 's/1.2.0/1.3.0/' setup.cfg
