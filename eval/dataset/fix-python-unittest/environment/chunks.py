"""Splitting lists into pieces."""


def chunk(items, size):
    """Returns items in consecutive lists of size items (the last may be shorter)."""
    if size < 1:
        raise ValueError("size must be at least 1")
    out = []
    for start in range(0, len(items) - size + 1, size):
        out.append(items[start:start + size])
    return out
