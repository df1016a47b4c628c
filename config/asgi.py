"""What ASGI servers load (`config.asgi:application`: the Procfile's gunicorn, daphne for `make run`): the
application (config/application.py), and what a serving process sets up once it is loaded."""

from config.application import application
from config.collector import tune_for_serving
from core import background
from webhooks.dispatch import start_in_server

__all__ = ["application"]

tune_for_serving()
start_in_server()
background.start_in_server()
