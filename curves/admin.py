from django.contrib import admin

from curves.models import GpuCost


@admin.register(GpuCost)
class GpuCostAdmin(admin.ModelAdmin):
    list_display = ("hardware", "watts_per_gpu", "dollars_per_gpu_hour", "notes", "modified")
    list_editable = ("watts_per_gpu", "dollars_per_gpu_hour")
    search_fields = ("hardware", "notes")
