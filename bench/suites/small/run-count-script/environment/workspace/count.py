words = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]
total = sum(len(w) * (i + 1) for i, w in enumerate(words))
print(total * 11 + 1)
