"""Small builders over tests.factories for runs measured on a given day."""

from datetime import UTC, date, datetime

from tests.factories import CellFactory, WorkflowRunFactory


def run_on(day: date, **fields):
    """A workflow run (official by default) started at 02:00 UTC on that day unless told."""
    fields.setdefault("gh_created_at", datetime(day.year, day.month, day.day, 2, 0, tzinfo=UTC))
    return WorkflowRunFactory(**fields)


def measure(run, config, concurrencies, *, scenario="1k1k", image=None, tput_scale=1.0):
    """Rising ok cells: throughput and latency both grow with concurrency."""
    return [
        CellFactory(
            run=run,
            config=config,
            image=image,
            scenario=scenario,
            concurrency=concurrency,
            tput_per_gpu=100.0 * concurrency * tput_scale,
            median_e2el=1.0 + concurrency / 10,
            p90_e2el=1.5 + concurrency / 10,
        )
        for concurrency in concurrencies
    ]
