"""Ingest a run from GitHub Actions and wait for it, printing progress."""

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runs.jobs import ingest_job_request
from runs.models import IngestJob, IngestJobState


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)
        parser.add_argument("--repo", default=None, help="OWNER/NAME (default GITHUB_REPOSITORY)")
        parser.add_argument("--attempt", type=int, default=None, help="default: the latest")
        parser.add_argument("--timeout", type=float, default=3600, help="seconds to wait")

    def handle(self, *args, **options):
        repository = options["repo"] or settings.GITHUB_REPOSITORY
        if repository.count("/") != 1:
            raise CommandError(f"--repo must be OWNER/NAME, got {repository!r}")
        if options["run_id"] <= 0 or (options["attempt"] is not None and options["attempt"] <= 0):
            raise CommandError("the run id and --attempt must be positive")
        job, created = ingest_job_request(
            repository=repository,
            run_id=options["run_id"],
            run_attempt=options["attempt"],
            requested_by="command ingest_run",
        )
        verb = "started" if created else "already running:"
        self.stdout.write(f"{verb} job {job.pk} for {repository} run {options['run_id']}")
        job = self.job_wait(job, timeout=options["timeout"])
        self.stdout.write(f"counts: {job.counts}")
        self.stdout.write(f"timings: {job.timings}")
        for skipped in job.skipped:
            self.stdout.write(f"  skipped {skipped['name']}: {skipped['reason']}")
        if job.state == IngestJobState.FAILED:
            raise CommandError(f"job {job.pk} failed: {job.error}")
        if job.state == IngestJobState.PARTIAL:
            raise CommandError(f"job {job.pk} finished with failed artifacts:\n{job.error}")
        self.stdout.write(self.style.SUCCESS(f"job {job.pk} {job.state}"))

    def job_wait(self, job: IngestJob, *, timeout: float) -> IngestJob:
        deadline = time.monotonic() + timeout
        last = None
        while True:
            job.refresh_from_db()
            progress = (job.state, job.artifacts_done, job.artifacts_total)
            if progress != last:
                self.stdout.write(
                    f"  {job.state}: {job.artifacts_done}/{job.artifacts_total} artifacts"
                )
                last = progress
            if not job.is_active:
                return job
            if time.monotonic() > deadline:
                raise CommandError(f"job {job.pk} still {job.state} after {timeout:.0f} s")
            time.sleep(1)
