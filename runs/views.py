from django.db import connection
from django.http import Http404, JsonResponse
from django.shortcuts import render

from runs import selectors


def home(request):
    return render(
        request,
        "runs/home.html",
        {
            "official_runs": selectors.run_list_recent(official=True, limit=5),
            "unofficial_runs": selectors.run_list_recent(official=False, limit=10),
        },
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
    return render(request, "runs/run_detail.html", context)


def run_job_progress(request, run_id: int):
    """The latest ingest job's progress, polled by the run page while the job is active."""
    job = selectors.ingest_job_latest(run_id=run_id)
    if job is None:
        raise Http404("no ingest job for this run")
    return render(request, "runs/_job_progress.html", {"job": job, "run_id": run_id})
