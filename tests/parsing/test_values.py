import contextlib
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runs.parsing.records import ArtifactError
from runs.parsing.values import (
    RowReader,
    check_metric,
    coerce_bool,
    coerce_float,
    coerce_int,
    collect_metrics,
    load_json,
)


@pytest.mark.parametrize(
    "value", [True, "true", "True", "TRUE", " true ", "1", 1, "yes", "Yes", "y", "on"]
)
def test_true_in_every_form(value):
    assert coerce_bool(value) is True


@pytest.mark.parametrize("value", [False, "false", "False", "0", 0, "no", "n", "off", " FALSE"])
def test_false_in_every_form(value):
    assert coerce_bool(value) is False


@pytest.mark.parametrize("value", [2, -1, 1.0, "maybe", "", None, [], {}, "tru"])
def test_not_a_boolean(value):
    with pytest.raises(ValueError, match="expected a boolean"):
        coerce_bool(value)


@pytest.mark.parametrize(
    ("value", "expected"), [(8, 8), (8.0, 8), ("8", 8), (" 8 ", 8), ("8.0", 8), ("1e3", 1000)]
)
def test_whole_numbers_in_every_form(value, expected):
    assert coerce_int(value) == expected


@pytest.mark.parametrize("value", [True, 8.5, "8.5", "eight", None, [8], "nan", float("inf")])
def test_not_a_whole_number(value):
    with pytest.raises(ValueError, match="expected a"):
        coerce_int(value)


def test_whole_number_below_minimum():
    with pytest.raises(ValueError, match=">= 1"):
        coerce_int("0", minimum=1)


@pytest.mark.parametrize(
    ("value", "expected"), [(1, 1.0), (0.5, 0.5), ("0.5", 0.5), ("1e-3", 1e-3)]
)
def test_floats_in_every_form(value, expected):
    assert coerce_float(value) == expected


@pytest.mark.parametrize("value", [False, "abc", None, {}])
def test_not_a_float(value):
    with pytest.raises(ValueError, match="expected a number"):
        coerce_float(value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (float("nan"), "NaN"),
        ("NaN", "NaN"),
        (float("inf"), "infinite"),
        ("-Infinity", "infinite"),
        (-0.5, "negative"),
        ("-3", "negative"),
        ("fast", "expected a number"),
        (True, "expected a number"),
        ([1.0], "expected a number"),
    ],
)
def test_invalid_metric_is_none_with_reason(value, reason):
    number, problem = check_metric(value)
    assert number is None
    assert reason in problem


def test_absent_metric_is_none_without_reason():
    assert check_metric(None) == (None, "")


def test_negative_allowed_where_asked():
    assert check_metric(-2.5, allow_negative=True) == (-2.5, "")
    assert check_metric(float("-inf"), allow_negative=True) == (None, "infinite")


@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_valid_metrics_pass_through(number):
    assert check_metric(number) == (number, "")
    assert check_metric(repr(number)) == (number, "")


@given(st.floats().filter(lambda x: math.isnan(x) or math.isinf(x) or x < 0))
def test_nan_inf_negative_always_rejected(number):
    value, problem = check_metric(number)
    assert value is None
    assert problem


def test_collect_metrics_splits_values_and_reasons():
    values, invalid = collect_metrics({"a": 1, "b": float("nan"), "c": None})
    assert values == {"a": 1.0, "b": None, "c": None}
    assert invalid == {"b": "NaN"}


def test_python_json_nan_literals_reach_the_metric_check():
    document = load_json(b'{"tput_per_gpu": NaN, "p90_e2el": Infinity}', where="f")
    assert check_metric(document["tput_per_gpu"]) == (None, "NaN")
    assert check_metric(document["p90_e2el"]) == (None, "infinite")


def test_load_json_accepts_utf8_bom():
    assert load_json("\ufeff{}".encode(), where="f") == {}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe{}", "f.json: not UTF-8"),
        (b'{"a": ', "f.json: invalid JSON"),
        (b"", "f.json: invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "f.json: JSON nested too deeply"),
        (b"1" * 5000, "f.json: invalid JSON"),  # beyond Python's integer digit limit
    ],
)
def test_load_json_failures_are_artifact_errors(data, message):
    with pytest.raises(ArtifactError, match=message):
        load_json(data, where="f.json")


def test_row_reader_requires_an_object():
    with pytest.raises(ArtifactError, match="where: expected a JSON object, got list"):
        RowReader([], where="where")


def test_row_reader_text():
    reader = RowReader({"hw": " b200 ", "tp": 8, "nul": "a\x00b", "blank": " "}, where="w")
    assert reader.text("hw") == "b200"
    assert reader.text("absent") == ""
    with pytest.raises(ArtifactError, match="w: field 'absent': missing"):
        reader.text("absent", required=True)
    with pytest.raises(ArtifactError, match="field 'tp': expected a string, got 8"):
        reader.text("tp")
    with pytest.raises(ArtifactError, match="NUL"):
        reader.text("nul")
    with pytest.raises(ArtifactError, match="field 'blank': empty"):
        reader.text("blank", required=True)


def test_row_reader_integer_and_flag():
    reader = RowReader({"conc": "64", "tp": "x", "dpa": "True", "bad": "sometimes"}, where="w")
    assert reader.integer("conc") == 64
    assert reader.integer("absent") is None
    assert reader.flag("dpa") is True
    assert reader.flag("absent") is None
    with pytest.raises(ArtifactError, match="field 'tp': expected a number"):
        reader.integer("tp")
    with pytest.raises(ArtifactError, match="field 'absent': missing"):
        reader.integer("absent", required=True)
    with pytest.raises(ArtifactError, match="field 'bad': expected a boolean"):
        reader.flag("bad")


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5) | st.none()))
def test_row_reader_never_raises_anything_but_artifact_error(row):
    reader = RowReader(row, where="w")
    for key in row:
        for read in (reader.text, reader.integer, reader.flag):
            with contextlib.suppress(ArtifactError):
                read(key)


def test_json_round_trip_of_reader_values():
    reader = RowReader(json.loads('{"isl": "1024", "disagg": 1}'), where="w")
    assert (reader.integer("isl"), reader.flag("disagg")) == (1024, True)
