"""The bypass API: who may write, the CI question by SHA and curve, the coverage endpoints'
bypass field, the audit, and query counts."""

import pytest
from django.contrib.auth.models import User

from curves.models import BypassState, ParetoBypass, ParetoBypassAudit
from curves.services import bypass_approve, bypass_request
from runs import demo as demo_runs
from tests.bypasses.conftest import ACTORS, session_client
from tests.curves_db.builders import measure
from tests.curves_db.test_run_curves import SEED_KEY, SEED_VERDICT
from tests.factories import ConfigFactory, WorkflowRunFactory

pytestmark = pytest.mark.django_db

BYPASSES = "/api/v1/bypasses/"
SEED_COVERAGE = f"/api/v1/runs/{demo_runs.SEED_PR_RUN_ID}/coverage/"
REQUEST_BODY = {
    "sha": demo_runs.SEED_PR_SHA[:8],
    "curve": SEED_KEY,
    "run": demo_runs.SEED_PR_RUN_ID,
    "rationale": "c1 is dominated; no lower point exists on this image",
}
WRITE_STATUS = {  # request, decide
    "anonymous": (401, 401),
    "token_user": (201, 403),
    "session_user": (201, 403),
    "approver": (201, 200),
    "superuser": (201, 200),
}


def error_code(response) -> str:
    return response.json()["error"]["code"]


# ---- who may write ---------------------------------------------------------------------------


@pytest.mark.parametrize("actor", ACTORS)
def test_who_may_request(seed_run, client_of, actor):
    response = client_of(actor).post(BYPASSES, REQUEST_BODY, format="json")

    assert response.status_code == WRITE_STATUS[actor][0]
    assert ParetoBypass.objects.exists() == (response.status_code == 201)


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize(
    ("decision", "starting_state", "final_state"),
    [
        ("approve", BypassState.REQUESTED, BypassState.APPROVED),
        ("reject", BypassState.REQUESTED, BypassState.REJECTED),
        ("revoke", BypassState.APPROVED, BypassState.REVOKED),
    ],
)
def test_who_may_decide(requested, client_of, actor, decision, starting_state, final_state):
    ParetoBypass.objects.filter(pk=requested.pk).update(state=starting_state)

    response = client_of(actor).post(
        f"{BYPASSES}{requested.pk}/{decision}/", {"reason": "agreed"}, format="json"
    )

    expected = WRITE_STATUS[actor][1]
    assert response.status_code == expected
    requested.refresh_from_db()
    assert requested.state == (final_state if expected == 200 else starting_state)
    if expected == 403:
        assert error_code(response) == "permission_denied"
    if expected == 200:
        assert response.json()["state"] == final_state
        assert ParetoBypassAudit.objects.filter(bypass=requested, action=decision).exists()


def test_session_writes_need_the_csrf_token(seed_run, requested, member, approver):
    without_token = session_client(member, csrf=False).post(BYPASSES, REQUEST_BODY, format="json")
    approver_without_token = session_client(approver, csrf=False).post(
        f"{BYPASSES}{requested.pk}/approve/", {"reason": "ok"}, format="json"
    )
    approver_with_token = session_client(approver).post(
        f"{BYPASSES}{requested.pk}/approve/", {"reason": "ok"}, format="json"
    )

    assert without_token.status_code == 403
    assert "CSRF" in without_token.json()["error"]["detail"]
    assert approver_without_token.status_code == 403
    assert approver_with_token.status_code == 200


# ---- lifecycle and errors --------------------------------------------------------------------


def test_request_approve_revoke_over_the_api(seed_run, client_of):
    ci, approver = client_of("token_user"), client_of("approver")

    first = ci.post(BYPASSES, REQUEST_BODY, format="json")
    second = ci.post(BYPASSES, {**REQUEST_BODY, "rationale": "again"}, format="json")
    bypass_id = first.json()["id"]
    approved = approver.post(f"{BYPASSES}{bypass_id}/approve/", {"reason": "ok"}, format="json")
    approved_again = approver.post(
        f"{BYPASSES}{bypass_id}/approve/", {"reason": "ok"}, format="json"
    )
    revoked = approver.post(
        f"{BYPASSES}{bypass_id}/revoke/", {"reason": "new point"}, format="json"
    )

    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json() == first.json()
    body = first.json()
    assert {key: body[key] for key in ("sha", "curve", "run", "state", "requested_by")} == {
        "sha": demo_runs.SEED_PR_SHA,
        "curve": SEED_KEY,
        "run": {"id": demo_runs.SEED_PR_RUN_ID, "attempt": 1, "head_sha": demo_runs.SEED_PR_SHA},
        "state": "requested",
        "requested_by": "ci-bot",
    }
    assert approved.status_code == 200
    assert approved.json()["annotation"].startswith("admin bypass recorded by approver at ")
    assert approved_again.status_code == 409
    assert approved_again.json()["error"] == {
        "status": 409,
        "code": "conflict",
        "detail": f"bypass {bypass_id} is approved: only requested bypasses can be approved",
    }
    assert (revoked.status_code, revoked.json()["state"]) == (200, "revoked")


