import settings

print(settings.load()["host"])
