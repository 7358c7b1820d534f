"""Pages of the Pareto coverage bypasses: the list at /bypasses/ and the forms posted from it and
from the run page. Writes go through curves.services; every page needs a login, every form a
CSRF token (CsrfViewMiddleware), and only approvers (services.bypass_can_decide) may decide.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from curves import services
from curves.models import BypassState
from curves.selectors import bypass_get, bypass_list, bypasses_with_curves
from curves.serializers import MAX_ATTEMPT, MAX_RUN_ID
from runs.selectors import run_get_latest_attempt

BYPASSES_PER_PAGE = 50
_DECISIONS = {
    "approve": services.bypass_approve,
    "reject": services.bypass_reject,
    "revoke": services.bypass_revoke,
}


class BypassRequestForm(forms.Form):
    run_id = forms.IntegerField(min_value=1, max_value=MAX_RUN_ID, widget=forms.HiddenInput)
    attempt = forms.IntegerField(min_value=1, max_value=MAX_ATTEMPT, widget=forms.HiddenInput)
    sha = forms.CharField(max_length=40, widget=forms.HiddenInput)
    curve = forms.CharField(max_length=500, widget=forms.HiddenInput)
    rationale = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))


class BypassDecisionForm(forms.Form):
    reason = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))


def _back(request: HttpRequest) -> HttpResponseRedirect:
    """To the page the form was on (a local URL only), else the bypass list."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("bypasses:list")
    return HttpResponseRedirect(target)


def _errors_report(request: HttpRequest, errors: dict[str, list[str]]) -> None:
    for field, problems in errors.items():
        messages.error(request, f"{field}: {' '.join(problems)}")


@login_required
@require_GET
def bypass_list_page(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("status", "")
    if state not in BypassState.values:
        state = ""
    page = Paginator(bypass_list(state=state or None), BYPASSES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "page": page,
        "rows": bypasses_with_curves(bypasses=list(page)),
        "status": state,
        "states": BypassState.values,
        "can_decide_bypass": services.bypass_can_decide(user=request.user),
        "decision_form": BypassDecisionForm(),
    }
    return render(request, "curves/bypasses/list.html", context)


@login_required
@require_POST
def bypass_request_submit(request: HttpRequest) -> HttpResponseRedirect:
    form = BypassRequestForm(request.POST)
    if not form.is_valid():
        _errors_report(request, form.errors)
        return _back(request)
    data = form.cleaned_data
    run = run_get_latest_attempt(run_id=data["run_id"], attempt=data["attempt"])
    if run is None:
        raise Http404(f"run {data['run_id']} attempt {data['attempt']} is not stored")
    try:
        bypass, created = services.bypass_request(
            run=run,
            sha=data["sha"],
            curve_key=data["curve"],
            rationale=data["rationale"],
            actor=request.user,
        )
    except ValidationError as error:
        _errors_report(request, error.message_dict)
    else:
        verb = "requested" if created else f"is {bypass.state}"
        messages.success(request, f"Bypass of {bypass.curve_key} for {bypass.sha[:8]} {verb}.")
    return _back(request)


@login_required
@require_POST
def bypass_decide(request: HttpRequest, pk: int, decision: str) -> HttpResponseRedirect:
    if not services.bypass_can_decide(user=request.user):
        raise PermissionDenied("Only bypass approvers and superusers may decide on bypasses.")
    bypass = bypass_get(bypass_id=pk)
    if bypass is None:
        raise Http404(f"bypass {pk} does not exist")
    form = BypassDecisionForm(request.POST)
    if not form.is_valid():
        _errors_report(request, form.errors)
        return _back(request)
    try:
        bypass = _DECISIONS[decision](
            bypass=bypass, actor=request.user, reason=form.cleaned_data["reason"]
        )
    except ValidationError as error:
        _errors_report(request, error.message_dict)
    except services.BypassTransitionError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request, f"Bypass of {bypass.curve_key} for {bypass.sha[:8]}: {bypass.state}."
        )
    return _back(request)
