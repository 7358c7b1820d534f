"""The /evaluation page: lm-eval scores per model and task against their pass threshold.

The selection, charts and notices come from runs/eval_charts.py; with `?unofficialRun=<id>`
(curves.unofficial, shared with /inference) the ready pull-request runs overlay the official
rows under a NON-OFFICIAL banner, and runs still being ingested show their progress.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from curves.unofficial import unofficial_page_context, unofficial_requested_by
from infx_site.querystrings import query_without
from runs.eval_charts import evaluation_charts, evaluation_selection_parse, overlay_notices
from runs.selectors import eval_thresholds_load, official_eval_rows, run_eval_rows


def evaluation(request: HttpRequest) -> HttpResponse:
    messages: list[str] = []
    unofficial = unofficial_page_context(
        query=request.GET,
        page="evaluation",
        requested_by=unofficial_requested_by(
            username=request.user.get_username(), page="evaluation"
        ),
    )
    unofficial_rows = run_eval_rows(runs=[entry.run for entry in unofficial["unofficial_ready"]])
    parsed = evaluation_selection_parse(
        query_params=request.GET, extra_rows=unofficial_rows, messages=messages
    )
    if parsed is None:
        return render(request, "runs/evaluation.html", {"notices": messages, **unofficial})
    selection, options = parsed
    messages.extend(overlay_notices(model=selection.model, unofficial_rows=unofficial_rows))
    charts = evaluation_charts(
        model=selection.model,
        tasks=[selection.task] if selection.task else options.tasks,
        official_rows=official_eval_rows(
            model=selection.model, as_of=selection.as_of, run_id=selection.run_id
        ),
        unofficial_rows=unofficial_rows,
        thresholds=eval_thresholds_load(),
    )
    context = {
        **unofficial,
        "notices": messages,
        "selection": selection,
        "options": options,
        "charts": charts,
        "page_data": {"model": selection.model, "charts": charts},
        "row_count": sum(chart["row_count"] for chart in charts),
        "unofficial_run_ids": ",".join(
            str(entry.run_id) for entry in unofficial["unofficial_runs"] if entry.run_id
        ),
        "history_query": query_without(request.GET, "date", "run"),
    }
    return render(request, "runs/evaluation.html", context)
