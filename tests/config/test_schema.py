import subprocess
import sys
from pathlib import Path

from openapi_spec_validator import validate


def test_schema_is_public_and_documents_bearer_auth(client, db):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "ErrorOutput" in schema["components"]["schemas"]


def test_schema_covers_every_api_route(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    documented = {(path, method) for path, item in schema["paths"].items() for method in item}
    assert ("/api/v1/projects", "get") in documented
    assert ("/api/v1/projects", "post") in documented
    assert ("/api/v1/projects/{project_id}/tags/{tag_id}/delete", "post") in documented
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            assert "bearerAuth" in str(operation.get("security")), f"{method} {path} names the bearer scheme"
            assert "401" in operation["responses"], f"{method} {path} documents 401"


def test_swagger_ui_is_served(client, db):
    response = client.get("/api/v1/schema/swagger-ui/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_schema_generation_is_warning_free():
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null"],
        cwd=root, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


def test_schema_validates_against_the_openapi_specification(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    validate(schema)  # raises on the first thing that breaks OpenAPI 3.1
    assert schema["openapi"] == "3.1.0"


def test_every_operation_has_a_summary_an_area_and_its_errors(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    areas = {"projects", "tickets", "comments", "checklist", "blockers", "attachments", "tags", "time tracking",
             "notifications", "docs", "events", "webhooks", "transfers", "markdown", "account"}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            where = f"{method} {path}"
            assert operation.get("summary"), f"{where} has a summary"
            assert len(operation["tags"]) == 1 and operation["tags"][0] in areas, where
            assert {"400", "401", "429"} <= operation["responses"].keys(), where
            for code, response in operation["responses"].items():
                if code >= "400":
                    body = response["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
                    assert "error" in schema["components"]["schemas"][body]["required"], f"{where} {code}"


def test_timestamps_are_declared_as_the_strings_they_are(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert "date-time" not in str(schema)
    created_at = schema["components"]["schemas"]["TicketListOutput"]["properties"]["created_at"]
    assert (created_at["type"], created_at["pattern"]) == ("string", r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")


def test_the_websockets_are_documented(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/ws/v1/projects/{id}/board/", "/ws/v1/notifications/"):
        assert path in schema["info"]["description"]
