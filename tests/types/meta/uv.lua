---@meta
-- The types of `vim.uv` (luv) the plugin uses, for `make lint-types`: Neovim 0.11 ships none for
-- it (language servers get them from the luvit-meta library, which the machines here cannot
-- fetch). Only what lua/ calls; a function the checker does not find here is reported as an
-- undefined field, and belongs here with its types.

---@class uv.fs_stat.result.time
---@field sec integer
---@field nsec integer

---@class uv.fs_stat.result
---@field dev integer
---@field mode integer
---@field nlink integer
---@field uid integer
---@field gid integer
---@field rdev integer
---@field ino integer
---@field size integer
---@field blksize integer
---@field blocks integer
---@field flags integer
---@field gen integer
---@field atime uv.fs_stat.result.time
---@field mtime uv.fs_stat.result.time
---@field ctime uv.fs_stat.result.time
---@field birthtime uv.fs_stat.result.time
---@field type "file"|"directory"|"link"|"fifo"|"socket"|"char"|"block"|"unknown"

---@class uv.uv_handle_t
local handle = {}
---@param cb fun()?
function handle:close(cb) end
---@return boolean
function handle:is_closing() end
---@return boolean
function handle:is_active() end
function handle:ref() end
function handle:unref() end

---@class uv.uv_timer_t: uv.uv_handle_t
local timer = {}
---@param timeout integer
---@param rep integer
---@param cb fun()
---@return 0|nil ok, string? err
function timer:start(timeout, rep, cb) end
---@return 0|nil ok, string? err
function timer:stop() end
---@return 0|nil ok, string? err
function timer:again() end

---@class uv.uv_stream_t: uv.uv_handle_t
local stream = {}
---@param cb fun(err: string?, data: string?)
---@return 0|nil ok, string? err
function stream:read_start(cb) end
---@return 0|nil ok, string? err
function stream:read_stop() end
---@param data string|string[]
---@param cb fun(err: string?)?
---@return userdata|nil req, string? err
function stream:write(data, cb) end
---@param cb fun(err: string?)?
function stream:shutdown(cb) end

---@class uv.uv_pipe_t: uv.uv_stream_t

---@class uv.uv_process_t: uv.uv_handle_t
local process = {}
---@param signum integer|string
---@return 0|nil ok, string? err
function process:kill(signum) end
---@return integer
function process:get_pid() end

---@class uv.uv_fs_event_t: uv.uv_handle_t
local fs_event = {}
---@param path string
---@param flags table<string, boolean>
---@param cb fun(err: string?, filename: string, events: {change: boolean?, rename: boolean?})
---@return 0|nil ok, string? err
function fs_event:start(path, flags, cb) end
---@return 0|nil ok, string? err
function fs_event:stop() end

---@class uv.uv_fs_poll_t: uv.uv_handle_t
local fs_poll = {}
---@param path string
---@param interval integer
---@param cb fun(err: string?, prev: uv.fs_stat.result?, curr: uv.fs_stat.result?)
---@return 0|nil ok, string? err
function fs_poll:start(path, interval, cb) end
---@return 0|nil ok, string? err
function fs_poll:stop() end

---@class uv.uv_fs_t: userdata

---@class uv.spawn.options
---@field args string[]?
---@field stdio table<integer, integer|uv.uv_stream_t|nil>?
---@field env string[]?
---@field cwd string?
---@field detached boolean?
---@field hide boolean?

---@class uv
---@field constants table<string, integer> O_RDONLY, O_NONBLOCK, … (those the system has)
local uv = {}

---@return integer ms the loop's cached time
function uv.now() end
---@return integer ns
function uv.hrtime() end
function uv.update_time() end
---@return uv.uv_timer_t?, string? err
function uv.new_timer() end
---@param ipc boolean?
---@return uv.uv_pipe_t?, string? err
function uv.new_pipe(ipc) end
---@return uv.uv_fs_event_t?, string? err
function uv.new_fs_event() end
---@return uv.uv_fs_poll_t?, string? err
function uv.new_fs_poll() end
---@param path string
---@param options uv.spawn.options
---@param on_exit fun(code: integer, signal: integer)
---@return uv.uv_process_t?, integer|string pid_or_err
function uv.spawn(path, options, on_exit) end
---@param pid integer
---@param signum integer|string
---@return 0|nil ok, string? err, string? name
function uv.kill(pid, signum) end
---@return integer
function uv.os_getpid() end
---@return integer
function uv.getuid() end
---@return string? home, string? err
function uv.os_homedir() end
---@return {sysname: string, release: string, version: string, machine: string}
function uv.os_uname() end

---@param path string
---@param cb fun(err: string?, st: uv.fs_stat.result?)?
---@return uv.fs_stat.result? st, string? err, string? name
function uv.fs_stat(path, cb) end
---@param path string
---@param cb fun(err: string?, st: uv.fs_stat.result?)?
---@return uv.fs_stat.result? st, string? err, string? name
function uv.fs_lstat(path, cb) end
---@param fd integer
---@param cb fun(err: string?, st: uv.fs_stat.result?)?
---@return uv.fs_stat.result? st, string? err, string? name
function uv.fs_fstat(fd, cb) end
---@param path string
---@param cb fun(err: string?, path: string?)?
---@return string? path, string? err, string? name
function uv.fs_realpath(path, cb) end
---@param path string
---@param cb fun(err: string?, path: string?)?
---@return string? path, string? err, string? name
function uv.fs_readlink(path, cb) end
---@param path string
---@param flags string|integer
---@param mode integer
---@param cb fun(err: string?, fd: integer?)?
---@return integer? fd, string? err, string? name
function uv.fs_open(path, flags, mode, cb) end
---@param fd integer
---@param cb fun(err: string?, ok: boolean?)?
---@return boolean? ok, string? err, string? name
function uv.fs_close(fd, cb) end
---@param fd integer
---@param size integer
---@param offset integer?
---@param cb fun(err: string?, data: string?)?
---@return string? data, string? err, string? name
function uv.fs_read(fd, size, offset, cb) end
---@param fd integer
---@param data string|string[]
---@param offset integer?
---@param cb fun(err: string?, bytes: integer?)?
---@return integer? bytes, string? err, string? name
function uv.fs_write(fd, data, offset, cb) end
---@param path string
---@param new_path string
---@param cb fun(err: string?, ok: boolean?)?
---@return boolean? ok, string? err, string? name
function uv.fs_rename(path, new_path, cb) end
---@param path string
---@param new_path string
---@param flags table<string, boolean>|integer|nil
---@param cb fun(err: string?, ok: boolean?)?
---@return boolean? ok, string? err, string? name
function uv.fs_copyfile(path, new_path, flags, cb) end
---@param path string
---@param mode integer
---@param cb fun(err: string?, ok: boolean?)?
---@return boolean? ok, string? err, string? name
function uv.fs_chmod(path, mode, cb) end
---@param path string
---@param cb fun(err: string?, req: uv.uv_fs_t?)?
---@return uv.uv_fs_t? req, string? err, string? name
function uv.fs_scandir(path, cb) end
---@param req uv.uv_fs_t
---@return string? name, string? type
function uv.fs_scandir_next(req) end

---@type uv
vim.uv = uv
---@type uv
vim.loop = uv
