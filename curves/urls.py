"""Pages of the curves app (mounted at the site root by infx_site.urls)."""

from django.urls import path

from curves import views

app_name = "curves"

urlpatterns = [
    path("inference", views.inference, name="inference"),
    path("unofficial/status/", views.unofficial_status, name="unofficial_status"),
]
