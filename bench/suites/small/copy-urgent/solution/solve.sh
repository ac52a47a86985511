#!/usr/bin/env bash
set -eu
mkdir -p urgent && grep -l URGENT inbox/*.txt | xargs -I{} cp {} urgent/
