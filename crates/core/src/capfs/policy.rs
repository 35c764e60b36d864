//! [`WritePolicy`]: the files that run code later without the person running the project
//! ([`PROTECTED`]), kept for the person unless allowed in setup.

use super::CapError;
use std::path::{Component, Path};

/// Why `security.allow_write` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("security.allow_write: invalid pattern '{pattern}': {source}")]
    Pattern {
        pattern: String,
        source: globset::Error,
    },
    #[error("security.allow_write: {0}")]
    Set(globset::Error),
}

/// Files that run code later, without the person asking: kept for the person unless allowed.
#[derive(Debug, Clone)]
pub struct WritePolicy {
    allow: globset::GlobSet,
}

/// How a [`Protected`] entry names paths. Every name is lower case, and is compared with each
/// component of the path relative to the project root lowercased (and, as Windows would, with
/// trailing dots and spaces and an `:stream` suffix dropped), at any depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A directory of this name and everything in it (a file of this name too).
    Tree(&'static str),
    /// A file of this name.
    File(&'static str),
    /// Components in a row anywhere in the path (`.github/workflows`: everything in it).
    Seq(&'static [&'static str]),
    /// A file named `stem` + `ext`, or `stem.` + anything + `ext` (`Stem("mise", ".toml")`:
    /// `mise.toml`, `mise.local.toml`).
    Stem(&'static str, &'static str),
    /// A file whose name ends with this.
    Suffix(&'static str),
}

/// One protected name and why it is protected: what runs it without the person running the
/// project.
#[derive(Debug, Clone, Copy)]
pub struct Protected {
    pub name: Name,
    pub why: &'static str,
}

const fn p(name: Name, why: &'static str) -> Protected {
    Protected { name, why }
}

use Name::{File, Seq, Stem, Suffix, Tree};

const GIT_HOOK: &str = "is a git hook or its configuration (git runs it on commit, push, …)";
const CLAUDE: &str = "is Claude Code's project configuration (settings and hooks run commands; \
                      commands, agents and skills steer it)";
const AGENT: &str = "is an AI agent's project configuration (MCP servers and hooks it starts)";
const DIRENV: &str = "is loaded by direnv when a shell enters the directory";
const EXRC: &str = "is run by Neovim's or Vim's 'exrc' when it starts there";
const EDITOR: &str = "is an editor's project configuration (tasks, run configurations, \
                      language-server commands and settings that run programs)";
const CARGO: &str = "is Cargo's configuration (rust-analyzer runs cargo on open and save: \
                     rustc wrappers, runners, aliases)";
const TOOLCHAIN: &str = "picks the toolchain the editor's tools run (a toolchain may be any \
                         program)";
const MISE: &str = "is mise's configuration (hooks, tasks and env scripts run when a shell \
                    enters the directory)";
const PACKAGES: &str = "configures the package manager (the program run as it, the scripts \
                        and hooks it runs)";
const PYTHON: &str = "is run by Python when it starts (the editor's Python tools start it)";
const CI: &str = "runs in CI with the repository's secrets on the next push";

/// The protected files: what `fs-write-file` and the memory bank's writes refuse unless the
/// person allows it (`setup{security = {allow_write}}`), at any depth and in any letter case.
/// The line (SECURITY.md, `:help claude-context-security-protected`): files a tool acts on by
/// itself — on entering the directory, starting the editor or a language server, saving,
/// committing, pushing, starting Claude Code — and that can make it run a program. Source the
/// person runs on purpose (package.json scripts, Makefiles, build scripts, tests) is not here.
pub const PROTECTED: &[Protected] = &[
    p(
        Tree(".git"),
        "is inside .git (hooks and config run commands on the next git command)",
    ),
    p(Tree(".husky"), GIT_HOOK),
    p(Tree(".githooks"), GIT_HOOK),
    p(Tree(".lefthook"), GIT_HOOK),
    p(Tree(".lefthook-local"), GIT_HOOK),
    p(Stem("lefthook", ""), GIT_HOOK),
    p(Stem("lefthook-local", ""), GIT_HOOK),
    p(Stem(".lefthook", ""), GIT_HOOK),
    p(Stem(".lefthook-local", ""), GIT_HOOK),
    p(File(".pre-commit-config.yaml"), GIT_HOOK),
    p(File(".pre-commit-config.yml"), GIT_HOOK),
    p(File(".overcommit.yml"), GIT_HOOK),
    p(Tree(".claude"), CLAUDE),
    p(
        File(".mcp.json"),
        "configures MCP servers (commands Claude Code starts)",
    ),
    p(Tree(".cursor"), AGENT),
    p(Tree(".gemini"), AGENT),
    p(File(".envrc"), DIRENV),
    p(File(".env"), DIRENV),
    p(File(".nvim.lua"), EXRC),
    p(File(".nvimrc"), EXRC),
    p(File(".exrc"), EXRC),
    p(File(".vimrc"), EXRC),
    p(File(".gvimrc"), EXRC),
    p(File("_vimrc"), EXRC),
    p(File("_exrc"), EXRC),
    p(
        File(".lazy.lua"),
        "is run by lazy.nvim as a local plugin spec",
    ),
    p(
        Stem(".luarc", ""),
        "configures lua-language-server (its runtime.plugin runs Lua)",
    ),
    p(Tree(".vscode"), EDITOR),
    p(Tree(".idea"), EDITOR),
    p(Tree(".fleet"), EDITOR),
    p(Tree(".zed"), EDITOR),
    p(Tree(".helix"), EDITOR),
    p(Tree(".devcontainer"), EDITOR),
    p(File(".dir-locals.el"), EDITOR),
    p(File(".dir-locals-2.el"), EDITOR),
    p(Tree(".cargo"), CARGO),
    p(File("rust-toolchain"), TOOLCHAIN),
    p(File("rust-toolchain.toml"), TOOLCHAIN),
    p(File(".tool-versions"), TOOLCHAIN),
    p(Stem("mise", ".toml"), MISE),
    p(Stem(".mise", ".toml"), MISE),
    p(Tree(".mise"), MISE),
    p(Seq(&[".config", "mise"]), MISE),
    p(Seq(&["mise", "config.toml"]), MISE),
    p(File(".npmrc"), PACKAGES),
    p(File(".yarnrc"), PACKAGES),
    p(File(".yarnrc.yml"), PACKAGES),
    p(Stem(".pnpmfile", ""), PACKAGES),
    p(Seq(&[".yarn", "releases"]), PACKAGES),
    p(Seq(&[".yarn", "plugins"]), PACKAGES),
    p(Suffix(".pth"), PYTHON),
    p(File("sitecustomize.py"), PYTHON),
    p(File("usercustomize.py"), PYTHON),
    p(Tree(".venv"), PYTHON),
    p(Seq(&[".github", "workflows"]), CI),
    p(Seq(&[".github", "actions"]), CI),
    p(File(".gitlab-ci.yml"), CI),
    p(Tree(".circleci"), CI),
];

impl Default for WritePolicy {
    fn default() -> Self {
        WritePolicy {
            allow: globset::GlobSet::empty(),
        }
    }
}

impl WritePolicy {
    /// `allow`: glob patterns (relative to the project root) the person lets tools write even
    /// though they are protected, e.g. `.claude/settings.local.json` or `.git/info/exclude`.
    pub fn new(allow: &[String]) -> Result<WritePolicy, PolicyError> {
        let mut b = globset::GlobSetBuilder::new();
        for p in allow {
            let g = globset::GlobBuilder::new(p)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map_err(|source| PolicyError::Pattern {
                    pattern: p.clone(),
                    source,
                })?;
            b.add(g);
        }
        Ok(WritePolicy {
            allow: b.build().map_err(PolicyError::Set)?,
        })
    }

    /// Refuses a write to a protected path. `rel` is relative to the project root (as returned
    /// by [`CapDir::rel`]); writes never follow symlinks, so the path named is the path written.
    pub fn check(&self, rel: &Path) -> Result<(), CapError> {
        let shown = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let Some(why) = protected_reason(rel) else {
            return Ok(());
        };
        if self.allow.is_match(&shown) {
            return Ok(());
        }
        Err(CapError::Denied { path: shown, why })
    }
}

/// A path component as the protected list compares it: lower case, without what Windows
/// ignores or reads as a stream (`.GIT. ` and `.git::$DATA` are `.git` there).
fn canonical_name(n: &std::ffi::OsStr) -> String {
    let mut s = n.to_string_lossy().to_lowercase();
    if let Some(i) = s.find(':') {
        s.truncate(i);
    }
    let kept = s.trim_end_matches(['.', ' ']).len();
    // `.` and `..` are never components here; keep a name that is only dots as it is.
    if kept > 0 {
        s.truncate(kept);
    }
    s
}

/// Why `rel` (relative to the project root or a bank) is protected, if it is: the first entry
/// of [`PROTECTED`] that names it.
pub fn protected_reason(rel: &Path) -> Option<&'static str> {
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(canonical_name(n)),
            _ => None,
        })
        .collect();
    let last = parts.last()?;
    PROTECTED
        .iter()
        .find(|e| match e.name {
            Tree(d) => parts.iter().any(|p| p == d),
            File(f) => last == f,
            Stem(stem, ext) => {
                let rest = last.strip_prefix(stem).and_then(|r| r.strip_suffix(ext));
                rest.is_some_and(|r| r.is_empty() || (r.starts_with('.') && r.len() > 1))
            }
            Suffix(x) => last.len() > x.len() && last.ends_with(x),
            Seq(seq) => parts.windows(seq.len()).any(|w| w == seq),
        })
        .map(|e| e.why)
}
