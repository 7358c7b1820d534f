from django.core.validators import MinValueValidator
from django.db import models


class GpuCost(models.Model):
    """Editable cost and power estimates of one GPU, for cost and energy charts."""

    hardware = models.CharField(
        max_length=100, unique=True, help_text="GPU key as in Config.hardware: h100, mi355x..."
    )
    watts_per_gpu = models.FloatField(
        validators=[MinValueValidator(1)],
        help_text="All-in watts per GPU: the GPU plus its share of host, network and cooling.",
    )
    dollars_per_gpu_hour = models.FloatField(
        validators=[MinValueValidator(0.01)], help_text="All-in rental cost per GPU-hour in USD."
    )
    notes = models.TextField(blank=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["hardware"]
        verbose_name = "GPU cost"

    def __str__(self) -> str:
        return f"{self.hardware}: {self.watts_per_gpu:g} W, ${self.dollars_per_gpu_hour:g}/h"
