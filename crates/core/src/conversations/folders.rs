//! Where Claude Code keeps a project's conversations: `<config dir>/projects/<folder>/<session
//! id>.jsonl`, the folder named after the session's working directory.
//!
//! The name, as every supported CLI makes it (2.1.197 … 2.1.332, read from their code): each
//! UTF-16 code unit of the path that is not an ASCII letter or digit becomes `-`
//! (`/home/me/my.app` is `-home-me-my-app`); a name longer than 200 units is cut to 200 and
//! `-<hash>` appended (the hash: the path's Java-style 32-bit string hash, its absolute value in
//! base 36). Because the name loses information, a folder matched only by a prefix (a worktree's,
//! a long name's) is confirmed by the `cwd` its records carry ([`Project::confirms`]).

use std::path::{Path, PathBuf};

/// How many UTF-16 units of a folder name the CLI keeps before it appends the hash.
pub const MAX_NAME: usize = 200;

/// Where a background session's worktree lies under its project (`claude --bg --worktree NAME`).
pub const WORKTREES: &str = ".claude/worktrees";

/// The folder name the CLI gives the working directory `path`.
pub fn encode(path: &Path) -> String {
    let text = path.to_string_lossy();
    let units: Vec<u16> = text.encode_utf16().collect();
    let name: String = units
        .iter()
        .map(|&u| match u {
            0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a => u as u8 as char,
            _ => '-',
        })
        .collect();
    if units.len() <= MAX_NAME {
        return name;
    }
    format!(
        "{}-{}",
        &name[..MAX_NAME],
        base36(hash(&units).unsigned_abs())
    )
}

/// The JavaScript `(h << 5) - h + unit | 0` hash over UTF-16 units.
fn hash(units: &[u16]) -> i32 {
    units.iter().fold(0i32, |h, &u| {
        h.wrapping_shl(5).wrapping_sub(h).wrapping_add(u as i32)
    })
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// What a folder name must be (or start with) to hold conversations of a directory.
fn name_match(path: &Path) -> (String, bool) {
    let e = encode(path);
    if path.to_string_lossy().encode_utf16().count() > MAX_NAME {
        // Cut names end in a hash another CLI version may compute differently: the prefix.
        (format!("{}-", &e[..MAX_NAME]), true)
    } else {
        (e, false)
    }
}

/// A project: its root (as given and resolved), whose conversations and whose worktrees'
/// conversations (`<root>/.claude/worktrees/NAME`) belong to it.
#[derive(Debug, Clone)]
pub struct Project {
    roots: Vec<PathBuf>,
}

/// How a folder of `projects/` relates to a [`Project`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Named exactly after the root: its conversations are the project's.
    Exact,
    /// Named like a worktree of the project or a cut name: each conversation's `cwd` decides.
    Maybe,
}

impl Project {
    /// The project at `root` (also known by its resolved path, which the CLI sees as its cwd).
    pub fn new(root: &Path) -> Project {
        let mut roots = vec![crate::paths::normalize(root)];
        if let Ok(c) = root.canonicalize() {
            if !roots.contains(&c) {
                roots.push(c);
            }
        }
        Project { roots }
    }

    /// Whether the folder `name` may hold this project's conversations.
    pub fn fit(&self, name: &str) -> Option<Fit> {
        let mut fit = None;
        for r in &self.roots {
            let (root, cut) = name_match(r);
            if !cut && name == root {
                return Some(Fit::Exact);
            }
            if cut && name.starts_with(&root) {
                fit = Some(Fit::Maybe);
            }
            let (wt, cut) = name_match(&r.join(WORKTREES).join("x"));
            let wt = if cut {
                wt
            } else {
                wt[..wt.len() - 1].to_string()
            };
            if name.starts_with(&wt) && name.len() > wt.len() {
                fit = Some(Fit::Maybe);
            }
        }
        fit
    }

    /// Whether a conversation whose records say `cwd` is this project's (its root, or one of its
    /// worktrees).
    pub fn confirms(&self, cwd: Option<&str>) -> bool {
        let Some(cwd) = cwd else { return false };
        let cwd = Path::new(cwd);
        self.roots
            .iter()
            .any(|r| cwd == r || cwd.starts_with(r.join(WORKTREES)))
    }

    /// The worktree name when `cwd` is in one of this project's worktrees.
    pub fn worktree_of(&self, cwd: &str) -> Option<String> {
        let cwd = Path::new(cwd);
        self.roots.iter().find_map(|r| {
            let rest = cwd.strip_prefix(r.join(WORKTREES)).ok()?;
            rest.components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
        })
    }
}

/// The worktree name when `cwd` is in any project's `.claude/worktrees/NAME` (for `all`).
pub fn any_worktree(cwd: &str) -> Option<String> {
    let i = cwd.rfind("/.claude/worktrees/")?;
    cwd[i + "/.claude/worktrees/".len()..]
        .split('/')
        .next()
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}
