#!/bin/bash
# The package is installed in pylib as a wheel installs (its metadata
# with it), it works on a file the agent never saw, and table.txt is its
# output.
ok=1
grep -qx 'Version: 1.2.0' pylib/minitable-1.2.0.dist-info/METADATA 2>/dev/null || ok=0
[ -f pylib/minitable/__init__.py ] && [ -f pylib/minitable/__main__.py ] || ok=0
[ "$(cd / && PYTHONPATH="$OLDPWD/pylib" python3 -c 'import minitable; print(minitable.__version__)' 2>/dev/null)" = "1.2.0" ] || ok=0
PYTHONPATH=pylib python3 -m minitable /tests/other.csv > /logs/verifier/other.txt 2>&1 || ok=0
cmp -s /logs/verifier/other.txt /tests/other.txt || ok=0
cmp -s table.txt /tests/table.txt || ok=0
echo $ok > /logs/verifier/reward.txt
