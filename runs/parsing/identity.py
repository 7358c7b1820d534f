"""The served setup (`ConfigIdentity`) read from a benchmark row, an eval row or meta_env.json.

The same setup must get the same identity whichever file it comes from, because the identity is
the Config natural key that joins cells and evals. Hence:

- single-node rows use the v1 topology (tp, pp, dcp, pcp, ep, dp_attention); pp, dcp and pcp
  absent (older rows, eval rows) mean 1. Their prefill_*/decode_* fields, which eval rows also
  carry, are ignored;
- disaggregated or multinode rows with prefill_*/decode_* fields use that v2 topology and leave
  the v1 fields empty (eval metadata sets tp to the prefill TP there); prefill/decode GPU counts
  absent from a row are tp x pp x workers of that side;
- `disagg`, absent from eval rows, is read from the result name (`_disagg-true_`) when possible.
"""

import re
from collections.abc import Callable
from typing import Any

from runs.parsing.normalise import (
    Normalised,
    normalise_framework,
    normalise_hardware,
    normalise_model,
    normalise_precision,
    normalise_spec_method,
)
from runs.parsing.records import ArtifactError, ConfigIdentity, Unmapped, UnmappedKind
from runs.parsing.values import RowReader, describe

MODEL_PREFIX_FIELDS = ("infmax_model_prefix", "model_prefix")
NO_PREFIX = "unknown"  # what the benchmark writes when it has no prefix
DISAGG_IN_NAME = re.compile(r"_disagg-(true|false)(?:_|$)", re.IGNORECASE)
# Identity fields read from the result name when a row lacks them.
FIELDS_FROM_NAME = ("disagg",)
NO_KV_OFFLOAD = frozenset({"", "none", "false", "off", "no"})

# Raw keys that describe the setup rather than measure it; never metrics.
IDENTITY_KEYS = frozenset(
    {
        "hw",
        "conc",
        "image",
        "model",
        *MODEL_PREFIX_FIELDS,
        "framework",
        "precision",
        "spec_decoding",
        "disagg",
        "is_multinode",
        "scenario_type",
        "isl",
        "osl",
        "tp",
        "pp",
        "dcp_size",
        "pcp_size",
        "ep",
        "dp_attention",
        "num_prefill_gpu",
        "num_decode_gpu",
        "recipe_fingerprint",
        "kv_offloading",
        "kv_offload_backend",
    }
)
SIDE_PREFIXES = ("prefill_", "decode_")


def is_identity_key(key: str) -> bool:
    return key in IDENTITY_KEYS or key.startswith(SIDE_PREFIXES)


def identity_complete(reader: RowReader) -> bool:
    """Whether the row itself holds every identity field, needing no result name."""
    return all(reader.flag(key) is not None for key in FIELDS_FROM_NAME)


def read_identity(
    reader: RowReader, *, name_hint: str = ""
) -> tuple[ConfigIdentity, list[Unmapped]]:
    """The identity of the row behind `reader`, and the names no normaliser table knows.

    `name_hint` is the result name or source path the row came from, used for fields some rows
    lack. Raises ArtifactError when an identity field is missing or wrongly typed.
    """
    unmapped: list[Unmapped] = []

    def normalised(kind: UnmappedKind, raw: str, normaliser: Callable[[str], Normalised]) -> str:
        key, known = normaliser(raw)
        if not known:
            unmapped.append(Unmapped(kind=kind, value=raw, where=reader.where))
        return key

    model = reader.text("model")
    prefixes = [reader.text(field) for field in MODEL_PREFIX_FIELDS]
    given_prefix = next((prefix for prefix in prefixes if prefix not in ("", NO_PREFIX)), "")
    if not (given_prefix or model):
        raise ArtifactError(f"{reader.where}: field 'infmax_model_prefix' (or 'model'): missing")
    runner_label = reader.text("hw", required=True)
    disagg = reader.flag("disagg")
    if disagg is None:
        hint = DISAGG_IN_NAME.search(name_hint)
        disagg = bool(hint) and hint.group(1).lower() == "true"
    multinode = bool(reader.flag("is_multinode"))
    kv_offload, kv_offload_backend = _kv_offload(reader)

    identity = ConfigIdentity(
        model_prefix=normalised(UnmappedKind.MODEL, given_prefix or model, normalise_model),
        model=model,
        hardware=normalised(UnmappedKind.HARDWARE, runner_label, normalise_hardware),
        runner_label=runner_label,
        framework=normalised(
            UnmappedKind.FRAMEWORK, reader.text("framework", required=True), normalise_framework
        ),
        precision=normalised(
            UnmappedKind.PRECISION, reader.text("precision", required=True), normalise_precision
        ),
        spec_method=normalised(
            UnmappedKind.SPEC_METHOD, reader.text("spec_decoding"), normalise_spec_method
        ),
        disagg=disagg,
        multinode=multinode,
        kv_offload=kv_offload,
        kv_offload_backend=kv_offload_backend,
        **_topology(reader, split=disagg or multinode),
    )
    return identity, unmapped


def _topology(reader: RowReader, *, split: bool) -> dict[str, Any]:
    if split and (reader.has("prefill_tp") or reader.has("decode_tp")):
        return {**_side(reader, "prefill"), **_side(reader, "decode")}
    tp = reader.integer("tp")
    one_unless_given = 1 if tp is not None else None
    return {
        "tp": tp,
        "pp": reader.integer("pp") or one_unless_given,
        "dcp": reader.integer("dcp_size") or one_unless_given,
        "pcp": reader.integer("pcp_size") or one_unless_given,
        "ep": reader.integer("ep"),
        "dp_attention": reader.flag("dp_attention"),
    }


def _side(reader: RowReader, side: str) -> dict[str, Any]:
    tp = reader.integer(f"{side}_tp")
    workers = reader.integer(f"{side}_num_workers")
    gpus = reader.integer(f"num_{side}_gpu")
    if gpus is None and tp is not None:
        gpus = tp * (reader.integer(f"{side}_pp") or 1) * (workers or 1)
    return {
        f"{side}_tp": tp,
        f"{side}_ep": reader.integer(f"{side}_ep"),
        f"{side}_dp_attention": reader.flag(f"{side}_dp_attention"),
        f"{side}_workers": workers,
        f"{side}_gpus": gpus,
    }


def _kv_offload(reader: RowReader) -> tuple[str, str]:
    """(tier, backend): kv_offloading is a word or flag; the backend a name or {name, version}."""
    tier = reader.row.get("kv_offloading")
    if isinstance(tier, bool):
        tier = "true" if tier else ""
    if tier is not None and not isinstance(tier, str):
        raise ArtifactError(f"{reader.where}: field 'kv_offloading': got {describe(tier)}")
    tier = (tier or "").strip().lower()
    if tier in NO_KV_OFFLOAD:
        tier = ""

    backend = reader.row.get("kv_offload_backend")
    if isinstance(backend, dict):
        inner = RowReader(backend, where=f"{reader.where} kv_offload_backend")
        backend = " ".join(part for part in (inner.text("name"), inner.text("version")) if part)
    elif backend is not None:
        backend = reader.text("kv_offload_backend")
    return tier, (backend or "")
