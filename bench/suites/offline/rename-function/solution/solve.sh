#!/usr/bin/env bash
set -eu
grep -rl --include='*.py' --include='*.md' -E '\bget_user\b' . | xargs sed -i -E 's/\bget_user\b/fetch_user/g'
