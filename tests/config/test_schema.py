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
