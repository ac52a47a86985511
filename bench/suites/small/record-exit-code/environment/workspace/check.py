import sys
print('checking inputs...')
print('2 problems found')
sys.exit(3)
