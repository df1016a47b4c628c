"""The board page in a real browser: the server and browsers of tests/conftest.py (`site`, `open_browser`), a
new project of the four people per test, and the helpers of tests/browser_site.py."""

import pytest

from tests.browser_site import (  # noqa: F401  (the board page's tests import them from here)
    PEOPLE,
    PHONE_WIDTH,
    WAIT_SECONDS,
    Project,
    Site,
    card,
    drag,
    drag_to_column,
    expect_refusal,
    open_board,
    shoot,
    shown_order,
    sign_in,
    still_same_document,
    toast_text,
    visit_board,
)


@pytest.fixture
def project(site) -> Project:
    return site.new_project()
