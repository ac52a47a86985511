#!/usr/bin/env bash
set -u
python3 -c "import sys; t=open('todo.txt').read(); sys.exit(0 if t.rstrip('\n') == 'buy milk\ncall the bank\nfix the bike\nDONE' else repr(t))"
