# Two entry points that work on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) projects/run_digits.py

# The CUDA backend is tested under Numba's simulator unless a real GPU is asked for (NUMBA_ENABLE_CUDASIM=0).
# worksteal: an idle worker takes tests from the other's queue (a clean-clone run: 9:31 -> 8:52, less CPU too, than
# whole files per worker with --dist loadfile).
test: $(STAMP)
	NUMBA_ENABLE_CUDASIM=$${NUMBA_ENABLE_CUDASIM:-1} HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} \
		$(PY) -m pytest -q -n 2 --dist worksteal --durations=25

lint: $(STAMP)
	$(PY) -m ruff check minitensor tests projects benchmarks
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) benchmarks/kernels.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
