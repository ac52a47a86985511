import unittest

from stats import mean, spread


class Hidden(unittest.TestCase):
    def test_mean_floats(self):
        self.assertAlmostEqual(mean([0.5, 1.5]), 1.0)

    def test_mean_negative(self):
        self.assertEqual(mean([-3, 3, 6]), 2)

    def test_empty(self):
        with self.assertRaises(ValueError):
            mean([])

    def test_spread(self):
        self.assertEqual(spread([7]), 0)


if __name__ == "__main__":
    unittest.main()
