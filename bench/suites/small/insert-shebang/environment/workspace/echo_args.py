import sys


def main():
    print(' '.join(sys.argv[1:]))


main()
