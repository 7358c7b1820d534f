"""The curves API over 1,000,000 cells, against the same selection as one raw SQL query.

Fills a PostgreSQL database (once; later runs reuse it) with 40 nightly official runs of
25,000 cells each across 8 models, 9 GPUs, several engines, precisions and topologies, three
scenarios and 8 concurrencies. Then times `GET /api/v1/curves/` for one model and scenario
(cache cleared before each request, so the selectors really run) against a raw SQL query that
selects the same points (each group's latest date) in this process, and weighs the
`/inference` page for that view. Targets: API within 1.5x of the raw query; page under 500 KB.

    python -m bench.curves     (DATABASE_URL defaults to a local PostgreSQL database)
"""

import io
import os
import random
from datetime import UTC, datetime, timedelta

from bench.common import best_of, django_setup, report_section_write

CELLS = 1_000_000
RUNS = 40
MODELS = ("dsr1", "dsv4", "gptoss", "glm5", "kimik2.5", "minimaxm2.5", "qwen3.5", "llama70b")
GPUS = ("h100", "h200", "b200", "b300", "gb200", "mi300x", "mi325x", "mi355x", "gb300")
FRAMEWORKS = ("sglang", "vllm", "trt")
PRECISIONS = ("fp4", "fp8")
TOPOLOGIES = ((8, 1, False), (4, 4, True), (8, 8, True), (2, 1, False))
SCENARIOS = (("1k1k", 1024, 1024), ("8k1k", 8192, 1024), ("1k8k", 1024, 8192))
CONCURRENCIES = (4, 8, 16, 32, 64, 128, 256, 512)
VIEW = {"model": "dsr1", "scenario": "1k1k"}
REPEATS = 5

RAW_SQL = """
WITH official AS (
    SELECT DISTINCT ON (r.run_id)
        COALESCE(r.source_run_id, r.id) AS measured_pk,
        r.run_id, r.run_attempt,
        (COALESCE(r.gh_created_at, r.created) AT TIME ZONE 'UTC')::date AS run_date
    FROM runs_workflowrun r
    WHERE r.is_official AND NOT r.hidden_from_official
    ORDER BY r.run_id, r.run_attempt DESC
), candidate AS (
    SELECT c.id, c.concurrency, c.tput_per_gpu, c.median_e2el, c.p90_e2el, c.median_intvty,
           c.median_ttft, cfg.hardware, cfg.framework, cfg.precision, cfg.spec_method,
           cfg.disagg, cfg.tp, cfg.ep, cfg.dp_attention, i.reference, o.run_id, o.run_date
    FROM runs_cell c
    JOIN official o ON o.measured_pk = c.run_id
    JOIN runs_config cfg ON cfg.id = c.config_id
    LEFT JOIN runs_image i ON i.id = c.image_id
    WHERE c.status = 'ok' AND cfg.model_prefix = %s AND c.scenario = %s
)
SELECT * FROM (
    SELECT candidate.*, MAX(run_date) OVER (
        PARTITION BY hardware, framework, precision, spec_method, disagg) AS latest_date
    FROM candidate
) dated WHERE run_date = latest_date
"""


