"""Aggregate artifacts hold one JSON array of rows; a bad row is skipped, never the whole file."""

from collections.abc import Callable, Mapping
from typing import Any

from runs.parsing.members import location, single_member
from runs.parsing.records import ArtifactError, ArtifactParse, Unmapped
from runs.parsing.values import load_json

RowParser = Callable[[Any, str], tuple[Any, list[Unmapped]]]


def parse_array_rows(
    files: Mapping[str, bytes],
    name: str,
    *,
    artifact: str,
    parse_row: RowParser,
    into: ArtifactParse,
) -> list[Any]:
    """Records of every good row of the array in file `name`, via `parse_row(row, where)`.

    A row whose parsing raises ArtifactError is listed in `into.row_errors`; unmapped names of
    good rows go to `into.unmapped`. A file that is missing or not an array is a bad artifact.
    """
    member = single_member(files, name, artifact=artifact)
    where = location(artifact, member)
    rows = load_json(files[member], where=where)
    if not isinstance(rows, list):
        raise ArtifactError(f"{where}: expected a JSON array, got {type(rows).__name__}")
    records = []
    for index, row in enumerate(rows):
        try:
            record, unmapped = parse_row(row, location(artifact, member, index))
        except ArtifactError as exc:
            into.row_errors.append(str(exc))
            continue
        records.append(record)
        into.unmapped.extend(unmapped)
    return records
