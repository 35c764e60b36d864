-- closeAllDiffTabs: closes every diff view of this plugin (pending ones are rejected), never
-- other diff windows; answers {closed = n}.
return require("claude_context.ide").deferred(function(_, respond)
  respond({ closed = require("claude_context.ide.diff").close_all() })
end)
