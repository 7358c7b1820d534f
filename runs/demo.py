"""Demo data: realistic artifact zips, built here and ingested through the real ingestion code.

Several official nightly runs over a few dates (several models, GPUs, engines and precisions,
fixed-seq and agentic, evals) and one unofficial PR run shaped like the seed pull-request
thread: dsv4 fp4 atom-disagg on mi355x, agentic-coding at concurrencies 1/16/64/128/256.
Everything is deterministic, so loading twice changes nothing.
"""

import json
import random
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from runs.services import (
    IngestReport,
    RunMetadata,
    artifact_inputs_from_paths,
    run_ingest_artifacts,
    run_upsert,
)

REPOSITORY = "SemiAnalysisAI/InferenceX"
SWEEP_WORKFLOW = ".github/workflows/run-sweep.yml"
SCENARIOS = {"1k1k": (1024, 1024), "8k1k": (8192, 1024)}
SEED_PR_RUN_ID = 35855544139
SEED_PR_SHA = "1ed4ab45c0de5f1e4b7a2d9c3e8f6a0b1c2d3e4f"
SEED_PR_IMAGE = "rocm/atom-dev:nightly_202609221542"


@dataclass(frozen=True)
class DemoSeries:
    """One served setup swept over concurrencies; `peak` and `base_latency` shape its curve."""

    model_prefix: str
    model: str
    hardware: str
    runner: str
    framework: str
    precision: str
    image: str
    tp: int
    ep: int
    dp_attention: bool
    peak: float  # tput_per_gpu the curve approaches at high concurrency (1k1k)
    base_latency: float  # median e2el at concurrency 1 (1k1k), seconds
    spec: str = "none"


FIXED_SEQ_SERIES = (
    DemoSeries("dsr1", "deepseek-ai/DeepSeek-R1-0528", "b200", "b200-nv_0", "sglang", "fp8",
               "lmsysorg/sglang:v0.5.12-cu129-amd64", 8, 8, False, 5200, 9.5),
    DemoSeries("dsr1", "nvidia/DeepSeek-R1-0528-FP4-V2", "b200", "b200-nv_1", "trt", "fp4",
               "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc0.post1", 4, 4, True, 9800, 7.8),
    DemoSeries("dsr1", "deepseek-ai/DeepSeek-R1-0528", "mi355x", "mi355x-amds_0", "sglang",
               "fp8", "lmsysorg/sglang:v0.5.12-rocm700-mi35x", 8, 1, False, 4700, 10.4),
    DemoSeries("dsr1", "amd/DeepSeek-R1-0528-MXFP4", "mi355x", "mi355x-amds_1", "atom", "fp4",
               "rocm/atom-dev:nightly_202609201200", 8, 1, False, 8100, 8.6),
    DemoSeries("gptoss", "openai/gpt-oss-120b", "h200", "h200-cw_00", "vllm", "fp4",
               "vllm/vllm-openai:v0.11.0", 1, 1, False, 11000, 4.1),
    DemoSeries("gptoss", "openai/gpt-oss-120b", "b200", "b200-nb_0", "vllm", "fp4",
               "vllm/vllm-openai:v0.11.0", 1, 1, False, 17500, 3.2),
    DemoSeries("gptoss", "openai/gpt-oss-120b", "mi355x", "mi355x-amds_2", "vllm", "fp4",
               "rocm/vllm-dev:nightly_202609201200", 1, 1, False, 14800, 3.6),
)  # fmt: skip
AGENTIC_SERIES = (
    DemoSeries("dsv4", "deepseek-ai/DeepSeek-V4-Pro", "b200", "b200-nv_0", "vllm", "fp4",
               "vllm/vllm-openai:v0.12.0", 8, 8, True, 42000, 6.0, spec="mtp"),
    DemoSeries("dsv4", "deepseek-ai/DeepSeek-V4-Pro", "mi355x", "cluster:mi355x-amds",
               "sglang-disagg", "fp4", "lmsysorg/sglang:v0.5.12-rocm700-mi35x", 8, 8, True,
               36000, 6.8, spec="mtp"),
)  # fmt: skip
FIXED_SEQ_CONCURRENCIES = (4, 8, 16, 32, 64, 128, 256)
AGENTIC_CONCURRENCIES = (1, 16, 64, 128, 256)
OFFICIAL_DATES = (datetime(2026, 9, 20, 2, 0, tzinfo=UTC), datetime(2026, 9, 21, 2, 0, tzinfo=UTC),
                  datetime(2026, 9, 22, 2, 0, tzinfo=UTC))  # fmt: skip


