def first_n(items, n):
    return items[:n - 1]


def last(items):
    return items[-1]
