from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render

from curves.selectors import run_coverage
from curves.services import bypass_can_decide
from runs import selectors
from runs.filters import RunPageFilter
from runs.models import Image

RUNS_PER_PAGE = 50


def home(request):
    official = selectors.run_list_recent(official=True, limit=5)
    return render(
        request,
        "runs/home.html",
        {
            "latest_official": official[0] if official else None,
            "official_runs": official,
            "unofficial_runs": selectors.run_list_recent(official=False, limit=10),
        },
    )


def run_list(request):
    run_filter = RunPageFilter(request.GET, queryset=selectors.run_list())
    runs = selectors.run_page_list(queryset=run_filter.qs if run_filter.is_valid() else
                                   selectors.run_list().none())  # fmt: skip
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "runs/run_list.html",
        {
            "filter": run_filter,
            "choices": selectors.run_filter_choices(),
            "page": page,
            "query": query.urlencode(),
        },
    )


def image_list(request):
    return render(request, "runs/image_list.html", {"images": selectors.image_usage_list()})


def image_detail(request, image_id: int):
    image = get_object_or_404(Image, pk=image_id)
    return render(
        request, "runs/image_detail.html", {"image": image, **selectors.image_usage(image=image)}
    )


def healthz(request):
    """Liveness for docker compose and load balancers: the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def run_detail(request, run_id: int):
    attempt = request.GET.get("attempt")
    run = selectors.run_get_latest_attempt(
        run_id=run_id, attempt=int(attempt) if attempt and attempt.isdigit() else None
    )
    job = selectors.ingest_job_latest(run_id=run_id)
    if run is None and job is None:
        raise Http404(f"Run {run_id} is not stored and no ingest job was asked for it.")
    context = {"run_id": run_id, "run": run, "job": job}
    if run is not None:
        context["artifacts"] = run.artifacts.order_by("state", "name")
        context["attempts"] = selectors.run_attempts(run_id=run_id)
        context.update(selectors.run_page_details(run=run))
        context["curve_coverage"] = run_coverage(run=run).curves
        context["can_decide_bypass"] = bypass_can_decide(user=request.user)
    return render(request, "runs/run_detail.html", context)


def run_job_progress(request, run_id: int):
    """The latest ingest job's progress, polled by the run page while the job is active."""
    job = selectors.ingest_job_latest(run_id=run_id)
    if job is None:
        raise Http404("no ingest job for this run")
    return render(request, "runs/_job_progress.html", {"job": job, "run_id": run_id})
