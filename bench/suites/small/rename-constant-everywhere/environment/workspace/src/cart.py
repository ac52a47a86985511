from config import MAX_ITEMS


def add(cart, item):
    if len(cart) >= MAX_ITEMS:
        raise ValueError(f'at most {MAX_ITEMS} items')
    cart.append(item)
