import json


def load(path="config.json"):
    with open(path) as f:
        raw = json.load(f)
    return {"host": raw["db_host"], "port": raw["db_port"], "log_level": raw.get("log_level", "warning")}
