//! The server's configuration, as `setup()` passes it (JSON from Lua). Every field has a default,
//! so `{}` is a valid configuration; unknown fields are rejected so typos are reported.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The default largest WebSocket frame and message, in bytes: the bridge's `max_message_size`
/// unless `setup()` changes it, and always the relay's (`claude-context-mcp`).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Ports to try, inclusive; the first free one in a random probe order wins.
    pub port_range: PortRange,
    /// An explicit project root (`project_root_source = "config"`).
    pub project_root: Option<String>,
    /// `ideName` written in the lock file: what Claude Code shows for this editor (`/ide`). The
    /// Lua side renders it from `setup{ide = {name = …}}` (project and pid by default).
    pub ide_name: String,
    /// Where lock files go; default `$CLAUDE_CONFIG_DIR/ide` or `~/.claude/ide`.
    pub lock_dir: Option<PathBuf>,
    /// The largest WebSocket message accepted, in bytes (checked before it is buffered).
    pub max_message_size: usize,
    /// A client must finish the WebSocket handshake within this many milliseconds.
    pub handshake_timeout_ms: u64,
    /// Requests one connection may have in flight before we stop reading from it.
    pub max_inflight_per_client: usize,
    /// Bytes of requests (as received) one connection may have in flight before we stop
    /// reading from it: the per-connection memory budget, whatever `max_inflight_per_client`
    /// and `max_message_size` allow together.
    pub max_inflight_bytes_per_client: usize,
    /// Time budget for `fs-get-project-info {stats: true}`.
    pub stats_time_budget_ms: u64,
    /// Where the plugin keeps state (history, decision store); `stdpath("state")/claude-context`.
    pub state_dir: Option<PathBuf>,
    /// The memory bank root (`setup{memory_bank = {root = …}}`); default `<project root>/docs`.
    /// `MEMORY_BANK_ROOT` in the environment wins over it. Relative: against the project root.
    pub memory_bank_root: Option<PathBuf>,
    /// The language (`en`, `ja` or `zh`) of the memory bank tools called without `language`
    /// (`setup{memory_bank = {language}}`, which defaults from the editor's language; English
    /// when nothing says otherwise).
    pub memory_bank_language: String,
    /// How the Claude-session tools (`execute_claude`, …) run the Claude Code CLI.
    pub claude: ClaudeConfig,
    /// `setup{security = {allow_write}}`: what the person lets tools do beyond the defaults.
    pub security: SecurityConfig,
    /// `setup{workspace = {extra_roots, allow_lsp_roots}}`: what `/mcp` may reach besides the
    /// project root.
    pub workspace: WorkspaceConfig,
    /// How long a tool that needs Neovim's main thread waits for it to start (a hit-enter
    /// prompt holds it) before answering with an error that says so.
    pub editor_wait_ms: u64,
    /// How long a tool waits for the client to answer a request of ours (`elicitation/create`
    /// from `register_options`, `sampling/createMessage` from `make_tripwire`) before it goes
    /// on without the answer.
    pub client_request_timeout_ms: u64,
}

/// `setup{security = {allow_write = {…}}}`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SecurityConfig {
    /// Glob patterns (relative to the project root, case-insensitive) of protected files that
    /// tools may write anyway, e.g. `.claude/settings.local.json` (see `capfs::PROTECTED`).
    pub allow_write: Vec<String>,
}

/// `setup{workspace = {extra_roots = {…}, allow_lsp_roots = false}}`: the directories a client
/// of `/mcp` (the model) may reach besides the project root and the editor's working directory.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// More directories (absolute, `~/` expanded by the Lua side) the model may make its root
    /// (`fs-set-project-root`) and open files in.
    pub extra_roots: Vec<PathBuf>,
    /// Language servers' workspace folders count too (off: a language server attached to a
    /// buffer outside the project, such as lua_ls for `~/.config/nvim`, opens nothing to the
    /// model; `getWorkspaceFolders` on the IDE door lists them either way).
    pub allow_lsp_roots: bool,
}

