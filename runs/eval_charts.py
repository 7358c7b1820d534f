"""What the /evaluation page shows: lm-eval scores per model and task against their threshold.

One chart per task of the chosen model (or the one task chosen): each config's strict
exact-match score with its standard-error bar, coloured by whether the row passes the threshold
stored for the model and task (EvalThreshold, REFERENCE §5), the threshold drawn as a line; the
same rows in a table and a CSV. Official rows are the newest per config at or before a date, or
those of one official run.

With `?unofficialRun=<id>` the eval rows of the ready pull-request runs overlay the official
ones as ✕ markers with their own error bars. The view (runs/evaluation_views.py) only wires
these together with curves.unofficial, as curves/views.py does with curves/charts.py.
"""

from dataclasses import dataclass
from datetime import date

from django.http import QueryDict
from django.urls import reverse

from runs.models import Config, EvalResult
from runs.selectors import (
    EvalRow,
    EvalThresholds,
    eval_passes,
    eval_threshold_for,
    official_eval_models,
    official_eval_runs,
    official_eval_tasks,
)

OFFICIAL_GROUP = "official"


@dataclass(frozen=True, kw_only=True)
class EvaluationOptions:
    """What the stored evals offer for the page's controls."""

    models: list[str]
    tasks: list[str]  # of the chosen model
    runs: list[tuple[int, date]]  # official runs with evals of the model: (run id, date)
    run_dates: list[date]  # newest first


@dataclass(frozen=True, kw_only=True)
class EvaluationSelection:
    model: str
    task: str | None  # None: every task of the model, one chart each
    as_of: date | None
    run_id: int | None  # an official run; None: the newest row per config


def _date_parse(*, value: str, messages: list[str]) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        messages.append(f"Ignored date “{value}”: expected a date like 2026-09-22.")
        return None


def _run_parse(
    *, value: str, model: str, runs: list[tuple[int, date]], messages: list[str]
) -> int | None:
    """The official run chosen, when it is one with evals of the model."""
    if not value:
        return None
    if value.isdigit() and int(value) in {run_id for run_id, _ in runs}:
        return int(value)
    messages.append(
        f"Run “{value}” is not an official run with {model} evals: showing the newest row of "
        "each config."
    )
    return None


def evaluation_selection_parse(
    *, query_params: QueryDict, extra_rows: list[EvalRow], messages: list[str]
) -> tuple[EvaluationSelection, EvaluationOptions] | None:
    """The page's selection from its URL, falling back to defaults with a message for each
    parameter that is wrong. extra_rows (an unofficial overlay) add their models and tasks; the
    first of their models is the default. None when no evals are stored at all."""
    extra_models = sorted({row.result.config.model_prefix for row in extra_rows})
    models = sorted({*official_eval_models(), *extra_models})
    if not models:
        return None
    default_model = extra_models[0] if extra_models else models[0]
    model = query_params.get("model", "")
    if model not in models:
        if model:
            messages.append(f"Model “{model}” has no evals: showing {default_model}.")
        model = default_model
    extra_tasks = {row.result.task for row in extra_rows if row.result.config.model_prefix == model}
    tasks = sorted({*official_eval_tasks(model=model), *extra_tasks})
    task = query_params.get("task", "")
    if task and task not in tasks:
        messages.append(f"Task “{task}” has no {model} evals: showing every task.")
        task = ""
    runs = official_eval_runs(model=model)
    options = EvaluationOptions(
        models=models,
        tasks=tasks,
        runs=runs,
        run_dates=list(dict.fromkeys(run_date for _, run_date in runs)),
    )
    selection = EvaluationSelection(
        model=model,
        task=task or None,
        as_of=_date_parse(value=query_params.get("date", ""), messages=messages),
        run_id=_run_parse(
            value=query_params.get("run", ""), model=model, runs=runs, messages=messages
        ),
    )
    return selection, options


# ---------------------------------------------------------------------------------------------
# Chart and table data: one dict per chart, the same for the JSON, the table and the CSV
# ---------------------------------------------------------------------------------------------


def config_label(*, config: Config, result: EvalResult) -> str:
    """The x label of a row, e.g. "mi355x / atom-disagg / fp4 / mtp / TP8 / c256"; the scenario
    goes before the concurrency when set, as one config may be evaluated under several."""
    parts = [config.hardware, config.framework, config.precision]
    if config.spec_method != "none":
        parts.append(config.spec_method)
    if config.disagg:
        parts.append("disagg")
    if config.topology_label:
        parts.append(config.topology_label)
    at = f"c{result.concurrency}" if result.concurrency is not None else "c?"
    parts.append(f"{result.scenario} {at}" if result.scenario else at)
    return " / ".join(parts)


def threshold_text(threshold: float) -> str:
    """0.91, 0.9, 0.85: as written in thresholds.yaml, without trailing zeros."""
    return f"{threshold:g}"


def threshold_label(*, threshold: float, model: str, task: str) -> str:
    return f"pass ≥ {threshold_text(threshold)} ({model} {task})"


