def calc(a, b):
    return a * b + 1
