"""Turning the real benchmark_serving outputs in ../shared/reference/real-data into artifacts.

Those files are raw client outputs (throughput for the whole server, median/p99 latencies); the
helpers wrap each into the `bmk_` aggregate row the benchmark's post-processing would write, so
the parsers can be run over real numbers.
"""

import json
import re
from pathlib import Path

GPUS = 8  # all real runs served on one 8-GPU node
# glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json, minimax_m25_vllm_tep8_..., qwen35_vllm_tp8_...
BENCHMARK_SERVING_NAME = re.compile(
    r"(?P<model>.+?)(?:_(?P<precision>fp4|fp8|bf16))?_(?P<framework>vllm|sglang|trt)"
    r"_(?P<parallel>tp|tep|dep)(?P<size>\d+)_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)"
)
# The file names give no precision for these models; the checkpoints are served natively.
DEFAULT_PRECISION = {"minimax_m25": "fp8", "qwen35": "bf16"}


def benchmark_serving_to_bmk_row(path: Path, *, runner: str = "h200-nb_0") -> dict:
    """A fixed-seq `bmk_` row from one benchmark_serving file (the files do not name the GPU)."""
    found = BENCHMARK_SERVING_NAME.fullmatch(path.stem)
    if found is None:
        raise ValueError(f"unexpected benchmark_serving file name: {path.name}")
    raw = json.loads(path.read_text())
    size = int(found["size"])
    tpot = raw["median_tpot"]
    return {
        "hw": runner,
        "conc": int(found["conc"]),
        "image": "vllm#vllm-openai:latest",
        "model": raw["model_id"],
        "infmax_model_prefix": found["model"],
        "framework": found["framework"],
        "precision": found["precision"] or DEFAULT_PRECISION[found["model"]],
        "spec_decoding": "none",
        "disagg": False,
        "isl": int(found["isl"]),
        "osl": int(found["osl"]),
        "is_multinode": False,
        "tp": size,
        "ep": 1 if found["parallel"] == "tp" else size,  # tep/dep: expert parallel across all
        "dp_attention": found["parallel"] == "dep",
        "tput_per_gpu": (raw["input_throughput"] + raw["output_throughput"]) / GPUS,
        "output_tput_per_gpu": raw["output_throughput"] / GPUS,
        "input_tput_per_gpu": raw["input_throughput"] / GPUS,
        **{
            f"{stat}_{metric}": raw[f"{stat}_{metric}"]
            for stat in ("median", "p99")
            for metric in ("ttft", "tpot", "e2el")
        },
        "median_intvty": 1 / tpot if tpot else None,
        "p99_intvty": 1 / raw["p99_tpot"] if raw["p99_tpot"] else None,
    }


def build_artifact_dir(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    """An unzipped artifact folder `tmp_path/name` holding `files` (paths may have folders)."""
    root = tmp_path / name
    for member, data in files.items():
        target = root / member
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    root.mkdir(parents=True, exist_ok=True)
    return root
