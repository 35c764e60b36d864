//! `claude-context-mcp`: a stdio MCP server that relays to a running Neovim's claude-context
//! bridge, for Claude Code sessions started outside Neovim:
//!
//!     claude mcp add claude-context -- /path/to/claude-context.nvim/lib/claude-context-mcp
//!
//! It picks the editor by `CLAUDE_CODE_SSE_PORT`, else by the lock file whose workspace folders
//! contain the current directory (deepest wins), connects with that lock file's token and
//! relays newline-delimited JSON-RPC on stdin/stdout to WebSocket text messages. Exit status:
//! 0 when either side closes, 1 when no editor can be reached (the reason on stderr), 2 for a
//! usage error.

use claude_context_core::{discovery, relay};
use std::path::PathBuf;
use tokio::io::BufReader;

const USAGE: &str = "\
usage: claude-context-mcp [--help | --version]
       claude-context-mcp hook <Event>

A stdio MCP server relaying to the claude-context.nvim bridge of a running Neovim.
Register it with Claude Code:

    claude mcp add claude-context -- <path to claude-context-mcp>

The editor is the one whose port is in CLAUDE_CODE_SSE_PORT, else the one whose lock file
($CLAUDE_CONFIG_DIR/ide or ~/.claude/ide) lists a workspace folder containing the current
directory (the deepest such folder wins). Only lock files owned by you, in a directory owned by
you that neither group nor others can write, are trusted.

`claude-context-mcp hook <Event>` is the command of the Claude Code hooks the plugin adds to the
sessions it starts: it sends the hook's JSON input (stdin) to that editor and always exits 0,
printing nothing on stdout but the person's decision on a plan or a question reviewed in the
editor (Claude Code's PreToolUse output).";

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            "hook" => {
                let event = args.next().unwrap_or_default();
                if let Err(msg) = claude_context_core::hook::run(
                    &event,
                    std::io::stdin().lock(),
                    std::io::stdout().lock(),
                ) {
                    eprintln!("claude-context-mcp hook {event}: {msg}");
                }
                // Never in Claude's way: whatever happened, exit 0 at once.
                std::process::exit(0);
            }
            "-V" | "--version" => {
                println!("claude-context-mcp {}", claude_context_core::VERSION);
                return;
            }
            other => {
                eprintln!("claude-context-mcp: unknown argument {other:?}\n\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let code = match run() {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("claude-context-mcp: {msg}");
            1
        }
    };
    // The stdin reader may sit in a blocking read; leave without waiting for it.
    std::process::exit(code);
}

/// Why no editor could be relayed to (printed on stderr; exit status 1).
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Discovery(#[from] discovery::DiscoveryError),
    /// No editor was found; the text says where it looked and what it saw.
    #[error("{0}")]
    NoEditor(String),
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    #[error(
        "found {count} editor(s) for {} but could not connect:{}",
        cwd.display(),
        errors.iter().map(|e| format!("\n  - {e}")).collect::<String>()
    )]
    Unreachable {
        count: usize,
        cwd: PathBuf,
        errors: Vec<relay::RelayError>,
    },
    #[error(transparent)]
    Relay(#[from] relay::RelayError),
}

fn run() -> Result<(), RunError> {
    let query = discovery::Query::from_env()?;
    let found = discovery::discover(&query);
    // Lock files not trusted (another owner, a shared writable directory) are said at once, even
    // when another editor is found.
    for why in &found.refused {
        eprintln!("claude-context-mcp: ignored {why}");
    }
    if found.candidates.is_empty() {
        return Err(RunError::NoEditor(found.explain(&query)));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let result = rt.block_on(async {
        let (conn, errors) = relay::connect_first(&found.candidates).await;
        let Some((c, ws)) = conn else {
            return Err(RunError::Unreachable {
                count: found.candidates.len(),
                cwd: query.cwd.clone(),
                errors,
            });
        };
        eprintln!(
            "claude-context-mcp: connected to Neovim (pid {}) on 127.0.0.1:{}{}",
            c.pid,
            c.port,
            c.folder
                .as_ref()
                .map(|f| format!(", workspace {}", f.display()))
                .unwrap_or_default()
        );
        let input = BufReader::new(tokio::io::stdin());
        let output = tokio::io::stdout();
        match relay::relay(ws, input, output).await {
            Ok(relay::End::InputClosed) => Ok(()),
            Ok(relay::End::EditorClosed) => {
                eprintln!("claude-context-mcp: the editor closed the connection");
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    });
    // Dropping the runtime would wait for the blocking stdin read to finish; do not wait.
    rt.shutdown_background();
    result
}
