import pytest


@pytest.mark.django_db
def test_home_page_renders_without_runs(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"No runs yet." in response.content


@pytest.mark.django_db
def test_healthz_answers_ok(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_plotly_is_served_from_the_installed_package(client):
    response = client.get("/static/vendor/plotly.min.js")
    assert response.status_code == 200
    assert b"plotly" in b"".join(response.streaming_content)[:2000].lower()


@pytest.mark.django_db
def test_pages_are_sent_compressed_to_clients_that_accept_it(client):
    response = client.get("/", headers={"accept-encoding": "gzip"})
    assert response["Content-Encoding"] == "gzip"
