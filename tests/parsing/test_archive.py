import os
import struct
import zipfile

import pytest

from runs.parsing import read_artifact_bytes, read_artifact_files, wanted_members
from runs.parsing.records import ArtifactError, ArtifactKind
from tests.realdata import build_artifact_dir
from tests.ziputil import make_zip

LIMITS = {"max_unzipped_bytes": 1_000_000, "max_members": 50}


def read_bytes(data: bytes, **overrides):
    return read_artifact_bytes(data, name="artifact.zip", **{**LIMITS, **overrides})


def test_zip_members_are_read_with_their_paths():
    data = make_zip({"bmk/agg_x.json": b"{}", "top.txt": b"hello"})
    assert read_bytes(data) == {"bmk/agg_x.json": b"{}", "top.txt": b"hello"}


def test_wanted_filter_leaves_other_members_unread():
    data = make_zip({"meta_env.json": b"{}", "samples_gsm8k.jsonl": b"x" * 10})
    files = read_bytes(data, wanted=wanted_members(ArtifactKind.EVAL))
    assert files == {"meta_env.json": b"{}"}


def test_unwanted_members_do_not_count_against_the_byte_budget():
    data = make_zip({"run_stats.json": b"{}", "huge.bin": b"\0" * 5000})
    files = read_bytes(data, wanted=wanted_members(ArtifactKind.RUN_STATS), max_unzipped_bytes=100)
    assert files == {"run_stats.json": b"{}"}


def test_zip_is_detected_by_signature_not_extension(tmp_path):
    path = tmp_path / "artifact.json"
    path.write_bytes(make_zip({"run_stats.json": b"{}"}))
    assert read_artifact_files(path, **LIMITS) == {"run_stats.json": b"{}"}


def test_single_unzipped_file_is_its_own_member(tmp_path):
    path = tmp_path / "agg_bmk.zip"  # extension lies; content is plain JSON
    path.write_bytes(b"[]")
    assert read_artifact_files(path, **LIMITS) == {"agg_bmk.zip": b"[]"}


def test_single_file_filtered_out_reads_nothing():
    assert read_bytes(b"{}", wanted=lambda member: False) == {}


def test_empty_zip_reads_no_members():
    assert read_bytes(make_zip({})) == {}


def test_folder_is_read_recursively(tmp_path):
    root = build_artifact_dir(
        tmp_path, "server_logs_x", {"server.log": b"a", "results/1.log": b"b"}
    )
    assert read_artifact_files(root, **LIMITS) == {"server.log": b"a", "results/1.log": b"b"}


def test_folder_symlink_inside_is_followed(tmp_path):
    root = build_artifact_dir(tmp_path, "art", {"real.json": b"{}"})
    (root / "alias.json").symlink_to(root / "real.json")
    assert read_artifact_files(root, **LIMITS)["alias.json"] == b"{}"


def test_folder_symlink_escaping_is_rejected(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    root = build_artifact_dir(tmp_path, "art", {"ok.json": b"{}"})
    (root / "leak.json").symlink_to(secret)
    with pytest.raises(ArtifactError, match=r"art/leak.json: links outside the artifact"):
        read_artifact_files(root, **LIMITS)


def test_folder_fifo_is_rejected(tmp_path):
    root = build_artifact_dir(tmp_path, "art", {})
    os.mkfifo(root / "pipe.json")
    with pytest.raises(ArtifactError, match="not a regular file"):
        read_artifact_files(root, **LIMITS)


def test_folder_too_many_members(tmp_path):
    root = build_artifact_dir(tmp_path, "art", {f"{i}.json": b"{}" for i in range(5)})
    with pytest.raises(ArtifactError, match="more than the limit of 4 members"):
        read_artifact_files(root, **{**LIMITS, "max_members": 4})


def test_folder_beyond_byte_limit(tmp_path):
    root = build_artifact_dir(tmp_path, "art", {"a.log": b"x" * 60, "b.log": b"x" * 60})
    with pytest.raises(ArtifactError, match="more than the limit of 100"):
        read_artifact_files(root, **{**LIMITS, "max_unzipped_bytes": 100})


def test_missing_path_is_an_artifact_error(tmp_path):
    with pytest.raises(ArtifactError, match="cannot read"):
        read_artifact_files(tmp_path / "absent.zip", **LIMITS)


@pytest.mark.parametrize(
    "member",
    ["../evil.json", "a/../../evil.json", "/etc/passwd", "C:/windows/evil.json", "..\\evil.json"],
)
def test_path_escaping_member_is_rejected(member):
    data = make_zip({"ok.json": b"{}", member: b"x"})
    with pytest.raises(ArtifactError, match="escapes the artifact"):
        read_bytes(data)


def test_duplicate_member_is_rejected():
    data = make_zip({"a.json": b"1", "./a.json": b"2"})
    with pytest.raises(ArtifactError, match="appears twice"):
        read_bytes(data)


def test_too_many_members():
    data = make_zip({f"{i}.json": b"{}" for i in range(11)})
    with pytest.raises(ArtifactError, match="more than the limit of 10 members"):
        read_bytes(data, max_members=10)


def test_zip_bomb_beyond_declared_limit():
    data = make_zip({"bomb.log": b"\0" * 2_000_000})
    assert len(data) < 10_000
    with pytest.raises(ArtifactError, match="declare 2000000 bytes, more than the limit"):
        read_bytes(data)


def test_zip_bomb_with_lying_size_header_is_caught():
    """Headers claim 10 bytes while the data inflates to 2 MB: the member is rejected, not
    trusted (zipfile stops at the declared size, so the checksum of what was read fails)."""
    data = bytearray(make_zip({"bomb.log": b"\0" * 2_000_000}))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = struct.pack("<I", 10)
    with pytest.raises(ArtifactError, match="artifact.zip/bomb.log"):
        read_bytes(bytes(data))


def test_total_read_size_counts_across_members():
    data = make_zip({"a.log": b"x" * 600, "b.log": b"y" * 600})
    with pytest.raises(ArtifactError, match="more than the limit of 1000"):
        read_bytes(data, max_unzipped_bytes=1000)


def test_corrupt_crc_names_the_member():
    data = bytearray(make_zip({"agg_x.json": b'{"a": 1}'}, compression=zipfile.ZIP_STORED))
    payload_at = data.index(b'{"a": 1}')
    data[payload_at + 6] = ord("2")
    with pytest.raises(ArtifactError, match=r"artifact.zip/agg_x.json: corrupt zip member.*CRC"):
        read_bytes(bytes(data))


def test_truncated_zip_is_rejected():
    data = make_zip({"agg_x.json": b"{}" * 1000})
    with pytest.raises(ArtifactError, match="artifact.zip"):
        read_bytes(data[: len(data) // 2])


def test_garbage_after_zip_signature_is_rejected():
    with pytest.raises(ArtifactError, match="artifact.zip: not a readable zip"):
        read_bytes(b"PK\x03\x04 this is not really a zip")


def test_single_file_beyond_limit():
    with pytest.raises(ArtifactError, match="more than the limit of 10 bytes"):
        read_bytes(b"x" * 11, max_unzipped_bytes=10)
