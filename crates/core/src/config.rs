//! The server's configuration, as `setup()` passes it (JSON from Lua). Every field has a default,
//! so `{}` is a valid configuration; unknown fields are rejected so typos are reported.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Ports to try, inclusive; the first free one in a random probe order wins.
    pub port_range: PortRange,
    /// An explicit project root (`project_root_source = "config"`).
    pub project_root: Option<String>,
    /// `ideName` written in the lock file.
    pub ide_name: String,
    /// Where lock files go; default `$CLAUDE_CONFIG_DIR/ide` or `~/.claude/ide`.
    pub lock_dir: Option<PathBuf>,
    /// The largest WebSocket message accepted, in bytes (checked before it is buffered).
    pub max_message_size: usize,
    /// A client must finish the WebSocket handshake within this many milliseconds.
    pub handshake_timeout_ms: u64,
    /// Requests one connection may have in flight before we stop reading from it.
    pub max_inflight_per_client: usize,
    /// Time budget for `fs-get-project-info {stats: true}`.
    pub stats_time_budget_ms: u64,
    /// Where the plugin keeps state (history, decision store); `stdpath("state")/claude-context`.
    pub state_dir: Option<PathBuf>,
    /// The memory bank root (`setup{memory_bank = {root = …}}`); default `<project root>/docs`.
    /// `MEMORY_BANK_ROOT` in the environment wins over it. Relative: against the project root.
    pub memory_bank_root: Option<PathBuf>,
    /// How the Claude-session tools (`execute_claude`, …) run the Claude Code CLI.
    pub claude: ClaudeConfig,
    /// How long a tool that needs Neovim's main thread waits for it to start (a hit-enter
    /// prompt holds it) before answering with an error that says so (issue 10).
    pub editor_wait_ms: u64,
}

/// `setup{claude = {cmd, args, env, max_context_bytes}}`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ClaudeConfig {
    /// The CLI to run: a path (`~/` expands) or a command name looked up in PATH. When unset or
    /// not found, the CLI is discovered (PATH, common install locations, `CLAUDE_PATH`).
    pub cmd: Option<String>,
    /// Arguments every run starts with; `-p` (prompt on stdin) is added when missing.
    pub args: Vec<String>,
    /// Extra environment for the CLI, on top of Neovim's own (`ANTHROPIC_BASE_URL`, …).
    pub env: BTreeMap<String, String>,
    /// The largest context file `execute_claude_with_context` sends, in bytes.
    pub max_context_bytes: u64,
}

