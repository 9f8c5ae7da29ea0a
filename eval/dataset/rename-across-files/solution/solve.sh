#!/bin/bash
sed -i 's/\bcalc\b/compute/g' ./*.py
