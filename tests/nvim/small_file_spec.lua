-- claude_context.util.small_file: a file read without waiting on what is not a regular file, capped.
local h = require("helpers")
local eq, ok, contains = h.eq, h.ok, h.contains

local small = require("claude_context.util.small_file")

return {
  {
    "read: a regular file whole; a larger one refused, or its first bytes with prefix; a FIFO and a folder refused at once",
    function()
      local dir = h.tmpdir()
      h.write(dir .. "/f", "0123456789")
      eq("0123456789", (small.read(dir .. "/f")))
      local data, why, judged = small.read(dir .. "/f", 4)
      eq(nil, data)
      contains(why, "larger than 4 bytes")
      eq({ "file", 10 }, { judged.type, judged.size })
      eq("0123", (small.read(dir .. "/f", 4, true)))
      eq(0, vim.system({ "mkfifo", dir .. "/fifo" }):wait().code)
      data, why, judged = small.read(dir .. "/fifo")
      eq({ nil, "not a regular file", "fifo" }, { data, why, judged.type })
      data, why = small.read(dir)
      eq(nil, data)
      ok(why, "a folder is refused")
      data, why = small.read(dir .. "/none")
      eq(nil, data)
      contains(why, "ENOENT")
    end,
  },
}
