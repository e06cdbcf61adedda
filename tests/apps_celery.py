"""The Celery application of the tests in test_apps.py: a broker and a result backend on the
server under test, at the URL in DAMSELFLY_APPS_REDIS_URL (redis://host:port). The worker
subprocess loads it with `celery -A apps_celery worker`; the tests send tasks by name."""

import os

from celery import Celery


def make_app(url):
    """A Celery app with its broker on database 0 and its results on database 1 of `url`."""
    app = Celery("apps_celery", broker=f"{url}/0", backend=f"{url}/1")
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        worker_hijack_root_logger=False,
        result_expires=600,
    )
    return app


app = make_app(os.environ.get("DAMSELFLY_APPS_REDIS_URL", "redis://127.0.0.1:6379"))


@app.task(name="apps_celery.add")
def add(x, y):
    return x + y


@app.task(name="apps_celery.fail")
def fail(message):
    raise ValueError(message)
