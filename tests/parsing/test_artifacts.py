"""Classification, member filters, and the small run-wide artifacts (run stats, changelog, logs)."""

import pytest

from runs.parsing import classify_artifact, parse_artifact, read_artifact_bytes, wanted_members
from runs.parsing.records import ArtifactError, ArtifactKind, RunStatsRecord, UnmappedKind
from runs.parsing.server_logs import log_text
from tests.parsing.conftest import AGENTIC_RF, FIXED_RF, encode, fixture_json
from tests.ziputil import make_zip


@pytest.mark.parametrize(
    ("name", "kind", "result_name"),
    [
        (f"bmk_{FIXED_RF}", ArtifactKind.FIXED_SEQ, FIXED_RF),
        (f"bmk_agentic_{AGENTIC_RF}", ArtifactKind.AGENTIC, AGENTIC_RF),
        (f"agentic_{AGENTIC_RF}", ArtifactKind.AGENTIC_RAW, AGENTIC_RF),
        ("results_bmk", ArtifactKind.RESULTS_AGGREGATE, ""),
        ("results_bmk_extra", ArtifactKind.UNKNOWN, ""),
        ("eval_results_all", ArtifactKind.EVAL_AGGREGATE, ""),
        (f"eval_{FIXED_RF}", ArtifactKind.EVAL, FIXED_RF),
        (f"eval_dsv4_8k1k_{FIXED_RF}", ArtifactKind.EVAL, FIXED_RF),
        ("run-stats", ArtifactKind.RUN_STATS, ""),
        ("changelog-metadata", ArtifactKind.CHANGELOG, ""),
        (f"server_logs_{FIXED_RF}", ArtifactKind.SERVER_LOGS, FIXED_RF),
        (f"gpu_metrics_{FIXED_RF}", ArtifactKind.GPU_METRICS, FIXED_RF),
        ("bmk_", ArtifactKind.UNKNOWN, ""),
        ("coverage-report", ArtifactKind.UNKNOWN, ""),
    ],
)
def test_classify(name, kind, result_name):
    assert classify_artifact(name) == (kind, result_name)


@pytest.mark.parametrize(
    ("kind", "member", "wanted"),
    [
        (ArtifactKind.FIXED_SEQ, f"x/agg_{FIXED_RF}.json", True),
        (ArtifactKind.FIXED_SEQ, "x/server.log", False),
        (ArtifactKind.AGENTIC, f"{AGENTIC_RF}_conc8.json", True),
        (ArtifactKind.RESULTS_AGGREGATE, "agg_bmk.json", True),
        (ArtifactKind.EVAL, "eval/meta_env.json", True),
        (ArtifactKind.EVAL, "eval/results_2026-08-21T14-55-02.1_conc4.json", True),
        (ArtifactKind.EVAL, "eval/samples_gsm8k_2026-08-21T14-55-02.1.jsonl", False),
        (ArtifactKind.EVAL_AGGREGATE, "agg_eval_all.json", True),
        (ArtifactKind.RUN_STATS, "run_stats.json", True),
        (ArtifactKind.CHANGELOG, "changelog_metadata.json", True),
        (ArtifactKind.SERVER_LOGS, "results/bench.log", True),
        (ArtifactKind.AGENTIC_RAW, "profile_export.jsonl", False),
        (ArtifactKind.GPU_METRICS, "gpu_metrics.csv", False),
        (ArtifactKind.UNKNOWN, "anything", False),
    ],
)
def test_wanted_members(kind, member, wanted):
    assert wanted_members(kind)(member) is wanted


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (f"agentic_{AGENTIC_RF}", "raw aiperf files are not parsed"),
        (f"gpu_metrics_{FIXED_RF}", "GPU telemetry is not parsed"),
        ("something-else", "unknown artifact name"),
    ],
)
def test_unparsed_kinds_are_skipped_without_reading(name, reason):
    kind, _ = classify_artifact(name)
    files = read_artifact_bytes(
        make_zip({"profile_export.jsonl": b"{}", "gpu_metrics.csv": b"a,b"}),
        name=name,
        wanted=wanted_members(kind),
        max_unzipped_bytes=1000,
        max_members=10,
    )
    assert files == {}
    assert parse_artifact(name, files).skipped_reason == reason