impl Default for ClaudeConfig {
    fn default() -> Self {
        ClaudeConfig {
            cmd: None,
            args: vec![
                "--dangerously-skip-permissions".into(),
                "--output-format".into(),
                "json".into(),
            ],
            env: BTreeMap::new(),
            max_context_bytes: 1 << 20,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PortRange {
    pub min: u16,
    pub max: u16,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port_range: PortRange {
                min: 10000,
                max: 65535,
            },
            project_root: None,
            ide_name: "Neovim".into(),
            lock_dir: None,
            max_message_size: 64 << 20,
            handshake_timeout_ms: 5000,
            max_inflight_per_client: 64,
            stats_time_budget_ms: 2000,
            state_dir: None,
            memory_bank_root: None,
            claude: ClaudeConfig::default(),
            editor_wait_ms: 3000,
        }
    }
}

impl Config {
    /// Parses the JSON `setup()` hands over and checks the values make sense.
    pub fn from_json(json: &str) -> Result<Config, String> {
        let cfg: Config =
            serde_json::from_str(json).map_err(|e| format!("invalid configuration: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        let PortRange { min, max } = self.port_range;
        if min == 0 || min > max {
            return Err(format!(
                "invalid configuration: port_range must satisfy 1 <= min <= max, got min={min} max={max}"
            ));
        }
        if self.max_message_size < 1024 {
            return Err("invalid configuration: max_message_size must be at least 1024".into());
        }
        if !(10..=600_000).contains(&self.editor_wait_ms) {
            return Err(format!(
                "invalid configuration: editor_wait_ms must be between 10 and 600000, got {}",
                self.editor_wait_ms
            ));
        }
        if self.max_inflight_per_client == 0 {
            return Err("invalid configuration: max_inflight_per_client must be at least 1".into());
        }
        if let Some(cmd) = &self.claude.cmd {
            if cmd.trim().is_empty() || cmd.contains('\0') {
                return Err(
                    "invalid configuration: claude.cmd must be a non-empty path or command name"
                        .into(),
                );
            }
        }
        if let Some(k) = self
            .claude
            .env
            .keys()
            .find(|k| k.is_empty() || k.contains('=') || k.contains('\0'))
        {
            return Err(format!(
                "invalid configuration: claude.env has an invalid variable name {k:?}"
            ));
        }
        if self.claude.max_context_bytes == 0 {
            return Err(
                "invalid configuration: claude.max_context_bytes must be at least 1".into(),
            );
        }
        Ok(())
    }

    /// The directory lock files go into: `lock_dir`, else `$CLAUDE_CONFIG_DIR/ide`,
    /// else `~/.claude/ide`.
    pub fn lock_dir(&self) -> Result<PathBuf, String> {
        if let Some(d) = &self.lock_dir {
            return Ok(d.clone());
        }
        crate::lockfile::default_lock_dir()
    }

    /// The plugin's state directory: `state_dir` (Lua passes `stdpath("state")/claude-context`),
    /// else what Neovim's `stdpath("state")` would be (`$XDG_STATE_HOME/nvim`, else
    /// `~/.local/state/nvim`; `%LOCALAPPDATA%/nvim-data` on Windows) plus `/claude-context`.
    pub fn state_dir(&self) -> Result<PathBuf, String> {
        if let Some(d) = &self.state_dir {
            return Ok(d.clone());
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let base = if cfg!(windows) {
            env("LOCALAPPDATA").map(|d| d.join("nvim-data"))
        } else {
            env("XDG_STATE_HOME")
                .map(|d| d.join("nvim"))
                .or_else(|| env("HOME").map(|h| h.join(".local/state/nvim")))
        };
        base.map(|b| b.join("claude-context")).ok_or_else(|| {
            "no state directory: set setup's state_dir or HOME (XDG_STATE_HOME)".to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_config_is_default() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(
            c.port_range,
            PortRange {
                min: 10000,
                max: 65535
            }
        );
        assert_eq!(c.max_message_size, 64 << 20);
    }

    #[test]
    fn rejects_typos_and_bad_ranges() {
        let e = Config::from_json(r#"{"port_rnage": {}}"#).unwrap_err();
        assert!(e.contains("port_rnage"), "{e}");
        let e = Config::from_json(r#"{"port_range": {"min": 20000, "max": 10000}}"#).unwrap_err();
        assert!(e.contains("min <= max"), "{e}");
    }

    #[test]
    fn claude_section_defaults_and_overrides() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(
            c.claude.args,
            ["--dangerously-skip-permissions", "--output-format", "json"]
        );
        assert_eq!(c.claude.cmd, None);
        let c = Config::from_json(
            r#"{"claude": {"cmd": "/opt/claude", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}}}"#,
        )
        .unwrap();
        assert_eq!(c.claude.cmd.as_deref(), Some("/opt/claude"));
        assert_eq!(c.claude.env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:1");
        // Args keep their default when only cmd is given.
        assert_eq!(c.claude.args.len(), 3);
        let e = Config::from_json(r#"{"claude": {"comd": "x"}}"#).unwrap_err();
        assert!(e.contains("comd"), "{e}");
        let e = Config::from_json(r#"{"claude": {"env": {"A=B": "x"}}}"#).unwrap_err();
        assert!(e.contains("A=B"), "{e}");
        let e = Config::from_json(r#"{"claude": {"cmd": " "}}"#).unwrap_err();
        assert!(e.contains("claude.cmd"), "{e}");
    }

    #[test]
    fn memory_bank_root_and_state_dir() {
        let c = Config::from_json(r#"{"memory_bank_root": "/p/bank", "state_dir": "/s"}"#).unwrap();
        assert_eq!(c.memory_bank_root, Some(PathBuf::from("/p/bank")));
        assert_eq!(c.state_dir().unwrap(), PathBuf::from("/s"));
        assert_eq!(Config::default().memory_bank_root, None);
    }
}
