"""Derived cost and energy metrics, and the seeded GPU cost table."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curves.derived import cost_per_million_tokens, tokens_per_mw
from curves.models import GpuCost

positive = st.floats(min_value=1e-3, max_value=1e7, allow_nan=False, allow_infinity=False)
unusable = st.one_of(
    st.none(),
    st.booleans(),
    st.just(math.nan),
    st.just(math.inf),
    st.floats(max_value=0.0, allow_nan=False),
    st.text(alphabet="abc", min_size=1),
)


def test_known_values():
    # An H100 at $2/h serving 1000 tok/s/GPU: 3.6M tokens per hour, so $0.555... per million.
    assert cost_per_million_tokens(1000, 2.0) == pytest.approx(2.0 / 3.6)
    assert tokens_per_mw(1000, 1400) == pytest.approx(1000 / 1400 * 1e6)
    assert cost_per_million_tokens("1000", "2") == pytest.approx(2.0 / 3.6)


@given(tput=positive, price=positive, factor=st.floats(min_value=1.01, max_value=100))
def test_cost_is_positive_falls_with_throughput_and_rises_with_price(tput, price, factor):
    cost = cost_per_million_tokens(tput, price)
    assert cost > 0
    assert cost_per_million_tokens(tput * factor, price) < cost
    assert cost_per_million_tokens(tput, price * factor) > cost


@given(tput=positive, watts=positive, factor=st.floats(min_value=1.01, max_value=100))
def test_tokens_per_mw_is_positive_rises_with_throughput_and_falls_with_power(tput, watts, factor):
    energy = tokens_per_mw(tput, watts)
    assert energy > 0
    assert tokens_per_mw(tput * factor, watts) > energy
    assert tokens_per_mw(tput, watts * factor) < energy


@given(bad=unusable, good=positive)
def test_missing_or_invalid_inputs_give_none(bad, good):
    assert cost_per_million_tokens(bad, good) is None
    assert cost_per_million_tokens(good, bad) is None
    assert tokens_per_mw(bad, good) is None
    assert tokens_per_mw(good, bad) is None


@pytest.mark.django_db
def test_the_migration_seeds_an_estimate_for_every_gpu():
    costs = {cost.hardware: cost for cost in GpuCost.objects.all()}

    assert set(costs) == {
        "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x"
    }  # fmt: skip
    for cost in costs.values():
        assert 500 < cost.watts_per_gpu < 5000
        assert 0.5 < cost.dollars_per_gpu_hour < 20
        cost.full_clean()
