from django.apps import AppConfig


class CurvesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "curves"
    verbose_name = "Pareto curves"
