//! The sub-agent's command line: which tools it gets and what they may reach.
//!
//! The read-only sub-agent reads the project and nothing else:
//!
//! * A bare tool name in a Claude Code allow rule (`Read`) matches every path, so the person's
//!   bare `Read`, `Grep` and `Glob` entries become one path-scoped rule per readable folder
//!   (`Read(//<root>/**)`, the CLI's syntax for an absolute path; Grep and Glob are judged by
//!   Read rules). Under `dontAsk` anything no rule allows is refused.
//! * `--settings` (the launching program's settings, which repository settings cannot undo)
//!   adds deny rules for the home folder's credential stores, turns on the CLI's own refusal
//!   of reads outside the working directories where the CLI has it
//!   (`blockReadsOutsideWorkingDirectories`, `blockFileToolReadsOutsideWorkingDirectories`:
//!   no allow rule lifts them; older CLIs ignore the keys) and disables bypass mode.
//! * `--strict-mcp-config`: no MCP server from the repository's `.mcp.json` (or anywhere else)
//!   starts, unless the person allowed MCP tools.
//! * `--setting-sources=user` (the default of `setup{claude.setting_sources}`): the
//!   repository's `.claude/settings*.json` are not loaded at all.
//!
//! The person widens it on purpose only: `setup{claude = {add_dirs = {…}}}` makes more folders
//! working directories (`--add-dir`), `allowed_tools` entries other than the bare read tools
//! pass through as given, and their own `--settings` or a bypass mode in `claude.args` /
//! `permission_mode` leaves the confinement to them.

use super::ClaudeError;
use crate::config::ClaudeConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A run's timeout when the call names none, in seconds (doc/protocol.md, Limits). The Lua side
/// sends no timeout of its own unless the person set `claude.timeout`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;
/// The largest timeout accepted (a day).
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// A session id we are willing to pass to `--resume`: letters, digits, `-` and `_`, not
/// starting with `-`, at most 200 characters.
pub fn valid_session_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Per-call options, mapped to CLI flags.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// `--model` (an alias such as `sonnet` or a full model name).
    #[serde(default)]
    pub model: Option<String>,
    /// `--max-turns`: the most agentic turns the CLI may take.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Narrows the sub-agent's tools for this run: names (or patterns such as `Bash(git *)`)
    /// from the set the person allowed in `setup{claude = {allowed_tools}}` (default Read, Grep,
    /// Glob). A tool outside that set is refused with an error.
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// `--append-system-prompt`: text appended to the CLI's system prompt.
    #[serde(default)]
    pub append_system_prompt: Option<String>,
}

impl RunOptions {
    /// Checks the values; the error says which option is wrong.
    pub fn validate(&self) -> Result<(), ClaudeError> {
        if let Some(m) = &self.model {
            if m.trim().is_empty() || m.starts_with('-') || m.contains('\0') {
                return Err(ClaudeError::InvalidOption(format!(
                    "options.model {m:?} is not a model name"
                )));
            }
        }
        if self.max_turns == Some(0) {
            return Err(ClaudeError::InvalidOption(
                "options.max_turns must be at least 1".into(),
            ));
        }
        if let Some(t) = &self.allowed_tools {
            if let Some(bad) = t
                .iter()
                .find(|t| t.trim().is_empty() || t.contains('\0') || t.contains(','))
            {
                return Err(ClaudeError::InvalidOption(format!(
                    "options.allowed_tools has an invalid entry {bad:?} (one tool name or \
                     pattern per entry, no commas)"
                )));
            }
        }
        if self
            .append_system_prompt
            .as_deref()
            .is_some_and(|p| p.contains('\0'))
        {
            return Err(ClaudeError::InvalidOption(
                "options.append_system_prompt contains a NUL byte".into(),
            ));
        }
        Ok(())
    }

    /// The CLI flags, in `--flag=value` form so a value starting with `-` stays a value. The
    /// tools are not among them: [`sub_agent_args`] builds those from the person's set.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(m) = &self.model {
            a.push(format!("--model={m}"));
        }
        if let Some(n) = self.max_turns {
            a.push(format!("--max-turns={n}"));
        }
        if let Some(p) = &self.append_system_prompt {
            a.push(format!("--append-system-prompt={p}"));
        }
        a
    }
}

