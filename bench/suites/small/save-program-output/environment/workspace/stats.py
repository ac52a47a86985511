import sys
nums = [float(x) for x in open(sys.argv[1]).read().split()]
print(f'count: {len(nums)}')
print(f'min: {min(nums):g}')
print(f'max: {max(nums):g}')
print(f'mean: {sum(nums) / len(nums):.2f}')