def _run_url(row: EvalRow) -> str:
    return f"{reverse('runs:run_detail', args=[row.run.run_id])}?attempt={row.run.run_attempt}"


def _row_payload(row: EvalRow, *, x: int, threshold: float) -> dict:
    result, config = row.result, row.result.config
    return {
        "x": x,
        "label": config_label(config=config, result=result),
        "hardware": config.hardware,
        "framework": config.framework,
        "precision": config.precision,
        "spec_method": config.spec_method,
        "disagg": config.disagg,
        "topology": config.topology_label,
        "scenario": result.scenario,
        "concurrency": result.concurrency,
        "n_shot": result.n_shot,
        "em_strict": result.em_strict,
        "em_strict_se": result.em_strict_se,
        "em_flexible": result.em_flexible,
        "em_flexible_se": result.em_flexible_se,
        "n_eff": result.n_eff,
        "image": result.image.reference if result.image else "",
        "date": row.run.date.isoformat(),
        "run_id": row.run.run_id,
        "run_attempt": row.run.run_attempt,
        "measured_run_id": row.run.measured_run_id,
        "run_url": _run_url(row),
        "passed": eval_passes(
            em_strict=result.em_strict, em_flexible=result.em_flexible, threshold=threshold
        ),
    }


def _row_key(row: EvalRow) -> tuple:
    """One x position per config, scenario and concurrency: an unofficial row of a config the
    official data has lands on its position."""
    return (row.result.config_id, row.result.scenario, row.result.concurrency)


@dataclass(frozen=True, kw_only=True)
class _RowGroup:
    """One legend entry: the official rows, or one unofficial run's."""

    key: str  # names it in the URL's `hide` parameter
    kind: str  # "official" or "unofficial"
    label: str
    rows: list[EvalRow]


def _row_groups(
    *, model: str, task: str, official_rows: list[EvalRow], unofficial_rows: list[EvalRow]
) -> list[_RowGroup]:
    official = _RowGroup(
        key=OFFICIAL_GROUP,
        kind="official",
        label="Official",
        rows=[row for row in official_rows if row.result.task == task],
    )
    unofficial: dict[int, _RowGroup] = {}
    for row in unofficial_rows:
        if row.result.task != task or row.result.config.model_prefix != model:
            continue
        run_id = row.run.run_id
        if run_id not in unofficial:
            unofficial[run_id] = _RowGroup(
                key=f"unofficial:{run_id}",
                kind="unofficial",
                label=f"UNOFFICIAL run {run_id}",
                rows=[],
            )
        unofficial[run_id].rows.append(row)
    return [official, *unofficial.values()]


def _chart_payload(
    *, index: int, model: str, task: str, groups: list[_RowGroup], threshold: float
) -> dict:
    positions: dict[tuple, int] = {}
    labels: list[str] = []
    for group in groups:
        for row in group.rows:
            if _row_key(row) not in positions:
                positions[_row_key(row)] = len(labels)
                labels.append(config_label(config=row.result.config, result=row.result))
    group_payloads = [
        {
            "key": group.key,
            "kind": group.kind,
            "label": group.label,
            "rows": [
                _row_payload(row, x=positions[_row_key(row)], threshold=threshold)
                for row in group.rows
            ],
        }
        for group in groups
    ]
    official_rows = group_payloads[0]["rows"]
    return {
        "id": f"eval-chart-{index}",  # not the task name: ids stay safe whatever a task is called
        "model": model,
        "task": task,
        "threshold": threshold,
        "threshold_text": threshold_text(threshold),
        "threshold_label": threshold_label(threshold=threshold, model=model, task=task),
        "categories": labels,
        "groups": group_payloads,
        "row_count": sum(len(group.rows) for group in groups),
        "official_count": len(official_rows),
        "pass_count": sum(row["passed"] for row in official_rows),
    }


def evaluation_charts(
    *,
    model: str,
    tasks: list[str],
    official_rows: list[EvalRow],
    unofficial_rows: list[EvalRow],
    thresholds: EvalThresholds,
) -> list[dict]:
    """One chart per task: the threshold of the model and task, the x labels, and the rows of
    `model` grouped for the legend (the official rows first, then each unofficial run's)."""
    return [
        _chart_payload(
            index=index,
            model=model,
            task=task,
            groups=_row_groups(
                model=model,
                task=task,
                official_rows=official_rows,
                unofficial_rows=unofficial_rows,
            ),
            threshold=eval_threshold_for(model_prefix=model, task=task, thresholds=thresholds),
        )
        for index, task in enumerate(tasks)
    ]


def overlay_notices(*, model: str, unofficial_rows: list[EvalRow]) -> list[str]:
    """A note for each overlaid run with no evals of the chosen model, naming the models it has."""
    models_by_run: dict[int, set[str]] = {}
    for row in unofficial_rows:
        models_by_run.setdefault(row.run.run_id, set()).add(row.result.config.model_prefix)
    return [
        f"Unofficial run {run_id} has no {model} evals: choose {' or '.join(sorted(models))} "
        "to see its rows."
        for run_id, models in models_by_run.items()
        if model not in models
    ]
