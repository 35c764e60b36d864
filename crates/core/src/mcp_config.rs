//! The `--mcp-config` file given to a `claude` started from the editor: it registers the bridge
//! as an ordinary MCP server so the model sees the plugin's own tools (`mcp__claude-context__*`),
//! which the IDE connection alone does not show it (doc/protocol.md, IDE protocol).
//!
//! The file holds the auth token, so it is written with mode 0600 into a 0700 directory,
//! atomically (a reader never sees half a file), and never passed on a command line.

use crate::fsutil;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The MCP server name the model sees tools under (`mcp__claude-context__<tool>`).
pub const SERVER_NAME: &str = "claude-context";

/// The per-server tool-call `timeout` (milliseconds) Claude Code honours (2.1.330: "Hard
/// wall-clock limit per call"; it overrides `MCP_TOOL_TIMEOUT`). `execute_claude` may run for
/// up to [`crate::claude::args::MAX_TIMEOUT_SECS`] after waiting for one call queued before it, so
/// twice that plus a minute; still below 2^31 - 1 ms, past which a JavaScript timer fires at once.
pub const TOOL_TIMEOUT_MS: u64 = (2 * crate::claude::args::MAX_TIMEOUT_SECS + 60) * 1000;

/// `{"mcpServers": {"<name>": {"type": "ws", "url": "ws://127.0.0.1:<port>/mcp", "headers": {...},
/// "timeout": TOOL_TIMEOUT_MS}}}` (the MCP-server door: see [`crate::mcp::catalog::Surface`]).
pub fn render(name: &str, port: u16, token: &str) -> Value {
    json!({
        "mcpServers": {
            name: {
                "type": "ws",
                "url": format!("ws://127.0.0.1:{port}{}", crate::mcp::catalog::MCP_PATH),
                "headers": { crate::auth::AUTH_HEADER: token },
                "timeout": TOOL_TIMEOUT_MS,
            }
        }
    })
}

/// The file's name inside `dir` for this editor process and port.
pub fn file_name(port: u16) -> String {
    format!("mcp-{}-{port}.json", std::process::id())
}

/// Writes the config for `port`/`token` as `<dir>/mcp-<pid>-<port>.json` (0600; `dir` is
/// created, or tightened, to 0700). Returns the file's path.
pub fn write(dir: &Path, name: &str, port: u16, token: &str) -> std::io::Result<PathBuf> {
    if name.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the MCP server name is empty",
        ));
    }
    fsutil::ensure_private_dir(dir)?;
    clean_stale(dir);
    let path = dir.join(file_name(port));
    let bytes =
        serde_json::to_vec_pretty(&render(name, port, token)).map_err(std::io::Error::other)?;
    fsutil::write_atomic(&path, &bytes, 0o600)?;
    Ok(path)
}

/// Removes the `mcp-<pid>-<port>.json` files in `dir` of editors that are gone (they hold a
/// dead bridge's token; an editor that crashed never removed its own). Returns how many.
pub fn clean_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("mcp-")?.strip_suffix(".json"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, port)| port.parse::<u16>().ok().and(pid.parse::<u32>().ok()))
        else {
            continue;
        };
        if !crate::lockfile::pid_alive(pid) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_has_the_cli_shape() {
        let v = render("claude-context", 12345, "abc");
        assert_eq!(
            v,
            json!({"mcpServers": {"claude-context": {
                "type": "ws",
                "url": "ws://127.0.0.1:12345/mcp",
                "headers": {"x-claude-code-ide-authorization": "abc"},
                "timeout": TOOL_TIMEOUT_MS
            }}})
        );
    }

    #[test]
    fn the_timeout_outlasts_execute_claude_and_fits_a_javascript_timer() {
        let max_call_ms = crate::claude::args::MAX_TIMEOUT_SECS * 1000;
        let v = render(SERVER_NAME, 1, "t");
        let t = v["mcpServers"][SERVER_NAME]["timeout"].as_u64().unwrap();
        // A call may wait for one queued before it, then run for its whole timeout.
        assert!(t > 2 * max_call_ms, "{t}");
        // Node's setTimeout fires at once for delays above 2^31 - 1 ms.
        assert!(t < (1u64 << 31) - 1, "{t}");
    }

    #[test]
    fn write_is_private_and_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run").join("claude-context");
        let p = write(&dir, SERVER_NAME, 4242, "t1").unwrap();
        assert_eq!(p, dir.join(file_name(4242)));
        let p2 = write(&dir, SERVER_NAME, 4242, "t2").unwrap();
        assert_eq!(p, p2);
        let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(
            v["mcpServers"]["claude-context"]["headers"]["x-claude-code-ide-authorization"],
            "t2"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(m(&p), 0o600);
            assert_eq!(m(&dir), 0o700);
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temp files left"
        );
        assert!(write(&dir, "", 1, "t").is_err());
    }

    #[test]
    fn files_of_dead_editors_are_removed_when_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("claude-context");
        std::fs::create_dir_all(&dir).unwrap();
        // A pid that cannot exist (above pid_max), one alive (ours), and files not ours.
        let dead = dir.join("mcp-4194305-1234.json");
        let alive = dir.join(format!("mcp-{}-999.json", std::process::id()));
        let other = dir.join("notes.json");
        let odd = dir.join("mcp-abc-1.json");
        for p in [&dead, &alive, &other, &odd] {
            std::fs::write(p, "{}").unwrap();
        }
        let mine = write(&dir, SERVER_NAME, 4243, "t").unwrap();
        assert!(!dead.exists(), "a dead editor's token file is removed");
        for p in [&alive, &other, &odd, &mine] {
            assert!(p.exists(), "{} is kept", p.display());
        }
    }
}
