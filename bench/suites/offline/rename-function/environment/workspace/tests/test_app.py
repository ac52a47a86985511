import unittest

from app import api, audit, store


class AppTest(unittest.TestCase):
    def test_name(self):
        self.assertEqual(api.user_name(1), "Ada")
        self.assertEqual(api.user_name(9), "unknown")

    def test_audit(self):
        self.assertEqual(audit.describe(2), "user 2: present")

    def test_store(self):
        self.assertEqual(store.fetch_user(2)["name"], "Linus")
        self.assertEqual(store.get_users_named("Ada"), [store.USERS[1]])


if __name__ == "__main__":
    unittest.main()
