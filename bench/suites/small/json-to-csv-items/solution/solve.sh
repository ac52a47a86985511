#!/usr/bin/env bash
set -eu
python3 -c "import json; print('name,price'); [print(f\"{i['name']},{i['price']}\") for i in json.load(open('items.json'))]" > items.csv
