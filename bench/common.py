"""Shared set-up for benchmarks: Django on a dedicated PostgreSQL database, and the report file.

Benchmarks print their figures and a ratio against a baseline measured in the same run, and
replace their own section of docs/performance.md.
"""

import os
import platform
import re
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "performance.md"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/infx_bench"


def django_setup() -> None:
    """Point Django at the bench database (created when missing), migrate, run tasks eagerly."""
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true"
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # request logs would be timed too
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infx_site.settings")
    url = os.environ["DATABASE_URL"]
    if url.startswith("postgres"):
        _postgres_database_ensure(url)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _postgres_database_ensure(url: str) -> None:
    import psycopg

    server, _, name = url.rpartition("/")
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


@contextmanager
def stopwatch(timings: dict, name: str):
    start = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - start


def best_of(runs: int, func) -> float:
    """The fastest of several runs: the least disturbed by the rest of the machine."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def report_section_write(*, name: str, body: str) -> None:
    """Replace the `## <name>` section of docs/performance.md (or append it)."""
    from django.db import connection

    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{os.cpu_count()} cores, Python {platform.python_version()}, {connection.vendor}"
    section = f"## {name}\n\nMeasured {stamp} ({machine}).\n\n{body.strip()}\n"
    text = REPORT.read_text() if REPORT.exists() else _REPORT_HEADER
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = (
        pattern.sub(section + "\n", text)
        if pattern.search(text)
        else text.rstrip() + "\n\n" + section
    )
    REPORT.write_text(text.rstrip() + "\n")


_REPORT_HEADER = """# Performance

Figures written by the benchmarks under `bench/` (`make bench`, or `python -m bench.<name>`).
Each compares the product against a baseline measured in the same run on the same machine.
"""
