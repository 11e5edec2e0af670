# The README's first two commands: `make run` (the provider on its embedded default: SQLite and a
# filesystem broker, served by gunicorn as in production, with a Celery worker) and `make test`
# (the suite). Both set up from scratch, the semantic extra (hybrid/6 recall engine) included.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# Where the embedded default keeps its files (the settings read the same variable).
VAR := $(or $(SPOKE_MEMORY_VAR_DIR),var)

CITUS_PYTEST_ARGS ?=

.PHONY: run test test-citus lint format bench install migrate worker clean docs

$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --upgrade pip
	@# The client first: the provider depends on it for the wire types (memory/wire/types.py
	@# re-exports spoke_memory_client.types); editable, so a regenerated types.py is the one run.
	$(BIN)/python -m pip install -qq -e ./clients/python
	$(BIN)/python -m pip install -qq -e '.[semantic,test,dev]'
	touch $(STAMP)

install: $(STAMP)

migrate: $(STAMP)
	@$(BIN)/python manage.py migrate --noinput --verbosity 1

# `make run` is re-runnable: the demo keeps its data and its credentials ($(VAR)/demo.json) while
# they work. The worker's own lines go to $(VAR)/worker.log, so the last lines before the server's
# are the console login and the API token. tests/test_first_run.py runs this very recipe.
run: migrate
	@mkdir -p $(VAR)
	@$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@# hybrid/6's int8 embedder, exported from the bundled model once per install (~15-40 s the
	@# first time), before the web server and the worker start: neither waits for it then.
	@$(BIN)/python manage.py spoke prepare-embedder >/dev/null
	@$(BIN)/python manage.py spoke demo --save $(VAR)/demo.json --welcome http://$(HOST):$(PORT)
	@$(BIN)/celery -A spokememory --quiet worker -B --loglevel=WARNING --concurrency=1 --pidfile= \
	    --schedule=$(VAR)/celerybeat-schedule >$(VAR)/worker.log 2>&1 & \
	  WORKER=$$!; trap "kill $$WORKER 2>/dev/null" EXIT INT TERM; \
	  $(BIN)/gunicorn -c spokememory/gunicorn_conf.py --bind $(HOST):$(PORT)

worker: $(STAMP)
	$(BIN)/celery -A spokememory worker -B --loglevel=INFO

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || exit $$rc
	@tests/citus/cluster.sh installed \
	  && echo "Citus leg: not part of make test; make test-citus runs it" \
	  || echo "Citus leg skipped: no Citus extension installed (docs/scaling.md says how to get it)"

# The suite on a Citus coordinator and two workers on loopback (tests/citus/run.sh): the black-box
# op tests unless CITUS_PYTEST_ARGS names others. Skipped, with a line saying so, without Citus.
test-citus: $(STAMP)
	PYTHON=$(BIN)/python tests/citus/run.sh $(CITUS_PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy memory reviews spokememory
	cd clients/python && ../../$(BIN)/mypy spoke_memory_client
	$(BIN)/python -m tools.codegen.wire --check
	$(BIN)/python -m tools.settings_doc --check
	$(BIN)/python -m tools.codegen.protocol --check
	$(BIN)/python -m tools.run_records --check
	$(BIN)/python -m tools.recite --code --check
	$(BIN)/python -m tools.lint_rules
	cd clients/typescript && { test -d node_modules || npm ci --no-audit --no-fund; } && npm run --silent lint
	cd clients/rust && export PATH="$$PATH:$$HOME/.cargo/bin" && cargo fmt --check && cargo clippy --quiet --locked --all-targets -- -D warnings
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Regenerate the generated reference pages (docs/protocol.md, docs/settings.md) after a change to
# the wire schemas or the settings; `make lint` checks they are current.
docs: $(STAMP)
	$(BIN)/python -m tools.codegen.wire
	$(BIN)/python -m tools.codegen.protocol
	$(BIN)/python -m tools.settings_doc
	$(BIN)/python -m tools.run_records

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VAR)/*.sqlite3* $(VAR)/broker $(VAR)/staticfiles $(VAR)/demo.json
