from app.store import get_user


def user_name(user_id):
    user = get_user(user_id)
    return user["name"] if user else "unknown"
