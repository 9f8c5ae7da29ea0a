#!/bin/bash
cat > total.py <<'PY'
import csv
import sys

with open(sys.argv[1], newline="") as f:
    rows = csv.DictReader(f)
    print(f"{sum(float(r['amount']) for r in rows):.2f}")
PY
