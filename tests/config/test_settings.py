import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def settings_under(env: dict) -> dict:
    """The database and channel-layer settings a fresh process derives from `env`."""
    code = ("import json; from django.conf import settings as s; "
            "print(json.dumps({'db': s.DATABASES['default'], 'layer': s.CHANNEL_LAYERS['default']}, default=str))")
    clean = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    result = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_defaults_are_sqlite_in_wal_mode_and_the_in_memory_layer():
    found = settings_under({})
    assert found["db"]["ENGINE"] == "django.db.backends.sqlite3"
    assert found["db"]["NAME"] == str(ROOT / "db.sqlite3")
    assert found["db"]["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in found["db"]["OPTIONS"]["init_command"]
    assert found["layer"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_a_sqlite_url_keeps_the_concurrency_options():
    found = settings_under({"DATABASE_URL": "sqlite:////tmp/elsewhere.sqlite3"})
    assert (found["db"]["NAME"], found["db"]["OPTIONS"]["timeout"]) == ("/tmp/elsewhere.sqlite3", 20)


def test_postgres_and_redis_urls():
    found = settings_under({"DATABASE_URL": "postgres://app@db.internal:5432/tracker",
                            "REDIS_URL": "redis://cache.internal:6379/1"})
    assert (found["db"]["ENGINE"], found["db"]["HOST"], found["db"]["NAME"]) == (
        "django.db.backends.postgresql", "db.internal", "tracker")
    assert found["layer"] == {"BACKEND": "channels_redis.core.RedisChannelLayer",
                              "CONFIG": {"hosts": ["redis://cache.internal:6379/1"]}}