/// `setup{claude = {cmd, args, env, max_context_bytes, allowed_tools, permission_mode,
/// setting_sources, add_dirs}}`.
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
    /// The tools the sub-agent may use (`--tools` gets their names, `--allowedTools` the entries
    /// as given, so `Bash(git status)` allows that command only). Default: the read-only
    /// [`READ_ONLY_TOOLS`]. `"*"` means every built-in tool. A caller's `options.allowed_tools`
    /// can only narrow this set.
    pub allowed_tools: Vec<String>,
    /// `--permission-mode` of the sub-agent; default `dontAsk` (anything not allowed is denied,
    /// nobody is asked).
    pub permission_mode: String,
    /// `--setting-sources` of the sub-agent: which Claude Code settings files it loads. Default
    /// `user` only: the repository's `.claude/settings*.json` (hooks, permission rules,
    /// `enableAllProjectMcpServers`) are repository content and grant nothing unless the person
    /// adds `project` / `local`.
    pub setting_sources: Vec<String>,
    /// Folders outside the project the sub-agent may read as well (`--add-dir`, and one
    /// path-scoped `Read` rule each): absolute paths. Its file tools read the project root and
    /// these, nothing else.
    pub add_dirs: Vec<PathBuf>,
}

/// The values `--setting-sources` takes.
pub const SETTING_SOURCES: [&str; 3] = ["user", "project", "local"];

/// The sub-agent's tools unless the person widens them: they read the project, nothing else.
pub const READ_ONLY_TOOLS: [&str; 3] = ["Read", "Grep", "Glob"];

/// The values `--permission-mode` takes, for the sub-agent and for the terminal alike (the Lua
/// side asks for this list). Every supported Claude Code accepts the first six; `manual` is the
/// newer CLIs' name for `default` (they list it and still accept `default`; older ones reject
/// it).
pub const PERMISSION_MODES: [&str; 7] = [
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "default",
    "dontAsk",
    "plan",
    "manual",
];

/// A tool entry's name: `Bash(git status)` -> `Bash`.
pub fn tool_base(entry: &str) -> &str {
    entry.split_once('(').map_or(entry, |(b, _)| b).trim()
}

impl Default for ClaudeConfig {
    fn default() -> Self {
        ClaudeConfig {
            cmd: None,
            args: vec!["--output-format".into(), "json".into()],
            env: BTreeMap::new(),
            max_context_bytes: 1 << 20,
            allowed_tools: READ_ONLY_TOOLS.iter().map(|t| t.to_string()).collect(),
            permission_mode: "dontAsk".into(),
            setting_sources: vec!["user".into()],
            add_dirs: Vec::new(),
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
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            handshake_timeout_ms: 5000,
            max_inflight_per_client: 64,
            max_inflight_bytes_per_client: 256 << 20,
            stats_time_budget_ms: 2000,
            state_dir: None,
            memory_bank_root: None,
            memory_bank_language: "en".into(),
            claude: ClaudeConfig::default(),
            security: SecurityConfig::default(),
            workspace: WorkspaceConfig::default(),
            editor_wait_ms: 3000,
            client_request_timeout_ms: 120_000,
        }
    }
}

