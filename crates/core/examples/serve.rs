//! Runs the bridge without Neovim, for protocol tests and benchmarks from another process.
//!
//!     cargo run -p claude-context-core --example serve -- [--cwd DIR] [--config JSON]
//!
//! Prints one JSON line `{"port", "token", "lock_file", "pid"}` on stdout, then serves until
//! stdin closes. The editor snapshot has cwd = --cwd (default: the current directory).
//!
//! Commands on stdin, one per line, each answered by one JSON line on stdout:
//! - `status` — the server's status (clients with their `ide_connected_pid`, folders, …);
//! - `cd DIR` — a new editor snapshot with cwd = DIR (as `:cd` would), answered `{"cwd": DIR}`.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use std::io::{BufRead, Write};
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut cwd = std::env::current_dir().expect("cwd");
    let mut config = Config::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--cwd" => cwd = args.next().expect("--cwd DIR").into(),
            "--config" => {
                config =
                    Config::from_json(&args.next().expect("--config JSON")).unwrap_or_else(|e| {
                        eprintln!("{e}");
                        std::process::exit(2)
                    })
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2)
            }
        }
    }
    let state = EditorState {
        cwd: Some(cwd),
        nvim_version: "0.11.4".into(),
        ..Default::default()
    };
    let server = Server::start(config, state, Arc::new(NoEditor)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let st = server.shared().status();
    println!(
        "{}",
        serde_json::json!({
            "port": server.port(),
            "token": server.shared().token(),
            "lock_file": st.lock_file,
            "pid": std::process::id(),
        })
    );
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        let answer = if line == "status" {
            serde_json::to_value(server.shared().status())
                .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
        } else if let Some(dir) = line.strip_prefix("cd ") {
            let mut st = (*server.shared().editor_state()).clone();
            st.cwd = Some(dir.into());
            server.update_editor_state(st);
            serde_json::json!({ "cwd": dir })
        } else if line.is_empty() {
            continue;
        } else {
            serde_json::json!({ "error": format!("unknown command {line:?} (status, cd DIR)") })
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{answer}");
        let _ = out.flush();
    }
    server.stop();
}
