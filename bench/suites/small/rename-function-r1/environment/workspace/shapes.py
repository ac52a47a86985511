"""Helpers."""


def area_sq(side):
    return side * side


def describe(side):
    return "value: " + str(area_sq(side))


if __name__ == "__main__":
    print(area_sq(3), describe(3))
