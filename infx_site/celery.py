"""The Celery application. Without REDIS_URL, tasks run eagerly in the web process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infx_site.settings")

app = Celery("infx_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
