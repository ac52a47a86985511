import config


def limit_line():
    return 'limit: %d' % config.MAX_ITEMS
