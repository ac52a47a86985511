parts = (4, 12, 0)
print(f"shipyard {'.'.join(map(str, parts))} (build {9000 + 31})")