impl ClaudeConfig {
    /// What is wrong with the sub-agent's options, if anything (see [`Config::validate`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(cmd) = &self.cmd {
            if cmd.trim().is_empty() || cmd.contains('\0') {
                return Err(ConfigError::Invalid(
                    "claude.cmd must be a non-empty path or command name".into(),
                ));
            }
        }
        if let Some(k) = self
            .env
            .keys()
            .find(|k| k.is_empty() || k.contains('=') || k.contains('\0'))
        {
            return Err(ConfigError::Invalid(format!(
                "claude.env has an invalid variable name {k:?}"
            )));
        }
        if let Some(bad) = self.allowed_tools.iter().find(|t| {
            t.trim().is_empty()
                || t.contains('\0')
                || t.contains(',')
                || t.starts_with('-')
                || tool_base(t).is_empty()
        }) {
            return Err(ConfigError::Invalid(format!(
                "claude.allowed_tools has an invalid entry {bad:?} (one \
             tool name or pattern per entry, such as \"Read\" or \"Bash(git status)\"; \
             \"*\" for every tool)"
            )));
        }
        if !PERMISSION_MODES.contains(&self.permission_mode.as_str()) {
            return Err(ConfigError::Invalid(format!(
                "claude.permission_mode must be one of {}, got {:?}",
                PERMISSION_MODES.join(", "),
                self.permission_mode
            )));
        }
        if self.setting_sources.is_empty()
            || self
                .setting_sources
                .iter()
                .any(|x| !SETTING_SOURCES.contains(&x.as_str()))
        {
            return Err(ConfigError::Invalid(format!(
                "claude.setting_sources must be a non-empty list of {}, \
             got {:?}",
                SETTING_SOURCES.join(", "),
                self.setting_sources
            )));
        }
        if let Some(bad) = self
            .add_dirs
            .iter()
            .find(|d| !d.is_absolute() || d.as_os_str().to_string_lossy().contains(['\0', ',']))
        {
            return Err(ConfigError::Invalid(format!(
                "claude.add_dirs has an invalid entry {:?} (absolute \
             folder paths only)",
                bad.display().to_string()
            )));
        }
        if self.max_context_bytes == 0 {
            return Err(ConfigError::Invalid(
                "claude.max_context_bytes must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// What is wrong with a configuration, or what it cannot tell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value that does not decode or is out of range; the text names the option and what it
    /// must be.
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// Neither `state_dir` nor the environment names a state directory.
    #[error("no state directory: set setup's state_dir or HOME (XDG_STATE_HOME)")]
    NoStateDir,
    /// The lock directory cannot be placed.
    #[error(transparent)]
    LockDir(#[from] crate::lockfile::LockError),
}

/// A malformed option is the caller's mistake; a missing state directory is not.
impl crate::error::Fault for ConfigError {
    fn is_callers(&self) -> bool {
        matches!(self, ConfigError::Invalid(_))
    }
}

impl Config {
    /// Parses the JSON `setup()` hands over and checks the values make sense.
    pub fn from_json(json: &str) -> Result<Config, ConfigError> {
        let cfg: Config =
            serde_json::from_str(json).map_err(|e| ConfigError::Invalid(e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let PortRange { min, max } = self.port_range;
        if min == 0 || min > max {
            return Err(ConfigError::Invalid(format!(
                "port_range must satisfy 1 <= min <= max, got min={min} max={max}"
            )));
        }
        if self.max_message_size < 1024 {
            return Err(ConfigError::Invalid(
                "max_message_size must be at least 1024".into(),
            ));
        }
        crate::capfs::WritePolicy::new(&self.security.allow_write)
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        if let Some(p) = self.workspace.extra_roots.iter().find(|p| !p.is_absolute()) {
            return Err(ConfigError::Invalid(format!(
                "workspace.extra_roots must be absolute paths, got {:?}",
                p.display().to_string()
            )));
        }
        if !matches!(self.memory_bank_language.as_str(), "en" | "ja" | "zh") {
            return Err(ConfigError::Invalid(format!(
                "memory_bank_language must be \"en\", \"ja\" or \"zh\", got {:?}",
                self.memory_bank_language
            )));
        }
        if self.ide_name.trim().is_empty()
            || self.ide_name.chars().count() > 200
            || self.ide_name.chars().any(char::is_control)
        {
            return Err(ConfigError::Invalid(
                "ide_name must be 1 to 200 characters, without control characters".into(),
            ));
        }
        if !(10..=3_600_000).contains(&self.client_request_timeout_ms) {
            return Err(ConfigError::Invalid(format!(
                "client_request_timeout_ms must be between 10 and 3600000, got {}",
                self.client_request_timeout_ms
            )));
        }
        if !(10..=600_000).contains(&self.editor_wait_ms) {
            return Err(ConfigError::Invalid(format!(
                "editor_wait_ms must be between 10 and 600000, got {}",
                self.editor_wait_ms
            )));
        }
        if self.max_inflight_per_client == 0 {
            return Err(ConfigError::Invalid(
                "max_inflight_per_client must be at least 1".into(),
            ));
        }
        if !(1024..=u32::MAX as usize).contains(&self.max_inflight_bytes_per_client) {
            return Err(ConfigError::Invalid(format!(
                "max_inflight_bytes_per_client must be between 1024 and \
                 {}, got {}",
                u32::MAX,
                self.max_inflight_bytes_per_client
            )));
        }
        self.claude.validate()
    }

    /// The directory lock files go into: `lock_dir`, else `$CLAUDE_CONFIG_DIR/ide`,
    /// else `~/.claude/ide`.
    pub fn lock_dir(&self) -> Result<PathBuf, ConfigError> {
        if let Some(d) = &self.lock_dir {
            return Ok(d.clone());
        }
        Ok(crate::lockfile::default_lock_dir()?)
    }

    /// The plugin's state directory: `state_dir` (Lua passes `stdpath("state")/claude-context`),
    /// else what Neovim's `stdpath("state")` would be (`$XDG_STATE_HOME/nvim`, else
    /// `~/.local/state/nvim`; `%LOCALAPPDATA%/nvim-data` on Windows) plus `/claude-context`.
    pub fn state_dir(&self) -> Result<PathBuf, ConfigError> {
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
        base.map(|b| b.join("claude-context"))
            .ok_or(ConfigError::NoStateDir)
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
        assert_eq!(c.max_inflight_bytes_per_client, 256 << 20);
        let e = Config::from_json(r#"{"max_inflight_bytes_per_client": 10}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_inflight_bytes_per_client"), "{e}");
    }

    #[test]
    fn rejects_typos_and_bad_ranges() {
        let e = Config::from_json(r#"{"port_rnage": {}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("port_rnage"), "{e}");
        let e = Config::from_json(r#"{"port_range": {"min": 20000, "max": 10000}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("min <= max"), "{e}");
    }

    #[test]
    fn client_request_timeout_defaults_and_bounds() {
        assert_eq!(
            Config::from_json("{}").unwrap().client_request_timeout_ms,
            120_000
        );
        let c = Config::from_json(r#"{"client_request_timeout_ms": 300}"#).unwrap();
        assert_eq!(c.client_request_timeout_ms, 300);
        let e = Config::from_json(r#"{"client_request_timeout_ms": 0}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("client_request_timeout_ms"), "{e}");
    }

    #[test]
    fn claude_section_defaults_and_overrides() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(c.claude.args, ["--output-format", "json"]);
        assert_eq!(c.claude.allowed_tools, ["Read", "Grep", "Glob"]);
        assert_eq!(c.claude.permission_mode, "dontAsk");
        assert_eq!(c.claude.cmd, None);
        let c = Config::from_json(
            r#"{"claude": {"cmd": "/opt/claude", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}}}"#,
        )
        .unwrap();
        assert_eq!(c.claude.cmd.as_deref(), Some("/opt/claude"));
        assert_eq!(c.claude.env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:1");
        // Args keep their default when only cmd is given.
        assert_eq!(c.claude.args.len(), 2);
        let e = Config::from_json(r#"{"claude": {"comd": "x"}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("comd"), "{e}");
        let e = Config::from_json(r#"{"claude": {"env": {"A=B": "x"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("A=B"), "{e}");
        let e = Config::from_json(r#"{"claude": {"cmd": " "}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("claude.cmd"), "{e}");
    }

    /// The attack: a tool call the person approved as "ask Claude something" becomes an agent
    /// that runs any shell command, because the default arguments skipped every permission.
    #[test]
    fn default_sub_agent_args_do_not_skip_permissions() {
        let c = Config::from_json("{}").unwrap();
        assert!(
            !c.claude
                .args
                .iter()
                .any(|a| a.contains("dangerously") || a.contains("bypass")),
            "{:?}",
            c.claude.args
        );
        assert!(c
            .claude
            .allowed_tools
            .iter()
            .all(|t| READ_ONLY_TOOLS.contains(&t.as_str())));
        assert_ne!(c.claude.permission_mode, "bypassPermissions");
        // The repository's own settings files (hooks) are not loaded.
        assert_eq!(c.claude.setting_sources, ["user"]);
        let e = Config::from_json(r#"{"claude": {"setting_sources": ["repo"]}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("setting_sources"), "{e}");
        assert!(Config::from_json(r#"{"claude": {"setting_sources": []}}"#).is_err());
    }

    #[test]
    fn claude_tools_and_permission_mode_are_checked() {
        let c = Config::from_json(
            r#"{"claude": {"allowed_tools": ["Read", "Bash(git status)"], "permission_mode": "default"}}"#,
        )
        .unwrap();
        assert_eq!(c.claude.allowed_tools, ["Read", "Bash(git status)"]);
        assert_eq!(tool_base("Bash(git status)"), "Bash");
        let e = Config::from_json(r#"{"claude": {"permission_mode": "yolo"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("permission_mode") && e.contains("dontAsk"),
            "{e}"
        );
        for bad in [
            r#""Read,Bash""#,
            r#""""#,
            r#""--dangerously-skip-permissions""#,
        ] {
            let e = Config::from_json(&format!(r#"{{"claude": {{"allowed_tools": [{bad}]}}}}"#))
                .unwrap_err()
                .to_string();
            assert!(e.contains("allowed_tools"), "{e}");
        }
        // No tools at all is a valid choice.
        let c = Config::from_json(r#"{"claude": {"allowed_tools": []}}"#).unwrap();
        assert!(c.claude.allowed_tools.is_empty());
    }

    #[test]
    fn memory_bank_language_is_en_ja_or_zh() {
        assert_eq!(Config::default().memory_bank_language, "en");
        for lang in ["en", "ja", "zh"] {
            let c = Config::from_json(&format!(r#"{{"memory_bank_language": "{lang}"}}"#)).unwrap();
            assert_eq!(c.memory_bank_language, lang);
        }
        let e = Config::from_json(r#"{"memory_bank_language": "de"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory_bank_language"), "{e}");
    }

    #[test]
    fn ide_name_is_checked() {
        let c = Config::from_json(r#"{"ide_name": "Neovim (proj, pid 7)"}"#).unwrap();
        assert_eq!(c.ide_name, "Neovim (proj, pid 7)");
        assert_eq!(Config::default().ide_name, "Neovim");
        for bad in [r#""""#, r#""  ""#, r#""a\nb""#] {
            let e = Config::from_json(&format!(r#"{{"ide_name": {bad}}}"#))
                .unwrap_err()
                .to_string();
            assert!(e.contains("ide_name"), "{e}");
        }
        let long = "x".repeat(201);
        assert!(Config::from_json(&format!(r#"{{"ide_name": "{long}"}}"#)).is_err());
    }

    #[test]
    fn memory_bank_root_and_state_dir() {
        let c = Config::from_json(r#"{"memory_bank_root": "/p/bank", "state_dir": "/s"}"#).unwrap();
        assert_eq!(c.memory_bank_root, Some(PathBuf::from("/p/bank")));
        assert_eq!(c.state_dir().unwrap(), PathBuf::from("/s"));
        assert_eq!(Config::default().memory_bank_root, None);
    }
}
