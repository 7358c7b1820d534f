"""Finding files inside an artifact by name. A zip may wrap them in a folder, so match basenames."""

from collections.abc import Callable, Mapping

from runs.parsing.records import ArtifactError


def basename(member: str) -> str:
    return member.rsplit("/", 1)[-1]


def members_matching(files: Mapping[str, bytes], accept: Callable[[str], bool]) -> list[str]:
    """Member paths whose basename `accept`s, in a stable order."""
    return sorted(member for member in files if accept(basename(member)))


def missing_member(files: Mapping[str, bytes], what: str, *, artifact: str) -> ArtifactError:
    listed = ", ".join(sorted(files)[:10]) or "nothing"
    return ArtifactError(f"{artifact}: {what} not found (artifact holds {listed})")


def single_member(files: Mapping[str, bytes], name: str, *, artifact: str) -> str:
    """The one member called `name`; missing or ambiguous is a bad artifact."""
    found = members_matching(files, lambda base: base == name)
    if not found:
        raise missing_member(files, name, artifact=artifact)
    if len(found) > 1:
        raise ArtifactError(f"{artifact}: several files named {name}: {', '.join(found)}")
    return found[0]


def location(artifact: str, member: str, row: int | None = None) -> str:
    """How errors and unmapped names say where they were seen."""
    where = f"{artifact}/{member}"
    return where if row is None else f"{where} row {row}"