/// The tools whose bare names are confined to the readable folders.
pub const FILE_READ_TOOLS: [&str; 3] = ["Read", "Grep", "Glob"];

/// Folders under the home folder that hold credentials: denied to the sub-agent's file tools
/// even inside a readable folder (unless the readable folder lies inside one).
pub const CREDENTIAL_DIRS: [&str; 9] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
];

/// Files under the home folder that hold credentials, denied like [`CREDENTIAL_DIRS`].
pub const CREDENTIAL_FILES: [&str; 5] = [
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".claude/.credentials.json",
];

/// A PreToolUse hook for Glob: older CLIs judge a Glob call by its `path` (the working
/// directory when absent) but search where an absolute pattern points, so `{"pattern":
/// "/elsewhere/*"}` listed any folder. The hook refuses (exit 2, the reason on stderr) a
/// pattern that starts with `/` or `~`, or holds `..` or `{`: a search outside is asked for
/// with `path`, which the permission rules judge.
pub const GLOB_PATTERN_HOOK: &str = "grep -Eq '\"pattern\"[[:space:]]*:[[:space:]]*\"(/|~|[^\"]*\\.\\.|[^\"]*[{])' && { echo 'Glob: give a pattern relative to the path searched (no leading / or ~, no .., no braces); search elsewhere with the path argument' >&2; exit 2; }; exit 0";

/// The tools a run may use: the person's set (`setup{claude = {allowed_tools}}`), or the
/// caller's `options.allowed_tools` when every entry of it is inside that set (the same entry, a
/// pattern of a tool the person allowed by its bare name, or anything when the person allowed
/// `"*"`). A caller can only narrow: anything else is an error naming the entry.
/// The tools a run may use: the caller's narrowing of the person's set, or the refusal.
pub fn narrow_tools(
    person: &[String],
    caller: Option<&[String]>,
) -> Result<Vec<String>, ClaudeError> {
    let Some(caller) = caller else {
        return Ok(person.to_vec());
    };
    for t in caller {
        let inside = person
            .iter()
            .any(|p| p == "*" || p == t || (!p.contains('(') && p == crate::config::tool_base(t)));
        if !inside {
            return Err(ClaudeError::ToolNotAllowed(format!(
                "options.allowed_tools: {t:?} is not among the tools the person allows the \
                 sub-agent ({}); options.allowed_tools can only narrow that set (the person \
                 widens it with setup{{claude = {{allowed_tools = …}}}})",
                if person.is_empty() {
                    "none".to_string()
                } else {
                    person.join(", ")
                }
            )));
        }
    }
    Ok(caller.to_vec())
}

fn has_flag(a: &[String], flags: &[&str]) -> bool {
    a.iter().any(|x| {
        flags
            .iter()
            .any(|f| x == f || x.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
    })
}

/// A folder in the CLI's absolute-path rule syntax (`//` then the path without its leading
/// `/`, ending in `/`), or None when the path has a character the rule or pattern syntax gives
/// a meaning to (`\\ * ? [ ] ( ) ! #`, a control character). Such a folder gets no rule: it is
/// a working directory all the same, and the CLI lets its file tools read inside those.
fn rule_path(dir: &Path) -> Option<String> {
    let s = dir.to_str()?;
    if s.chars().any(|c| {
        c.is_control()
            || matches!(
                c,
                '\\' | '*' | '?' | '[' | ']' | '(' | ')' | '!' | '#' | ','
            )
    }) {
        return None;
    }
    Some(format!("/{}/", s.trim_end_matches('/')))
}

/// `a` lies inside `b` (or is `b`), by path components.
fn within(a: &Path, b: &Path) -> bool {
    a.starts_with(b)
}

/// The folders the sub-agent may read: the project root and the person's `add_dirs`.
pub fn readable_dirs(cfg: &ClaudeConfig, root: Option<&Path>) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = root.map(Path::to_path_buf).into_iter().collect();
    for d in &cfg.add_dirs {
        if !v.contains(d) {
            v.push(d.clone());
        }
    }
    v
}

