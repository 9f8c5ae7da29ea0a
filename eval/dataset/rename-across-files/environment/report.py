from mathlib import calc


def report(xs):
    return [calc(x, 2) for x in xs]
