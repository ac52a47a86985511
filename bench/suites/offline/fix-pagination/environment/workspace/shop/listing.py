"""Pages of the catalogue for the web front end. Pages are numbered from 1."""

import math

from shop.catalogue import PRODUCTS


def page_count(per_page, products=PRODUCTS):
    return math.ceil(len(products) / per_page)


def page(number, per_page, products=PRODUCTS):
    """The products on page `number` (1-based); an empty list past the last page."""
    start = number * per_page - per_page - 1
    if start < 0:
        start = 0
    return products[start:start + per_page]
