"""`server_logs_<RF>`: the serving engine's logs, kept as text for reviewers."""

from collections.abc import Mapping

from runs.parsing.members import members_matching
from runs.parsing.records import ArtifactKind, ArtifactParse, ServerLogRecord

MAX_LOG_BYTES = 2 * 1024 * 1024  # a few logs run away; the head is what reviewers read


def is_log_file(name: str) -> bool:
    return name.endswith(".log")


def log_text(data: bytes, *, max_bytes: int = MAX_LOG_BYTES) -> str:
    """Text decoded with replacement (NUL too), cut at `max_bytes` with a note saying so."""
    # PostgreSQL text cannot hold NUL characters, which crashed engines do write
    text = data[:max_bytes].decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    if len(data) > max_bytes:
        text += f"\n[truncated: first {max_bytes} of {len(data)} bytes kept]\n"
    return text


def parse_server_logs(artifact: str, result_name: str, files: Mapping[str, bytes]) -> ArtifactParse:
    """One record per `.log` file (server.log, results/*.log); no logs is not an error."""
    parse = ArtifactParse(kind=ArtifactKind.SERVER_LOGS, result_name=result_name)
    for member in members_matching(files, is_log_file):
        data = files[member]
        parse.server_logs.append(
            ServerLogRecord(
                result_name=result_name, path=member, text=log_text(data), size_bytes=len(data)
            )
        )
    if not parse.server_logs:
        parse.skipped_reason = "no .log files"
    return parse
