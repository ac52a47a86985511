#!/usr/bin/env bash
set -eu
sort cities.txt > cities_sorted.txt
