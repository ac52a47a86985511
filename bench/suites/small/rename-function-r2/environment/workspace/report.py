"""Helpers."""


def calc(items):
    return sum(items)


def describe(items):
    return "value: " + str(calc(items))


if __name__ == "__main__":
    print(calc([1, 2, 3]), describe([1, 2, 3]))
