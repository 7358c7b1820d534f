"""What the parsers hand to the ingestion services: plain, immutable records, no Django.

Parsers turn the files of one artifact into an `ArtifactParse`; the services map those records
onto models. Keeping this boundary pure lets the parsers be tested (and fuzzed) without a database.
"""

from dataclasses import dataclass, field
from enum import StrEnum


class ArtifactKind(StrEnum):
    FIXED_SEQ = "bmk"  # bmk_<RF>: one fixed-seq cell (multinode: one per agg file)
    AGENTIC = "bmk_agentic"  # bmk_agentic_<RF>: agentic trace replay
    AGENTIC_RAW = "agentic_raw"  # agentic_<RF>: raw aiperf files, not parsed
    RESULTS_AGGREGATE = "results_bmk"  # results_bmk: every bmk row of the run
    EVAL = "eval"  # eval_<RF>: meta_env.json + lm-eval results files
    EVAL_AGGREGATE = "eval_results_all"  # eval_results_all: flat eval rows
    RUN_STATS = "run_stats"
    CHANGELOG = "changelog_metadata"
    SERVER_LOGS = "server_logs"
    GPU_METRICS = "gpu_metrics"
    UNKNOWN = "unknown"


class UnmappedKind(StrEnum):
    MODEL = "model"
    HARDWARE = "hardware"
    FRAMEWORK = "framework"
    PRECISION = "precision"
    SPEC_METHOD = "spec_method"


@dataclass(frozen=True)
class Unmapped:
    """A name no normaliser table knows. It is kept as given and flagged, never dropped."""

    kind: UnmappedKind
    value: str
    where: str  # file (and row) it was seen in


@dataclass(frozen=True)
class ConfigIdentity:
    """The identity of a served setup; every field takes part in the Config natural key."""

    model_prefix: str
    model: str  # HF path as reported, "" when absent
    hardware: str  # normalised GPU key (mi355x, b200, ...)
    runner_label: str  # raw label as reported (mi355x-amds_0, cluster:mi355x-amds, B200-TRT)
    framework: str
    precision: str
    spec_method: str = "none"
    disagg: bool = False
    multinode: bool = False
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    dcp: int | None = None
    pcp: int | None = None
    dp_attention: bool | None = None
    prefill_tp: int | None = None
    prefill_ep: int | None = None
    prefill_dp_attention: bool | None = None
    prefill_workers: int | None = None
    prefill_gpus: int | None = None
    decode_tp: int | None = None
    decode_ep: int | None = None
    decode_dp_attention: bool | None = None
    decode_workers: int | None = None
    decode_gpus: int | None = None
    kv_offload: str = ""
    kv_offload_backend: str = ""


# Metric columns a Cell indexes; everything else numeric goes to Cell.extra_metrics.
INDEXED_METRICS: tuple[str, ...] = (
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
    *(
        f"{stat}_{metric}"
        for metric in ("ttft", "tpot", "itl", "e2el", "intvty")
        for stat in ("median", "p90", "p99")
    ),
    "prefix_cache_hit_rate",
    "num_requests_total",
    "num_requests_successful",
    "num_requests_errored",
)


@dataclass(frozen=True)
class CellRecord:
    config: ConfigIdentity
    image: str  # docker reference with '#' already turned into '/'; "" when absent
    scenario: str  # "1k1k", "8k1k", "isl10240_osl128", "agentic-coding"
    isl: int | None
    osl: int | None
    concurrency: int
    recipe_fingerprint: str  # "" when absent
    result_name: str  # the RF the cell came from
    metrics: dict[str, float | None]  # keys from INDEXED_METRICS
    extra_metrics: dict[str, float] = field(default_factory=dict)
    failure_reason: str = ""  # non-empty: a failed cell, not a point
    # metric name -> why its value was rejected (NaN, infinite, negative, not a number); the
    # metric itself is None, so curves count the cell as invalid evidence
    invalid_metrics: dict[str, str] = field(default_factory=dict)
    # False when the row lacked an identity field that only the result name can supply (an
    # aggregate row then stands for its per-cell artifact only as well as a guess can)
    identity_complete: bool = True


@dataclass(frozen=True)
class EvalRecord:
    config: ConfigIdentity
    task: str
    n_shot: int | None
    concurrency: int | None
    scenario: str  # "" when unknown
    isl: int | None
    osl: int | None
    em_strict: float | None
    em_strict_se: float | None
    em_flexible: float | None
    em_flexible_se: float | None
    n_eff: int | None
    score: float | None
    score_name: str
    score_se: float | None
    lm_eval_version: str
    source: str
    image: str = ""
    invalid_metrics: dict[str, str] = field(default_factory=dict)  # as in CellRecord


@dataclass(frozen=True)
class RunStatsRecord:
    runner_label: str
    hardware: str
    n_success: int
    total: int


@dataclass(frozen=True)
class ChangelogRecord:
    position: int
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    evals_only: bool
    all_evals: bool
    append_only: bool
    scenario_types: tuple[str, ...]
    base_ref: str
    head_ref: str


@dataclass(frozen=True)
class ServerLogRecord:
    result_name: str
    path: str
    text: str  # decoded with replacement, capped by the parser
    size_bytes: int


@dataclass
class ArtifactParse:
    """Everything read from one artifact; a `skipped_reason` means nothing to ingest."""

    kind: ArtifactKind
    result_name: str = ""
    cells: list[CellRecord] = field(default_factory=list)
    evals: list[EvalRecord] = field(default_factory=list)
    run_stats: list[RunStatsRecord] = field(default_factory=list)
    changelog: list[ChangelogRecord] = field(default_factory=list)
    server_logs: list[ServerLogRecord] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)
    skipped_reason: str = ""
    # rows (of an aggregate, a changelog or run stats) or eval concurrencies left out, with why;
    # the rest of the artifact is still ingested
    row_errors: list[str] = field(default_factory=list)
    # A merge run that reused a PR run's measurements names it (run id, attempt or None).
    reused_run: tuple[int, int | None] | None = None


class ArtifactError(Exception):
    """A bad artifact: recorded as the artifact's error; the run's other artifacts still go in."""
