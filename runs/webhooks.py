"""GitHub webhook receiver: verified `workflow_run` completions start ingest jobs."""

import json
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from runs.github import webhook_signature_valid
from runs.jobs import ingest_job_request
from runs.models import WebhookDelivery

logger = logging.getLogger(__name__)


@csrf_exempt
@require_POST
def github_webhook(request):
    # A plain Django view: the signature covers the raw body bytes.
    body = request.body
    signature = request.headers.get("X-Hub-Signature-256")
    if not signature:
        return JsonResponse({"error": "missing X-Hub-Signature-256"}, status=401)
    if not webhook_signature_valid(
        secret=settings.GITHUB_WEBHOOK_SECRET, body=body, header=signature
    ):
        return JsonResponse({"error": "invalid signature"}, status=403)
    event = request.headers.get("X-GitHub-Event", "")
    delivery_id = request.headers.get("X-GitHub-Delivery", "")
    if event == "ping":
        return JsonResponse({"pong": True})
    if not delivery_id:
        return JsonResponse({"error": "missing X-GitHub-Delivery"}, status=400)
    try:
        payload = json.loads(body)
        action = payload.get("action", "") if isinstance(payload, dict) else ""
    except (UnicodeDecodeError, json.JSONDecodeError):
        return JsonResponse({"error": "body is not JSON"}, status=400)
    if event != "workflow_run" or action != "completed":
        return HttpResponse(status=204)
    try:
        repository = payload["repository"]["full_name"]
        run_id = int(payload["workflow_run"]["id"])
        attempt = int(payload["workflow_run"].get("run_attempt") or 1)
    except (KeyError, TypeError, ValueError):
        return JsonResponse({"error": "workflow_run payload lacks repository or run"}, status=400)
    try:
        with transaction.atomic():
            delivery = WebhookDelivery.objects.create(
                delivery_id=delivery_id[:100], event=event, action=action
            )
    except IntegrityError:
        return JsonResponse({"status": "duplicate delivery", "delivery": delivery_id})
    job, created = ingest_job_request(
        repository=repository,
        run_id=run_id,
        run_attempt=attempt,
        requested_by=f"webhook {delivery_id}",
    )
    delivery.job = job
    delivery.save(update_fields=["job", "modified"])
    return JsonResponse({"job": job.pk, "created": created}, status=202)
