#!/usr/bin/env bash
set -eu
rm tmp/*.bak
