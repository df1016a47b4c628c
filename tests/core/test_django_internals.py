"""The private Django APIs our modules list in their docstrings are still where those modules expect them:
an upgrade that moves one fails here, by name, rather than somewhere deep in a request."""

import importlib
import inspect
import re

import pytest

from config.handler import SyncStackASGIHandler

MODULES = ["core.queries", "config.handler", "tickets.services.locking"]


def listed_apis(module_name: str) -> list[str]:
    docstring = importlib.import_module(module_name).__doc__
    section = docstring.split("Private Django APIs", 1)[1]
    return re.findall(r"`(django\.[\w.]+)`", section)


def resolve(dotted: str):
    """The object a dotted path names: a module, then attributes down from it."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            found = getattr(found, name)
        return found
    raise ImportError(dotted)


@pytest.mark.parametrize("api", [api for module in MODULES for api in listed_apis(module)])
def test_each_listed_private_api_still_exists(api):
    if api.endswith("._middleware_chain"):
        handler = SyncStackASGIHandler()
        assert callable(handler._middleware_chain), f"{api} moved: config/handler.py relies on it"
        return
    try:
        resolve(api)
    except (ImportError, AttributeError) as missing:
        pytest.fail(f"{api} moved or is gone ({missing}): update the module that lists it")


def test_the_compiler_attributes_prepared_rows_read(db):
    """`select` and `col_count` are instance attributes: a compiled queryset must still carry them."""
    from tickets.models import Ticket

    compiler = Ticket.objects.values_list("id", "title").query.get_compiler("default")
    compiler.as_sql()
    assert (len(compiler.select[:compiler.col_count]), compiler.col_count) == (2, 2)
    assert list(inspect.signature(compiler.get_converters).parameters) == ["expressions"]


def test_every_module_lists_some():
    assert all(listed_apis(module) for module in MODULES)
