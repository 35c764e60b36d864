//! Finding the Claude Code CLI (doc/protocol.md, Finding the CLI; the Unix order), after
//! `setup{claude = {cmd}}`. The Lua side asks this search (`find_claude`) instead of having its
//! own:
//!
//! 1. `setup{claude = {cmd = …}}` — a path (`~/` expands) or a command name looked up in PATH;
//! 2. `claude` in PATH (the `which` crate; no shell);
//! 3. the common install locations: the official installer's `~/.local/bin/claude` and the
//!    older local install `~/.claude/local/claude` first, then the system and package-manager
//!    places, including the nvm / asdf version directories (`*` expanded by listing directories,
//!    newest version first);
//! 4. `CLAUDE_PATH` — the executable itself or the directory holding it.
//!
//! Nothing here runs a shell or a subprocess.

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The environment discovery looks at; [`DiscoveryEnv::from_process`] reads the real one.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryEnv {
    pub home: Option<PathBuf>,
    pub path: Option<OsString>,
    pub claude_path: Option<OsString>,
    pub cwd: Option<PathBuf>,
}

impl DiscoveryEnv {
    /// The process environment with `overrides` (setup{claude.env}) applied on top.
    pub fn from_process<'a>(overrides: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut e = DiscoveryEnv {
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            path: std::env::var_os("PATH"),
            claude_path: std::env::var_os("CLAUDE_PATH").filter(|p| !p.is_empty()),
            cwd: std::env::current_dir().ok(),
        };
        for (k, v) in overrides {
            match k {
                "HOME" => e.home = Some(PathBuf::from(v)).filter(|h| !h.as_os_str().is_empty()),
                "PATH" => e.path = Some(v.into()),
                "CLAUDE_PATH" => e.claude_path = Some(OsString::from(v)).filter(|p| !p.is_empty()),
                _ => {}
            }
        }
        e
    }
}

/// Where the CLI was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// `config`, `PATH`, `common location` or `CLAUDE_PATH`.
    pub source: &'static str,
}

/// The CLI is nowhere; the message lists every place looked at and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    pub searched: Vec<String>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Claude CLI not found. Looked in: {}. Install it with the official installer \
             (`{INSTALL_OFFICIAL}`) or with npm (`{INSTALL_NPM}`), or point the plugin at it with \
             setup{{claude = {{cmd = \"/path/to/claude\"}}}} or the CLAUDE_PATH environment variable.",
            self.searched.join("; ")
        )
    }
}

/// How to install the CLI, named first in every message: the official (native) installer.
pub const INSTALL_OFFICIAL: &str = "curl -fsSL https://claude.ai/install.sh | bash";
/// The second way: npm.
pub const INSTALL_NPM: &str = "npm install -g @anthropic-ai/claude-code";

/// The Claude Code versions the plugin's features need (the editor asks them of the native
/// module, `cli_versions`): the oldest whose hooks take the exec form (`args`) the plugin's
/// hooks use.
pub const MIN_CLI_HOOKS: &str = "2.1.139";
/// Background sessions: `claude --bg --worktree NAME` and `claude agents --json`.
pub const MIN_CLI_BACKGROUND: &str = "2.1.197";
/// Managing background sessions: `claude attach`, `stop`, `rm`, `logs`.
pub const MIN_CLI_MANAGE: &str = "2.1.330";

/// The common install locations; `~` is the home directory, `*` one directory level. The
/// official installer's place and the older `claude migrate-installer` one come first; then the
/// list of doc/protocol.md, Finding the CLI.
pub const COMMON_LOCATIONS: &[&str] = &[
    "~/.local/bin/claude",
    "~/.claude/local/claude",
    "/usr/local/bin/claude",
    "/usr/bin/claude",
    "~/.npm-global/bin/claude",
    "~/.yarn/bin/claude",
    "~/.volta/bin/claude",
    "~/.nvm/versions/node/*/bin/claude",
    "~/.asdf/installs/nodejs/*/bin/claude",
];

/// A regular file with an execute bit (following symlinks).
pub fn is_executable(p: &Path) -> bool {
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                m.permissions().mode() & 0o111 != 0
            }
            #[cfg(not(unix))]
            {
                true
            }
        }
        _ => false,
    }
}

