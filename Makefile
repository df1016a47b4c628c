PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench

## make run: install, migrate, create a local admin and token on the first run, serve on http://$(HOST):$(PORT)
run: $(VENV)/.installed
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py bootstrap --host $(HOST) --port $(PORT)
	DJANGO_DEBUG=$${DJANGO_DEBUG-1} $(BIN)/daphne -b $(HOST) -p $(PORT) config.asgi:application

## make test: install the development requirements, lint, and run the whole suite in two processes
## (pytest-xdist: a test database and, on Redis, a Redis database for each)
test: $(VENV)/.installed-dev
	$(BIN)/ruff check --quiet .
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.installed

## make bench: every figure of issue 14 against PostgreSQL and Redis (tracker_bench_* databases), writes bench/RESULTS.md
bench: $(VENV)/.installed
	$(BIN)/python -m bench
