import pytest


@pytest.mark.django_db
def test_home_page_renders_without_runs(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"No runs yet." in response.content


@pytest.mark.django_db
def test_healthz_answers_ok(client):
    assert client.get("/healthz").json() == {"status": "ok"}
