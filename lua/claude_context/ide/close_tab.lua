-- close_tab {tab_name}: closes that diff view (a pending one is rejected); answers {closed}.
return require("claude_context.ide").deferred(function(params, respond)
  if type(params.tab_name) ~= "string" then
    return respond(nil, "close_tab: tab_name must be a string")
  end
  respond({ closed = require("claude_context.ide.diff").close_named(params.tab_name) })
end)
