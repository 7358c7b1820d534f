"""Ingest artifacts from disk: zips named `<artifact>.zip` or folders named `<artifact>`."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from runs.services import (
    IngestReport,
    RunMetadata,
    artifact_inputs_from_paths,
    run_ingest_artifacts,
    run_reuse_link,
    run_upsert,
)


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="artifact zips or folders")
        parser.add_argument("--run-id", type=int, required=True)
        parser.add_argument("--attempt", type=int, default=1)
        parser.add_argument("--repo", default="SemiAnalysisAI/InferenceX", help="OWNER/NAME")
        parser.add_argument("--branch", default="")
        parser.add_argument("--sha", default="")
        parser.add_argument("--event", default="")
        parser.add_argument("--workflow-path", default="")
        parser.add_argument(
            "--reused-run", type=int, default=None, help="run id whose measurements a merge reused"
        )
        parser.add_argument("--reused-attempt", type=int, default=None)

    def handle(self, *args, **options):
        missing = [str(path) for path in options["paths"] if not path.exists()]
        if missing:
            raise CommandError(f"no such file or folder: {', '.join(missing)}")
        if options["run_id"] <= 0 or options["attempt"] <= 0:
            raise CommandError("--run-id and --attempt must be positive")
        if options["repo"].count("/") != 1:
            raise CommandError(f"--repo must be OWNER/NAME, got {options['repo']!r}")
        run = run_upsert(
            meta=RunMetadata(
                repository=options["repo"],
                run_id=options["run_id"],
                run_attempt=options["attempt"],
                head_branch=options["branch"],
                head_sha=options["sha"],
                event=options["event"],
                workflow_path=options["workflow_path"],
            )
        )
        if options["reused_run"]:
            run_reuse_link(
                run=run,
                reused_run_id=options["reused_run"],
                reused_attempt=options["reused_attempt"],
            )
        report = run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths(options["paths"]))
        self.report_print(report)

    def report_print(self, report: IngestReport) -> None:
        self.stdout.write(f"{report.run}:")
        for outcome in report.artifacts:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(outcome.counts.items()) if v)
            detail = "; ".join(part for part in (counts, outcome.message) if part)
            line = f"  {outcome.state:<8} {outcome.name}" + (f" ({detail})" if detail else "")
            style = self.style.ERROR if outcome.state == "failed" else self.style.SUCCESS
            self.stdout.write(style(line))
        totals = ", ".join(f"{k}={v}" for k, v in sorted(report.totals.items()) if v)
        self.stdout.write(f"total: {totals or 'nothing'}")
