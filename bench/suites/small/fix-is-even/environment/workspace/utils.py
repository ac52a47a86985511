def is_even(n):
    return n % 2 == 1


def clamp(value, low, high):
    return max(low, min(high, value))
