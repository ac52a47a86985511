"""The products on sale, in display order."""

PRODUCTS = [
    {"sku": "A-100", "name": "Kettle", "price": 24.0},
    {"sku": "A-101", "name": "Toaster", "price": 31.5},
    {"sku": "A-102", "name": "Blender", "price": 45.0},
    {"sku": "A-103", "name": "Mixer", "price": 52.0},
    {"sku": "A-104", "name": "Grill", "price": 80.0},
    {"sku": "A-105", "name": "Scale", "price": 15.0},
    {"sku": "A-106", "name": "Timer", "price": 9.5},
]
