"""Metrics derived from throughput and a GPU's cost (see curves.models.GpuCost).

Pure functions: they return None rather than a misleading number when an input is missing,
not a number, not finite or not positive.
"""

import math

SECONDS_PER_HOUR = 3600
TOKENS_PER_MILLION = 1e6
WATTS_PER_MEGAWATT = 1e6
# Chart metrics computed here rather than read from a Cell column.
DERIVED_METRICS = ("cost_per_million_tokens", "tokens_per_mw")


def _positive(value: object) -> float | None:
    # bool is an int subclass, but a flag is never a measurement.
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def cost_per_million_tokens(tput_per_gpu: object, dollars_per_gpu_hour: object) -> float | None:
    """Dollars per million tokens: a GPU-hour's cost over the tokens it serves in that hour."""
    tput = _positive(tput_per_gpu)
    dollars = _positive(dollars_per_gpu_hour)
    if tput is None or dollars is None:
        return None
    return dollars / (tput * SECONDS_PER_HOUR) * TOKENS_PER_MILLION


def tokens_per_mw(tput_per_gpu: object, watts_per_gpu: object) -> float | None:
    """Tokens per second per megawatt of all-in power."""
    tput = _positive(tput_per_gpu)
    watts = _positive(watts_per_gpu)
    if tput is None or watts is None:
        return None
    return tput / watts * WATTS_PER_MEGAWATT
