-- claude_context.util.paths: a path shortened by its root, its bytes untouched.
local h = require("helpers")
local eq = h.eq

local paths = require("claude_context.util.paths")

return {
  {
    "relative: under the root (with or without its trailing slash), else as it is; names never expanded",
    function()
      eq("a/b.txt", paths.relative("/p/a/b.txt", "/p"))
      eq("a/b.txt", paths.relative("/p/a/b.txt", "/p/"))
      eq("a/b.txt", paths.relative("/p/a/b.txt", "/p//"))
      eq("/pa/b.txt", paths.relative("/pa/b.txt", "/p"), "a sibling folder is not under the root")
      eq("/p", paths.relative("/p", "/p"))
      eq("/p/x", paths.relative("/p/x", nil))
      eq("$HOME/~x", paths.relative("/p/$HOME/~x", "/p"), "no variable or ~ expanded")
      eq("bad\255\nname", paths.relative("/p/bad\255\nname", "/p"), "any byte kept")
    end,
  },
}
