"""The team's pages in a real browser (the project list, the settings, the docs): the server of tests/conftest.py
(`site`), one browser per person for each module (`browser_for`), a new project of the four people per test."""

import pytest

from tests.browser_site import Project


@pytest.fixture
def project(site) -> Project:
    return site.new_project()
