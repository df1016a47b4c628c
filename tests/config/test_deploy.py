import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DJANGO_SECRET_KEY": "x8#kq1!m2v$z7p@w3n%c5r^t9y&u4i*o6e(a0s)d-f_g+h=jLk2Q9wZ",
    "DJANGO_ALLOWED_HOSTS": "tracker.example.com",
    "DJANGO_DEBUG": "0",
}


def deploy_check(env: dict) -> subprocess.CompletedProcess:
    clean = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env={**clean, **env}, capture_output=True, text=True)


def test_check_deploy_is_clean_with_production_variables():
    result = deploy_check(PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_flags_the_development_defaults():
    result = deploy_check({})
    assert result.returncode != 0
    assert "security.W009" in result.stderr  # the built-in secret key


def test_check_deploy_warns_of_a_bucket_that_is_not_there(s3_server):
    bucket = s3_server.new_bucket()
    present = deploy_check({**PRODUCTION, **bucket.env()})
    missing = deploy_check({**PRODUCTION, **bucket.env(), "AWS_STORAGE_BUCKET_NAME": "tracker-never-created"})

    assert present.returncode == 0, present.stdout + present.stderr
    assert missing.returncode != 0
    assert "tracker.W002" in missing.stderr and "tracker-never-created does not exist" in missing.stderr
