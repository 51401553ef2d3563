# tempr: two set-up commands, `make demo` and `make test`; both build .venv from pinned wheels.
VENV   := .venv
PY     := $(VENV)/bin/python
TEMPR  := $(VENV)/bin/tempr
STAMP  := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)
export HF_HUB_OFFLINE := 1
export XDG_RUNTIME_DIR ?= /tmp

.PHONY: install demo test lint unit bench faults fuzz services-down clean tools fleet-test browser

$(STAMP): requirements.lock pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check -q -r requirements.lock
	$(VENV)/bin/pip install --disable-pip-version-check -q --no-deps -e .
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

demo: install
	$(TEMPR) services up
	$(TEMPR) keys local
	$(TEMPR) ingest --bank demo tempr/data/sample_bank.jsonl
	$(TEMPR) demo --bank demo

test: install lint tools browser
	$(PY) -m pytest

# Debian tools the deploy checks need (docker-compose, iproute2): installed only where missing.
tools:
	@sh deploy/tools/ensure-tools.sh

# Five hosts made of network namespaces (needs root): scenarios table -> RELIABILITY.md. ~10 min.
fleet-test: install tools
	$(PY) -m bench.fleet.run

browser:  # Debian's chromium + chromedriver for the console's browser test (apt-get only if missing)
	@scripts/ensure-chromium.sh

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

unit: install
	$(PY) -m pytest tests/unit -q

bench: install
	$(TEMPR) services up
	$(TEMPR) keys local
	$(TEMPR) bench all

# The fault matrix against a private real stack (bounded: 30 min); its table goes to RELIABILITY.md.
# Then the fuzz run and the idempotency races (`make fuzz`): issue 10's targets in one command.
faults: install
	timeout 1800 $(PY) -m bench.faults
	$(MAKE) fuzz

# >= 10,000 schemathesis-generated requests against a real gateway + worker (0 responses >= 500),
# then the idempotency races at 1,000 rounds (0 leaks, 0 cross-tenant answers). Own temp stack.
fuzz: install
	TEMPR_FUZZ_EXAMPLES=700 TEMPR_FUZZ_MIN_REQUESTS=10000 TEMPR_RACE_ROUNDS=1000 \
	  $(PY) -m pytest -s -q -o timeout=0 tests/integration/test_fuzz_api.py tests/integration/test_idempotency_race.py

services-down:
	$(TEMPR) services down

clean: services-down
	rm -rf .tempr