def test_request_and_reject_over_the_api(seed_run, client_of):
    bypass_id = client_of("token_user").post(BYPASSES, REQUEST_BODY, format="json").json()["id"]

    rejected = client_of("superuser").post(
        f"{BYPASSES}{bypass_id}/reject/", {"reason": "add c512"}, format="json"
    )

    assert rejected.status_code == 200
    assert {key: rejected.json()[key] for key in ("state", "decided_by", "decision_reason")} == {
        "state": "rejected",
        "decided_by": "root",
        "decision_reason": "add c512",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**REQUEST_BODY, "sha": "1ed4ab"}, "sha"),
        ({**REQUEST_BODY, "sha": "5499d1cc"}, "sha"),
        ({**REQUEST_BODY, "curve": "dsv4/agentic-coding/b200/vllm/fp4/p90_e2el"}, "curve"),
        ({**REQUEST_BODY, "run": 1}, "run"),
        ({**REQUEST_BODY, "attempt": 2}, "run"),
        ({key: value for key, value in REQUEST_BODY.items() if key != "rationale"}, "rationale"),
    ],
)
def test_bad_requests_are_400_naming_the_field(seed_run, client_of, body, field):
    response = client_of("token_user").post(BYPASSES, body, format="json")

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]


def test_decisions_on_unknown_bypasses_and_without_a_reason(requested, client_of):
    approver = client_of("approver")

    assert approver.post(f"{BYPASSES}999999/approve/", {"reason": "x"}).status_code == 404
    no_reason = approver.post(f"{BYPASSES}{requested.pk}/approve/", {}, format="json")
    assert (no_reason.status_code, list(no_reason.json()["error"]["fields"])) == (400, ["reason"])


# ---- what CI reads ---------------------------------------------------------------------------


@pytest.fixture
def approved(requested, approver):
    return bypass_approve(bypass=requested, actor=approver, reason="maintainers agree")


def seed_curve_config():
    return ConfigFactory(
        model_prefix="dsv4", hardware="mi355x", framework="atom-disagg", precision="fp4"
    )


def other_commit_run(sha: str, *, config=None):
    """A run on another commit with the seed PR's curve, also short of the frontier."""
    run = WorkflowRunFactory(head_sha=sha, is_official=False)
    measure(run, config or seed_curve_config(), [1, 16, 64], scenario="agentic-coding")
    return run


def test_ci_asks_by_sha_prefix_and_curve(approved, client_of, api_client):
    other_sha = "5499d1cc4a5c428c9489493382ef4f493423f468"
    other_run = other_commit_run(other_sha)
    bypass_request(
        run=other_run,
        sha=other_sha,
        curve_key=SEED_KEY,
        rationale="also",
        actor=approved.requested_by,
    )

    def ids(**params) -> list[int]:
        response = api_client.get(BYPASSES, params)
        assert response.status_code == 200
        return [row["id"] for row in response.json()["results"]]

    seed_ask = {"curve": SEED_KEY, "status": "approved"}
    assert ids(sha=demo_runs.SEED_PR_SHA, **seed_ask) == [approved.pk]
    assert ids(sha=demo_runs.SEED_PR_SHA[:7].upper(), **seed_ask) == [approved.pk]
    # The other commit has only a pending request: it does not answer for the seed SHA.
    assert ids(sha=other_sha[:7], **seed_ask) == []
    assert len(ids(sha=other_sha[:7], curve=SEED_KEY)) == 1
    assert (
        ids(sha=demo_runs.SEED_PR_SHA, curve="dsv4/agentic-coding/mi355x/vllm/fp4/p90_e2el") == []
    )
    # Pending first.
    assert ids()[1] == approved.pk
    for bad in ({"sha": "1ed4ab"}, {"sha": "not-hex"}, {"status": "granted"}):
        assert api_client.get(BYPASSES, bad).status_code == 400


def test_the_coverage_endpoint_fills_bypass_and_annotates_the_warn(approved, api_client):
    [curve] = api_client.get(SEED_COVERAGE).json()["curves"]

    annotation = (
        f"admin bypass recorded by approver at {approved.decided_at:%Y-%m-%d %H:%M} UTC "
        f"for {demo_runs.SEED_PR_SHA}"
    )
    assert curve["status"] == "WARN"
    assert curve["verdict"] == f"{SEED_VERDICT}; {annotation}"
    assert curve["bypass_state"] == "approved"
    assert curve["bypass"]["id"] == approved.pk
    assert curve["bypass"]["annotation"] == annotation


def test_a_pending_bypass_is_a_state_not_a_bypass(requested, api_client):
    [curve] = api_client.get(SEED_COVERAGE).json()["curves"]

    assert (curve["bypass"], curve["bypass_state"], curve["verdict"]) == (
        None,
        "requested",
        SEED_VERDICT,
    )


