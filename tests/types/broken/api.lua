-- Deliberately wrong use of the plugin's API (tests/types/check.sh): both must be reported.
local cc = require("claude_context")

-- undefined-field: the API has no such function.
cc.no_such_function()

-- param-type-mismatch: `terminal.side` is a string.
cc.setup({ terminal = { side = 3 } })