/// Whether `args` choose how permissions are asked (`--permission-mode`, in either form, or
/// `--dangerously-skip-permissions`): then a configured mode is not added.
pub fn chooses_permission_mode(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "--permission-mode"
            || a.starts_with("--permission-mode=")
            || a == "--dangerously-skip-permissions"
    })
}

/// A Claude Code command line the editor starts (a terminal's, a background session's): the
/// one place its argv is put together (the editor asks the native module, `claude_argv`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Launch {
    /// The CLI and what comes before the plugin's options (`claude --bg --worktree NAME`).
    pub head: Vec<String>,
    /// `--mcp-config=<value>` (a file, or the JSON itself).
    pub mcp_config: Option<String>,
    /// `--settings=<json>`: the plugin's hooks.
    pub settings: Option<String>,
    /// The configured `--permission-mode`: added unless `args` choose one.
    pub permission_mode: Option<String>,
    /// The mode was chosen for this launch: it is added even when `args` choose one.
    pub mode_wins: bool,
    /// The person's arguments (`terminal.args`).
    pub args: Vec<String>,
    /// What follows (`:ClaudeContext open`'s arguments, a prompt).
    pub tail: Vec<String>,
}

impl Launch {
    /// The argv: head, `--mcp-config=`, `--settings=`, `--permission-mode=`, args, tail (the
    /// `=` forms keep a flag that takes several values from swallowing what follows; the
    /// person's arguments come right before the tail, a prompt after their `--model x`).
    pub fn argv(&self) -> Vec<String> {
        let mut v = self.head.clone();
        if let Some(m) = &self.mcp_config {
            v.push(format!("--mcp-config={m}"));
        }
        if let Some(s) = &self.settings {
            v.push(format!("--settings={s}"));
        }
        if let Some(mode) = &self.permission_mode {
            if self.mode_wins || !chooses_permission_mode(&self.args) {
                v.push(format!("--permission-mode={mode}"));
            }
        }
        v.extend(self.args.iter().cloned());
        v.extend(self.tail.iter().cloned());
        v
    }
}

/// Whether the person's own arguments or permission mode take the confinement over: their own
/// `--settings`, or a bypass mode they chose.
pub fn person_owns_permissions(cfg: &ClaudeConfig) -> bool {
    has_flag(
        &cfg.args,
        &[
            "--settings",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
        ],
    ) || cfg.permission_mode == "bypassPermissions"
        || cfg.args.iter().any(|a| {
            a.strip_prefix("--permission-mode")
                .is_some_and(|r| r.trim_start_matches('=') == "bypassPermissions")
        })
        || cfg
            .args
            .windows(2)
            .any(|w| w[0] == "--permission-mode" && w[1] == "bypassPermissions")
}

/// The `--settings` value: deny rules for the credential stores (those that do not hold a
/// readable folder), the CLI's refusal of reads outside the working directories, the readable
/// folders as the only additional directories, and no bypass mode.
pub fn confinement_settings(dirs: &[PathBuf], home: Option<&Path>) -> serde_json::Value {
    let keeps = |c: &str| {
        home.is_none_or(|h| {
            let p = h.join(c);
            !dirs.iter().any(|d| within(d, &p))
        })
    };
    let deny: Vec<String> = CREDENTIAL_DIRS
        .iter()
        .filter(|c| keeps(c))
        .map(|c| format!("Read(~/{c}/**)"))
        .chain(
            CREDENTIAL_FILES
                .iter()
                .filter(|c| keeps(c))
                .map(|c| format!("Read(~/{c})")),
        )
        .collect();
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let mut v = serde_json::json!({
        "permissions": {
            "deny": deny,
            "disableBypassPermissionsMode": "disable",
            "blockReadsOutsideWorkingDirectories": true,
            "blockFileToolReadsOutsideWorkingDirectories": true,
            "additionalDirectories": dirs,
        }
    });
    if cfg!(unix) {
        v["hooks"] = serde_json::json!({
            "PreToolUse": [{
                "matcher": "Glob",
                "hooks": [{"type": "command", "command": GLOB_PATTERN_HOOK}],
            }]
        });
    }
    v
}

