"""Query-string filters of the API's lists (django-filter; invalid values are a 400).

Every filter is declared, so Meta.fields is empty: nothing is generated from the model.
"""

from django import forms
from django.core.validators import RegexValidator
from django.db import connections
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from runs.models import (
    Cell,
    CellStatus,
    ChangelogEntry,
    Config,
    EvalResult,
    Image,
    IngestJob,
    IngestJobState,
    RunStats,
    WorkflowRun,
)

# Largest value a BIGINT column holds; a bigger number would overflow the database driver.
MAX_DB_INT = 2**63 - 1
SHA_PREFIX = RegexValidator(r"^[0-9a-fA-F]{7,40}$", "7 to 40 hexadecimal characters of a SHA.")


class IntegerFilter(filters.NumberFilter):
    """An exact integer (NumberFilter parses decimals), bounded to what the database holds."""

    field_class = forms.IntegerField

    def __init__(self, *args, min_value: int = 0, max_value: int = MAX_DB_INT, **kwargs):
        super().__init__(*args, min_value=min_value, max_value=max_value, **kwargs)
        # The bounds in the OpenAPI schema too, so clients (and fuzzers) know them.
        extend_schema_field(
            {"type": "integer", "format": "int64", "minimum": min_value, "maximum": max_value}
        )(self)


def json_list_contains(queryset: QuerySet, *, field: str, value: int) -> QuerySet:
    """Rows whose JSON list `field` holds `value`: the containment operator where the database
    has one (PostgreSQL), else SQLite's json_each table function."""
    connection = connections[queryset.db]
    if connection.features.supports_json_field_contains:
        return queryset.filter(**{f"{field}__contains": [value]})
    quote = connection.ops.quote_name
    column = f"{quote(queryset.model._meta.db_table)}.{quote(field)}"
    # Identifiers come from the model and are quoted; the value is a query parameter.
    holds_value = RawSQL(  # noqa: S611
        f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = %s)",  # noqa: S608
        (value,),
        output_field=BooleanField(),
    )
    return queryset.filter(holds_value)


class WorkflowRunFilter(filters.FilterSet):
    repository = filters.CharFilter(help_text="owner/name")
    official = filters.BooleanFilter(field_name="is_official")
    branch = filters.CharFilter(field_name="head_branch")
    pr = IntegerFilter(method="filter_pr", min_value=1, help_text="A pull request number.")
    sha = filters.CharFilter(
        method="filter_sha",
        validators=[SHA_PREFIX],
        help_text="Head commit SHA or a prefix of at least 7 characters, any case.",
    )
    event = filters.CharFilter(help_text="push, pull_request, workflow_dispatch, schedule ...")
    conclusion = filters.CharFilter(
        method="filter_conclusion", help_text="success, failure ...; an admin override wins."
    )
    # Two filters, not one range filter, so a validation error names the parameter sent.
    created_after = filters.DateFilter(
        field_name="gh_created_at",
        lookup_expr="date__gte",
        help_text="Created by GitHub on this day (UTC) or later.",
    )
    created_before = filters.DateFilter(
        field_name="gh_created_at",
        lookup_expr="date__lte",
        help_text="Created by GitHub on this day (UTC) or earlier.",
    )

    class Meta:
        model = WorkflowRun
        fields: list[str] = []

    def filter_pr(self, queryset: QuerySet, name: str, value: int) -> QuerySet:
        return json_list_contains(queryset, field="pr_numbers", value=value)

    def filter_sha(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(head_sha__istartswith=value)

    def filter_conclusion(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(conclusion_override=value) | Q(conclusion_override="", conclusion=value)
        )


class RunScopedFilter(filters.FilterSet):
    """Rows of one workflow run (by GitHub run id), optionally of one attempt."""

    run = IntegerFilter(field_name="run__run_id", help_text="GitHub run id.")
    attempt = IntegerFilter(field_name="run__run_attempt", min_value=1, help_text="Run attempt.")


class ConfigScopedFilter(RunScopedFilter):
    """Rows of a run narrowed by the served setup."""

    model = filters.CharFilter(field_name="config__model_prefix", help_text="Model prefix: dsr1")
    hardware = filters.CharFilter(field_name="config__hardware", help_text="b200, mi355x ...")
    framework = filters.CharFilter(field_name="config__framework", help_text="sglang, vllm ...")
    precision = filters.CharFilter(field_name="config__precision", help_text="fp4, fp8 ...")
    config = IntegerFilter(field_name="config_id", help_text="Config id.")
    concurrency = IntegerFilter()
    scenario = filters.CharFilter(help_text="1k1k, 8k1k, agentic-coding ...")


class CellFilter(ConfigScopedFilter):
    status = filters.ChoiceFilter(choices=CellStatus.choices)

    class Meta:
        model = Cell
        fields: list[str] = []


class EvalResultFilter(ConfigScopedFilter):
    task = filters.CharFilter(help_text="gsm8k ...")

    class Meta:
        model = EvalResult
        fields: list[str] = []


class ConfigFilter(filters.FilterSet):
    model = filters.CharFilter(field_name="model_prefix", help_text="Model prefix: dsr1")
    hardware = filters.CharFilter()
    framework = filters.CharFilter()
    precision = filters.CharFilter()
    spec_method = filters.CharFilter(help_text="none, mtp, eagle ...")
    disagg = filters.BooleanFilter()

    class Meta:
        model = Config
        fields: list[str] = []


class ImageFilter(filters.FilterSet):
    registry = filters.CharFilter()
    repository = filters.CharFilter(help_text="lmsysorg/sglang ...")
    tag = filters.CharFilter()

    class Meta:
        model = Image
        fields: list[str] = []


class RunStatsFilter(RunScopedFilter):
    hardware = filters.CharFilter()

    class Meta:
        model = RunStats
        fields: list[str] = []


class ChangelogEntryFilter(RunScopedFilter):
    class Meta:
        model = ChangelogEntry
        fields: list[str] = []


class IngestJobFilter(filters.FilterSet):
    repository = filters.CharFilter()
    run = IntegerFilter(field_name="github_run_id", help_text="GitHub run id.")
    state = filters.ChoiceFilter(choices=IngestJobState.choices)

    class Meta:
        model = IngestJob
        fields: list[str] = []


class RunPageFilter(WorkflowRunFilter):
    """The /runs/ page: the API's run filters plus the model and GPU a run measured."""

    model = filters.CharFilter(method="filter_measured", help_text="Model prefix: dsr1")
    hardware = filters.CharFilter(method="filter_measured", help_text="b200, mi355x ...")

    def filter_measured(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        field = "model_prefix" if name == "model" else name
        measured = Cell.objects.filter(**{f"config__{field}": value}).values("run_id")
        # A merge that reused a PR run measured what its source run measured.
        return queryset.filter(Q(pk__in=measured) | Q(source_run__in=measured))