def result_name(series: DemoSeries, *, exp: str, conc: int, disagg: bool = False) -> str:
    dpa = str(series.dp_attention).lower()
    return (
        f"{exp}_{series.precision}_{series.framework}_tp{series.tp}-pp1-dcp1-pcp1-ep{series.ep}"
        f"-dpa{dpa}_disagg-{str(disagg).lower()}_spec-{series.spec}_conc{conc}_{series.runner}"
    )


def _curve(series: DemoSeries, conc: int, *, slowdown: float, rng: random.Random) -> tuple:
    """Throughput saturates with concurrency while latency grows: a Pareto-shaped curve."""
    noise = 1 + rng.uniform(-0.03, 0.03)
    tput = series.peak * conc / (conc + 24) / slowdown * noise
    e2el = series.base_latency * slowdown * (1 + conc / 90) * noise
    return tput, e2el


def _identity(series: DemoSeries) -> dict:
    return {
        "hw": series.runner,
        "image": series.image,
        "model": series.model,
        "infmax_model_prefix": series.model_prefix,
        "framework": series.framework,
        "precision": series.precision,
        "spec_decoding": series.spec,
    }


def fixed_seq_row(series: DemoSeries, *, scenario: str, conc: int, rng: random.Random) -> dict:
    isl, osl = SCENARIOS[scenario]
    slowdown = 1.0 if scenario == "1k1k" else 2.4
    tput, e2el = _curve(series, conc, slowdown=slowdown, rng=rng)
    output_share = osl / (isl + osl)
    tpot = e2el / osl * 0.92
    ttft = e2el - tpot * osl
    row = {
        **_identity(series),
        "conc": conc,
        "disagg": False,
        "is_multinode": False,
        "isl": isl,
        "osl": osl,
        "tp": series.tp,
        "pp": 1,
        "dcp_size": 1,
        "pcp_size": 1,
        "ep": series.ep,
        "dp_attention": str(series.dp_attention).lower(),
        "tput_per_gpu": tput,
        "output_tput_per_gpu": tput * output_share,
        "input_tput_per_gpu": tput * (1 - output_share),
    }
    for stat, factor in (("mean", 1.0), ("median", 0.98), ("p90", 1.15), ("p99", 1.32)):
        row[f"{stat}_e2el"] = e2el * factor
        row[f"{stat}_ttft"] = ttft * factor
        row[f"{stat}_tpot"] = tpot * factor
        row[f"{stat}_itl"] = tpot * factor * 0.99
        row[f"{stat}_intvty"] = 1 / (tpot * factor)
    return row


def agentic_row(
    series: DemoSeries, *, conc: int, tput: float, p90_e2el: float, disagg: bool
) -> dict:
    median_e2el = p90_e2el / 1.8

    def dist(p50: float) -> dict:
        return {"mean": p50 * 1.1, "p50": p50, "p75": p50 * 1.3, "p90": p50 * 1.8, "std": p50}

    gpus = 16 if disagg else series.tp
    topology = (
        {
            "prefill_num_workers": 1,
            "prefill_tp": 8,
            "prefill_ep": 1,
            "prefill_dp_attention": "false",
            "num_prefill_gpu": 8,
            "decode_num_workers": 1,
            "decode_tp": 8,
            "decode_ep": 8 if conc >= 64 else 1,
            "decode_dp_attention": "true" if conc >= 64 else "false",
            "num_decode_gpu": 8,
        }
        if disagg
        else {"tp": series.tp, "ep": series.ep, "dp_attention": str(series.dp_attention).lower()}
    )
    total = 40 * conc + 57
    return {
        **_identity(series),
        "conc": conc,
        "disagg": disagg,
        "is_multinode": disagg,
        "scenario_type": "agentic-coding",
        **topology,
        "kv_offloading": "dram" if conc >= 256 else "none",
        "kv_offload_backend": {"name": "lmcache", "version": "0.5.3"} if conc >= 256 else None,
        "num_requests_total": total,
        "num_requests_successful": total - 3,
        "request_accounting": {"records_total": total, "records_error_dropped": 0},
        "request_metrics": {
            "latency": {
                "e2el": dist(median_e2el),
                "ttft": dist(median_e2el * 0.3),
                "tpot": dist(0.012 + conc / 20000),
                "itl": dist(0.012 + conc / 20000),
                "intvty": dist(1 / (0.012 + conc / 20000)),
            },
            "throughput": {
                "per_gpu": {
                    "total_tput_tps": tput,
                    "output_tput_tps": tput * 0.0085,
                    "input_tput_tps": tput * 0.9915,
                },
                "total": {"tokens_per_second": tput * gpus},
            },
            "cache": {"theoretical_cache_hit_rate": 0.95 + conc / 20000},
        },
        "server_metrics": {"present": True, "cache": {"gpu_cache_hit_rate": 0.88}},
    }


