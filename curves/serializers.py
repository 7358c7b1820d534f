"""Query parameters and JSON shapes of the curves API; the data comes from curves.selectors."""

from rest_framework import serializers

from curves.coverage import Y_METRIC, coverage_x_metric
from curves.models import BypassState, ParetoBypassAudit
from curves.selectors import CHART_METRICS
from runs.filters import SHA_PREFIX

# Bounds of the database columns, so an oversized number is a 400/404, never a database error.
MAX_RUN_ID = 2**63 - 1
MAX_ATTEMPT = 2**31 - 1


# ---- GET /api/v1/runs/<run id>/coverage/ ----------------------------------------------------


class RunCoverageQuerySerializer(serializers.Serializer):
    attempt = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ATTEMPT,
        help_text="Run attempt; the latest stored attempt when omitted.",
    )
    sha = serializers.RegexField(
        r"^[0-9a-fA-F]{40}$",
        required=False,
        help_text=(
            "Full SHA of the assessed commit whose bypasses answer (a PR head assessed with "
            "this run); the run's head SHA when omitted."
        ),
    )


class SourceRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="run_id")
    attempt = serializers.IntegerField(source="run_attempt")
    head_sha = serializers.CharField()


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="run_id")
    attempt = serializers.IntegerField(source="run_attempt")
    repository = serializers.CharField()
    head_sha = serializers.CharField()
    branch = serializers.CharField(source="head_branch")
    official = serializers.BooleanField(source="is_official")
    source_run = SourceRunSerializer(
        allow_null=True,
        help_text="For a merge that reused a PR run: the run whose cells are assessed.",
    )


class FrontierPointSerializer(serializers.Serializer):
    """A curves.frontier.Point whose ref is a cell id."""

    concurrency = serializers.IntegerField(allow_null=True)
    x = serializers.FloatField()
    y = serializers.FloatField()
    cell_id = serializers.IntegerField(source="ref")


class DominatedPointSerializer(serializers.Serializer):
    concurrency = serializers.IntegerField(source="point.concurrency", allow_null=True)
    x = serializers.FloatField(source="point.x")
    y = serializers.FloatField(source="point.y")
    cell_id = serializers.IntegerField(source="point.ref")
    dominated_by = FrontierPointSerializer()
    relation = serializers.CharField(help_text='e.g. "at higher p90 E2EL and lower throughput"')


class InvalidPointSerializer(serializers.Serializer):
    concurrency = serializers.IntegerField(source="point.concurrency", allow_null=True)
    cell_id = serializers.IntegerField(source="point.ref")
    reasons = serializers.ListField(child=serializers.CharField())


class AssessedRunSerializer(SourceRunSerializer):
    """The run attempt whose curve a bypass was asked for."""


class ParetoBypassSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    sha = serializers.CharField(help_text="Full head SHA of the assessed run; binds the bypass.")
    curve = serializers.CharField(source="curve_key")
    run = AssessedRunSerializer(allow_null=True, help_text="Null once the run was purged.")
    state = serializers.ChoiceField(choices=BypassState.choices)
    rationale = serializers.CharField()
    requested_by = serializers.CharField(source="requested_by.username")
    requested_at = serializers.DateTimeField(source="created")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_reason = serializers.CharField()
    modified = serializers.DateTimeField()
    annotation = serializers.CharField(
        source="verdict_annotation",
        help_text='When approved: "admin bypass recorded by <user> at <time> for <sha>", else "".',
    )


class ParetoBypassAuditSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=ParetoBypassAudit.Action.choices)
    actor = serializers.CharField(source="actor.username")
    at = serializers.DateTimeField()
    reason = serializers.CharField()
    before = serializers.DictField(help_text="The bypass before the change; {} when created.")
    after = serializers.DictField(help_text="The bypass after the change.")


class RunCurveSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    x_metric = serializers.CharField()
    y_metric = serializers.CharField()
    status = serializers.ChoiceField(choices=["PASS", "WARN"], source="coverage.status")
    measured_points = serializers.IntegerField(source="coverage.measured_points")
    invalid_points = serializers.IntegerField(source="coverage.invalid_points")
    frontier_points = serializers.IntegerField(source="coverage.frontier_points")
    recommended_points = serializers.IntegerField(source="coverage.recommended_points")
    frontier = FrontierPointSerializer(many=True, source="coverage.frontier")
    dominated = DominatedPointSerializer(many=True, source="coverage.dominated")
    invalid = InvalidPointSerializer(many=True, source="coverage.invalid")
    verdict = serializers.CharField(
        help_text="The reviewer verdict; an approved bypass appends its annotation (still WARN)."
    )
    bypass = ParetoBypassSerializer(
        source="approved_bypass",
        allow_null=True,
        help_text="The approved bypass for the run's head SHA and this curve, else null.",
    )
    bypass_state = serializers.ChoiceField(
        choices=["none", *BypassState.values],
        help_text="State of the bypass for the run's head SHA and this curve, if any was asked.",
    )


class FailedCellSerializer(serializers.Serializer):
    cell_id = serializers.IntegerField()
    config_id = serializers.IntegerField()
    curve_key = serializers.CharField()
    scenario = serializers.CharField()
    concurrency = serializers.IntegerField()
    topology = serializers.CharField()
    image = serializers.CharField()
    reason = serializers.CharField()


