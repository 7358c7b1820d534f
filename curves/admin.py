from django.contrib import admin

from curves.models import GpuCost, ParetoBypass, ParetoBypassAudit


@admin.register(GpuCost)
class GpuCostAdmin(admin.ModelAdmin):
    list_display = ("hardware", "watts_per_gpu", "dollars_per_gpu_hour", "notes", "modified")
    list_editable = ("watts_per_gpu", "dollars_per_gpu_hour")
    search_fields = ("hardware", "notes")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable, never added, edited or deleted here: bypasses change only through
    curves.services (the /bypasses/ page and the API), which check the transition and audit it."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ParetoBypassAuditInline(admin.TabularInline):
    model = ParetoBypassAudit
    fields = ("at", "action", "actor", "reason", "before", "after")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ParetoBypass)
class ParetoBypassAdmin(ReadOnlyAdmin):
    list_display = ("curve_key", "sha", "state", "run", "requested_by", "decided_by", "modified")
    list_filter = ("state",)
    search_fields = ("sha", "curve_key", "rationale", "decision_reason")
    list_select_related = ("run", "requested_by", "decided_by")
    inlines = [ParetoBypassAuditInline]


@admin.register(ParetoBypassAudit)
class ParetoBypassAuditAdmin(ReadOnlyAdmin):
    list_display = ("at", "action", "bypass", "actor", "reason")
    list_filter = ("action",)
    search_fields = ("bypass__sha", "bypass__curve_key", "reason")
    list_select_related = ("bypass", "actor")
