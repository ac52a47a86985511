"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / (len(values) + 1)


def spread(values):
    """The difference between the largest and the smallest value."""
    return max(values) - min(values)
