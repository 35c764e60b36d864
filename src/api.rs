//! The Lua API table (`require("claude_context.native")`). Every function returns at once:
//! work runs on the bridge's tokio threads and answers come back through the main-thread queue.
//! Arguments cross as JSON strings so the two sides share one schema (serde on this side,
//! `vim.json` on the other).

use crate::binding::{self, export, lua_error, main_thread, Failure};
use crate::editor::NvimEditor;
use claude_context_core::config::Config;
use claude_context_core::editor::EditorState;
use claude_context_core::proposal::{Side, STORE};
use claude_context_core::server::Server;
use mlua::{Function, Lua, Table};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    static SERVER: RefCell<Option<Server>> = const { RefCell::new(None) };
    /// `--mcp-config` files written for this bridge (they hold its token): removed on stop.
    static MCP_CONFIGS: RefCell<Vec<std::path::PathBuf>> = const { RefCell::new(Vec::new()) };
}

/// Answers every `call_tool` still waiting (its job died with the runtime) with an error, so
/// that nothing in Lua waits forever: a Claude run's spinner stops and its end event fires.
fn fail_pending_calls(lua: &Lua) {
    let stopped = Failure {
        message: "the bridge stopped before the tool answered".into(),
        code: Some(-32603),
    };
    binding::fail_bridge_work(lua, &stopped);
}

fn remove_mcp_configs() {
    for p in MCP_CONFIGS.with(|m| std::mem::take(&mut *m.borrow_mut())) {
        let _ = std::fs::remove_file(p);
    }
}

fn parse_state(json: &str) -> mlua::Result<EditorState> {
    serde_json::from_str(json)
        .map_err(|e| lua_error(format!("claude-context: invalid editor state: {e}")))
}

fn status_json() -> Option<String> {
    SERVER.with(|s| {
        s.borrow()
            .as_ref()
            .map(|srv| serde_json::to_string(&srv.shared().status()).unwrap_or_default())
    })
}

/// The API table: every exported name and the function behind it.
pub fn create(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("version", claude_context_core::VERSION)?;
    // The bridge.
    export(lua, &t, "start", start)?;
    export(lua, &t, "stop", stop)?;
    export(lua, &t, "status", status)?;
    export(lua, &t, "token", token)?;
    export(lua, &t, "write_mcp_config", write_mcp_config)?;
    export(lua, &t, "set_log", set_log)?;
    // Claude Code sessions (from hooks).
    export(lua, &t, "turns", turns)?;
    export(lua, &t, "session_seen", session_seen)?;
    // The editor's state and snapshot.
    export(lua, &t, "update_state", update_state)?;
    export(lua, &t, "snapshot", snapshot)?;
    export(lua, &t, "snapshot_selection", snapshot_selection)?;
    // Tools and notifications.
    export(lua, &t, "call_tool", call_tool)?;
    export(lua, &t, "broadcast", broadcast)?;
    export(lua, &t, "broadcast_selection", broadcast_selection)?;
    // openDiff's prepared proposals.
    export(lua, &t, "proposal_fill", proposal_fill)?;
    export(lua, &t, "proposal_collect", proposal_collect)?;
    export(lua, &t, "proposal_exists", proposal_exists)?;
    export(lua, &t, "proposal_hunks", proposal_hunks)?;
    // A file's buffer reloaded in slices (lua/claude_context/ide/diff/reload.lua).
    export(lua, &t, "buf_put_text", buf_put_text)?;
    // The facts the Rust side owns.
    facts(lua, &t)?;
    // Native functions of other families, each in its own file (`src/api_<family>.rs`), join
    // the table here, one line each: `crate::api_<family>::register(lua, &t)?;`
    crate::api_review::register(lua, &t, || {
        SERVER.with(|s| s.borrow().as_ref().map(|v| v.shared().clone()))
    })?;
    crate::api_route::register(lua, &t)?;
    crate::api_edit::register(lua, &t)?;
    crate::api_transcript::register(lua, &t)?;
    crate::api_conversations::register(lua, &t, main_thread)?;
    t.set("fs", crate::api_fs::create(lua)?)?;
    t.set("worktree", crate::api_worktree::create(lua)?)?;
    Ok(t)
}

