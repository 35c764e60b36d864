//! claude-context-core: everything in claude-context.nvim that does not need Neovim.
//!
//! * [`server`] — the tokio runtime, the WebSocket listener, the per-connection loop and the
//!   clients table.
//! * [`mcp`] — JSON-RPC 2.0 / MCP dispatch (protocol types from `rmcp`) over a
//!   [`mcp::Service`]: the state below plus the tool catalog.
//! * [`tools`] — one file per tool, grouped by family (`ide/`, `workspace/`, `memory_bank/`,
//!   `decision/`, `claude/`); [`tools::registry`] lists them.
//! * [`state`] — what the tools read: configuration, editor state and snapshot, the hop to the
//!   editor, the Claude-session manager, the write policy; [`state::client`], the requests a
//!   tool may send the client it serves. The modules depend on each other one way: `state` ←
//!   `tools`, `turns` ← `mcp` ← `server` ← `relay`, all over the lower layers (configuration,
//!   [`editor`], storage, the hooks' events, [`jsonrpc`]: the JSON-RPC wire helpers);
//!   `tests/it/layout.rs` holds every module to its layer and ARCHITECTURE.md lists them.
//! * [`memory_bank`], [`decision`] — the context tools' storage: the memory bank documents and
//!   the WRAP decision store.
//! * [`checkpoint`] — checkpoints of the project's files (content-addressed, per project, in the
//!   state directory): taken, compared and written back for turn review and rewind.
//! * [`lockfile`], [`auth`] — how Claude Code finds the editor and proves who it is.
//! * [`discovery`], [`relay`] — the `claude-context-mcp` binary: find a running editor, relay
//!   stdio to its bridge. [`mcp_config`] — the `--mcp-config` file for a terminal's `claude`.
//! * [`turns`], [`hook`], [`plans`] — what each Claude Code session is doing, from Claude Code's
//!   hooks (`claude-context-mcp hook <Event>` sends them to the bridge's hook door); the plans
//!   and questions the person decides in Neovim.
//! * Small helpers: [`auth`], [`error`], [`fsutil`], [`json_limits`], [`logging`], [`paths`],
//!   [`text`], [`threads`], [`uri`], [`prompts`], [`proposal`], [`project`], [`worktree`] (what
//!   land reads of a background session's worktree: git's `-z` outputs, its registration).
//! * [`editor`] — the snapshot of editor state that Neovim keeps current, and the hop to Neovim's
//!   main thread for tools that must touch the editor.
//!
//! The Neovim crate (`src/` at the repository root) is a thin layer over this one.

pub mod auth;
pub mod capfs;
pub mod checkpoint;
pub mod claude;
pub mod config;
pub mod conversations;
pub mod decision;
pub mod discovery;
pub mod editor;
pub mod error;
pub mod fsutil;
pub mod hook;
pub mod json_limits;
pub mod jsonrpc;
pub mod lockfile;
pub mod logging;
pub mod mcp;
pub mod mcp_config;
pub mod memory_bank;
pub mod merge;
pub mod paths;
pub mod plans;
pub mod project;
pub mod prompts;
pub mod proposal;
pub mod relay;
pub mod server;
pub mod state;
pub mod text;
pub mod threads;
pub mod tools;
pub mod transcript;
pub mod turns;
pub mod uri;
pub mod worktree;

/// The plugin's version; the Lua loader refuses a native library built from another version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    /// The Lua side refuses a library built from another version, so the two must agree.
    #[test]
    fn lua_version_matches_crate_version() {
        let lua = include_str!("../../../lua/claude_context/version.lua");
        assert!(
            lua.contains(&format!("return \"{}\"", super::VERSION)),
            "lua/claude_context/version.lua must return \"{}\"",
            super::VERSION
        );
    }
}
