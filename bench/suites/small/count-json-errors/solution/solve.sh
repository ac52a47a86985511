#!/usr/bin/env bash
set -eu
python3 -c "import json; print(sum(e['level']=='error' for e in json.load(open('events.json'))))" > error_count.txt
