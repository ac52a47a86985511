def calc(values):
    return sum(values)


def summary(values):
    return f"total: {calc(values)}"