/// The CLI arguments for a run: the person's `claude.args` (plus `-p`), then the permission
/// mode, the setting sources and the tool set (unless the person's args set those flags
/// themselves), the confinement to `root` and the person's `add_dirs` (see the module
/// comment), then the per-call options and `--resume`. `tools` comes from [`narrow_tools`].
/// `home` is the home folder the CLI sees (for the credential deny rules).
pub fn sub_agent_args(
    cfg: &ClaudeConfig,
    tools: &[String],
    options: &RunOptions,
    resume: Option<&str>,
    root: Option<&Path>,
    home: Option<&Path>,
) -> Vec<String> {
    let mut a = cfg.args.clone();
    let own = person_owns_permissions(cfg);
    if !has_flag(&a, &["-p", "--print"]) {
        a.push("-p".into());
    }
    if !has_flag(&a, &["--permission-mode", "--dangerously-skip-permissions"]) {
        a.push(format!("--permission-mode={}", cfg.permission_mode));
    }
    if !has_flag(&a, &["--setting-sources"]) {
        a.push(format!(
            "--setting-sources={}",
            cfg.setting_sources.join(",")
        ));
    }
    let dirs = readable_dirs(cfg, root);
    let every_tool = tools.iter().any(|t| t == "*");
    if !every_tool {
        if !has_flag(&a, &["--tools"]) {
            let mut names: Vec<&str> = Vec::new();
            for t in tools {
                let b = crate::config::tool_base(t);
                if !names.contains(&b) {
                    names.push(b);
                }
            }
            // `--tools=` (empty) gives the sub-agent no tools at all.
            a.push(format!("--tools={}", names.join(",")));
        }
        if !has_flag(&a, &["--allowedTools", "--allowed-tools"]) {
            let mut allow: Vec<String> = Vec::new();
            let mut reads = false;
            for t in tools {
                if FILE_READ_TOOLS.contains(&t.as_str()) {
                    reads = true;
                } else if !allow.contains(t) {
                    allow.push(t.clone());
                }
            }
            if reads {
                // A bare name would allow every path: one rule per readable folder instead.
                for r in dirs.iter().filter_map(|d| rule_path(d)) {
                    allow.push(format!("Read({r}**)"));
                }
            }
            if !allow.is_empty() {
                a.push(format!("--allowedTools={}", allow.join(",")));
            }
        }
    }
    if !own {
        let home = home.map(Path::to_path_buf);
        a.push(format!(
            "--settings={}",
            confinement_settings(&dirs, home.as_deref())
        ));
    }
    for d in &cfg.add_dirs {
        a.push(format!("--add-dir={}", d.display()));
    }
    let mcp_allowed = every_tool || tools.iter().any(|t| t.starts_with("mcp__"));
    if !mcp_allowed && !has_flag(&a, &["--mcp-config", "--strict-mcp-config"]) {
        a.push("--strict-mcp-config".into());
    }
    a.extend(options.to_args());
    if let Some(id) = resume {
        a.push("--resume".into());
        a.push(id.into());
    }
    a
}

/// A run's environment on top of the editor's: setup{claude.env}, and the CLI's own directory
/// appended to PATH (an nvm-installed `claude` is a node script that needs the `node` next to
/// it).
pub fn child_env(cfg: &ClaudeConfig, cli: &Path) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = cfg
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(dir) = cli.parent().and_then(Path::to_str) {
        let base = cfg
            .env
            .get("PATH")
            .cloned()
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_default();
        if !base.split(':').any(|p| p == dir) {
            let path = if base.is_empty() {
                dir.to_string()
            } else {
                format!("{base}:{dir}")
            };
            env.retain(|(k, _)| k != "PATH");
            env.push(("PATH".into(), path));
        }
    }
    env
}

