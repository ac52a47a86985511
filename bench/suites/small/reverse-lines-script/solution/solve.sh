#!/usr/bin/env bash
set -eu
cat > reverse.py <<'EOF'
import sys
for line in reversed(open(sys.argv[1]).read().splitlines()):
    print(line)
EOF
