from django.urls import path

from runs import evaluation_views, views, webhooks

app_name = "runs"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("runs/", views.run_list, name="run_list"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("evaluation", evaluation_views.evaluation, name="evaluation"),
    path("images/", views.image_list, name="image_list"),
    path("images/<int:image_id>/", views.image_detail, name="image_detail"),
    path("runs/<int:run_id>/job/", views.run_job_progress, name="run_job_progress"),
    path("webhooks/github/", webhooks.github_webhook, name="github_webhook"),
]