fn expand_home(s: &str, home: Option<&Path>) -> Option<PathBuf> {
    if s == "~" {
        return home.map(Path::to_path_buf);
    }
    match s.strip_prefix("~/") {
        Some(rest) => home.map(|h| h.join(rest)),
        None => Some(PathBuf::from(s)),
    }
}

/// Expands `*` path components by listing directories (no shell, no other wildcards). Matches
/// are ordered newest version first (`v20.11.0` > `v18.2.1` > `v9.0.0`), then by name.
pub fn expand_glob(pattern: &Path) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::new()];
    for c in pattern.components() {
        let star = matches!(c, Component::Normal(n) if n == "*");
        let mut next = Vec::new();
        for base in current {
            if star {
                let Ok(rd) = std::fs::read_dir(&base) else {
                    continue;
                };
                let mut names: Vec<OsString> = rd
                    .filter_map(Result::ok)
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name())
                    .collect();
                names.sort_by(|a, b| version_key(b).cmp(&version_key(a)).then(a.cmp(b)));
                next.extend(names.into_iter().map(|n| base.join(n)));
            } else {
                next.push(base.join(c.as_os_str()));
            }
        }
        current = next;
    }
    current
}

/// `v20.11.0` → [20, 11, 0]; non-numeric parts count as 0.
fn version_key(name: &OsString) -> Vec<u64> {
    name.to_string_lossy()
        .trim_start_matches('v')
        .split(['.', '-'])
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// Looks everywhere, in order; the first executable wins.
pub fn discover(cmd: Option<&str>, env: &DiscoveryEnv) -> Result<Found, NotFound> {
    let mut searched = Vec::new();
    let cwd = env.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
    let home = env.home.as_deref();
    let path_var = env.path.clone().unwrap_or_default();

    if let Some(cmd) = cmd.map(str::trim).filter(|c| !c.is_empty()) {
        let hit = if cmd.contains('/') || cmd.starts_with('~') {
            expand_home(cmd, home)
                .map(|p| if p.is_absolute() { p } else { cwd.join(p) })
                .filter(|p| is_executable(p))
        } else {
            which::which_in(cmd, Some(&path_var), &cwd).ok()
        };
        if let Some(path) = hit {
            return Ok(Found {
                path,
                source: "config",
            });
        }
        searched.push(format!(
            "setup{{claude.cmd}} = {cmd:?} (not found or not executable)"
        ));
    }

    if let Ok(path) = which::which_in("claude", Some(&path_var), &cwd) {
        return Ok(Found {
            path,
            source: "PATH",
        });
    }
    searched.push("PATH (no `claude`)".into());

    for loc in COMMON_LOCATIONS {
        let Some(pattern) = expand_home(loc, home) else {
            searched.push(format!("{loc} (HOME is not set)"));
            continue;
        };
        let candidates = if loc.contains('*') {
            expand_glob(&pattern)
        } else {
            vec![pattern.clone()]
        };
        if let Some(path) = candidates.into_iter().find(|p| is_executable(p)) {
            return Ok(Found {
                path,
                source: "common location",
            });
        }
        searched.push(pattern.display().to_string());
    }

    match &env.claude_path {
        Some(cp) => {
            let p = PathBuf::from(cp);
            let p = if p.is_dir() { p.join("claude") } else { p };
            if is_executable(&p) {
                return Ok(Found {
                    path: p,
                    source: "CLAUDE_PATH",
                });
            }
            searched.push(format!("CLAUDE_PATH = {} (not executable)", p.display()));
        }
        None => searched.push("CLAUDE_PATH (not set)".into()),
    }
    Err(NotFound { searched })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn env(home: &Path, path: &Path) -> DiscoveryEnv {
        DiscoveryEnv {
            home: Some(home.to_path_buf()),
            path: Some(path.as_os_str().to_owned()),
            claude_path: None,
            cwd: Some(home.to_path_buf()),
        }
    }

    #[test]
    fn order_is_config_then_path_then_common_then_claude_path() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let bin = d.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let mut e = env(&home, &bin);
        // Nothing anywhere (the absolute /usr/... locations are assumed absent in test sandboxes
        // only when they really are; skip the assertion otherwise).
        let nothing = discover(None, &e);
        if Path::new("/usr/local/bin/claude").exists() || Path::new("/usr/bin/claude").exists() {
            return;
        }
        let msg = nothing.unwrap_err().to_string();
        assert!(msg.contains("PATH (no `claude`)"), "{msg}");
        assert!(msg.contains(".nvm/versions/node/*/bin/claude"), "{msg}");
        assert!(msg.contains("CLAUDE_PATH (not set)"), "{msg}");
        assert!(msg.contains(".local/bin/claude"), "{msg}");
        assert!(msg.contains(".claude/local/claude"), "{msg}");
        // The official installer is named first, npm second.
        let official = msg.find(INSTALL_OFFICIAL).expect(&msg);
        let npm = msg
            .find("npm install -g @anthropic-ai/claude-code")
            .expect(&msg);
        assert!(official < npm, "{msg}");

        // CLAUDE_PATH as a directory.
        let cp = d.path().join("cp");
        exe(&cp.join("claude"));
        e.claude_path = Some(cp.clone().into_os_string());
        assert_eq!(
            discover(None, &e).unwrap(),
            Found {
                path: cp.join("claude"),
                source: "CLAUDE_PATH"
            }
        );
        // nvm beats CLAUDE_PATH, and the newest node version wins.
        exe(&home.join(".nvm/versions/node/v9.0.0/bin/claude"));
        exe(&home.join(".nvm/versions/node/v20.11.0/bin/claude"));
        exe(&home.join(".nvm/versions/node/v18.2.1/bin/claude"));
        let f = discover(None, &e).unwrap();
        assert_eq!(f.source, "common location");
        assert_eq!(f.path, home.join(".nvm/versions/node/v20.11.0/bin/claude"));
        // volta comes before nvm in the list (doc/protocol.md, Finding the CLI).
        exe(&home.join(".volta/bin/claude"));
        assert_eq!(
            discover(None, &e).unwrap().path,
            home.join(".volta/bin/claude")
        );
        // The older local install (~/.claude/local) beats the package managers' places, and the
        // official installer's ~/.local/bin beats that.
        exe(&home.join(".claude/local/claude"));
        assert_eq!(
            discover(None, &e).unwrap().path,
            home.join(".claude/local/claude")
        );
        exe(&home.join(".local/bin/claude"));
        let f = discover(None, &e).unwrap();
        assert_eq!(
            (f.path, f.source),
            (home.join(".local/bin/claude"), "common location")
        );
        // PATH beats the common locations.
        exe(&bin.join("claude"));
        assert_eq!(discover(None, &e).unwrap().source, "PATH");
        // The config beats everything, by path (with ~) or by name.
        exe(&home.join("tools/my-claude"));
        let f = discover(Some("~/tools/my-claude"), &e).unwrap();
        assert_eq!((f.path, f.source), (home.join("tools/my-claude"), "config"));
        exe(&bin.join("claude-beta"));
        assert_eq!(
            discover(Some("claude-beta"), &e).unwrap().path,
            bin.join("claude-beta")
        );
        // A configured command that is missing falls back, and is named when nothing is found.
        assert_eq!(discover(Some("/nope/claude"), &e).unwrap().source, "PATH");
    }

    #[test]
    fn non_executables_are_skipped_and_missing_config_is_reported() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".yarn/bin")).unwrap();
        std::fs::write(home.join(".yarn/bin/claude"), "not executable").unwrap();
        let e = env(&home, &d.path().join("empty"));
        if Path::new("/usr/local/bin/claude").exists() || Path::new("/usr/bin/claude").exists() {
            return;
        }
        let err = discover(Some("/nope/claude"), &e).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"/nope/claude\" (not found"), "{msg}");
        assert!(
            msg.contains(&home.join(".yarn/bin/claude").display().to_string()),
            "{msg}"
        );
        assert!(msg.contains("setup{claude = {cmd"), "{msg}");
    }

    #[test]
    fn glob_expands_only_star_components() {
        let d = tempfile::tempdir().unwrap();
        for v in ["1.2.0", "10.0.0", "2.0.0"] {
            std::fs::create_dir_all(d.path().join("n").join(v).join("bin")).unwrap();
        }
        std::fs::write(d.path().join("n/file"), "").unwrap();
        let got = expand_glob(&d.path().join("n/*/bin"));
        let names: Vec<_> = got
            .iter()
            .map(|p| {
                p.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["10.0.0", "2.0.0", "1.2.0"]);
        assert!(expand_glob(&d.path().join("missing/*/bin")).is_empty());
    }
}
