"""Curve identity from plain values: the stable key the database and URLs use, and the label
reviewers write in PR verdicts.

A curve is one chart series within one run (REFERENCE §4): model prefix, scenario, hardware,
framework, precision, and for fixed-sequence scenarios the speculative method.

Key format: `model/scenario/hardware/framework/precision[/spec_method]/x_metric`, each part
percent-encoded so only RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~) stay literal; a '/'
inside a part becomes %2F, so a key always splits back into its parts. Parts may not be empty,
"." or "..", which URL normalisation would collapse. The spec part is present only for
fixed-sequence curves that use speculative decoding, so each curve has exactly one key;
curve_key_parse accepts only that canonical form.
"""

from collections.abc import Iterable
from dataclasses import dataclass, fields
from urllib.parse import quote, unquote

from curves.coverage import AGENTIC_SCENARIO
from curves.frontier import METRIC_DIRECTIONS

_NO_SPEC_METHOD = "none"
# Empty parts would leave "//" and dot segments are collapsed by URL normalisation.
_FORBIDDEN_PARTS = ("", ".", "..")


@dataclass(frozen=True, kw_only=True)
class CurveIdentity:
    model: str  # model prefix: dsv4, dsr1, gptoss...
    scenario: str  # 1k1k, 8k1k or agentic-coding
    hardware: str
    framework: str
    precision: str
    spec_method: str | None = None  # None when not part of the identity

    def __post_init__(self) -> None:
        # Agentic series do not split by speculative method; "", "none" and None all mean none.
        no_spec_method = (self.spec_method or _NO_SPEC_METHOD) == _NO_SPEC_METHOD
        if no_spec_method or self.scenario == AGENTIC_SCENARIO:
            object.__setattr__(self, "spec_method", None)
        for field in fields(self):
            value = getattr(self, field.name)
            if value in _FORBIDDEN_PARTS:
                raise ValueError(f"curve {field.name} may not be {value!r}")

    def key(self, *, x_metric: str) -> str:
        """e.g. `dsv4/agentic-coding/mi355x/atom-disagg/fp4/p90_e2el`."""
        if x_metric not in METRIC_DIRECTIONS:
            raise ValueError(f"unknown x metric {x_metric!r}")
        spec = [self.spec_method] if self.spec_method else []
        parts = [self.model, self.scenario, self.hardware, self.framework, self.precision]
        return "/".join(quote(part, safe="") for part in [*parts, *spec, x_metric])


def curve_key_parse(key: str) -> tuple[CurveIdentity, str]:
    """(identity, x_metric) from a key made by CurveIdentity.key; ValueError for anything else."""
    parts = [unquote(part) for part in key.split("/")]
    if len(parts) not in (6, 7):
        raise ValueError(f"a curve key has 6 or 7 '/'-separated parts: {key!r}")
    model, scenario, hardware, framework, precision, *spec, x_metric = parts
    identity = CurveIdentity(
        model=model,
        scenario=scenario,
        hardware=hardware,
        framework=framework,
        precision=precision,
        spec_method=spec[0] if spec else None,
    )
    # Re-encoding rejects every other spelling of the same curve ("none" spec, spec on agentic,
    # needless escapes), so keys stay one-to-one with curves.
    if identity.key(x_metric=x_metric) != key:
        raise ValueError(f"not a canonical curve key: {key!r}")
    return identity, x_metric


def curve_label(
    identity: CurveIdentity,
    *,
    x_metric: str,
    runner_label: str,
    images: Iterable[str],
    run_id: int,
    attempt: int,
    source_sha: str,
) -> str:
    """The label reviewers write, e.g. `dsv4 / agentic-coding / cluster:mi355x-amds / fp4 /
    atom-disagg / rocm/atom-dev:nightly_202609221542 / p90_e2el / run 35855544139 attempt 1
    (source SHA 1ed4ab45)`."""
    parts = [
        identity.model,
        identity.scenario,
        runner_label,
        identity.precision,
        identity.framework,
    ]
    if identity.spec_method:
        parts.append(identity.spec_method)
    # Sorted and deduplicated so the label does not depend on the order the points came in.
    distinct_images = sorted({image for image in images if image})
    if distinct_images:
        parts.append(", ".join(distinct_images))
    parts += [x_metric, f"run {run_id} attempt {attempt} (source SHA {source_sha[:8]})"]
    return " / ".join(parts)
