#!/bin/bash
cat > errors.py <<'PY'
"""errors.py LOG: the number of ERROR entries of each component, the most first."""
import collections
import re
import sys

ENTRY = re.compile(r"^\S+ (\w+) \[([^\]]+)\] ")

counts = collections.Counter()
with open(sys.argv[1]) as f:
    for line in f:
        m = ENTRY.match(line)
        if m and m.group(1) == "ERROR":
            counts[m.group(2)] += 1
for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
    print(name, n)
PY