def eval_row(series: DemoSeries, *, scenario: str, conc: int, strict: float) -> dict:
    isl, osl = SCENARIOS.get(scenario, (None, None))
    exp = f"{series.model_prefix}_{scenario}"
    return {
        "model_prefix": series.model_prefix,
        "model": series.model,
        "hw": series.runner.upper(),
        "framework": series.framework,
        "precision": series.precision,
        "spec_decoding": series.spec,
        "isl": isl,
        "osl": osl,
        "tp": series.tp,
        "ep": series.ep,
        "conc": conc,
        "dp_attention": str(series.dp_attention).lower(),
        "task": "gsm8k",
        "em_strict": strict,
        "em_strict_se": 0.0046,
        "em_flexible": strict - 0.0007,
        "em_flexible_se": 0.0046,
        "n_eff": 1319,
        "source": f"eval_results/eval_{exp}_{result_name(series, exp=exp, conc=conc)}/results.json",
        "score": strict,
        "score_name": "em_strict",
        "score_se": 0.0046,
    }


def _write_zip(folder: Path, artifact: str, files: dict[str, object]) -> Path:
    path = folder / f"{artifact}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            data = content if isinstance(content, str) else json.dumps(content, indent=1)
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 9, 22, 0, 0, 0)), data)
    return path


def official_run_artifacts(folder: Path, *, day: int) -> list[Path]:
    """A nightly sweep: every fixed-seq and agentic series, evals, stats and changelog."""
    rng = random.Random(f"official-{day}")
    # Later nightlies are a little faster, so the dates differ visibly.
    drift = 1 + 0.02 * day
    paths, bmk_rows, eval_rows = [], [], []
    for series in FIXED_SEQ_SERIES:
        boosted = DemoSeries(**{**vars(series), "peak": series.peak * drift})
        for scenario in SCENARIOS:
            exp = f"{series.model_prefix}_{scenario}"
            for conc in FIXED_SEQ_CONCURRENCIES:
                row = fixed_seq_row(boosted, scenario=scenario, conc=conc, rng=rng)
                rf = result_name(series, exp=exp, conc=conc)
                paths.append(_write_zip(folder, f"bmk_{rf}", {f"agg_{rf}.json": row}))
                bmk_rows.append(row)
            strict = 0.93 + rng.uniform(0, 0.04)
            eval_rows.append(eval_row(series, scenario=scenario, conc=64, strict=strict))
    for series in AGENTIC_SERIES:
        disagg = series.framework == "sglang-disagg"
        for conc in AGENTIC_CONCURRENCIES:
            tput, latency = _curve(series, conc, slowdown=1 / drift, rng=rng)
            row = agentic_row(series, conc=conc, tput=tput, p90_e2el=latency * 2, disagg=disagg)
            rf = result_name(series, exp=f"{series.model_prefix}_agentic", conc=conc, disagg=disagg)
            paths.append(_write_zip(folder, f"bmk_agentic_{rf}", {f"{rf}.json": row}))
            bmk_rows.append(row)
    paths.append(_write_zip(folder, "results_bmk", {"agg_bmk.json": bmk_rows}))
    paths.append(_write_zip(folder, "eval_results_all", {"agg_eval_all.json": eval_rows}))
    stats = {"b200": {"n_success": 60, "total": 62}, "mi355x": {"n_success": 41, "total": 44},
             "h200": {"n_success": 14, "total": 14}}  # fmt: skip
    paths.append(_write_zip(folder, "run-stats", {"run_stats.json": stats}))
    return paths


SEED_PR_SERIES = DemoSeries(
    "dsv4", "deepseek-ai/DeepSeek-V4-Pro-0813", "mi355x", "cluster:mi355x-amds", "atom-disagg",
    "fp4", SEED_PR_IMAGE, 8, 1, False, 0, 0, spec="mtp",
)  # fmt: skip
# (concurrency, tput_per_gpu, p90_e2el): c1 is dominated by c16, as in the seed thread.
SEED_PR_POINTS = ((1, 380.0, 21.7), (16, 5150.0, 19.9), (64, 16800.0, 24.6),
                  (128, 29007.0, 31.2), (256, 48522.0, 44.1))  # fmt: skip
