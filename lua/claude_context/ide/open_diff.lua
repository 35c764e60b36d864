-- openDiff as the bridge forwards it: {old_file_path, new_file_path, tab_name, prepared} — the
-- bridge has read the file, split both sides and computed the hunks; `prepared` is its summary
-- (id, sizes, hunk count, line endings) and the buffers are filled from it (native
-- proposal_fill). Answers later with {result = "FILE_SAVED"} plus how the bridge gets the text
-- (`unchanged`, `pushed` lines, `take` = hunk numbers, or `contents`), or {result =
-- "DIFF_REJECTED", tab_name}; returns the cancel function rpc.lua calls when the client goes
-- away. See claude_context.ide.diff.
return function(params, respond)
  return require("claude_context.ide.diff").open(params, respond)
end