def test_a_bypass_for_another_sha_does_not_count(approved, api_client):
    other_run = other_commit_run("5499d1cc4a5c428c9489493382ef4f493423f468")

    [curve] = api_client.get(f"/api/v1/runs/{other_run.run_id}/coverage/").json()["curves"]

    assert curve["key"] == SEED_KEY
    assert (curve["status"], curve["bypass"], curve["bypass_state"]) == ("WARN", None, "none")
    assert "admin bypass" not in curve["verdict"]


def test_commit_coverage_lists_every_run_on_the_commit(approved, api_client):
    other_commit_run("5499d1cc4a5c428c9489493382ef4f493423f468")

    response = api_client.get("/api/v1/coverage/", {"sha": demo_runs.SEED_PR_SHA[:7]})

    assert response.status_code == 200
    body = response.json()
    assert body["sha"] == demo_runs.SEED_PR_SHA[:7]
    [run] = body["runs"]
    assert run["run"]["id"] == demo_runs.SEED_PR_RUN_ID
    assert [(c["key"], c["status"], c["bypass_state"]) for c in run["curves"]] == [
        (SEED_KEY, "WARN", "approved")
    ]
    assert api_client.get("/api/v1/coverage/", {"sha": "abcdef0"}).json()["runs"] == []
    assert api_client.get("/api/v1/coverage/").status_code == 400
    assert api_client.get("/api/v1/coverage/", {"sha": "abc"}).status_code == 400


# ---- the audit -------------------------------------------------------------------------------


def test_the_audit_is_readable_and_read_only(approved, api_client, client_of):
    url = f"{BYPASSES}{approved.pk}/audit/"

    response = api_client.get(url)

    assert response.status_code == 200
    rows = response.json()["results"]
    assert [(row["action"], row["actor"]) for row in rows] == [
        ("request", "member"),
        ("approve", "approver"),
    ]
    assert rows[1]["before"]["state"] == "requested"
    assert rows[1]["after"]["state"] == "approved"
    assert rows[1]["reason"] == "maintainers agree"
    superuser = client_of("superuser")
    for method in (superuser.post, superuser.put, superuser.patch, superuser.delete):
        assert method(url, {}, format="json").status_code == 405
    assert superuser.delete(f"{BYPASSES}{approved.pk}/").status_code == 405
    assert api_client.get(f"{BYPASSES}999999/audit/").status_code == 404


# ---- query counts ----------------------------------------------------------------------------


def many_bypasses(count: int) -> None:
    requester = User.objects.create_user(username="requester")
    config = seed_curve_config()
    for index in range(count):
        run = other_commit_run(f"{index:040x}", config=config)
        bypass_request(
            run=run, sha=run.head_sha, curve_key=SEED_KEY, rationale="r", actor=requester
        )


@pytest.mark.parametrize(
    ("path", "queries"),
    [
        (BYPASSES, 2),  # count, page with runs and users
        (f"{BYPASSES}?sha=0000000&status=requested", 2),
        ("/api/v1/coverage/?sha=0000000", 4),  # bypassed runs, runs, cells, bypasses
    ],
)
def test_list_query_counts_do_not_grow_with_rows(
    seed_run, api_client, django_assert_num_queries, path, queries
):
    many_bypasses(6)

    with django_assert_num_queries(queries):
        response = api_client.get(path)

    assert response.status_code == 200
    body = response.json()
    assert len(body.get("results", body.get("runs"))) >= 5


def test_audit_list_query_count(approved, api_client, django_assert_num_queries):
    # The bypass (404 check), count, page with actors.
    with django_assert_num_queries(3):
        assert api_client.get(f"{BYPASSES}{approved.pk}/audit/").status_code == 200


def test_ci_finds_a_bypass_recorded_for_the_pr_head_assessed_with_an_older_run(seed_run, client_of):
    """Seed thread: run 35855544139 ran on 1ed4ab45; the reviewer assessed PR head 5499d1cc."""
    pr_head = "5499d1cc4a5c428c9489493382ef4f493423f468"
    body = {"sha": pr_head, "curve": SEED_KEY, "run": seed_run.run_id, "rationale": "4/5"}
    bypass_id = client_of("token_user").post(BYPASSES, body, format="json").json()["id"]
    client_of("approver").post(f"{BYPASSES}{bypass_id}/approve/", {"reason": "ok"}, format="json")

    by_commit = client_of("anonymous").get(f"/api/v1/coverage/?sha={pr_head[:8]}").json()
    [run] = by_commit["runs"]
    assert run["assessed_sha"] == pr_head
    [curve] = [c for c in run["curves"] if c["key"] == SEED_KEY]
    assert curve["status"] == "WARN" and curve["bypass"]["state"] == "approved"
    url = f"/api/v1/runs/{seed_run.run_id}/coverage/"
    own_head = client_of("anonymous").get(url).json()
    assert [c["bypass"] for c in own_head["curves"] if c["key"] == SEED_KEY] == [None]
    assessed = client_of("anonymous").get(f"{url}?sha={pr_head}").json()
    assert [c["bypass_state"] for c in assessed["curves"] if c["key"] == SEED_KEY] == ["approved"]
