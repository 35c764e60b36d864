---@mod claude_context.review.hunks Texts as lines, hunks, and where a hunk is now
---
--- Pure functions (no editor state). A text is split on "\n" only: a CRLF file's lines keep
--- their "\r", so that writing lines back gives the same bytes. Regions are half-open and
--- 1-based: `{ start, count }` covers lines start .. start+count-1; an empty region (count 0)
--- is the point before line `start`. Diffs come from |vim.diff()| (xdiff, in C).

local M = {}

---A text's lines and whether it ends with a newline.
---@class claude_context.ReviewText
---@field lines string[]
---@field eol boolean

---Splits `text` into lines ("\r" kept); `eol`: the text ends with "\n".
---@param text string?
---@return claude_context.ReviewText
function M.split(text)
  if text == nil or text == "" then
    return { lines = {}, eol = true }
  end
  local eol = text:sub(-1) == "\n"
  local lines, n = {}, 0
  for l in (eol and text or (text .. "\n")):gmatch("([^\n]*)\n") do
    n = n + 1
    lines[n] = l
  end
  return { lines = lines, eol = eol }
end

---`text` ending with "\n" (as |M.diff_text| wants it; "" stays "").
---@param text string?
---@return string
function M.terminated(text)
  if text == nil or text == "" then
    return ""
  end
  return text:sub(-1) == "\n" and text or (text .. "\n")
end

---Joins lines back into a text.
---@param lines string[]
---@param eol boolean
---@return string
function M.join(lines, eol)
  if #lines == 0 then
    return ""
  end
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

---One change between two line lists: `a`/`ac` the region in the first, `b`/`bc` in the second.
---@class claude_context.ReviewChange
---@field a integer
---@field ac integer
---@field b integer
---@field bc integer

---The changes from lines `a` to lines `b` (end-of-file newlines do not count).
---@param a string[]
---@param b string[]
---@return claude_context.ReviewChange[]
function M.diff(a, b)
  local ta = #a > 0 and (table.concat(a, "\n") .. "\n") or ""
  local tb = #b > 0 and (table.concat(b, "\n") .. "\n") or ""
  return M.diff_text(ta, tb)
end

---The changes from text `ta` to text `tb` (each empty or ending with "\n").
---@param ta string
---@param tb string
---@return claude_context.ReviewChange[]
function M.diff_text(ta, tb)
  if ta == tb then
    return {}
  end
  local out = {}
  for i, d in ipairs(vim.diff(ta, tb, { result_type = "indices" })) do
    -- vim.diff gives an empty side as "after line n"; here it is "before line n+1".
    out[i] = {
      a = d[2] == 0 and d[1] + 1 or d[1],
      ac = d[2],
      b = d[4] == 0 and d[3] + 1 or d[3],
      bc = d[4],
    }
  end
  return out
end

---Whether change `c` (in the region's coordinates: start `s`, count `n`) touches region
---{r, rn}: overlapping lines, an insertion strictly inside it, or (an empty region) a change
---on both sides of its point or an insertion at the same point.
local function touches(s, n, r, rn)
  if rn > 0 and n > 0 then
    return s < r + rn and s + n > r
  elseif rn > 0 then
    return s > r and s < r + rn
  elseif n > 0 then
    return s < r and s + n > r
  end
  return s == r
end

---Where region {r, rn} of text `a` is in text `b`, given the changes `a`→`b`: its start in `b`,
---or nil and "conflict" when a change touches it (its lines were edited).
---@param changes claude_context.ReviewChange[]
---@param r integer
---@param rn integer
---@return integer? start, string? err
function M.locate(changes, r, rn)
  local offset = 0
  for _, c in ipairs(changes) do
    if touches(c.a, c.ac, r, rn) then
      return nil, "conflict"
    end
    local before = c.ac > 0 and (c.a + c.ac <= r) or (c.a < r or (rn > 0 and c.a == r))
    if not before then
      break
    end
    offset = offset + c.bc - c.ac
  end
  return r + offset
end

---The lines of `text` in the regions `want` ({ {start, count}, … }; they may overlap, a region
---past the end gets the lines there are): one list per region. Scans the text once, up to the
---last line wanted, noting only where each line starts and ends, and copies only the lines
---wanted ("\r" kept).
---@param text string?
---@param want {[1]:integer,[2]:integer}[]
---@return string[][]
function M.lines_at(text, want)
  local out, last = {}, 0
  for i, r in ipairs(want) do
    out[i] = {}
    last = math.max(last, r[1] + r[2] - 1)
  end
  if not text or text == "" or last == 0 then
    return out
  end
  local find, sub = string.find, string.sub
  local starts, ends, n, pos, len = {}, {}, 0, 1, #text
  while n < last and pos <= len do
    local nl = find(text, "\n", pos, true)
    n = n + 1
    starts[n], ends[n] = pos, nl and nl - 1 or len
    pos = (nl or len) + 1
  end
  for i, r in ipairs(want) do
    local t = out[i]
    for l = r[1] >= 1 and r[1] or n + 1, math.min(r[1] + r[2] - 1, n) do
      t[#t + 1] = sub(text, starts[l], ends[l])
    end
  end
  return out
end

---The lines `lines[s .. s+n-1]`.
---@param lines string[]
---@param s integer
---@param n integer
---@return string[]
function M.slice(lines, s, n)
  local out = {}
  for i = 1, n do
    out[i] = lines[s + i - 1]
  end
  return out
end

---Whether `lines[s .. s+n-1]` equal `want`.
---@param lines string[]
---@param s integer
---@param want string[]
---@return boolean
function M.region_is(lines, s, want)
  for i = 1, #want do
    if lines[s + i - 1] ~= want[i] then
      return false
    end
  end
  return true
end

---`lines` with `n` lines at `s` replaced by `with` (a new list).
---@param lines string[]
---@param s integer
---@param n integer
---@param with string[]
---@return string[]
function M.replace(lines, s, n, with)
  local out = {}
  for i = 1, s - 1 do
    out[#out + 1] = lines[i]
  end
  for _, l in ipairs(with) do
    out[#out + 1] = l
  end
  for i = s + n, #lines do
    out[#out + 1] = lines[i]
  end
  return out
end

return M
