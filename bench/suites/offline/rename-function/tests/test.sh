#!/usr/bin/env bash
set -u
if grep -rn --include='*.py' --include='*.md' -E '\bget_user\b' . ; then echo "get_user is still there"; exit 1; fi
grep -q 'fetch_user(user_id)' README.md || { echo "README.md does not name fetch_user"; exit 1; }
grep -q 'def get_users_named' app/store.py || { echo "get_users_named was renamed too"; exit 1; }
python3 -m unittest discover -q -s tests -t .
