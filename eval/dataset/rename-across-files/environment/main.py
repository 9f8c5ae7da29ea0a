from mathlib import calc
from report import report

print(calc(3, 4), report([1, 2, 3]))
