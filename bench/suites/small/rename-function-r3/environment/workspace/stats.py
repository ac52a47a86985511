"""Helpers."""


def avg(xs):
    return sum(xs) / len(xs)


def describe(xs):
    return "value: " + str(avg(xs))


if __name__ == "__main__":
    print(avg([2, 4]), describe([2, 4]))
