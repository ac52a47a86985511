import unittest

from shop.catalogue import PRODUCTS
from shop.listing import page, page_count


class ListingTest(unittest.TestCase):
    def test_first_page(self):
        self.assertEqual([p["sku"] for p in page(1, 3)], ["A-100", "A-101", "A-102"])

    def test_second_page(self):
        self.assertEqual([p["sku"] for p in page(2, 3)], ["A-103", "A-104", "A-105"])

    def test_every_product_once(self):
        seen = [p["sku"] for n in range(1, page_count(3) + 1) for p in page(n, 3)]
        self.assertEqual(seen, [p["sku"] for p in PRODUCTS])


if __name__ == "__main__":
    unittest.main()
