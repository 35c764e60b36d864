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
    /// How the Claude-session tools (`execute_claude`, …) run the Claude Code CLI.
    pub claude: ClaudeConfig,
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
            handshake_timeout_ms: 1000,
            max_inflight_per_client: 64,
            stats_time_budget_ms: 2000,
            state_dir: None,
            claude: ClaudeConfig::default(),
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
}
