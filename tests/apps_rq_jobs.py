"""Job functions for the RQ tests in test_apps.py. The RQ worker imports this module by
name (the tests start it with this directory on PYTHONPATH)."""


def add(x, y):
    return x + y


def echo_bytes(data):
    return data[::-1]


def fail(message):
    raise ValueError(message)