SEED_PR_EVALS = ((16, 0.978), (128, 0.9719), (256, 0.922))


def seed_pr_run_artifacts(folder: Path) -> list[Path]:
    series = SEED_PR_SERIES
    paths, bmk_rows = [], []
    for conc, tput, p90_e2el in SEED_PR_POINTS:
        row = agentic_row(series, conc=conc, tput=tput, p90_e2el=p90_e2el, disagg=True)
        rf = result_name(series, exp="dsv4_agentic", conc=conc, disagg=True)
        paths.append(_write_zip(folder, f"bmk_agentic_{rf}", {f"{rf}.json": row}))
        log = f"[atom] serving {series.model} tp8 conc{conc}\n[atom] spec accept length 3.01\n"
        paths.append(_write_zip(folder, f"server_logs_{rf}", {"server.log": log}))
        bmk_rows.append(row)
    # Each eval ran on the same disaggregated setup as the benchmark cell of its concurrency.
    setups = {row["conc"]: row for row in bmk_rows}
    eval_rows = [
        {
            **eval_row(series, scenario="agentic-coding", conc=conc, strict=strict),
            "isl": None,
            **{
                key: value
                for key, value in setups[conc].items()
                if key.startswith(("prefill_", "decode_", "num_prefill", "num_decode", "kv_"))
                or key in ("disagg", "is_multinode")
            },
        }
        for conc, strict in SEED_PR_EVALS
    ]
    changelog = {
        "base_ref": "main",
        "head_ref": "dsv4-atom-disagg-agentic",
        "entries": [
            {
                "config-keys": ["dsv4-fp4-mi355x-atom-disagg-agentic-lmcache-dspark"],
                "description": ["Add DeepSeek-V4-Pro FP4 ATOM PD-disagg AgentX on MI355X"],
                "pr-link": "https://github.com/SemiAnalysisAI/InferenceX/pull/TBD",
                "evals-only": False,
                "append-only": False,
                "scenario-type": ["agentic-coding"],
            }
        ],
    }
    paths.append(_write_zip(folder, "results_bmk", {"agg_bmk.json": bmk_rows}))
    paths.append(_write_zip(folder, "eval_results_all", {"agg_eval_all.json": eval_rows}))
    paths.append(_write_zip(folder, "changelog-metadata", {"changelog_metadata.json": changelog}))
    paths.append(
        _write_zip(
            folder, "run-stats", {"run_stats.json": {"mi355x": {"n_success": 8, "total": 8}}}
        )
    )
    return paths


def demo_load() -> list[IngestReport]:
    """Build every demo artifact and ingest it; returns one report per run."""
    reports = []
    with tempfile.TemporaryDirectory(prefix="infx-demo-") as tmp:
        for day, started in enumerate(OFFICIAL_DATES):
            run_id = 35700000000 + day * 1111111
            folder = Path(tmp) / str(run_id)
            folder.mkdir()
            meta = RunMetadata(
                repository=REPOSITORY,
                run_id=run_id,
                workflow_name="Run Sweep",
                workflow_path=SWEEP_WORKFLOW,
                event="push",
                head_branch="main",
                head_sha=f"{day + 1:x}" * 40,
                conclusion="success",
                html_url=f"https://github.com/{REPOSITORY}/actions/runs/{run_id}",
                created_at=started,
                started_at=started,
                updated_at=started + timedelta(hours=7),
            )
            reports.append(_ingest(meta, official_run_artifacts(folder, day=day)))
        started = datetime(2026, 9, 23, 9, 30, tzinfo=UTC)
        meta = RunMetadata(
            repository=REPOSITORY,
            run_id=SEED_PR_RUN_ID,
            workflow_name="Run Sweep",
            workflow_path=SWEEP_WORKFLOW,
            event="pull_request",
            head_branch="dsv4-atom-disagg-agentic",
            head_sha=SEED_PR_SHA,
            pr_numbers=(2731,),
            conclusion="success",
            html_url=f"https://github.com/{REPOSITORY}/actions/runs/{SEED_PR_RUN_ID}",
            created_at=started,
            started_at=started,
            updated_at=started + timedelta(hours=5),
        )
        folder = Path(tmp) / "seed-pr"
        folder.mkdir()
        reports.append(_ingest(meta, seed_pr_run_artifacts(folder)))
    return reports


def _ingest(meta: RunMetadata, paths: list[Path]) -> IngestReport:
    run = run_upsert(meta=meta)
    return run_ingest_artifacts(run=run, sources=artifact_inputs_from_paths(paths))
