#!/usr/bin/env bash
set -eu
cat > count_words.py <<'EOF'
import sys
print(len(open(sys.argv[1]).read().split()))
EOF
