# Two commands on a fresh machine:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all

.PHONY: setup demo test lint format paper-dry-run clean

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
	$(BIN)/snakemake --configfile config/demo.yaml --report results/report.html

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow/rules

format: setup
	$(BIN)/snakefmt Snakefile workflow/rules

paper-dry-run: setup
	$(BIN)/snakemake -n --cores all --resources gpu=1

clean:
	rm -rf results resources .snakemake
