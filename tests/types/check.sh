#!/usr/bin/env bash
# make lint-types: the Lua type-checked by emmylua_check ($EMMYLUA), with Neovim's runtime types
# ($VIMRUNTIME/lua, .emmyrc.json names it as a library); every diagnostic fails it (warnings
# too). Then a file with deliberate type errors (tests/types/broken/) must be rejected, and at
# most 20 annotations may say only `table` (tests/types/bare_tables.lua).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${EMMYLUA:?the emmylua_check binary}" "${VIMRUNTIME:?Neovim's runtime directory}"
[ -d "$VIMRUNTIME/lua/vim" ] || { echo "lint-types: no Neovim runtime in $VIMRUNTIME" >&2; exit 1; }
export VIMRUNTIME

"$EMMYLUA" --config .emmyrc.json --warnings-as-errors lua plugin

if out=$("$EMMYLUA" --config .emmyrc.json --warnings-as-errors tests/types/broken 2>&1); then
  echo "$out"
  echo "emmylua_check accepted tests/types/broken/: the type checker is not working" >&2
  exit 1
fi
for want in param-type-mismatch missing-fields undefined-field; do
  grep -q "$want" <<<"$out" || { echo "$out"; echo "emmylua_check did not report $want in tests/types/broken/" >&2; exit 1; }
done
echo "emmylua_check: tests/types/broken/ rejected, as it must be"

"${NVIM:-nvim}" --clean --headless -l tests/types/bare_tables.lua lua plugin
