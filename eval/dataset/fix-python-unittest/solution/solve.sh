#!/bin/bash
sed -i 's/range(0, len(items) - size + 1, size)/range(0, len(items), size)/' chunks.py