def test_run_stats_example():
    parse = parse_artifact("run-stats", {"run_stats.json": encode(fixture_json("run_stats.json"))})
    assert parse.run_stats == [
        RunStatsRecord(runner_label="mi355x", hardware="mi355x", n_success=90, total=180),
        RunStatsRecord(runner_label="b200", hardware="b200", n_success=127, total=264),
    ]


def test_run_stats_bad_entries_are_skipped():
    stats = {
        "B200-TRT": {"n_success": "3", "total": 4},
        "mi355x": {"n_success": 5, "total": 4},
        "h100": {"total": 4},
        "h200": [1, 2],
        "tpu7": {"n_success": 1, "total": 1},
    }
    parse = parse_artifact("run-stats", {"run_stats.json": encode(stats)})
    assert [(r.runner_label, r.hardware, r.n_success) for r in parse.run_stats] == [
        ("B200-TRT", "b200", 3),
        ("tpu7", "tpu7", 1),
    ]
    assert len(parse.row_errors) == 3
    assert "n_success 5 > total 4" in parse.row_errors[0]
    assert [(item.kind, item.value) for item in parse.unmapped] == [(UnmappedKind.HARDWARE, "tpu7")]


@pytest.mark.parametrize(
    ("data", "message"), [(b"[]", "expected a JSON object"), (b"{", "invalid")]
)
def test_run_stats_bad_file(data, message):
    with pytest.raises(ArtifactError, match=message):
        parse_artifact("run-stats", {"run_stats.json": data})


def test_changelog_example():
    document = fixture_json("changelog_metadata.json")
    parse = parse_artifact("changelog-metadata", {"changelog_metadata.json": encode(document)})
    (entry,) = parse.changelog
    assert entry.position == 0
    assert entry.config_keys == ("dsv4-fp4-b200-vllm-agentic-mtp",)
    assert len(entry.description) == 2
    assert entry.pr_link == "https://github.com/SemiAnalysisAI/InferenceX/pull/2707"
    assert (entry.evals_only, entry.all_evals, entry.append_only) == (False, False, False)
    assert entry.scenario_types == ("agentic-coding",)
    assert (entry.base_ref, entry.head_ref) == ("HEAD~1", "HEAD")


def test_changelog_string_forms_and_bad_entries():
    document = {
        "base_ref": "main",
        "entries": [
            {"config-keys": "gptoss*", "description": "one line", "evals-only": "true"},
            {"description": ["no keys"]},
            {"config-keys": ["a"], "scenario-type": "fixed-seq", "all-evals": 1, "pr-link": None},
            {"config-keys": [1, 2]},
        ],
    }
    parse = parse_artifact("changelog-metadata", {"changelog_metadata.json": encode(document)})
    first, third = parse.changelog
    assert (first.position, first.config_keys, first.description) == (
        0,
        ("gptoss*",),
        ("one line",),
    )
    assert first.evals_only and not first.all_evals and first.head_ref == ""
    assert (third.position, third.scenario_types, third.all_evals, third.pr_link) == (
        2,
        ("fixed-seq",),
        True,
        "",
    )
    assert len(parse.row_errors) == 2
    assert "entry 1: field 'config-keys': missing" in parse.row_errors[0]


@pytest.mark.parametrize(
    "document", [{"entries": {"a": 1}}, {"base_ref": 1, "entries": []}, {"no": "entries"}]
)
def test_changelog_bad_file(document):
    with pytest.raises(ArtifactError, match="changelog_metadata.json"):
        parse_artifact("changelog-metadata", {"changelog_metadata.json": encode(document)})


def test_server_logs():
    files = {
        "server.log": b"INFO started\n\xff\xfe bad bytes\x00\n",
        "results/bench.log": b"done",
    }
    parse = parse_artifact(f"server_logs_{FIXED_RF}", files)
    by_path = {log.path: log for log in parse.server_logs}
    assert set(by_path) == {"server.log", "results/bench.log"}
    assert by_path["server.log"].text == "INFO started\n\ufffd\ufffd bad bytes\ufffd\n"
    assert by_path["server.log"].size_bytes == len(files["server.log"])
    assert by_path["results/bench.log"].result_name == FIXED_RF


def test_server_log_is_capped_with_a_note():
    text = log_text(b"x" * 100, max_bytes=10)
    assert text == "x" * 10 + "\n[truncated: first 10 of 100 bytes kept]\n"


def test_server_logs_without_logs_is_skipped():
    assert parse_artifact(f"server_logs_{FIXED_RF}", {}).skipped_reason == "no .log files"
