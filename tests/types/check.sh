#!/usr/bin/env bash
# make lint-types: the Lua type-checked by emmylua_check ($EMMYLUA), with Neovim's runtime types
# ($VIMRUNTIME/lua) and luv's (tests/types/meta/) as libraries (.emmyrc.json). It fails on:
# - any error: besides emmylua's own (syntax, undefined globals, …), .emmyrc.json raises to
#   errors what a wrong annotation shows as (a type not found, a required field missing, a
#   parameter too many or too few, a module not found);
# - more warnings than MAX_WARNINGS: the rest (a value that may be nil, an integer given a
#   number, …) may only go down; lower MAX_WARNINGS when they do;
# - tests/types/broken/ (deliberate type errors) accepted: a checker that checks nothing;
# - more than 20 annotations that say only `table` (tests/types/bare_tables.lua).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${EMMYLUA:?the emmylua_check binary}" "${VIMRUNTIME:?the Neovim runtime directory}"
[ -d "$VIMRUNTIME/lua/vim" ] || { echo "lint-types: no Neovim runtime in $VIMRUNTIME" >&2; exit 1; }
export VIMRUNTIME
# The count varies by a few from run to run (the checker infers in parallel, in no fixed
# order): 601 to 605 when this was set, hence the margin.
MAX_WARNINGS=620

out=$("$EMMYLUA" --config .emmyrc.json lua plugin 2>&1) && rc=0 || rc=$?
warnings=$(grep -c '^warning' <<<"$out" || true)
errors=$(grep -c '^error' <<<"$out" || true)
if [ "$rc" -ne 0 ] || [ "$errors" -gt 0 ]; then
  grep -A6 '^error' <<<"$out"
  echo "emmylua_check: $errors error(s) in lua/ and plugin/" >&2
  exit 1
fi
if [ "$warnings" -gt "$MAX_WARNINGS" ]; then
  echo "$out" | tail -40
  echo "emmylua_check: $warnings warnings, at most $MAX_WARNINGS (tests/types/check.sh): fix the new ones" >&2
  exit 1
fi
echo "emmylua_check: lua/ and plugin/: 0 errors, $warnings warnings (at most $MAX_WARNINGS)"

# tests/types/emmyrc.json: the same checks, lua/ as a library (a user's config sees it so).
export TYPES_ROOT=$PWD
if ! user=$("$EMMYLUA" --config tests/types/emmyrc.json --warnings-as-errors tests/types/api 2>&1); then
  echo "$user"
  echo "emmylua_check: tests/types/api/ (the API as a user's config uses it) is not clean" >&2
  exit 1
fi
echo "emmylua_check: tests/types/api/ clean (a partial setup{}, the API's typed answers)"

if broken=$("$EMMYLUA" --config tests/types/emmyrc.json --warnings-as-errors tests/types/broken 2>&1); then
  echo "$broken"
  echo "emmylua_check accepted tests/types/broken/: the type checker is not working" >&2
  exit 1
fi
for want in param-type-mismatch missing-fields undefined-field "api.lua:5" "api.lua:8"; do
  grep -qF -e "[$want]" -e "$want:" <<<"$broken" || {
    echo "$broken"
    echo "emmylua_check did not report $want in tests/types/broken/" >&2
    exit 1
  }
done
echo "emmylua_check: tests/types/broken/ rejected, as it must be"

"${NVIM:-nvim}" --clean --headless -l tests/types/bare_tables.lua lua plugin
