"""Ingest a run of 1,000 cells end to end from the fake GitHub, against the parse floor.

The run has one artifact per cell (800 fixed-seq, 200 agentic) plus the `results_bmk`
aggregate, as a real sweep uploads them. The baseline is the time spent only unzipping and
parsing the same zips in this process; the product's time covers listing, downloading through
the fake GitHub on loopback, parsing and writing to the database. Target: within 2x.

    python -m bench.ingest          (DATABASE_URL defaults to a local PostgreSQL database)
"""

import io
import json
import logging
import multiprocessing
import random
import zipfile
from datetime import UTC, datetime, timedelta

from bench.common import best_of, django_setup, report_section_write

REPEATS = 3
TOKEN = "bench-token"  # noqa: S105 - the fake GitHub's token
FIXED_SEQ_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
AGENTIC_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 224, 256, 320, 384, 448,
                         512, 640, 768)  # fmt: skip


def zip_of(name: str, document) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, json.dumps(document))
    return buffer.getvalue()


def sweep_artifacts() -> dict[str, bytes]:
    """1,000 cells: 40 fixed-seq setups x 2 scenarios x 10 concurrencies, 10 agentic x 20."""
    from runs import demo

    rng = random.Random(1)
    artifacts, rows = {}, []
    fixed = [
        demo.DemoSeries(**{**vars(series), "precision": precision, "tp": tp})
        for series in demo.FIXED_SEQ_SERIES[:5]
        for precision in ("fp8", "bf16")
        for tp in (1, 2, 4, 8)
    ]
    for series in fixed:
        for scenario in demo.SCENARIOS:
            for conc in FIXED_SEQ_CONCURRENCIES:
                row = demo.fixed_seq_row(series, scenario=scenario, conc=conc, rng=rng)
                rf = demo.result_name(series, exp=f"{series.model_prefix}_{scenario}", conc=conc)
                artifacts[f"bmk_{rf}"] = zip_of(f"agg_{rf}.json", row)
                rows.append(row)
    agentic = [
        demo.DemoSeries(**{**vars(series), "tp": tp})
        for series in demo.AGENTIC_SERIES
        for tp in (1, 2, 4, 8, 16)
    ]
    for series in agentic:
        for conc in AGENTIC_CONCURRENCIES:
            row = demo.agentic_row(series, conc=conc, tput=1000 + conc, p90_e2el=5 + conc / 50,
                                   disagg=False)  # fmt: skip
            rf = demo.result_name(series, exp="dsv4_agentic", conc=conc)
            artifacts[f"bmk_agentic_{rf}"] = zip_of(f"{rf}.json", row)
            rows.append(row)
    artifacts["results_bmk"] = zip_of("agg_bmk.json", rows)
    return artifacts


def parse_floor(artifacts: dict[str, bytes]) -> int:
    from django.conf import settings

    from runs.parsing import classify_artifact, parse_artifact, read_artifact_bytes, wanted_members

    cells = 0
    for name, data in artifacts.items():
        kind, _ = classify_artifact(name)
        files = read_artifact_bytes(
            data,
            name=name,
            wanted=wanted_members(kind),
            max_unzipped_bytes=settings.MAX_UNZIPPED_BYTES,
            max_members=settings.MAX_ZIP_MEMBERS,
        )
        cells += len(parse_artifact(name, files).cells)
    return cells


def fake_github_serve(artifacts: dict[str, bytes], run_ids: list[int], pipe, stop) -> None:
    """In a child process: GitHub's own CPU time is not the product's, so keep it apart."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the fake's request log
    from werkzeug.serving import WSGIRequestHandler

    from tests.github.fakegithub import FakeGitHub, github_time

    # Keep connections alive between requests, as GitHub's servers do.
    WSGIRequestHandler.protocol_version = "HTTP/1.1"

    expires = github_time(datetime.now(UTC) + timedelta(days=30))
    with FakeGitHub(token=TOKEN, threaded=True) as fake:
        for run_id in run_ids:
            fake.add_run(run_id)
            for name, data in artifacts.items():
                fake.add_artifact(run_id, name, data, expires_at=expires)
        pipe.send((fake.base_url, fake.repo))
        stop.wait()


def main() -> None:
    django_setup()
    from django.conf import settings

    from runs.jobs import ingest_job_request
    from runs.models import Cell, IngestJobState, WorkflowRun

    artifacts = sweep_artifacts()
    parse_seconds = best_of(REPEATS, lambda: parse_floor(artifacts))

    run_ids = [90_000_000_000 + attempt for attempt in range(REPEATS)]
    WorkflowRun.objects.filter(run_id__in=run_ids).delete()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    server = multiprocessing.Process(
        target=fake_github_serve, args=(artifacts, run_ids, sender, stop), daemon=True
    )
    server.start()
    try:
        base_url, repository = receiver.recv()
        settings.GITHUB_API_URL, settings.GITHUB_TOKEN = base_url, TOKEN
        timings, phases = [], []
        for run_id in run_ids:

            def ingest(run_id=run_id):
                job, _ = ingest_job_request(repository=repository, run_id=run_id, requested_by="b")
                job.refresh_from_db()
                assert job.state == IngestJobState.SUCCEEDED, job.error
                phases.append(job.timings)

            timings.append(best_of(1, ingest))
            cells = Cell.objects.filter(run__run_id=run_id).count()
            assert cells == 1000, cells
    finally:
        stop.set()
        server.join(timeout=10)
        WorkflowRun.objects.filter(run_id__in=run_ids).delete()

    ingest_seconds = min(timings)
    phase = phases[timings.index(ingest_seconds)]
    ratio = ingest_seconds / parse_seconds
    store_ratio = phase["store_seconds"] / parse_seconds
    verdict = "meets" if ratio <= 2 else "misses"
    lines = [
        f"- artifacts: {len(artifacts)} (1,000 cells, 800 fixed-seq and 200 agentic; results_bmk)",
        f"- parse floor (unzip + parse in process, best of {REPEATS}): {parse_seconds:.3f} s",
        "- end-to-end ingest: list, download through the fake GitHub (own process, loopback),",
        f"  parse, write (best of {REPEATS}): {ingest_seconds:.3f} s",
        f"- ratio: **{ratio:.2f}x** the parse floor ({verdict} the 2x target)",
        f"- where the time goes (the job's own timings): listing {phase['list_seconds']:.3f} s, "
        f"downloading {phase['download_seconds']:.3f} s "
        f"({phase['download_seconds'] / len(artifacts) * 1000:.1f} ms an artifact: two HTTP "
        f"requests each, answered by the fake's werkzeug server), "
        f"reading + parsing + writing {phase['store_seconds']:.3f} s "
        f"(**{store_ratio:.2f}x** the parse floor)",
    ]
    print("\n".join(lines))
    report_section_write(name="Ingest (bench/ingest.py)", body="\n".join(lines))


if __name__ == "__main__":
    main()
