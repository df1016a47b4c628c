"""`manage.py check` refuses a session engine whose sessions the socket recheck cannot read."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError


def test_the_database_backed_engines_pass(settings):
    for engine in ("django.contrib.sessions.backends.db", "django.contrib.sessions.backends.cached_db"):
        settings.SESSION_ENGINE = engine
        call_command("check")


def test_signed_cookies_are_refused_naming_the_setting(settings):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
    with pytest.raises(SystemCheckError, match="accounts.E001.*SESSION_ENGINE"):
        call_command("check")