class RunCoverageSerializer(serializers.Serializer):
    run = RunSerializer()
    assessed_sha = serializers.CharField(
        help_text="The commit whose bypasses fill `bypass`: the run's head SHA unless asked."
    )
    curves = RunCurveSerializer(many=True)
    failed_cells = FailedCellSerializer(many=True)


# ---- GET /api/v1/coverage/ ------------------------------------------------------------------


def _sha_prefix_field(
    *, help_text: str = "A commit SHA or a prefix of at least 7 characters, any case.", **kwargs
) -> serializers.CharField:
    return serializers.CharField(validators=[SHA_PREFIX], help_text=help_text, **kwargs)


class CommitCoverageQuerySerializer(serializers.Serializer):
    sha = _sha_prefix_field()


class CommitCoverageSerializer(serializers.Serializer):
    sha = serializers.CharField(help_text="As asked.")
    runs = RunCoverageSerializer(
        many=True, help_text="The latest attempt of each run, newest first."
    )


# ---- /api/v1/bypasses/ ----------------------------------------------------------------------


class BypassListQuerySerializer(serializers.Serializer):
    sha = _sha_prefix_field(required=False)
    curve = serializers.CharField(required=False, max_length=500, help_text="A curve key.")
    status = serializers.ChoiceField(required=False, choices=BypassState.choices)


class BypassRequestSerializer(serializers.Serializer):
    sha = _sha_prefix_field(
        max_length=40, help_text="The run's head SHA, or a prefix of at least 7 characters."
    )
    curve = serializers.CharField(max_length=500, help_text="A WARN curve's key in that run.")
    run = serializers.IntegerField(min_value=1, max_value=MAX_RUN_ID, help_text="GitHub run id.")
    attempt = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ATTEMPT,
        help_text="Run attempt; the latest stored attempt when omitted.",
    )
    rationale = serializers.CharField(max_length=10_000, help_text="Why it should merge anyway.")


class BypassDecisionSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=10_000, help_text="Why; kept in the audit.")


# ---- GET /api/v1/curves/ --------------------------------------------------------------------


def _metric_field(*, help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=CHART_METRICS,
        required=False,
        help_text=help_text,
        error_messages={
            "invalid_choice": f'unknown metric "{{input}}"; known: {", ".join(CHART_METRICS)}'
        },
    )


class CurveChartQuerySerializer(serializers.Serializer):
    model = serializers.CharField(max_length=100, help_text="Model prefix, e.g. dsr1.")
    scenario = serializers.CharField(max_length=50, help_text="1k1k, 8k1k or agentic-coding.")
    precision = serializers.ListField(
        child=serializers.CharField(max_length=50),
        required=False,
        help_text="Only these precisions (repeat the parameter for several).",
    )
    hardware = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        help_text="Only these GPUs (repeat the parameter for several).",
    )
    framework = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        help_text="Only these engines (repeat the parameter for several).",
    )
    date = serializers.DateField(
        required=False, help_text="As of this date (YYYY-MM-DD): ignore later official runs."
    )
    run = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_RUN_ID,
        help_text="Only this official run (GitHub run id).",
    )
    x = _metric_field(help_text="x axis metric; the scenario's coverage latency when omitted.")
    y = _metric_field(help_text="y axis metric; tput_per_gpu when omitted.")

    def validate(self, attrs: dict) -> dict:
        # Same defaults as official_chart_series, resolved here so the response can name them.
        attrs.setdefault("x", coverage_x_metric(attrs["scenario"]))
        attrs.setdefault("y", Y_METRIC)
        return attrs


class ChartPointSerializer(serializers.Serializer):
    cell_id = serializers.IntegerField(source="point.cell_id")
    config_id = serializers.IntegerField(source="point.config_id")
    concurrency = serializers.IntegerField(source="point.concurrency")
    x = serializers.FloatField(allow_null=True)
    y = serializers.FloatField(allow_null=True)
    topology = serializers.CharField(source="point.topology")
    image = serializers.CharField(source="point.image")
    date = serializers.DateField(source="point.date")
    run_id = serializers.IntegerField(source="point.run_id")
    run_attempt = serializers.IntegerField(source="point.run_attempt")
    source_run_id = serializers.IntegerField(
        source="point.source_run_id", help_text="The run that measured it (differs when reused)."
    )


class ChartFrontierPointSerializer(serializers.Serializer):
    cell_id = serializers.IntegerField(source="point.cell_id")
    concurrency = serializers.IntegerField(source="point.concurrency")
    x = serializers.FloatField()
    y = serializers.FloatField()


class ChartSeriesSerializer(serializers.Serializer):
    hardware = serializers.CharField(source="group.hardware")
    framework = serializers.CharField(source="group.framework")
    precision = serializers.CharField(source="group.precision")
    spec_method = serializers.CharField(source="group.spec_method")
    disagg = serializers.BooleanField(source="group.disagg")
    label = serializers.CharField(source="group.label")
    date = serializers.DateField(source="group.date", help_text="The group's latest run date.")
    points = ChartPointSerializer(many=True)
    frontier = ChartFrontierPointSerializer(many=True)


class CurveChartSerializer(serializers.Serializer):
    model = serializers.CharField()
    scenario = serializers.CharField()
    x_metric = serializers.CharField()
    y_metric = serializers.CharField()
    date = serializers.DateField(allow_null=True)
    run = serializers.IntegerField(allow_null=True)
    groups = ChartSeriesSerializer(many=True)
