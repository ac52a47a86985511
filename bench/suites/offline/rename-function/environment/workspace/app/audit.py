from app import store


def describe(user_id):
    user = store.get_user(user_id)
    return f"user {user_id}: {'present' if user else 'missing'}"
