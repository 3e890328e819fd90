# Two commands on a fresh machine: `make demo` and `make test`. Both create/refresh .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
DEMO_HOME ?= demo-home

.PHONY: install demo test bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# torch first, pinned: pip takes the local CPU build; anything else would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) scripts/demo.py examples/conversation.json $(DEMO_HOME)

test: install
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n auto --dist loadscope  # a module's tests on one worker: its shared fixtures built once

bench: install
	$(PY) benchmarks/capture_speed.py
	$(PY) benchmarks/capture_floor.py
	$(PY) benchmarks/index_throughput.py
	$(PY) benchmarks/extractor.py
	$(PY) benchmarks/locomo.py ../shared/data/locomo/locomo-dev.json

docs: install
	$(PY) scripts/gen_docs.py

clean:
	rm -rf $(VENV) demo-home build *.egg-info
