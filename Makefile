# fcanalyze: every target has a "## help" line; CI (.ci/run) calls the same targets.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
JOBS ?= $(shell nproc)

.PHONY: help install dev run test test-fast test-rust test-python lint fmt bench results results-32k results-1m \
	results-1m-classes clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-19s %s\n", $$1, $$2}'

# The extras that `make lint` and `make test` need (pyproject.toml), and where `make install` builds its wheel.
EXTRAS := test,dask,lint
WHEEL_DIR := build/wheel

$(PY):
	@echo "== creating the virtual environment $(VENV)"
	python3 -m venv $(VENV)
	@echo "== upgrading pip in $(VENV)"
	$(BIN)/pip install -q --upgrade pip

install: $(PY) ## install fcanalyze (Rust core in release mode) with its test, Dask and lint extras into .venv
	@echo "== building the Rust core in release mode (fat LTO: a few minutes on 2 cores) into a wheel"
	rm -rf $(WHEEL_DIR)
	$(BIN)/pip wheel -q --no-deps -w $(WHEEL_DIR) .
	@echo "== installing fcanalyze from that wheel"
	$(BIN)/pip install -q --force-reinstall --no-deps $(WHEEL_DIR)/fcanalyze-*.whl
	@echo "== installing its dependencies and the extras $(EXTRAS)"
	$(BIN)/pip install -q "$$(ls $(WHEEL_DIR)/fcanalyze-*.whl)[$(EXTRAS)]"
	@echo "== installed: $$($(BIN)/fcanalyze --version)"

dev: $(PY) ## rebuild the core in place for development (maturin develop --release)
	@echo "== installing maturin"
	$(BIN)/pip install -q maturin
	@echo "== building the Rust core in release mode and installing fcanalyze in place, with $(EXTRAS)"
	$(BIN)/maturin develop --release -q -E $(EXTRAS)

# The options of the committed classification (results/32k): budgets that decide every deal of 1-32,000
# (each proof bounded by --max-memory per worker: deal 982 at 2 cells needs the layered proof).
ANALYZE_32K_OPTS ?= --max-cells 5 --max-positions 40000000000 --max-memory 10240

# The first run: every deal of 1-32,000 within 300,000 positions a search (98% of the deals decided
# exactly, the others listed in out/32k/summary.md with the bounds proven; about 9 minutes on 2 cores),
# and its report. `make results-32k` is the exact classification (about 45 minutes on 2 cores).
RUN_OPTS ?= --max-cells 5 --max-positions 300000 --max-memory 1024

run: install ## the main job: classify deals 1-32,000 within a budget per search into out/32k, and its report
	$(PY) pipelines/regenerate.py analyze 1-32000 out/32k $(RUN_OPTS)
	$(BIN)/fcanalyze report out/32k
	@echo "== done: out/32k holds the tables (deals, searches, unsolvable), manifest.json, summary.md and"
	@echo "   report.html (open it in a browser); the undecided deals and their bounds are in summary.md."
	@echo "   The exact classification, every deal decided, is 'make results-32k' (about 45 minutes on 2 cores)."

results: results-32k results-1m ## regenerate results/32k and results/1m from nothing (1m-classes: its own target)

# A finished run in results/ is made again from nothing; an interrupted one (Ctrl-C, a stop) goes on.
results-32k: ## regenerate results/32k: exact classes of deals 1-32,000 (tables, manifest, summary, report)
	$(PY) pipelines/regenerate.py --anew analyze 1-32000 results/32k $(ANALYZE_32K_OPTS)
	$(BIN)/fcanalyze report results/32k
	$(PY) pipelines/datacard.py

# The classification of 1-1,000,000 (docs/classes-1m.md): days of work on 2 cores, in passes of growing
# budgets (pipelines/classes_1m.py lists them), so it goes on from what results/1m-classes holds
# (committed part-way: run.json says complete: false) instead of starting over: the pass in progress
# resumes where it stopped, a finished pass is followed by the next, and after the last there is nothing
# left to run. The deals table keeps each solution's length, not its moves (the repository stays small).
# The lines are not shortened during the passes; after the last, `$(PY) pipelines/relines.py
# results/1m-classes` finds each line again and stores the length of its short form (about 8.6
# CPU-hours: docs/classes-1m.md).
results-1m-classes: ## classify deals 1-1,000,000 into results/1m-classes, going on from what it holds
	nice -n 19 $(PY) pipelines/classes_1m.py results/1m-classes

# 100,000-deal shards at 4 cells: ten files a table instead of a thousand (the rows are the same); each
# stored line is shortened within 1,000 positions (about 1.3 ms a deal: mean 38.74 moves instead of 67.8).
results-1m: ## regenerate results/1m: deals 1-1,000,000 with 4 cells, the unsolvable list verified
	$(PY) pipelines/regenerate.py --anew verify 1-1000000 results/1m --shard-size 100000 --shorten-positions 1000
	$(PY) pipelines/datacard.py

test: test-rust test-python ## the full gate (.ci/run): every Rust and Python test, slow ones too, release build

# The core's Rust tests that take more than about 5 s each on 2 shared cores (libtest's --report-time,
# release without fat LTO; `make test` runs them all). Bare function names, matched as substrings, so
# that moving a test to another module keeps it skipped.
SLOW_RUST_TESTS := \
	groups_searched_by_levels_count_the_same \
	a_position_budget_stops_the_merge_that_reaches_it \
	a_layer_beam_wins_and_its_line_replays \
	the_widest_beam_wins_what_the_narrower_one_misses \
	seeds_are_written_lean_once_the_lines_are_forgotten \
	table_scans_take_every_waiting_position_once \
	a_search_killed_within_a_layer_goes_on_from_its_last_level \
	a_bounded_stack_counts_the_same \
	a_beam_wins_and_its_line_replays \
	a_killed_search_goes_on_from_its_checkpoint \
	layered_wins_come_with_lines \
	proofs_count_the_reachable_set_as_prove_does \
	layered_proofs_count_what_the_prover_counts \
	solve_proofs_count_the_reachable_set \
	shorter_than_the_fast_solver \
	short_lines_replay_and_win \
	budgets_give_the_best_line_so_far_or_undecided \
	fewer_cells_and_proofs

test-fast: ## the edit loop (<2 min once built): core Rust tests without fat LTO, skipping SLOW_RUST_TESTS; Python tests not marked slow
	cargo test --profile fast -p fcanalyze-core -q -- $(addprefix --skip ,$(SLOW_RUST_TESTS))
	$(BIN)/pytest -q -m "not slow"

test-rust: ## the Rust tests of the core and the binding, release build (the lab is not built)
	cargo test --release -q

test-python: ## the Python tests (CLI end to end, checker, tables), against the installed release build
	$(BIN)/pytest -q

lint: ## ruff, rustfmt, clippy (the lab too) and stubtest (_core.pyi against the built module), all as errors
	$(BIN)/ruff check fcanalyze tests benchmarks pipelines
	$(BIN)/ruff format --check fcanalyze tests benchmarks pipelines
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --release -q -- -D warnings
	$(BIN)/stubtest --mypy-config-file pyproject.toml fcanalyze._core

fmt: ## format Python and Rust sources
	$(BIN)/ruff format fcanalyze tests benchmarks pipelines
	cargo fmt --all

bench: ## ours against Freecell Solver, side by side, written to BENCHMARKS.md
	$(PY) benchmarks/bench.py --write BENCHMARKS.md

clean: ## remove build products and scratch output (keeps results/)
	rm -rf target build dist out .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
