"""Eval scores: per-config `eval_<RF>` artifacts (meta_env.json + lm-eval results files) and the
`eval_results_all` aggregate of flat rows."""

import re
from collections.abc import Mapping
from typing import Any

from runs.parsing.aggregate import parse_array_rows
from runs.parsing.identity import read_identity
from runs.parsing.members import basename, location, single_member
from runs.parsing.normalise import SEQ_LENS_BY_SCENARIO, normalise_image, scenario_name
from runs.parsing.records import (
    ArtifactError,
    ArtifactKind,
    ArtifactParse,
    ConfigIdentity,
    EvalRecord,
    Unmapped,
)
from runs.parsing.values import (
    RowReader,
    check_metric,
    coerce_int,
    collect_metrics,
    describe,
    is_numeric,
    load_json,
)

META_FILE = "meta_env.json"
EVAL_AGGREGATE_FILE = "agg_eval_all.json"
# results_<ISO timestamp>[_conc<N>].json; the timestamp sorts chronologically as text
RESULTS_FILE = re.compile(r"results_(?P<stamp>.+?)(?:_conc(?P<conc>\d+))?\.json")
# a fixed-seq scenario inside a result name or source path: eval_dsr1_1k8k_..., .../_8k1k_...
SCENARIO_IN_NAME = re.compile(r"(?:^|[_/])(\d+k\d+k)(?=_|/|$)")
# lm-eval result keys of the exact-match scores -> EvalRecord fields
EXACT_MATCH_KEYS = {
    "em_strict": "exact_match,strict-match",
    "em_strict_se": "exact_match_stderr,strict-match",
    "em_flexible": "exact_match,flexible-extract",
    "em_flexible_se": "exact_match_stderr,flexible-extract",
}
SCORE_FIELDS = tuple(EXACT_MATCH_KEYS) + ("score", "score_se")
NOT_A_SCORE = frozenset({"alias", "name", "sample_len", "sample_count"})


def _sequence(isl: int | None, osl: int | None, name: str) -> tuple[str, int | None, int | None]:
    """(scenario, isl, osl) from the lengths, else from a `_1k8k_` token in the name, else ""."""
    if isl is not None and osl is not None:
        return scenario_name(isl, osl), isl, osl
    found = SCENARIO_IN_NAME.search(name)
    if found and found.group(1) in SEQ_LENS_BY_SCENARIO:
        return found.group(1), *SEQ_LENS_BY_SCENARIO[found.group(1)]
    return "", isl, osl


def _count(value: Any, name: str, invalid: dict[str, str]) -> int | None:
    """A sample or shot count; an invalid one is None with its reason in `invalid`."""
    number, problem = check_metric(value)
    if number is not None and not number.is_integer():
        number, problem = None, f"not a whole number ({number:g})"
    if problem:
        invalid[name] = problem
    return None if number is None else int(number)


def _eval_record(
    identity: ConfigIdentity,
    reader: RowReader,
    *,
    task: str,
    concurrency: int | None,
    raw_scores: dict[str, Any],
    raw_counts: dict[str, Any],
    score_name: str,
    lm_eval_version: str,
    source: str,
) -> EvalRecord:
    scenario, isl, osl = _sequence(
        reader.integer("isl", minimum=1), reader.integer("osl", minimum=1), source
    )
    scores, invalid = collect_metrics(raw_scores)
    return EvalRecord(
        config=identity,
        task=task,
        n_shot=_count(raw_counts.get("n_shot"), "n_shot", invalid),
        concurrency=concurrency,
        scenario=scenario,
        isl=isl,
        osl=osl,
        n_eff=_count(raw_counts.get("n_eff"), "n_eff", invalid),
        score_name=score_name,
        lm_eval_version=lm_eval_version,
        source=source,
        image=normalise_image(reader.text("image")),
        invalid_metrics=invalid,
        **scores,
    )


def _task_scores(task: str, entry: Any, *, where: str) -> tuple[dict[str, Any], str]:
    """Raw score fields of one lm-eval task and the score's name.

    The score is the strict exact match, else the flexible one, else the first numeric metric.
    """
    if not isinstance(entry, Mapping):
        raise ArtifactError(f"{where}: results[{task!r}] is not an object")
    raw = {field: entry.get(key) for field, key in EXACT_MATCH_KEYS.items()}
    for name in ("em_strict", "em_flexible"):
        if EXACT_MATCH_KEYS[name] in entry:
            return {**raw, "score": raw[name], "score_se": raw[f"{name}_se"]}, name
    for key, value in entry.items():
        if key not in NOT_A_SCORE and "_stderr" not in key and is_numeric(value):
            metric, _, filter_name = key.partition(",")
            stderr_key = f"{metric}_stderr,{filter_name}" if filter_name else f"{metric}_stderr"
            return {**raw, "score": value, "score_se": entry.get(stderr_key)}, key
    return {**raw, "score": None, "score_se": None}, ""


