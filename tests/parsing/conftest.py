import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "artifacts"

FIXED_RF = (
    "dsv4_8k1k_fp4_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc64"
    "_mi355x-amds_03_recipe-3f9c1a0b7d2e4c56"
)
AGENTIC_RF = "dsv4_p1x8ep8dpa_d1x8ep8dpa_conc32_kvdram-hicache"


def fixture_json(name: str):
    return json.loads((FIXTURES / name).read_text())


def encode(document) -> bytes:
    return json.dumps(document).encode()


@pytest.fixture
def fixed_row() -> dict:
    return fixture_json("fixed_seq_row.json")


@pytest.fixture
def agentic_row() -> dict:
    return fixture_json("agentic_row.json")


@pytest.fixture
def meta_env() -> dict:
    return fixture_json("meta_env.json")


@pytest.fixture
def lm_eval_results() -> dict:
    return fixture_json("lm_eval_results.json")