/// The running server, or the error saying it is not running.
fn running<T>(f: impl FnOnce(&Server) -> T) -> mlua::Result<T> {
    SERVER
        .with(|s| s.borrow().as_ref().map(f))
        .ok_or_else(|| lua_error(binding::NOT_RUNNING))
}

/// With the running server, if there is one.
fn if_running<T>(f: impl FnOnce(&Server) -> T) -> Option<T> {
    SERVER.with(|s| s.borrow().as_ref().map(f))
}

/// start(config_json, state_json) -> status_json: starts the bridge (or returns the running
/// one's status).
fn start(_: &Lua, (config, state): (String, String)) -> mlua::Result<String> {
    if let Some(s) = status_json() {
        return Ok(s);
    }
    let cfg = Config::from_json(&config).map_err(lua_error)?;
    let st = parse_state(&state)?;
    let rpc = Arc::new(NvimEditor {
        main: main_thread()?,
        wait: std::time::Duration::from_millis(cfg.editor_wait_ms),
    });
    let srv = Server::start(cfg, st, rpc).map_err(|e| lua_error(format!("claude-context: {e}")))?;
    SERVER.with(|s| *s.borrow_mut() = Some(srv));
    Ok(status_json().unwrap_or_default())
}

/// stop() -> whether a bridge was running.
fn stop(lua: &Lua, (): ()) -> mlua::Result<bool> {
    let srv = SERVER.with(|s| s.borrow_mut().take());
    remove_mcp_configs();
    let stopped = srv.map(Server::stop).is_some();
    fail_pending_calls(lua);
    Ok(stopped)
}

/// status() -> status_json | nil.
fn status(_: &Lua, (): ()) -> mlua::Result<Option<String>> {
    Ok(status_json())
}

/// token() -> the bridge's auth token | nil.
fn token(_: &Lua, (): ()) -> mlua::Result<Option<String>> {
    Ok(if_running(|srv| srv.shared().token().to_string()))
}

/// turns(session?) -> the turns of a Claude Code session (from its hooks), as JSON.
fn turns(_: &Lua, session: Option<String>) -> mlua::Result<Option<String>> {
    Ok(if_running(|srv| {
        let turns = srv.shared().sessions.turns(session.as_deref());
        serde_json::to_string(&turns).unwrap_or_default()
    }))
}

/// session_seen(id) -> the change JSON when the person looking at the session changed its state.
fn session_seen(_: &Lua, id: String) -> mlua::Result<Option<String>> {
    Ok(if_running(|srv| {
        let now = claude_context_core::turns::now_ms();
        let change = srv.shared().sessions.seen(&id, now)?;
        serde_json::to_string(&change).ok()
    })
    .flatten())
}

/// update_state(state_json): the editor state the bridge answers from.
fn update_state(_: &Lua, state: String) -> mlua::Result<()> {
    let st = parse_state(&state)?;
    if_running(|srv| srv.update_editor_state(st));
    Ok(())
}

/// snapshot(delta_json): queues a change of the editor snapshot the read-only IDE tools answer
/// from (crates/core/src/editor.rs); parsed and applied on the bridge's threads.
fn snapshot(_: &Lua, delta: mlua::String) -> mlua::Result<()> {
    if_running(|srv| {
        srv.shared()
            .snapshot
            .push(String::from_utf8_lossy(&delta.as_bytes()).into_owned())
    });
    Ok(())
}

