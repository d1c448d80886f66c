# fcanalyze: every target has a "## help" line; CI (.ci/run) calls the same targets.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
JOBS ?= $(shell nproc)

.PHONY: help install dev test test-rust test-python lint fmt bench clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(PY):
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(PY) ## install fcanalyze (Rust core in release mode) with its test and Dask extras into .venv
	$(BIN)/pip install -q '.[test,dask]'

dev: $(PY) ## rebuild the core in place for development (maturin develop --release)
	$(BIN)/pip install -q maturin
	$(BIN)/maturin develop --release -q -E test,dask

test: test-rust test-python ## run the whole test suite (Rust and Python) against the release build

test-rust: ## the core's Rust tests, release build
	cargo test --release --workspace -q

test-python: ## the Python tests (CLI end to end, checker, tables), against the installed release build
	$(PY) -m pytest -q

lint: ## ruff, rustfmt and clippy, all as errors
	$(BIN)/ruff check fcanalyze tests benchmarks pipelines
	$(BIN)/ruff format --check fcanalyze tests benchmarks pipelines
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --release -q -- -D warnings

fmt: ## format Python and Rust sources
	$(BIN)/ruff format fcanalyze tests benchmarks pipelines
	cargo fmt --all

bench: ## ours against Freecell Solver, side by side, written to BENCHMARKS.md
	$(PY) benchmarks/bench_solve.py --write BENCHMARKS.md

clean: ## remove build products and scratch output (keeps results/)
	rm -rf target build dist out .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
