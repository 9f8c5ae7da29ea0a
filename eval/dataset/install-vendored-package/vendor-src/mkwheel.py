"""Builds environment/vendor/minitable-1.2.0-py3-none-any.whl, byte for byte the same each time:
python3 vendor-src/mkwheel.py environment/vendor/minitable-1.2.0-py3-none-any.whl
"""
import base64, hashlib, sys, zipfile

INIT = '''"""minitable: CSV files as text tables."""

__version__ = "1.2.0"


def render(rows):
    """Returns rows (lists of strings, the first the header) as a table."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def fmt(r):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"

    out = [line, fmt(rows[0]), line.replace("-", "=")]
    out += [fmt(r) for r in rows[1:]]
    out += [line, "(%d rows; minitable %s)" % (len(rows) - 1, __version__)]
    return "\\n".join(out)
'''
MAIN = '''"""python -m minitable FILE.csv: prints the CSV file as a table."""
import csv
import sys

from minitable import render

with open(sys.argv[1], newline="") as f:
    print(render(list(csv.reader(f))))
'''
METADATA = """Metadata-Version: 2.1
Name: minitable
Version: 1.2.0
Summary: CSV files as text tables
Requires-Python: >=3.8
"""
WHEEL = """Wheel-Version: 1.0
Generator: mkwheel
Root-Is-Purelib: true
Tag: py3-none-any
"""
files = [
    ("minitable/__init__.py", INIT),
    ("minitable/__main__.py", MAIN),
    ("minitable-1.2.0.dist-info/METADATA", METADATA),
    ("minitable-1.2.0.dist-info/WHEEL", WHEEL),
]
record = ""
for name, text in files:
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record += "%s,sha256=%s,%d\n" % (name, digest, len(text.encode()))
record += "minitable-1.2.0.dist-info/RECORD,,\n"
files.append(("minitable-1.2.0.dist-info/RECORD", record))
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name, text in files:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, text)
