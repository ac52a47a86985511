from slicer import first_n, last

assert first_n([1, 2, 3, 4], 2) == [1, 2]
assert last([1, 2, 3]) == 3
print("ok")
