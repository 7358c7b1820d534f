import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curves.frontier import METRIC_DIRECTIONS
from curves.identity import CurveIdentity, curve_key_parse, curve_label

SEED_CURVE = CurveIdentity(
    model="dsv4",
    scenario="agentic-coding",
    hardware="mi355x",
    framework="atom-disagg",
    precision="fp4",
    spec_method="mtp",  # the seed config labels it so; agentic curves ignore it
)
SPEC_CURVE = CurveIdentity(
    model="dsr1",
    scenario="1k1k",
    hardware="b200",
    framework="sglang",
    precision="fp4",
    spec_method="mtp",
)
URL_SAFE = set(string.ascii_letters + string.digits + "-._~%/")


def test_agentic_key_ignores_the_spec_method():
    assert SEED_CURVE.spec_method is None
    assert (
        SEED_CURVE.key(x_metric="p90_e2el") == "dsv4/agentic-coding/mi355x/atom-disagg/fp4/p90_e2el"
    )


def test_fixed_seq_key_includes_a_spec_method_other_than_none():
    assert SPEC_CURVE.key(x_metric="median_e2el") == "dsr1/1k1k/b200/sglang/fp4/mtp/median_e2el"
    for no_spec in [None, "", "none"]:
        plain = CurveIdentity(
            model="dsr1",
            scenario="1k1k",
            hardware="b200",
            framework="sglang",
            precision="fp4",
            spec_method=no_spec,
        )
        assert plain.spec_method is None
        assert plain.key(x_metric="median_e2el") == "dsr1/1k1k/b200/sglang/fp4/median_e2el"


def test_slashes_and_other_reserved_characters_inside_parts_are_percent_encoded():
    identity = CurveIdentity(
        model="org/model v2",
        scenario="1k1k",
        hardware="cluster:mi355x-amds",
        framework="vllm",
        precision="bf16",
    )
    key = identity.key(x_metric="median_e2el")
    assert key == "org%2Fmodel%20v2/1k1k/cluster%3Ami355x-amds/vllm/bf16/median_e2el"
    assert curve_key_parse(key) == (identity, "median_e2el")


@pytest.mark.parametrize("bad_part", ["", ".", ".."])
def test_parts_that_urls_would_collapse_are_rejected(bad_part):
    with pytest.raises(ValueError, match="curve hardware may not be"):
        CurveIdentity(
            model="dsr1", scenario="1k1k", hardware=bad_part, framework="trt", precision="fp8"
        )


def test_unknown_x_metric_is_rejected():
    with pytest.raises(ValueError, match="unknown x metric"):
        SPEC_CURVE.key(x_metric="p42_e2el")


@pytest.mark.parametrize(
    "key",
    [
        "dsr1/1k1k/b200/sglang/median_e2el",  # too few parts
        "dsr1/1k1k/b200/sglang/fp4/mtp/extra/median_e2el",  # too many parts
        "dsr1/1k1k/b200/sglang/fp4/p42_e2el",  # unknown metric
        "dsr1/1k1k/b200/sglang/fp4/none/median_e2el",  # "none" is spelled by omission
        "dsv4/agentic-coding/mi355x/atom-disagg/fp4/mtp/p90_e2el",  # agentic has no spec part
        "ds%72%31/1k1k/b200/sglang/fp4/median_e2el",  # needless escapes
        "dsr1/1k1k//sglang/fp4/median_e2el",  # empty part
    ],
)
def test_keys_other_than_the_canonical_form_are_rejected(key):
    with pytest.raises(ValueError):
        curve_key_parse(key)


parts = st.text(min_size=1, max_size=12).filter(lambda part: part not in (".", ".."))
identities = st.builds(
    CurveIdentity,
    model=parts,
    scenario=st.sampled_from(["1k1k", "8k1k", "agentic-coding"]) | parts,
    hardware=parts,
    framework=parts,
    precision=parts,
    spec_method=st.sampled_from([None, "", "none", "mtp", "eagle"]) | parts,
)


@given(identity=identities, x_metric=st.sampled_from(sorted(METRIC_DIRECTIONS)))
def test_key_round_trips_and_is_url_safe(identity, x_metric):
    key = identity.key(x_metric=x_metric)
    assert curve_key_parse(key) == (identity, x_metric)
    assert set(key) <= URL_SAFE
    assert key.count("/") == (6 if identity.spec_method else 5)


def test_label_in_the_reviewers_form():
    label = curve_label(
        SEED_CURVE,
        x_metric="p90_e2el",
        runner_label="cluster:mi355x-amds",
        images=["rocm/atom-dev:nightly_202609221542"],
        run_id=35855544139,
        attempt=1,
        source_sha="1ed4ab45c0ffee0000000000000000000000beef",
    )
    assert label == (
        "dsv4 / agentic-coding / cluster:mi355x-amds / fp4 / atom-disagg / "
        "rocm/atom-dev:nightly_202609221542 / p90_e2el / run 35855544139 attempt 1 "
        "(source SHA 1ed4ab45)"
    )


def test_label_lists_distinct_images_sorted_and_the_spec_method():
    label = curve_label(
        SPEC_CURVE,
        x_metric="median_e2el",
        runner_label="b200-nv_3",
        images=["lmsysorg/sglang:v0.6", "lmsysorg/sglang:v0.5", "lmsysorg/sglang:v0.6"],
        run_id=42,
        attempt=2,
        source_sha="abcdef0123456789",
    )
    assert label == (
        "dsr1 / 1k1k / b200-nv_3 / fp4 / sglang / mtp / lmsysorg/sglang:v0.5, "
        "lmsysorg/sglang:v0.6 / median_e2el / run 42 attempt 2 (source SHA abcdef01)"
    )


def test_label_without_images_omits_that_part():
    label = curve_label(
        SPEC_CURVE,
        x_metric="median_e2el",
        runner_label="b200",
        images=[],
        run_id=42,
        attempt=1,
        source_sha="abcdef0123456789",
    )
    assert label == (
        "dsr1 / 1k1k / b200 / fp4 / sglang / mtp / median_e2el / run 42 attempt 1 "
        "(source SHA abcdef01)"
    )
