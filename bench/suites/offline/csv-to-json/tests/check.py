import json
import sys

EXPECTED = [
    {"email": "ana@example.com", "name": "Ana Lima", "age": 35, "vip": True},
    {"email": "bo@example.com", "name": "Bo Chen", "age": 28, "vip": True},
    {"email": "cy@example.com", "name": "Cyrille Moreau", "age": 42, "vip": True},
    {"email": "dee@example.com", "name": "Dee Okafor", "age": 22, "vip": False},
    {"email": "eli@example.com", "name": "Eli Novak", "age": 57, "vip": True},
    {"email": "fay@example.com", "name": "Fay Ito", "age": 30, "vip": False},
]
try:
    with open("customers.json") as f:
        got = json.load(f)
except (OSError, ValueError) as e:
    sys.exit(f"customers.json: {e}")
trimmed = [{k: item.get(k) for k in ("email", "name", "age", "vip")} for item in got] if isinstance(got, list) else got
if trimmed != EXPECTED:
    sys.exit(f"expected {json.dumps(EXPECTED)}\ngot      {json.dumps(trimmed)}")
print("ok")
