#!/bin/bash
# Rect, as a word, becomes Rectangle in every Go file; gofmt realigns
# what the longer name shifted.
find . -name '*.go' -exec sed -i 's/\bRect\b/Rectangle/g' {} +
gofmt -w .
