"""What ASGI servers load (`config.asgi:application`: the Procfile's gunicorn, daphne for `make run`): the
application (config/application.py), and what a serving process sets up once it is loaded."""

from config.application import application
from config.collector import tune_for_serving
from core import background, readiness

__all__ = ["application"]

readiness.refuse_a_pooler_that_drops_prepared_statements()
tune_for_serving()
background.start_in_server()
