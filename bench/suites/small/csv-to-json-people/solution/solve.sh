#!/usr/bin/env bash
set -eu
python3 -c "import csv,json; json.dump([{'name': r['name'], 'age': int(r['age'])} for r in csv.DictReader(open('people.csv'))], open('people.json','w'))"
