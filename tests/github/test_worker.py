"""A real Celery worker on Redis runs an ingest job, and survives having its process killed.

The worker is a separate process sharing the test database (PostgreSQL, or SQLite in a file)
and talking to the fake GitHub on loopback. Needs Redis: skipped without it on a developer's
machine, failing when CI=true.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from runs.models import Cell, IngestJob, IngestJobState
from tests.github.conftest import FAKE_TOKEN
from tests.github.test_ingest_jobs import RUN_ID, add_seed_artifacts

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
CELERY = str(Path(sys.executable).with_name("celery"))


def worker_database_url() -> str:
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    if connection.vendor == "postgresql":
        user = settings["USER"] or "postgres"
        password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
        host = settings["HOST"] or "127.0.0.1"
        return f"postgres://{user}{password}@{host}:{settings['PORT'] or 5432}/{settings['NAME']}"
    pytest.fail(f"no worker set-up for the {connection.vendor} backend")


@pytest.fixture
def worker_env(redis_service, fake_github):
    """Environment for celery processes: the test database, a private Redis db, the fake."""
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": redis_service,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "GITHUB_API_URL": fake_github.base_url,
        "GITHUB_TOKEN": FAKE_TOKEN,
        "GITHUB_REPOSITORY": fake_github.repo,
    }
    subprocess.run(["redis-cli", "-u", redis_service, "flushdb"], check=False, capture_output=True)
    return env


@pytest.fixture
def worker(worker_env, tmp_path):
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [CELERY, "-A", "infx_site", "worker", "--pool=prefork", "--concurrency=1",
             "--loglevel=INFO", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=worker_env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    print(log.read_text()[-4000:])  # shown by pytest when the test fails


def job_send(job: IngestJob, env: dict) -> None:
    subprocess.run(
        [CELERY, "-A", "infx_site", "call", "runs.tasks.ingest_job_run", f"--args=[{job.pk}]"],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def job_wait(job: IngestJob, *, until, timeout: float = 90) -> IngestJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if until(job):
            return job
        time.sleep(0.3)
    pytest.fail(f"job {job.pk} stuck in {job.state} ({job.artifacts_done}/{job.artifacts_total})")


def pool_children(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in children]


def new_job() -> IngestJob:
    return IngestJob.objects.create(
        repository="SemiAnalysisAI/InferenceX", github_run_id=RUN_ID, requested_by="test"
    )


def test_a_real_worker_ingests_a_run(fake_github, worker, worker_env):
    fake_github.add_run(RUN_ID)
    add_seed_artifacts(fake_github)
    job = new_job()
    job_send(job, worker_env)
    job = job_wait(job, until=lambda j: not j.is_active)
    assert job.state == IngestJobState.SUCCEEDED, job.error
    assert Cell.objects.count() == 5


def test_a_killed_worker_process_leaves_nothing_half_written(fake_github, worker, worker_env):
    fake_github.add_run(RUN_ID)
    add_seed_artifacts(fake_github)
    fake_github.blob_delay_seconds = 0.7
    job = new_job()
    job_send(job, worker_env)
    job_wait(job, until=lambda j: j.artifacts_done >= 2)
    (child,) = pool_children(worker.pid)
    os.kill(child, signal.SIGKILL)  # the process running the task dies midway
    assert Cell.objects.count() == 0
    fake_github.blob_delay_seconds = 0
    # The task is rejected back onto the queue and runs again to the end.
    job = job_wait(job, until=lambda j: not j.is_active)
    assert job.state == IngestJobState.SUCCEEDED, job.error
    assert job.attempts == 2
    assert Cell.objects.count() == 5
