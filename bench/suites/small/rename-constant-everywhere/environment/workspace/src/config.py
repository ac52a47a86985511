MAX_ITEMS = 50
NAME = 'shop'
