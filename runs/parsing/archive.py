"""Reading an artifact's files into memory, safely.

An artifact arrives as the zip GitHub serves, as an unzipped folder, or as one bare file (an
upload with `archive: false`). Nothing is ever extracted to disk: members are read into memory,
and an artifact that tries to escape its folder, holds too many members, or inflates beyond the
byte budget (counted while reading; headers can lie) is rejected with `ArtifactError`.
"""

import io
import lzma
import os
import re
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from runs.parsing.records import ArtifactError

# A zip starts with a local file header, or with the end record when it is empty.
ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")
# What decoding a damaged or unsupported member raises (bad CRC, truncated or invalid
# deflate/bzip2/lzma data, unknown compression method, encryption).
CORRUPT_MEMBER_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
)
DRIVE_LETTER = re.compile(r"^[A-Za-z]:")

MemberFilter = Callable[[str], bool]


def read_artifact_files(
    path: Path,
    *,
    wanted: MemberFilter | None = None,
    max_unzipped_bytes: int,
    max_members: int,
) -> dict[str, bytes]:
    """Member path -> content for the members `wanted` accepts (all when None).

    `path` is a zip (detected by its signature, not its extension), a folder, or a single file,
    whose name is then its member path.
    """
    if path.is_dir():
        return _read_folder(
            path, wanted=wanted, max_unzipped_bytes=max_unzipped_bytes, max_members=max_members
        )
    try:
        with path.open("rb") as stream:
            return _read_stream(
                stream,
                name=path.name,
                wanted=wanted,
                max_unzipped_bytes=max_unzipped_bytes,
                max_members=max_members,
            )
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def read_artifact_bytes(
    data: bytes,
    *,
    name: str,
    wanted: MemberFilter | None = None,
    max_unzipped_bytes: int,
    max_members: int,
) -> dict[str, bytes]:
    """As `read_artifact_files`, for a download held in memory; `name` names it in errors."""
    return _read_stream(
        io.BytesIO(data),
        name=name,
        wanted=wanted,
        max_unzipped_bytes=max_unzipped_bytes,
        max_members=max_members,
    )


def _read_stream(
    stream: BinaryIO,
    *,
    name: str,
    wanted: MemberFilter | None,
    max_unzipped_bytes: int,
    max_members: int,
) -> dict[str, bytes]:
    signature = stream.read(4)
    stream.seek(0)
    if signature in ZIP_SIGNATURES:
        return _read_zip(
            stream,
            name=name,
            wanted=wanted,
            max_unzipped_bytes=max_unzipped_bytes,
            max_members=max_members,
        )
    if wanted is not None and not wanted(name):
        return {}
    return {name: _read_capped(stream, budget=max_unzipped_bytes, what=name)}


def _read_capped(stream: BinaryIO, *, budget: int, what: str) -> bytes:
    """Read to the end, but never more than `budget` bytes (one more tells it was exceeded)."""
    data = stream.read(budget + 1)
    if len(data) > budget:
        raise ArtifactError(f"{what}: unpacks to more than the limit of {budget} bytes")
    return data


def _safe_member_name(raw: str, *, artifact: str) -> str:
    """The member path with '/' separators; one that could escape the artifact is rejected."""
    name = raw.replace("\\", "/")
    parts = name.split("/")
    if "\x00" in name or name.startswith("/") or DRIVE_LETTER.match(name) or ".." in parts:
        raise ArtifactError(f"{artifact}: member {raw!r} escapes the artifact")
    cleaned = "/".join(part for part in parts if part not in ("", "."))
    if not cleaned:
        raise ArtifactError(f"{artifact}: member with an empty name")
    return cleaned


def _check_member_count(count: int, *, artifact: str, max_members: int) -> None:
    if count > max_members:
        raise ArtifactError(f"{artifact}: more than the limit of {max_members} members")


def _check_declared_size(total: int, *, artifact: str, max_unzipped_bytes: int) -> None:
    if total > max_unzipped_bytes:
        raise ArtifactError(
            f"{artifact}: members declare {total} bytes, more than the limit of "
            f"{max_unzipped_bytes}"
        )


def _read_zip(
    stream: BinaryIO,
    *,
    name: str,
    wanted: MemberFilter | None,
    max_unzipped_bytes: int,
    max_members: int,
) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise ArtifactError(f"{name}: not a readable zip ({exc})") from exc
    with archive:
        infos = archive.infolist()
        _check_member_count(len(infos), artifact=name, max_members=max_members)
        chosen: dict[str, zipfile.ZipInfo] = {}
        seen: set[str] = set()
        for info in infos:
            member = _safe_member_name(info.filename, artifact=name)
            if member in seen:
                raise ArtifactError(f"{name}: member {member!r} appears twice")
            seen.add(member)
            if not info.is_dir() and (wanted is None or wanted(member)):
                chosen[member] = info
        _check_declared_size(
            sum(info.file_size for info in chosen.values()),
            artifact=name,
            max_unzipped_bytes=max_unzipped_bytes,
        )
        files: dict[str, bytes] = {}
        remaining = max_unzipped_bytes
        for member, info in chosen.items():
            what = f"{name}/{member}"
            try:
                with archive.open(info) as member_stream:
                    files[member] = _read_capped(member_stream, budget=remaining, what=what)
            except CORRUPT_MEMBER_ERRORS as exc:
                raise ArtifactError(f"{what}: corrupt zip member ({exc})") from exc
            remaining -= len(files[member])
        return files


def _read_folder(
    root: Path,
    *,
    wanted: MemberFilter | None,
    max_unzipped_bytes: int,
    max_members: int,
) -> dict[str, bytes]:
    """Regular files under `root`; a symlink out of it is rejected, symlinked folders not walked."""
    try:
        real_root = root.resolve(strict=True)
        chosen: dict[str, Path] = {}
        count = 0
        for folder, subfolders, filenames in os.walk(real_root):  # does not follow symlinks
            subfolders.sort()
            for filename in sorted(filenames):
                count += 1
                _check_member_count(count, artifact=root.name, max_members=max_members)
                path = Path(folder, filename)
                member = path.relative_to(real_root).as_posix()
                target = path.resolve()
                if not target.is_relative_to(real_root):
                    raise ArtifactError(f"{root.name}/{member}: links outside the artifact")
                if not target.is_file():  # FIFOs, devices and dangling links
                    raise ArtifactError(f"{root.name}/{member}: not a regular file")
                if wanted is None or wanted(member):
                    chosen[member] = target
        _check_declared_size(
            sum(target.stat().st_size for target in chosen.values()),
            artifact=root.name,
            max_unzipped_bytes=max_unzipped_bytes,
        )
        files: dict[str, bytes] = {}
        remaining = max_unzipped_bytes
        for member, target in chosen.items():
            with target.open("rb") as stream:
                files[member] = _read_capped(stream, budget=remaining, what=f"{root.name}/{member}")
            remaining -= len(files[member])
        return files
    except (OSError, RuntimeError) as exc:  # unreadable files, symlink loops
        raise ArtifactError(f"{root.name}: cannot read the folder ({exc})") from exc
