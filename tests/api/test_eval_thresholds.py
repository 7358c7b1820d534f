"""Eval pass/fail (REFERENCE §5): the threshold fallback, the pass rule, the seeded table."""

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from runs.models import EvalThreshold
from runs.selectors import (
    EVAL_THRESHOLD_FALLBACK,
    eval_passes,
    eval_threshold_for,
    eval_thresholds_load,
)
from tests.factories import ConfigFactory, EvalResultFactory

DEFAULT = EvalThreshold.DEFAULT_PREFIX
prefixes = st.sampled_from(["dsr1", "dsv4", "glm5", "glm5.1", "qwen3.5", "llama"])
tasks = st.sampled_from(["gsm8k", "gpqa_diamond_cot_n_shot", "swebench_lite", "mmlu"])
unit = st.floats(min_value=0.0, max_value=1.0)
thresholds_tables = st.dictionaries(
    st.tuples(st.one_of(st.just(DEFAULT), prefixes), tasks), unit, max_size=12
)
scores = st.one_of(st.none(), unit)


@given(model_prefix=prefixes, task=tasks, thresholds=thresholds_tables, own=unit)
def test_the_models_own_threshold_wins(model_prefix, task, thresholds, own):
    thresholds = {**thresholds, (model_prefix, task): own}
    assert eval_threshold_for(model_prefix=model_prefix, task=task, thresholds=thresholds) == own


@given(model_prefix=prefixes, task=tasks, thresholds=thresholds_tables, default=unit)
def test_the_task_default_applies_without_a_model_threshold(
    model_prefix, task, thresholds, default
):
    thresholds = {
        key: value for key, value in thresholds.items() if key != (model_prefix, task)
    } | {(DEFAULT, task): default}
    assert (
        eval_threshold_for(model_prefix=model_prefix, task=task, thresholds=thresholds) == default
    )


@given(model_prefix=prefixes, task=tasks, thresholds=thresholds_tables)
def test_085_is_the_last_resort(model_prefix, task, thresholds):
    thresholds = {
        key: value
        for key, value in thresholds.items()
        if key not in {(model_prefix, task), (DEFAULT, task)}
    }
    threshold = eval_threshold_for(model_prefix=model_prefix, task=task, thresholds=thresholds)
    assert threshold == EVAL_THRESHOLD_FALLBACK == 0.85


@given(em_strict=scores, em_flexible=scores, threshold=unit)
def test_a_row_passes_when_every_reported_exact_match_reaches_the_threshold(
    em_strict, em_flexible, threshold
):
    reported = [score for score in (em_strict, em_flexible) if score is not None]
    expected = bool(reported) and min(reported) >= threshold
    assert (
        eval_passes(em_strict=em_strict, em_flexible=em_flexible, threshold=threshold) is expected
    )


@pytest.mark.parametrize(
    ("em_strict", "em_flexible", "passed"),
    [
        (0.91, 0.91, True),  # equal to the threshold passes
        (0.95, 0.9099, False),  # the flexible score alone can fail a row
        (0.9099, 0.95, False),
        (None, None, False),  # nothing reported, nothing passed
        (math.nan, 0.95, False),
    ],
)
def test_eval_passes_examples(em_strict, em_flexible, passed):
    assert eval_passes(em_strict=em_strict, em_flexible=em_flexible, threshold=0.91) is passed


@pytest.mark.django_db
def test_the_migration_seeds_the_reference_thresholds():
    thresholds = eval_thresholds_load()
    assert thresholds[(DEFAULT, "gsm8k")] == 0.90
    assert thresholds[("glm5", "gsm8k")] == 0.94
    assert len(thresholds) == 11


@pytest.mark.realdata
@pytest.mark.django_db
def test_the_seeded_thresholds_match_thresholds_yaml(real_data):
    document = yaml.safe_load((real_data / "thresholds.yaml").read_text())
    expected = {(DEFAULT, task): value for task, value in document["default"].items()} | {
        (prefix, task): value
        for prefix, per_task in document["models"].items()
        for task, value in per_task.items()
    }
    assert eval_thresholds_load() == expected


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model_prefix", "task", "em_strict", "threshold", "passed"),
    [
        ("glm5", "gsm8k", 0.93, 0.94, False),  # the model override (above the default 0.90)
        ("glm5", "gsm8k", 0.945, 0.94, True),
        ("llama", "gsm8k", 0.905, 0.90, True),  # no override: the gsm8k default
        ("llama", "swebench_lite", 0.49, 0.50, False),
        ("llama", "mmlu", 0.86, 0.85, True),  # neither: 0.85
        ("llama", "mmlu", 0.84, 0.85, False),
    ],
)
def test_the_evals_endpoint_reports_threshold_and_passed(
    api_client, model_prefix, task, em_strict, threshold, passed
):
    result = EvalResultFactory(
        config=ConfigFactory(model_prefix=model_prefix),
        task=task,
        em_strict=em_strict,
        em_flexible=em_strict,
    )
    response = api_client.get("/api/v1/evals/", {"run": result.run.run_id})
    assert response.status_code == 200
    [row] = response.json()["results"]
    assert (row["task"], row["threshold"], row["passed"]) == (task, threshold, passed)


@pytest.mark.django_db
def test_an_admin_change_to_a_threshold_applies_at_once(api_client):
    result = EvalResultFactory(config=ConfigFactory(model_prefix="dsr1"), em_strict=0.905)
    EvalThreshold.objects.filter(model_prefix="dsr1", task="gsm8k").update(threshold=0.90)
    [row] = api_client.get("/api/v1/evals/", {"run": result.run.run_id}).json()["results"]
    assert (row["threshold"], row["passed"]) == (0.90, True)
