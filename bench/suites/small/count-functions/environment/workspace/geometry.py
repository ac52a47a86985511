import math


def area(r):
    return math.pi * r * r


def perimeter(r):
    return 2 * math.pi * r


class Shape:
    def describe(self):
        return 'shape'


def _helper():
    pass


def scale(x, k):
    return x * k
