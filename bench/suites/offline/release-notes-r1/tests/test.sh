#!/usr/bin/env bash
set -u
[ -f RELEASE.md ] || { echo "no RELEASE.md"; exit 1; }
# blank lines and trailing spaces do not matter
diff <(sed 's/[[:space:]]*$//' RELEASE.md | grep -v '^$') <(grep -v '^$' "$TESTS_DIR/expected.md")
