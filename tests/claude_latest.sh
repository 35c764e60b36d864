#!/usr/bin/env bash
# The newest Claude Code (npm's `latest` of @anthropic-ai/claude-code, resolved now) for the
# end-to-end tests, beside the pinned ones: installed once per version into DIR/<version>
# (idempotent: a version already there is used as it is), its install.cjs run once as for the
# pinned CLIs. Prints the CLI's path on stdout. Never fails the tests: where the registry cannot
# be reached (or the install fails) it prints one line saying so on stderr and nothing on stdout,
# and the matrix runs with the pinned CLIs alone. A `latest` that is one of the pinned versions
# (given after DIR) is not added twice.
#
#   tests/claude_latest.sh .deps/claude-latest 2.1.197 2.1.330
set -uo pipefail
dir="$1"
shift
pkg=@anthropic-ai/claude-code
skip() {
  echo "e2e: the newest Claude Code is skipped: $*" >&2
  exit 0
}
version=$(timeout 30 npm view "$pkg@latest" version --loglevel=error 2>/dev/null | tail -1)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || skip "npm's registry could not be reached to resolve $pkg@latest"
for pinned in "$@"; do
  if [ "$version" = "$pinned" ]; then
    echo "e2e: the newest Claude Code is $version, already in the matrix" >&2
    exit 0
  fi
done
prefix="$dir/$version"
cli="$prefix/node_modules/.bin/claude"
if [ ! -f "$prefix/.installed" ]; then
  mkdir -p "$prefix" || skip "cannot create $prefix"
  echo '{"name":"claude-context-deps-latest","private":true}' >"$prefix/package.json"
  (cd "$prefix" && timeout 600 npm install --no-audit --no-fund --loglevel=error "$pkg@$version" >&2) ||
    skip "npm install $pkg@$version failed"
  (cd "$prefix" && node node_modules/@anthropic-ai/claude-code/install.cjs >&2) ||
    skip "$pkg@$version: install.cjs failed"
  "$cli" --version >/dev/null 2>&1 || skip "$cli does not run"
  touch "$prefix/.installed"
fi
echo "e2e: also against the newest Claude Code, $version ($cli)" >&2
echo "$cli"
