for i in range(1, 40):
    if i % 3 == 0 or i % 5 == 0:
        print('tick', i)
