"""Inserting many new rows at once: COPY on PostgreSQL, `bulk_create` elsewhere.

An ingest writes a thousand cells and artifacts in one go. Django's `bulk_create` spends most
of that time preparing each value in Python and building one huge INSERT; PostgreSQL's COPY
takes plain Python values and is several times faster. Rows are dicts keyed by column
attribute names (`config_id`, not `config`) holding values ready for the database.
"""

from collections.abc import Sequence

from django.db import connections, models
from django.utils import timezone
from psycopg.types.json import Jsonb


def _insert_fields(model: type[models.Model]) -> list[models.Field]:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def _row_complete(row: dict, fields: list[models.Field], now) -> dict:
    """The row with every column: auto timestamps set, missing columns at their default."""
    complete = {}
    for field in fields:
        if getattr(field, "auto_now", False) or (
            getattr(field, "auto_now_add", False) and field.attname not in row
        ):
            complete[field.attname] = now
        elif field.attname in row:
            complete[field.attname] = row[field.attname]
        else:
            complete[field.attname] = field.get_default()
    return complete


def rows_insert(model: type[models.Model], rows: Sequence[dict], *, using: str = "default") -> None:
    """Insert `rows` as new rows of `model` (no ids come back; select them when needed)."""
    if not rows:
        return
    fields = _insert_fields(model)
    now = timezone.now()
    complete = [_row_complete(row, fields, now) for row in rows]
    connection = connections[using]
    if connection.vendor != "postgresql":
        model.objects.using(using).bulk_create([model(**row) for row in complete], batch_size=500)
        return
    # The few conversions Django's own field preparation would make for these values.
    json_columns = [
        index for index, field in enumerate(fields) if isinstance(field, models.JSONField)
    ]
    integer_columns = [
        index for index, field in enumerate(fields) if isinstance(field, models.IntegerField)
    ]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    # The Django cursor wraps psycopg's; COPY is psycopg's own.
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for row in complete:
            values = list(row.values())
            for index in json_columns:
                values[index] = Jsonb(values[index])
            for index in integer_columns:  # metrics arrive as floats, such as 5177.0
                if values[index] is not None:
                    values[index] = int(values[index])
            copy.write_row(values)