/// The home folder the CLI sees: setup{claude.env}'s HOME, else ours.
pub fn child_home(cfg: &ClaudeConfig) -> Option<PathBuf> {
    cfg.env
        .get("HOME")
        .cloned()
        .or_else(|| std::env::var("HOME").ok())
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_adds_the_configured_mode_unless_the_args_choose_one() {
        let l = |mode: Option<&str>, wins: bool, args: &[&str]| {
            Launch {
                head: s(&["claude"]),
                mcp_config: Some("/run/m.json".into()),
                permission_mode: mode.map(str::to_string),
                mode_wins: wins,
                args: s(args),
                settings: Some("{}".into()),
                tail: s(&["--resume"]),
            }
            .argv()
        };
        assert_eq!(
            l(Some("default"), false, &["--model", "x y"]),
            s(&[
                "claude",
                "--mcp-config=/run/m.json",
                "--settings={}",
                "--permission-mode=default",
                "--model",
                "x y",
                "--resume"
            ])
        );
        for chosen in [
            &["--permission-mode", "plan"][..],
            &["--permission-mode=plan"],
            &["--dangerously-skip-permissions"],
        ] {
            assert!(chooses_permission_mode(&s(chosen)));
            let a = l(Some("default"), false, chosen);
            assert!(
                !a.contains(&"--permission-mode=default".to_string()),
                "{a:?}"
            );
            let a = l(Some("acceptEdits"), true, chosen);
            assert!(
                a.contains(&"--permission-mode=acceptEdits".to_string()),
                "{a:?}"
            );
        }
        assert!(!chooses_permission_mode(&s(&["--permission-modes"])));
        assert_eq!(l(None, true, &[]).len(), 4);
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn args(cfg: &ClaudeConfig, tools: &[String], root: Option<&str>) -> Vec<String> {
        sub_agent_args(
            cfg,
            tools,
            &RunOptions::default(),
            None,
            root.map(Path::new),
            Some(Path::new("/home/p")),
        )
    }

    fn settings(a: &[String]) -> serde_json::Value {
        let s = a
            .iter()
            .find_map(|x| x.strip_prefix("--settings="))
            .expect("--settings");
        serde_json::from_str(s).unwrap()
    }

    /// The attack: `Read`, `Grep`, `Glob` as bare allow rules match every path, so the
    /// read-only sub-agent read `~/.ssh/id_rsa` and any sibling folder.
    #[test]
    fn sub_agent_cannot_read_outside_project() {
        let cfg = ClaudeConfig::default();
        let a = args(&cfg, &cfg.allowed_tools, Some("/work/proj"));
        assert!(a.contains(&"--tools=Read,Grep,Glob".to_string()), "{a:?}");
        // No bare read tool is allowed: only the project, by absolute path.
        assert!(
            a.contains(&"--allowedTools=Read(//work/proj/**)".to_string()),
            "{a:?}"
        );
        let allow = a.iter().find(|x| x.starts_with("--allowedTools")).unwrap();
        for bare in ["Read,", "Grep", "Glob", "=Read,"] {
            assert!(!allow.contains(bare), "{allow}");
        }
        let st = settings(&a);
        let p = &st["permissions"];
        assert_eq!(p["blockReadsOutsideWorkingDirectories"], true);
        assert_eq!(p["blockFileToolReadsOutsideWorkingDirectories"], true);
        assert_eq!(p["disableBypassPermissionsMode"], "disable");
        assert_eq!(
            p["additionalDirectories"],
            serde_json::json!(["/work/proj"])
        );
        let deny: Vec<&str> = p["deny"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(deny.contains(&"Read(~/.ssh/**)"), "{deny:?}");
        assert!(deny.contains(&"Read(~/.netrc)"), "{deny:?}");
        assert!(
            deny.contains(&"Read(~/.claude/.credentials.json)"),
            "{deny:?}"
        );
        assert_eq!(
            st["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            GLOB_PATTERN_HOOK
        );
        assert!(a.contains(&"--permission-mode=dontAsk".to_string()));
        assert!(a.contains(&"--setting-sources=user".to_string()));
        assert!(a.contains(&"--strict-mcp-config".to_string()));
        assert!(!a.iter().any(|x| x.starts_with("--add-dir")));
    }

    #[test]
    fn rule_paths_skip_pattern_characters() {
        assert_eq!(rule_path(Path::new("/a/b")).unwrap(), "//a/b/");
        assert_eq!(rule_path(Path::new("/a/b/")).unwrap(), "//a/b/");
        assert_eq!(rule_path(Path::new("/")).unwrap(), "//");
        for odd in [
            "/x/[y]", "/x/a*", "/x/(z)", "/x/!a", "/x/#", "/x/a,b", "/x/a\\b", "/x/a\nb",
        ] {
            assert_eq!(rule_path(Path::new(odd)), None, "{odd}");
        }
    }

    #[test]
    fn the_person_widens_reads_with_add_dirs_only() {
        let cfg = ClaudeConfig {
            add_dirs: vec![PathBuf::from("/home/p/notes")],
            ..ClaudeConfig::default()
        };
        let a = args(&cfg, &cfg.allowed_tools, Some("/work/proj"));
        assert!(
            a.contains(&"--allowedTools=Read(//work/proj/**),Read(//home/p/notes/**)".to_string()),
            "{a:?}"
        );
        assert!(a.contains(&"--add-dir=/home/p/notes".to_string()));
        let st = settings(&a);
        assert_eq!(
            st["permissions"]["additionalDirectories"],
            serde_json::json!(["/work/proj", "/home/p/notes"])
        );
        // A readable folder inside a credential store lifts that store's deny rule only.
        let cfg = ClaudeConfig {
            add_dirs: vec![PathBuf::from("/home/p/.config/gh/x")],
            ..ClaudeConfig::default()
        };
        let deny = settings(&args(&cfg, &cfg.allowed_tools, Some("/w")))["permissions"]["deny"]
            .to_string();
        assert!(!deny.contains(".config/gh"), "{deny}");
        assert!(deny.contains(".ssh"), "{deny}");
        // Other entries pass through as given; path-scoped read rules too.
        let cfg = ClaudeConfig {
            allowed_tools: s(&["Read(src/**)", "Grep", "Bash(git status)", "mcp__x__y"]),
            ..ClaudeConfig::default()
        };
        let a = args(&cfg, &cfg.allowed_tools, Some("/w"));
        assert!(
            a.contains(
                &"--allowedTools=Read(src/**),Bash(git status),mcp__x__y,Read(//w/**)".to_string()
            ),
            "{a:?}"
        );
        assert!(
            a.contains(&"--tools=Read,Grep,Bash,mcp__x__y".to_string()),
            "{a:?}"
        );
        // MCP tools allowed by the person: their MCP servers load.
        assert!(!a.contains(&"--strict-mcp-config".to_string()));
    }

    #[test]
    fn the_persons_bypass_or_own_settings_take_over() {
        for cfg in [
            ClaudeConfig {
                args: s(&["--dangerously-skip-permissions", "--output-format=json"]),
                ..ClaudeConfig::default()
            },
            ClaudeConfig {
                permission_mode: "bypassPermissions".into(),
                ..ClaudeConfig::default()
            },
            ClaudeConfig {
                args: s(&["--settings", "/home/p/mine.json"]),
                ..ClaudeConfig::default()
            },
            ClaudeConfig {
                args: s(&["--permission-mode", "bypassPermissions"]),
                ..ClaudeConfig::default()
            },
        ] {
            assert!(person_owns_permissions(&cfg), "{cfg:?}");
            let a = args(&cfg, &cfg.allowed_tools, Some("/w"));
            assert!(!a.iter().any(|x| x.starts_with("--settings=")), "{a:?}");
        }
        assert!(!person_owns_permissions(&ClaudeConfig::default()));
    }

    #[test]
    fn no_root_allows_no_reads() {
        let cfg = ClaudeConfig::default();
        let a = args(&cfg, &cfg.allowed_tools, None);
        assert!(!a.iter().any(|x| x.starts_with("--allowedTools")), "{a:?}");
        assert_eq!(
            settings(&a)["permissions"]["additionalDirectories"],
            serde_json::json!([])
        );
    }

    /// The attack: `execute_claude` started the sub-agent with `--dangerously-skip-permissions`,
    /// so one approved "ask Claude" call became an agent that runs any shell command.
    #[test]
    fn sub_agent_gets_no_shell_by_default() {
        let cfg = ClaudeConfig::default();
        let tools = narrow_tools(&cfg.allowed_tools, None).unwrap();
        let a = sub_agent_args(
            &cfg,
            &tools,
            &RunOptions::default(),
            None,
            Some(Path::new("/w")),
            None,
        );
        assert!(!a.iter().any(|x| x.contains("dangerously")), "{a:?}");
        assert!(
            a.contains(&"--permission-mode=dontAsk".to_string()),
            "{a:?}"
        );
        assert!(a.contains(&"--tools=Read,Grep,Glob".to_string()), "{a:?}");
        assert!(
            a.contains(&"--allowedTools=Read(//w/**)".to_string()),
            "{a:?}"
        );
        assert!(!a.iter().any(|x| x.contains("Bash") || x.contains("Edit")));
        assert_eq!(a[..3], s(&["--output-format", "json", "-p"]));
    }

    /// The attack: a caller (the model, through `/mcp`) widens the sub-agent with
    /// `options.allowed_tools = ["Bash"]`.
    #[test]
    fn caller_allowed_tools_cannot_widen_the_persons_set() {
        let person = s(&["Read", "Grep", "Glob"]);
        let e = narrow_tools(&person, Some(&s(&["Read", "Bash"])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"Bash\"") && e.contains("only narrow"), "{e}");
        let e = narrow_tools(&person, Some(&s(&["*"])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"*\""), "{e}");
        // A pattern of a tool allowed only as a narrower pattern is not inside it.
        let narrow_bash = s(&["Bash(git status)"]);
        assert!(narrow_tools(&narrow_bash, Some(&s(&["Bash"]))).is_err());
        assert!(narrow_tools(&narrow_bash, Some(&s(&["Bash(rm -rf /)"]))).is_err());
        // Narrowing works.
        assert_eq!(
            narrow_tools(&person, Some(&s(&["Read"]))).unwrap(),
            s(&["Read"])
        );
        assert_eq!(
            narrow_tools(&s(&["Read", "Bash"]), Some(&s(&["Bash(git log *)"]))).unwrap(),
            s(&["Bash(git log *)"])
        );
        assert_eq!(
            narrow_tools(&s(&["*"]), Some(&s(&["Edit"]))).unwrap(),
            s(&["Edit"])
        );
        assert!(narrow_tools(&person, Some(&[])).unwrap().is_empty());
    }

    #[test]
    fn the_persons_wider_set_and_explicit_flags_are_kept() {
        let cfg = ClaudeConfig {
            allowed_tools: s(&["Read", "Bash(git status)", "Bash(git diff *)"]),
            permission_mode: "default".into(),
            ..ClaudeConfig::default()
        };
        let a = sub_agent_args(
            &cfg,
            &cfg.allowed_tools,
            &RunOptions::default(),
            Some("id"),
            Some(Path::new("/w")),
            None,
        );
        assert!(a.contains(&"--tools=Read,Bash".to_string()), "{a:?}");
        assert!(a.contains(
            &"--allowedTools=Bash(git status),Bash(git diff *),Read(//w/**)".to_string()
        ));
        assert!(a.contains(&"--permission-mode=default".to_string()));
        assert_eq!(a[a.len() - 2..], s(&["--resume", "id"]));
        // Every tool: no --tools, no --allowedTools.
        let all = ClaudeConfig {
            allowed_tools: s(&["*"]),
            ..ClaudeConfig::default()
        };
        let a = sub_agent_args(
            &all,
            &all.allowed_tools,
            &RunOptions::default(),
            None,
            Some(Path::new("/w")),
            None,
        );
        assert!(!a
            .iter()
            .any(|x| x.starts_with("--tools") || x.starts_with("--allowedTools")));
        // No tools at all.
        let a = sub_agent_args(
            &ClaudeConfig::default(),
            &[],
            &RunOptions::default(),
            None,
            Some(Path::new("/w")),
            None,
        );
        assert!(a.contains(&"--tools=".to_string()), "{a:?}");
        assert!(!a.iter().any(|x| x.starts_with("--allowedTools")));
        // The person's own flags win; skipping permissions is their explicit choice.
        let own = ClaudeConfig {
            args: s(&[
                "--dangerously-skip-permissions",
                "--tools",
                "Bash",
                "--output-format=json",
            ]),
            ..ClaudeConfig::default()
        };
        let a = sub_agent_args(
            &own,
            &own.allowed_tools,
            &RunOptions::default(),
            None,
            Some(Path::new("/w")),
            None,
        );
        assert!(
            !a.iter().any(|x| x.starts_with("--permission-mode")),
            "{a:?}"
        );
        assert!(!a.iter().any(|x| x.starts_with("--tools=")), "{a:?}");
        assert!(a.contains(&"--allowedTools=Read(//w/**)".to_string()));
    }
}
