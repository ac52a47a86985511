def area_sq(side):
    return side * side


def total_area(sides):
    return sum(area_sq(s) for s in sides)
