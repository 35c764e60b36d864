-- openDiff {old_file_path, new_file_path, new_file_contents, tab_name}: answers later with
-- {result = "FILE_SAVED", contents} or {result = "DIFF_REJECTED", tab_name}; returns the cancel
-- function rpc.lua calls when the client goes away. See claude_context.ide.diff.
return function(params, respond)
  return require("claude_context.ide.diff").open(params, respond)
end
