from django.urls import path

from runs import views, webhooks

app_name = "runs"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<int:run_id>/job/", views.run_job_progress, name="run_job_progress"),
    path("webhooks/github/", webhooks.github_webhook, name="github_webhook"),
]
