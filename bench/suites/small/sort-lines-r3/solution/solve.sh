#!/usr/bin/env bash
set -eu
sort words.txt > ordered.txt