/// snapshot_selection(params_json): the latest selection for the snapshot, given as the JSON of
/// its selection_changed params (wrapped here: no copy of a big text in Lua).
fn snapshot_selection(_: &Lua, params: mlua::String) -> mlua::Result<()> {
    let p = params.as_bytes();
    if p.len() < 2 || p[0] != b'{' {
        return Ok(());
    }
    let mut delta = Vec::with_capacity(p.len() + 48);
    delta.extend_from_slice(br#"{"k":"selection","sel":{"success":true,"#);
    delta.extend_from_slice(&p[1..]);
    delta.push(b'}');
    let delta = String::from_utf8(delta)
        .map_err(|_| lua_error("claude-context: the selection is not UTF-8"))?;
    if_running(|srv| srv.shared().snapshot.push(delta));
    Ok(())
}

/// write_mcp_config(dir) -> path: the `--mcp-config` file for a `claude` started here
/// (crates/core/src/mcp_config.rs), 0600 in the 0700 `dir`, removed when the bridge stops.
fn write_mcp_config(_: &Lua, dir: String) -> mlua::Result<String> {
    let (port, token) = running(|srv| (srv.port(), srv.shared().token().to_string()))?;
    let path = claude_context_core::mcp_config::write(
        std::path::Path::new(&dir),
        claude_context_core::mcp_config::SERVER_NAME,
        port,
        &token,
    )
    .map_err(|e| {
        lua_error(format!(
            "claude-context: cannot write the MCP config in {dir}: {e}"
        ))
    })?;
    MCP_CONFIGS.with(|m| {
        let mut m = m.borrow_mut();
        if !m.contains(&path) {
            m.push(path.clone());
        }
    });
    Ok(path.to_string_lossy().into_owned())
}

/// broadcast(method, params_json [, ide_only]) -> clients: a notification to every client, or
/// with ide_only to those that sent `ide_connected` (interactive Claude Code sessions).
fn broadcast(
    _: &Lua,
    (method, params, ide_only): (String, String, Option<bool>),
) -> mlua::Result<usize> {
    // A big notification (a selection of megabytes) is checked and sent on the bridge's
    // threads: the editor does not wait for it. Notifications stay in order: while one is on
    // its way, the next ones queue behind it.
    let ide_only = ide_only.unwrap_or(false);
    if params.len() >= BIG_NOTIFICATION || NOTES.with(|n| n.busy()) {
        return Ok(if_running(|srv| {
            let n = srv.shared().client_count();
            NOTES.with(|q| q.send(srv, Note::Raw(method, params, ide_only)));
            n
        })
        .unwrap_or(0));
    }
    let params: serde_json::Value = serde_json::from_str(&params)
        .map_err(|e| lua_error(format!("invalid params JSON: {e}")))?;
    Ok(if_running(|srv| {
        if ide_only {
            srv.shared().broadcast_ide(&method, params)
        } else {
            srv.shared().broadcast(&method, params)
        }
    })
    .unwrap_or(0))
}

/// broadcast_selection([job]) -> clients: selection_changed for the latest selection in the
/// bridge's snapshot, encoded and sent on the bridge's threads, in order with the other
/// notifications (a big selection read in slices is never one string in the editor). With
/// `job` (a sliced read's number, pushed with `sel_end` just before), only if the latest
/// selection still is that read's.
fn broadcast_selection(_: &Lua, job: Option<u64>) -> mlua::Result<usize> {
    Ok(if_running(|srv| {
        let n = srv.shared().client_count();
        NOTES.with(|q| q.send(srv, Note::Selection(job)));
        n
    })
    .unwrap_or(0))
}

// openDiff's prepared proposals (claude_context_core::proposal): the Lua side has the lines put
// into its buffers and takes the hunks a bounded chunk per event-loop turn, and hands an edited
// proposal's lines back the same way.

/// proposal_fill(id, side, buf, from, max_bytes) -> lines put | nil: the next chunk of a
/// proposal's old or new text, straight into `buf`.
fn proposal_fill(
    _: &Lua,
    (id, side, buf, from, max_bytes): (u64, String, i32, usize, usize),
) -> mlua::Result<Option<usize>> {
    let side = match side.as_str() {
        "old" => Side::Old,
        "new" => Side::New,
        _ => return Err(lua_error("side must be \"old\" or \"new\"")),
    };
    let Some(entry) = STORE.get(id) else {
        return Ok(None);
    };
    let chunk = entry.text(side).chunk(from, max_bytes);
    let n = chunk.len();
    if n > 0 {
        // Straight into the buffer through the C API: no Lua string per line.
        let lines = chunk.into_iter().map(nvim_oxi::String::from_bytes);
        let mut b = nvim_oxi::api::Buffer::from(buf);
        let r = if from == 0 {
            b.set_lines(.., false, lines)
        } else {
            b.set_lines(from..from, true, lines)
        };
        r.map_err(lua_error)?;
    }
    Ok(Some(n))
}

/// The lines of `text[from..]` up to the first newline at or after `from + max_bytes` (or the
/// end), and the offset after that newline. A final newline ends the last line (no empty line
/// after it); with `dos`, a line's trailing CR is dropped.
fn text_chunk(text: &[u8], from: usize, max_bytes: usize, dos: bool) -> (Vec<&[u8]>, usize) {
    let from = from.min(text.len());
    let rest = &text[from..];
    let look = max_bytes.min(rest.len().saturating_sub(1));
    let end = match rest[look..].iter().position(|&b| b == b'\n') {
        Some(i) => look + i + 1,
        None => rest.len(),
    };
    let body = &rest[..end];
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let mut lines: Vec<&[u8]> = if end == 0 {
        Vec::new()
    } else {
        body.split(|&b| b == b'\n').collect()
    };
    if dos {
        for l in &mut lines {
            *l = l.strip_suffix(b"\r").unwrap_or(l);
        }
    }
    (lines, from + end)
}

/// buf_put_text(buf, start, old, text, from, max_bytes, dos) -> next, lines put, lines replaced:
/// puts the lines of the next chunk of `text` from the byte offset `from` (0-based; up to the
/// first newline at or after `max_bytes` bytes) at line `start` of `buf`, in place of as many of
/// the `old` lines there (at most `old`), straight through the C API: no Lua string per line (a
/// reload of a 5 MB file made 90,000 of them, and their garbage).
fn buf_put_text(
    _: &Lua,
    (buf, start, old, text, from, max_bytes, dos): (
        i32,
        usize,
        usize,
        mlua::String,
        usize,
        usize,
        bool,
    ),
) -> mlua::Result<(usize, usize, usize)> {
    let (lines, next) = {
        let bytes = text.as_bytes();
        let (lines, next) = text_chunk(&bytes, from, max_bytes, dos);
        let owned: Vec<nvim_oxi::String> = lines
            .into_iter()
            .map(nvim_oxi::String::from_bytes)
            .collect();
        (owned, next)
    };
    let n = lines.len();
    let take = n.min(old);
    if n > 0 {
        let mut b = nvim_oxi::api::Buffer::from(buf);
        b.set_lines(start..start + take, false, lines)
            .map_err(lua_error)?;
    }
    Ok((next, n, take))
}

/// proposal_collect(id, buf, from, to) -> whether the proposal still exists: hands the edited
/// lines `from..to` of `buf` back to it.
fn proposal_collect(_: &Lua, (id, buf, from, to): (u64, i32, usize, usize)) -> mlua::Result<bool> {
    if STORE.get(id).is_none() {
        return Ok(false);
    }
    let b = nvim_oxi::api::Buffer::from(buf);
    let lines = b
        .get_lines(from..to, true)
        .map_err(lua_error)?
        .map(|l| l.as_bytes().to_vec());
    Ok(STORE.push(id, lines))
}

/// proposal_exists(id) -> whether the proposal is still held.
fn proposal_exists(_: &Lua, id: u64) -> mlua::Result<bool> {
    Ok(STORE.get(id).is_some())
}

/// proposal_hunks(id, from, max) -> flat {a_start, a_count, b_start, b_count, …} | nil.
fn proposal_hunks(lua: &Lua, (id, from, max): (u64, usize, usize)) -> mlua::Result<Option<Table>> {
    let Some(entry) = STORE.get(id) else {
        return Ok(None);
    };
    let hunks = entry.prepared.hunks.iter().skip(from).take(max);
    let t = lua.create_table_with_capacity(max.min(4096) * 4, 0)?;
    let mut n = 0;
    for h in hunks {
        for v in [h.a_start, h.a_count, h.b_start, h.b_count] {
            n += 1;
            t.raw_set(n, v)?;
        }
    }
    Ok(Some(t))
}

/// set_log(file?, level): where and how much the bridge logs.
fn set_log(_: &Lua, (file, level): (Option<String>, String)) -> mlua::Result<()> {
    claude_context_core::logging::init(file.map(Into::into), &level).map_err(lua_error)
}

/// The facts the Rust side owns and the Lua side asks for (instead of a copy of its own):
/// `find_claude(cmd)` finds the Claude Code CLI as the sub-agent does; `claude_install` says how
/// to install it; `sub_agent_permissions(config)` what the sub-agent may do; `permission_modes()`
/// the values `--permission-mode` takes; `hook_tool` the MCP server and tool of the `mcp_tool`
/// hook before every tool; `hook_events` the hook events the plugin registers;
/// `memory_bank_core_files` the core files of a branch's and of the global bank, in order;
/// `editor_methods` the methods the core calls on the editor; `cli_versions` the Claude Code
/// versions the features need; `claude_argv(launch)` the argv of a Claude Code command line the
/// editor starts.
fn facts(lua: &Lua, t: &Table) -> mlua::Result<()> {
    use claude_context_core::claude::discovery::{INSTALL_NPM, INSTALL_OFFICIAL};
    use claude_context_core::memory_bank;
    let install = lua.create_table()?;
    install.set("official", INSTALL_OFFICIAL)?;
    install.set("npm", INSTALL_NPM)?;
    t.set("claude_install", install)?;
    // The hook tool Claude Code calls before every tool, on the plugin's MCP server.
    let hook_tool = lua.create_table()?;
    hook_tool.set("server", claude_context_core::mcp_config::SERVER_NAME)?;
    hook_tool.set("tool", claude_context_core::hook::MCP_TOOL)?;
    t.set("hook_tool", hook_tool)?;
    t.set("hook_events", hook_events(lua)?)?;
    // The memory bank's core files, in order (`:ClaudeContext context` shows them so).
    let core = lua.create_table()?;
    core.set("branch", memory_bank::BRANCH_CORE_FILES.to_vec())?;
    core.set("global", memory_bank::GLOBAL_CORE_FILES.to_vec())?;
    t.set("memory_bank_core_files", core)?;
    // The methods the core calls on the editor (lua/claude_context/rpc/methods.lua routes them).
    t.set(
        "editor_methods",
        claude_context_core::editor::methods::ALL.to_vec(),
    )?;
    // The Claude Code versions the features need.
    let versions = lua.create_table()?;
    {
        use claude_context_core::claude::discovery as d;
        versions.set("hooks", d::MIN_CLI_HOOKS)?;
        versions.set("bg", d::MIN_CLI_BACKGROUND)?;
        versions.set("manage", d::MIN_CLI_MANAGE)?;
    }
    t.set("cli_versions", versions)?;
    export(lua, t, "claude_argv", claude_argv)?;
    export(lua, t, "find_claude", find_claude)?;
    export(lua, t, "sub_agent_permissions", sub_agent_permissions)?;
    export(lua, t, "permission_modes", permission_modes)
}

/// The hook events the plugin registers, in order (`hook::Event`, the one list):
/// `{ name, edit_tools_only, report_only }` each (`lua/claude_context/sessions/hooks.lua` builds the
/// terminal's `--settings` from it).
fn hook_events(lua: &Lua) -> mlua::Result<Table> {
    let events = lua.create_table()?;
    for (e, r) in claude_context_core::hook::Event::registered() {
        let ev = lua.create_table()?;
        ev.set("name", e.as_str())?;
        ev.set("edit_tools_only", r.edit_tools_only)?;
        ev.set("report_only", r.report_only)?;
        events.push(ev)?;
    }
    Ok(events)
}

/// sub_agent_permissions(config_json) -> JSON `{person_owns, allowed_tools, permission_mode,
/// setting_sources}`: what the sub-agent (`execute_claude*`) runs with under these options, the
/// defaults filled in; `person_owns` when the person's own `--settings` or bypass take the
/// plugin's confinement over (`claude::args::person_owns_permissions`).
fn sub_agent_permissions(_: &Lua, config: String) -> mlua::Result<String> {
    let cfg = Config::from_json(&config).map_err(lua_error)?;
    let c = &cfg.claude;
    Ok(serde_json::json!({
        "person_owns": claude_context_core::claude::args::person_owns_permissions(c),
        "allowed_tools": c.allowed_tools,
        "permission_mode": c.permission_mode,
        "setting_sources": c.setting_sources,
    })
    .to_string())
}

/// find_claude(cmd?) -> path, source | nil, message (every place looked at, how to install).
fn find_claude(_: &Lua, cmd: Option<String>) -> mlua::Result<(Option<String>, String)> {
    use claude_context_core::claude::discovery::{discover, DiscoveryEnv};
    Ok(
        match discover(cmd.as_deref(), &DiscoveryEnv::from_process([])) {
            Ok(f) => (Some(f.path.display().to_string()), f.source.to_string()),
            Err(e) => (None, e.to_string()),
        },
    )
}

/// claude_argv(launch_json) -> the argv of a Claude Code command line the editor starts
/// (`claude::args::Launch`: the configured permission mode added unless the args choose one).
fn claude_argv(_: &Lua, launch: String) -> mlua::Result<Vec<String>> {
    let l: claude_context_core::claude::args::Launch = serde_json::from_str(&launch)
        .map_err(|e| lua_error(format!("claude-context: invalid command line: {e}")))?;
    Ok(l.argv())
}

/// permission_modes() -> the values `--permission-mode` takes.
fn permission_modes(_: &Lua, (): ()) -> mlua::Result<Vec<String>> {
    Ok(claude_context_core::config::PERMISSION_MODES
        .iter()
        .map(|m| m.to_string())
        .collect())
}

/// Notifications at least this big are sent from the bridge's threads (see `broadcast`).
const BIG_NOTIFICATION: usize = 64 * 1024;

/// A queued notification.
enum Note {
    /// (method, params JSON, IDE connections only).
    Raw(String, String, bool),
    /// `selection_changed` for the latest selection, encoded from the bridge's snapshot (a big
    /// selection read in slices: the editor never holds its whole text); with a read's number,
    /// only if the latest selection still is that read's.
    Selection(Option<u64>),
}

type NoteSender = tokio::sync::mpsc::UnboundedSender<Note>;

/// The notifications on their way from the bridge's threads, in order: one task per server
/// sends them one after the other.
#[derive(Default)]
struct NoteQueue {
    tx: RefCell<Option<(u16, NoteSender)>>,
    pending: Arc<std::sync::atomic::AtomicUsize>,
}

impl NoteQueue {
    fn busy(&self) -> bool {
        self.pending.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    fn send(&self, srv: &Server, note: Note) {
        let mut tx = self.tx.borrow_mut();
        if tx
            .as_ref()
            .map(|(port, t)| *port != srv.port() || t.is_closed())
            != Some(false)
        {
            // A new server (or the old one's task ended): what was pending there is gone.
            self.pending.store(0, std::sync::atomic::Ordering::SeqCst);
            let (t, mut rx) = tokio::sync::mpsc::unbounded_channel::<Note>();
            let shared = srv.shared().clone();
            let pending = self.pending.clone();
            srv.spawn(async move {
                while let Some(note) = rx.recv().await {
                    let s = shared.clone();
                    let _ = tokio::task::spawn_blocking(move || match note {
                        Note::Raw(m, p, ide) => {
                            s.broadcast_raw(&m, &p, ide);
                        }
                        Note::Selection(job) => {
                            if let Some(p) = s.snapshot.selection_params(job) {
                                s.broadcast_encoded("selection_changed", &p, false);
                            }
                        }
                    })
                    .await;
                    pending.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
            *tx = Some((srv.port(), t));
        }
        self.pending
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some((_, t)) = tx.as_ref() {
            if t.send(note).is_err() {
                self.pending
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
}

thread_local! {
    static NOTES: NoteQueue = NoteQueue::default();
}

/// call_tool(name, args_json, cb): runs a tool on the bridge runtime and calls, on the main
/// thread, `cb(nil, result_json)` with the MCP `CallToolResult`, or `cb(message, nil, code)` with
/// the JSON-RPC error.
fn call_tool(_: &Lua, (name, args, cb): (String, String, Function)) -> mlua::Result<()> {
    let args: serde_json::Value = serde_json::from_str(&args)
        .map_err(|e| lua_error(format!("invalid arguments JSON: {e}")))?;
    let main = main_thread()?;
    let shared = running(|srv| srv.shared().clone())?;
    let id = binding::hold("call_tool", cb, true);
    let job = async move {
        let start = std::time::Instant::now();
        let answer = match claude_context_core::mcp::call_tool(&shared, &name, args).await {
            Ok(v) => Ok(Some(v.to_string().into_bytes())),
            Err(e) => Err(Failure {
                message: e.message,
                code: Some(e.code.into()),
            }),
        };
        tracing::trace!(
            method = %"tools/call",
            tool = %name,
            client = %"lua",
            ms = format_args!("{:.3}", start.elapsed().as_secs_f64() * 1000.0),
            "request"
        );
        binding::answer_later(&main, id, answer);
    };
    if_running(|srv| srv.spawn(job));
    Ok(())
}