def _lm_eval_records(
    document: Any, identity: ConfigIdentity, meta: RowReader, *, concurrency: int | None, where: str
) -> list[EvalRecord]:
    results = document.get("results") if isinstance(document, Mapping) else None
    if not isinstance(results, Mapping) or not results:
        raise ArtifactError(f"{where}: expected an lm-eval results file with a 'results' object")
    lm_eval_version = RowReader(document, where=where).text("lm_eval_version")

    def per_task(section: str, task: str) -> Mapping[str, Any]:
        """document[section][task] when both are objects, else {}."""
        by_task = document.get(section)
        value = by_task.get(task) if isinstance(by_task, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    records = []
    for task, entry in results.items():
        raw_scores, score_name = _task_scores(task, entry, where=where)
        n_shot = per_task("configs", task).get("num_fewshot")
        if n_shot is None and isinstance(document.get("n-shot"), Mapping):
            n_shot = document["n-shot"].get(task)  # older lm-eval: top-level {task: shots}
        records.append(
            _eval_record(
                identity,
                meta,
                task=task,
                concurrency=concurrency,
                raw_scores=raw_scores,
                raw_counts={
                    "n_eff": per_task("n-samples", task).get("effective"),
                    "n_shot": n_shot,
                },
                score_name=score_name,
                lm_eval_version=lm_eval_version,
                source=where,
            )
        )
    return records


def _conc_list(reader: RowReader, key: str) -> set[int] | None:
    """A list of concurrencies from the metadata, None when absent."""
    value = reader.row.get(key)
    if value is None:
        return None
    try:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {describe(value)}")
        return {coerce_int(item, minimum=1) for item in value}
    except ValueError as exc:
        raise ArtifactError(f"{reader.where}: field {key!r}: {exc}") from exc


def _newest_results(files: Mapping[str, bytes], meta: RowReader) -> dict[int | None, str]:
    """The newest results file per concurrency (`_conc<N>` suffix, else the metadata's conc)."""
    newest: dict[int | None, tuple[str, str]] = {}  # concurrency -> (timestamp, member)
    for member in files:
        found = RESULTS_FILE.fullmatch(basename(member))
        if found is None:
            continue
        conc = int(found["conc"]) if found["conc"] else meta.integer("conc", minimum=1)
        if conc not in newest or found["stamp"] > newest[conc][0]:
            newest[conc] = (found["stamp"], member)
    return {conc: member for conc, (_, member) in newest.items()}


def parse_eval(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """meta_env.json plus the newest lm-eval results file per concurrency.

    A failed single eval (non-zero eval_exit_code) is skipped. A batched eval (`_conc<N>` files,
    `completed_eval_concs` in the metadata) keeps only completed concurrencies that have results.
    """
    meta_member = single_member(files, META_FILE, artifact=artifact)
    meta_where = location(artifact, meta_member)
    meta = RowReader(load_json(files[meta_member], where=meta_where), where=meta_where)
    parse = ArtifactParse(kind=ArtifactKind.EVAL, result_name=result_name)
    exit_code = meta.integer("eval_exit_code", minimum=-(2**31))
    completed = _conc_list(meta, "completed_eval_concs")
    if exit_code and completed is None:
        parse.skipped_reason = f"eval failed (eval_exit_code={exit_code})"
        return parse

    newest = _newest_results(files, meta)
    if not newest:
        raise ArtifactError(f"{artifact}: no results_*.json file")
    if completed is not None:
        for conc in sorted(set(newest) - completed, key=lambda conc: conc or 0):
            parse.row_errors.append(f"{artifact}: conc {conc} is not in completed_eval_concs")
            del newest[conc]
        for conc in sorted(completed - set(newest)):
            parse.row_errors.append(f"{artifact}: conc {conc} completed but has no results file")

    identity, parse.unmapped = read_identity(meta, name_hint=artifact)
    for conc, member in sorted(newest.items(), key=lambda item: item[0] or 0):
        where = location(artifact, member)
        document = load_json(files[member], where=where)
        parse.evals.extend(
            _lm_eval_records(document, identity, meta, concurrency=conc, where=where)
        )
    return parse


def _aggregate_row(row: Any, where: str) -> tuple[EvalRecord, list[Unmapped]]:
    reader = RowReader(row, where=where)
    source = reader.text("source")
    identity, unmapped = read_identity(reader, name_hint=source)
    record = _eval_record(
        identity,
        reader,
        task=reader.text("task", required=True),
        concurrency=reader.integer("conc", minimum=1),
        raw_scores={field: reader.row.get(field) for field in SCORE_FIELDS},
        raw_counts={"n_eff": reader.row.get("n_eff"), "n_shot": reader.row.get("n_shot")},
        score_name=reader.text("score_name"),
        lm_eval_version=reader.text("lm_eval_version"),
        source=source,
    )
    return record, unmapped


def parse_eval_aggregate(
    artifact: str, result_name: str, files: Mapping[str, bytes]
) -> ArtifactParse:
    """agg_eval_all.json: an array of flat eval rows; a bad row is skipped with its reason."""
    parse = ArtifactParse(kind=ArtifactKind.EVAL_AGGREGATE, result_name=result_name)
    parse.evals = parse_array_rows(
        files, EVAL_AGGREGATE_FILE, artifact=artifact, parse_row=_aggregate_row, into=parse
    )
    return parse
