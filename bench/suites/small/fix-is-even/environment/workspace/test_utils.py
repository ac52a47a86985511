from utils import clamp, is_even

assert is_even(4) and not is_even(5)
assert clamp(12, 0, 10) == 10
print("ok")