def data_ensure() -> None:
    """Create the 1,000,000 cells with COPY unless they are there already."""
    from django.db import connection

    from runs.models import Cell, Config, Image, WorkflowRun, config_identity_hash
    from runs.parsing.records import ConfigIdentity

    if Cell.objects.count() == CELLS:
        return
    WorkflowRun.objects.all().delete()
    rng = random.Random(7)
    image = Image.objects.get_or_create(
        reference="lmsysorg/sglang:bench", defaults={"repository": "lmsysorg/sglang"}
    )[0]
    configs = []
    for model in MODELS:
        for gpu in GPUS:
            for framework in FRAMEWORKS:
                for precision in PRECISIONS:
                    for tp, ep, dpa in TOPOLOGIES:
                        identity = ConfigIdentity(
                            model_prefix=model, model="", hardware=gpu, runner_label=f"{gpu}_0",
                            framework=framework, precision=precision, tp=tp, ep=ep,
                            dp_attention=dpa,
                        )  # fmt: skip
                        configs.append(
                            Config(identity_hash=config_identity_hash(identity), **vars(identity))
                        )
    Config.objects.bulk_create(configs, ignore_conflicts=True)
    config_ids = list(Config.objects.values_list("pk", flat=True))
    start = datetime(2026, 8, 1, 2, tzinfo=UTC)
    runs = WorkflowRun.objects.bulk_create(
        WorkflowRun(
            repository="SemiAnalysisAI/InferenceX",
            run_id=80_000_000_000 + day,
            event="push",
            head_branch="main",
            is_official=True,
            conclusion="success",
            gh_created_at=start + timedelta(days=day),
        )  # fmt: skip
        for day in range(RUNS)
    )
    per_run = CELLS // RUNS
    combos = [
        (config_id, scenario, isl, osl, conc)
        for config_id in config_ids
        for scenario, isl, osl in SCENARIOS
        for conc in CONCURRENCIES
    ]
    now = datetime.now(UTC).isoformat()
    columns = (
        "run_id, config_id, image_id, result_name, scenario, isl, osl, concurrency, "
        "recipe_fingerprint, status, failure_reason, tput_per_gpu, output_tput_per_gpu, "
        "input_tput_per_gpu, median_e2el, p90_e2el, median_intvty, median_ttft, "
        "extra_metrics, invalid_metrics, created, modified"
    )
    with connection.cursor() as cursor:
        for run in runs:
            buffer = io.StringIO()
            for config_id, scenario, isl, osl, conc in rng.sample(combos, per_run):
                tput = 20000 * conc / (conc + 40) * rng.uniform(0.8, 1.2)
                e2el = 5 * (1 + conc / 60) * rng.uniform(0.9, 1.1)
                buffer.write(
                    f"{run.pk}\t{config_id}\t{image.pk}\t\t{scenario}\t{isl}\t{osl}\t{conc}\t\tok\t"
                    f"\t{tput}\t{tput / 9}\t{tput * 8 / 9}\t{e2el}\t{e2el * 1.3}\t"
                    f"{1000 / e2el}\t{e2el / 10}\t{{}}\t{{}}\t{now}\t{now}\n"
                )
            buffer.seek(0)
            with cursor.cursor.copy(f"COPY runs_cell ({columns}) FROM STDIN") as copy:
                copy.write(buffer.read())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def main() -> None:
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/infx_bench_curves")
    django_setup()
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client

    data_ensure()
    client = Client()
    query = "&".join(f"{name}={value}" for name, value in VIEW.items())

    def raw_sql() -> None:
        with connection.cursor() as cursor:
            cursor.execute(RAW_SQL, [VIEW["model"], VIEW["scenario"]])
            rows.append(len(cursor.fetchall()))

    def api() -> None:
        cache.clear()
        response = client.get(f"/api/v1/curves/?{query}")
        assert response.status_code == 200, response.content[:500]
        sizes["api"] = len(response.content)

    rows: list[int] = []
    sizes: dict[str, int] = {}
    raw_seconds = best_of(REPEATS, raw_sql)
    api_seconds = best_of(REPEATS, api)
    cache.clear()
    page = client.get(f"/inference?{query}")
    page_bytes = len(page.content) if page.status_code == 200 else None
    compressed = client.get(f"/inference?{query}", headers={"accept-encoding": "gzip"})
    sent_bytes = len(compressed.content)
    ratio = api_seconds / raw_seconds
    lines = [
        f"- data: {CELLS:,} cells in {RUNS} official runs; view model={VIEW['model']}, "
        f"scenario={VIEW['scenario']} ({rows[-1]:,} points)",
        f"- raw SQL selecting the same points (best of {REPEATS}): {raw_seconds * 1000:.1f} ms",
        f"- `GET /api/v1/curves/` with a cold cache (best of {REPEATS}): "
        f"{api_seconds * 1000:.1f} ms, {sizes['api'] / 1024:.0f} KB",
        f"- ratio: **{ratio:.2f}x** the raw query "
        f"({'meets' if ratio <= 1.5 else 'misses'} the 1.5x target)",
        (
            f"- `/inference` page for that view: {sent_bytes / 1024:.0f} KB sent gzipped "
            f"({'meets' if sent_bytes < 500 * 1024 else 'misses'} the 500 KB target), "
            f"{page_bytes / 1024:.0f} KB uncompressed (both charts' points as JSON and as "
            "server-rendered tables)"
            if page_bytes
            else f"- `/inference` page: HTTP {page.status_code} (not measured)"
        ),
    ]
    print("\n".join(lines))
    report_section_write(name="Curves (bench/curves.py)", body="\n".join(lines))


if __name__ == "__main__":
    main()
