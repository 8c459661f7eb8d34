# Two commands on a fresh machine:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all

.PHONY: setup demo test test-fast check-envs lint format paper-dry-run clean

# The virtual environment, rebuilt when the pinned requirements change.
$(VENV)/.installed: requirements.txt requirements-test.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip
	$(BIN)/pip install -qq torch==2.13.0
	$(BIN)/pip install -qq -r requirements.txt -r requirements-test.txt
	$(BIN)/pip install -qq --no-deps -e .
	touch $@

setup: $(VENV)/.installed

# The offline demo: generated raw files in the real formats, TF-IDF and a tiny local BERT, all six datasets.
demo: setup
	$(BIN)/snakemake --configfile config/demo.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/snakemake --configfile config/demo.yaml --report results/demo/report.html

# Everything: unit tests, workflow tests (snakemake in temporary copies), the paper config's DAG, lint.
# The SLURM test runs only with TECB_TEST_SLURM=1 (it installs SLURM as root; CI sets it).
test: setup
	$(BIN)/python -m pytest -q

# The quick unit tests (no snakemake runs, no slow oracle comparisons), under a minute.
test-fast: setup
	$(BIN)/python -m pytest -q -m "not workflow and not slurm and not slow"

# The conda envs (envs/*.yaml, used by --sdm conda) pin the same versions as requirements.txt.
check-envs: setup
	$(BIN)/python -m pytest -q tests/test_envs.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow/rules

format: setup
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile workflow/rules

paper-dry-run: setup
	$(BIN)/snakemake -n --cores all --resources gpu=1

clean:
	rm -rf results resources .snakemake
