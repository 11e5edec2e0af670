# The README's first two commands: `make run` (the provider on its embedded default: SQLite and a
# filesystem broker, with a Celery worker) and `make test` (the suite). Both set up from scratch.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: run test lint format bench install migrate worker clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	$(BIN)/python -m pip install --quiet ./clients/python
	touch $(STAMP)

install: $(STAMP)

migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

run: migrate
	@$(BIN)/python manage.py spoke demo > var/demo.json
	@echo "Demo space ready: console login and API token in var/demo.json"
	@cat var/demo.json; echo
	@echo "Provider at http://$(HOST):$(PORT)/  (API docs /v1/docs, console /console/)"
	$(BIN)/celery -A spokememory worker -B --loglevel=WARNING --concurrency=1 --pidfile= & \
	  WORKER=$$!; trap "kill $$WORKER 2>/dev/null" EXIT INT TERM; \
	  $(BIN)/python manage.py runserver --noreload $(HOST):$(PORT)

worker: $(STAMP)
	$(BIN)/celery -A spokememory worker -B --loglevel=INFO

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy memory reviews spokememory
	cd clients/python && ../../$(BIN)/mypy spoke_memory_client
	$(BIN)/python -m memory.wire.gen_types --check
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf var/*.sqlite3* var/broker
