import unittest

from shop.listing import page, page_count

ITEMS = [{"sku": str(i)} for i in range(10)]


class Hidden(unittest.TestCase):
    def test_sizes(self):
        for per_page in (1, 2, 3, 4, 10, 11):
            pages = [page(n, per_page, ITEMS) for n in range(1, page_count(per_page, ITEMS) + 1)]
            self.assertEqual([i for p in pages for i in p], ITEMS, per_page)

    def test_past_the_end(self):
        self.assertEqual(page(5, 3, ITEMS), [])

    def test_last_partial(self):
        self.assertEqual(page(4, 3, ITEMS), [{"sku": "9"}])


if __name__ == "__main__":
    unittest.main()
