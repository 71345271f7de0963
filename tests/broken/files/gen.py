def make_test(config=None):
    return []
