---@mod claude_context.install.sha256 SHA-256 of a file, with the system's tools or in Lua

local M = {}

local proc = require("claude_context.install.proc")
local files = require("claude_context.install.files")

-- SHA-256 round constants (FIPS 180-4).
local K = {
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
}

---SHA-256 of a string in Lua (LuaJIT's `bit`): the checksum of last resort, when the system
---has no sha256sum, shasum, certutil or openssl.
---@param msg string
---@return string hex
function M.string(msg)
  local band, bor, bxor, bnot = bit.band, bit.bor, bit.bxor, bit.bnot
  local rshift, lshift, ror, tobit = bit.rshift, bit.lshift, bit.ror, bit.tobit
  local len = #msg
  local bits = len * 8
  local hi, lo = math.floor(bits / 2 ^ 32), bits % 2 ^ 32
  local function be32(x)
    return string.char(band(rshift(x, 24), 255), band(rshift(x, 16), 255), band(rshift(x, 8), 255), band(x, 255))
  end
  msg = msg .. "\128" .. string.rep("\0", (64 - (len + 9) % 64) % 64) .. be32(tobit(hi)) .. be32(tobit(lo))
  local h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 }
  local w = {}
  for i = 1, #msg, 64 do
    for j = 0, 15 do
      local a, b, c, d = msg:byte(i + j * 4, i + j * 4 + 3)
      w[j] = bor(lshift(a, 24), lshift(b, 16), lshift(c, 8), d)
    end
    for j = 16, 63 do
      local v15, v2 = w[j - 15], w[j - 2]
      local s0 = bxor(ror(v15, 7), ror(v15, 18), rshift(v15, 3))
      local s1 = bxor(ror(v2, 17), ror(v2, 19), rshift(v2, 10))
      w[j] = tobit(w[j - 16] + s0 + w[j - 7] + s1)
    end
    local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
    for j = 0, 63 do
      local s1 = bxor(ror(e, 6), ror(e, 11), ror(e, 25))
      local ch = bxor(band(e, f), band(bnot(e), g))
      local t1 = hh + s1 + ch + K[j + 1] + w[j]
      local s0 = bxor(ror(a, 2), ror(a, 13), ror(a, 22))
      local maj = bxor(band(a, b), band(a, c), band(b, c))
      hh, g, f, e, d, c, b, a = g, f, e, tobit(d + t1), c, b, a, tobit(t1 + s0 + maj)
    end
    h[1], h[2], h[3], h[4] = tobit(h[1] + a), tobit(h[2] + b), tobit(h[3] + c), tobit(h[4] + d)
    h[5], h[6], h[7], h[8] = tobit(h[5] + e), tobit(h[6] + f), tobit(h[7] + g), tobit(h[8] + hh)
  end
  local out = {}
  for i = 1, 8 do
    out[i] = bit.tohex(h[i])
  end
  return table.concat(out)
end

---SHA-256 of a file as lowercase hex, with whatever the system has (else in Lua).
---@param path string
---@param tools string[]? the programs to try (default: sha256sum, shasum, certutil, openssl)
---@return string? hex, string? err
function M.file(path, tools)
  local tries = {
    { "sha256sum", { "sha256sum", "--", path } },
    { "shasum", { "shasum", "-a", "256", path } },
    { "certutil", { "certutil", "-hashfile", path, "SHA256" } },
    { "openssl", { "openssl", "dgst", "-sha256", "-r", path } },
  }
  if tools then
    tries = vim.tbl_filter(function(t)
      return vim.tbl_contains(tools, t[1])
    end, tries)
  end
  for _, t in ipairs(tries) do
    if vim.fn.executable(t[1]) == 1 then
      local r = proc.run(t[2])
      if r.code == 0 then
        -- sha256sum, shasum and `openssl -r`: "<hex> <file>"; certutil: a header line, the hash
        -- (older versions with spaces between bytes), a footer line.
        for line in (r.stdout or ""):gmatch("[^\r\n]+") do
          local hex = line:match("^(%x+)")
          if not (hex and #hex == 64) then
            hex = line:gsub("%s", ""):match("^(%x+)$")
          end
          if hex and #hex == 64 then
            return hex:lower()
          end
        end
      end
    end
  end
  local data = files.read(path)
  if not data then
    return nil, "cannot read " .. path .. " to verify it"
  end
  return M.string(data)
end

return M
