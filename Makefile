# The two set-up commands: `make run` (dashboard with demo data) and `make test` (whole suite).
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint format migrate demo worker beat bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@PY=$$(scripts/find-python) || exit 1; \
	if [ ! -x $(BIN)/python ]; then echo "Creating $(VENV) with $$PY"; "$$PY" -m venv $(VENV); fi
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_demo --if-empty

run: demo
	@echo "Dashboard on http://$(HOST):$(PORT)/"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

worker: install
	$(BIN)/celery -A infx_site worker --loglevel=INFO

beat: install
	$(BIN)/celery -A infx_site beat --loglevel=INFO

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) staticfiles .pytest_cache .ruff_cache .hypothesis
