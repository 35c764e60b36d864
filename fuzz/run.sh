#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_TIME seconds (default 60) and prints one summary line per
# target: executions, corpus size, findings. `make fuzz` calls this. Only stable Rust is needed:
# RUSTC_BOOTSTRAP=1 lets cargo-fuzz use its -Z flags. New corpus entries go to fuzz/corpus/
# (ignored by git); crashes to fuzz/artifacts/<target>/ (ignored) and make this script fail.
set -uo pipefail
cd "$(dirname "$0")"
TIME="${FUZZ_TIME:-60}"
TARGETS="${FUZZ_TARGETS:-ws_frames ws_handshake mcp_message tool_args capfs_ops hook_door store_disk review_apply worktree_files}"
CARGO="${CARGO:-cargo}"
export RUSTC_BOOTSTRAP=1
if ! "$CARGO" fuzz --version >/dev/null 2>&1; then
  "$CARGO" install cargo-fuzz --locked || exit 1
fi
"$CARGO" fuzz build || exit 1
failed=0
summary=()
for t in $TARGETS; do
  mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t"
  args=(-max_total_time="$TIME" -print_final_stats=1 -rss_limit_mb=4096 -timeout=20)
  [ -f "dicts/$t.dict" ] && args+=(-dict="dicts/$t.dict")
  log="artifacts/$t/last-run.log"
  "$CARGO" fuzz run "$t" "corpus/$t" "seeds/$t" -- "${args[@]}" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  corpus=$(find "corpus/$t" -type f | wc -l)
  if [ $rc -ne 0 ]; then
    failed=1
    summary+=("$t: FAILED (exit $rc) after ${runs:-?} executions — see fuzz/$log and fuzz/artifacts/$t/")
  else
    summary+=("$t: ${runs:-?} executions in ${TIME}s, coverage ${cov:-?}, corpus $corpus, no findings")
  fi
done
printf '%s\n' "${summary[@]}"
exit $failed
