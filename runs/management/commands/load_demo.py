"""Build realistic demo artifact zips and ingest them through the real ingestion code."""

from django.core.management.base import BaseCommand

from runs.demo import demo_load
from runs.models import WorkflowRun


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty", action="store_true", help="do nothing when any run is stored already"
        )

    def handle(self, *args, **options):
        if options["if_empty"] and WorkflowRun.objects.exists():
            self.stdout.write("Runs are stored already; demo data not loaded.")
            return
        for report in demo_load():
            totals = ", ".join(f"{k}={v}" for k, v in sorted(report.totals.items()) if v)
            self.stdout.write(f"{report.run}: {totals}")
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))
