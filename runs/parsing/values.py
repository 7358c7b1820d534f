"""Coercion of JSON values, and the error policy that goes with it.

Error policy (what the parsers rely on):

- The file as a whole is not UTF-8, not JSON, or not the expected top-level type: `ArtifactError`.
- An identity field (hardware, framework, precision, model, concurrency, topology, flags...) is
  missing when required or has the wrong type: `ArtifactError` for that file (an aggregate
  parser turns it into a skipped row with its reason).
- A metric value that is NaN, infinite, negative or not a number: the metric becomes None and the
  reason is kept (`invalid_metrics`); the cell or eval is still stored. An absent or null metric
  is simply None: nothing was measured, nothing is wrong.

Numbers may arrive as strings ("8", "0.95") and booleans as true, "true", "True", "1", 1, "yes".
Python's json module accepts the NaN and Infinity literals, so they reach the metric checks.
"""

import json
import math
from collections.abc import Mapping
from typing import Any

from runs.parsing.records import ArtifactError

TRUE_WORDS = frozenset({"true", "1", "yes", "y", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "n", "off"})


def load_json(data: bytes, *, where: str) -> Any:
    """Decode one JSON file; anything unreadable is a bad artifact."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ArtifactError(f"{where}: JSON nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError, and integers beyond the digit limit
        raise ArtifactError(f"{where}: invalid JSON ({exc})") from exc


def describe(value: Any) -> str:
    """A short rendering of a value for error messages (never a whole nested document)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def coerce_bool(value: Any) -> bool:
    """true/false, 1/0 and their string forms; anything else raises ValueError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError(f"expected a boolean, got {describe(value)}")


def coerce_float(value: Any) -> float:
    """A JSON number or numeric string as float (may be NaN or infinite); else ValueError."""
    if isinstance(value, bool):  # bool is an int subclass, but true is not a number here
        raise ValueError(f"expected a number, got {describe(value)}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a number, got {describe(value)}")


def coerce_int(value: Any, *, minimum: int = 0) -> int:
    """A whole number (8, 8.0, "8") not below `minimum`; anything else raises ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        as_float = coerce_float(value)
        if not as_float.is_integer():
            raise ValueError(f"expected a whole number, got {describe(value)}")
        number = int(as_float)
    if number < minimum:
        raise ValueError(f"expected a whole number >= {minimum}, got {describe(value)}")
    return number


def check_metric(value: Any, *, allow_negative: bool = False) -> tuple[float | None, str]:
    """A measured value as (number, "") or (None, why it is invalid); absent/null is (None, "")."""
    if value is None:
        return None, ""
    try:
        number = coerce_float(value)
    except ValueError as exc:
        return None, str(exc)
    if math.isnan(number):
        return None, "NaN"
    if math.isinf(number):
        return None, "infinite"
    if number < 0 and not allow_negative:
        return None, f"negative ({number:g})"
    return number, ""


def collect_metrics(
    raw: Mapping[str, Any], *, allow_negative: bool = False
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Check every raw metric: (values with None for absent or invalid, reasons for invalid)."""
    values: dict[str, float | None] = {}
    invalid: dict[str, str] = {}
    for name, value in raw.items():
        values[name], problem = check_metric(value, allow_negative=allow_negative)
        if problem:
            invalid[name] = problem
    return values, invalid


def is_numeric(value: Any) -> bool:
    """Whether a value is meant as a number: a JSON number or a string that parses as one."""
    try:
        coerce_float(value)
    except ValueError:
        return False
    return True


class RowReader:
    """Typed access to the identity fields of one JSON object; problems raise `ArtifactError`.

    `where` names the file (and row) so the error says where the problem is.
    """

    def __init__(self, row: Any, *, where: str) -> None:
        if not isinstance(row, Mapping):
            raise ArtifactError(f"{where}: expected a JSON object, got {type(row).__name__}")
        self.row = row
        self.where = where

    def has(self, key: str) -> bool:
        return self.row.get(key) is not None

    def _fail(self, key: str, problem: str) -> ArtifactError:
        return ArtifactError(f"{self.where}: field {key!r}: {problem}")

    def text(self, key: str, *, required: bool = False) -> str:
        """A string field, stripped; "" when absent or null unless required."""
        value = self.row.get(key)
        if value is None:
            if required:
                raise self._fail(key, "missing")
            return ""
        if not isinstance(value, str):
            raise self._fail(key, f"expected a string, got {describe(value)}")
        if "\x00" in value:  # no database text column can store it
            raise self._fail(key, "contains a NUL character")
        if required and not value.strip():
            raise self._fail(key, "empty")
        return value.strip()

    def integer(self, key: str, *, required: bool = False, minimum: int = 0) -> int | None:
        value = self.row.get(key)
        if value is None or value == "":
            if required:
                raise self._fail(key, "missing")
            return None
        try:
            return coerce_int(value, minimum=minimum)
        except ValueError as exc:
            raise self._fail(key, str(exc)) from exc

    def flag(self, key: str) -> bool | None:
        """A boolean field; None when absent, null or empty."""
        value = self.row.get(key)
        if value is None or value == "":
            return None
        try:
            return coerce_bool(value)
        except ValueError as exc:
            raise self._fail(key, str(exc)) from exc
