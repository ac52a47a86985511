"""An in-memory user store."""

USERS = {1: {"id": 1, "name": "Ada"}, 2: {"id": 2, "name": "Linus"}}


def get_user(user_id):
    """The user with this id, or None."""
    return USERS.get(user_id)


def get_users_named(name):
    return [u for u in USERS.values() if u["name"] == name]
