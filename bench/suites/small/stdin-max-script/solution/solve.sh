#!/usr/bin/env bash
set -eu
cat > biggest.py <<'EOF'
import sys
print(max(int(l) for l in sys.stdin if l.strip()))
EOF
