#!/bin/bash
# pip installs the wheel with no index; a Python without pip unpacks it,
# which for a pure-Python wheel is what pip does.
wheel=vendor/minitable-1.2.0-py3-none-any.whl
python3 -m pip install --no-index --no-cache-dir --disable-pip-version-check --target pylib "$wheel" \
  || python3 -m zipfile -e "$wheel" pylib
PYTHONPATH=pylib python3 -m minitable data.csv > table.txt
