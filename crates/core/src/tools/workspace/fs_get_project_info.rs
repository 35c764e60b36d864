//! `fs-get-project-info` — project root, cwd and how the root was chosen
//! (doc/protocol.md, Project information; its extended form, plus its Phase 2 fields and, with
//! `{"stats": true}`, Phase 3 statistics that honour `.gitignore` and a time budget).

use crate::capfs::CapDir;
use crate::paths::relative_inside;
use crate::project::{ProjectRoot, UNAVAILABLE};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Also count files, bytes and files per extension under the root (honours .gitignore).
    #[serde(default)]
    pub stats: bool,
}

#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct ProjectInfo {
    pub project_root: String,
    pub cwd: String,
    /// One of "env", "config", "lsp", "git", "cwd".
    pub project_root_source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env_mcp_project_root: Option<String>,
    /// cwd relative to project_root; present only when cwd is inside the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_cwd: Option<String>,
    pub nvim_version: String,
    pub os: String,
    pub plugin_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
}

#[derive(Debug, Serialize, JsonSchema, PartialEq, Default)]
pub struct Stats {
    pub total_files: u64,
    pub total_size_bytes: u64,
    /// Files per extension ("" for files without one).
    pub files_by_extension: BTreeMap<String, u64>,
    /// True when the time budget ran out before the walk finished (the counts are partial).
    pub truncated: bool,
    pub elapsed_ms: u64,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "fs-get-project-info",
        aliases: &["fs_get_project_info", "fs.project-info", "project-info"],
        description: "Get project root and current working directory information for path \
                      resolution context. Relative paths given to the fs-* tools resolve \
                      against project_root. Pass {\"stats\": true} for file statistics.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<ProjectInfo>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args = match parse_args::<Option<Args>>("fs-get-project-info", args) {
        Ok(a) => a.unwrap_or_default(),
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let pr = ctx.project();
        let budget = Duration::from_millis(ctx.config.stats_time_budget_ms);
        ToolOutput::of(&info(
            &pr,
            &ctx.editor_state().nvim_version,
            args.stats,
            budget,
        ))
    })
}

/// Builds the answer; `stats` walks the tree within `budget`.
pub fn info(pr: &ProjectRoot, nvim_version: &str, stats: bool, budget: Duration) -> ProjectInfo {
    let show = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| UNAVAILABLE.to_string())
    };
    let relative_cwd = match (&pr.root, &pr.cwd) {
        (Some(r), Some(c)) => relative_inside(r, c),
        _ => None,
    };
    ProjectInfo {
        project_root: show(&pr.root),
        cwd: show(&pr.cwd),
        project_root_source: pr.source.to_string(),
        env_mcp_project_root: pr.env_root.clone(),
        relative_cwd,
        nvim_version: if nvim_version.is_empty() {
            UNAVAILABLE.into()
        } else {
            nvim_version.into()
        },
        os: os_name(std::env::consts::OS),
        plugin_version: crate::VERSION.into(),
        stats: match (&pr.root, stats) {
            (Some(r), true) => Some(walk(r, budget)),
            _ => None,
        },
    }
}

/// Counts files under `root`, honouring `.gitignore`/`.ignore` (and `.git/info/exclude`),
/// skipping `.git`, stopping when `budget` is spent.
///
/// The walk goes through the capability layer: directories are opened beneath the root's handle
/// and never through a symlink, and the ignore files are read as capped regular files — a
/// repository's `.gitignore -> /dev/zero` or a FIFO cannot grow the editor's memory or pin a
/// thread (the `ignore` crate's walker opens them by path and reads them whole).
pub fn walk(root: &Path, budget: Duration) -> Stats {
    let start = Instant::now();
    let mut s = Stats::default();
    let Ok(cap) = CapDir::open_root(root) else {
        s.elapsed_ms = start.elapsed().as_millis() as u64;
        return s;
    };
    let mut matchers: Vec<(usize, Gitignore)> = Vec::new();
    if let Some(m) = ignore_file(&cap, Path::new(".git/info/exclude"), cap.path()) {
        matchers.push((0, m));
    }
    // Depth-first, one directory handle per level: (relative dir, depth).
    let mut stack: Vec<(PathBuf, usize)> = vec![(PathBuf::from("."), 0)];
    'walk: while let Some((dir, depth)) = stack.pop() {
        matchers.retain(|(d, _)| *d <= depth);
        let abs = cap.display(&dir);
        for name in [".gitignore", ".ignore"] {
            if let Some(m) = ignore_file(&cap, &dir.join(name), &abs) {
                matchers.push((depth + 1, m));
            }
        }
        let Ok(rd) = cap.read_dir(&dir) else { continue };
        let mut subdirs = Vec::new();
        for entry in rd.flatten() {
            if start.elapsed() > budget {
                s.truncated = true;
                break 'walk;
            }
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let Ok(ft) = entry.file_type() else { continue };
            let rel = if dir == Path::new(".") {
                PathBuf::from(&name)
            } else {
                dir.join(&name)
            };
            let path = cap.display(&rel);
            if ignored(&matchers, &path, ft.is_dir()) {
                continue;
            }
            if ft.is_dir() {
                subdirs.push((rel, depth + 1));
            } else if ft.is_file() {
                s.total_files += 1;
                s.total_size_bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
                let ext = Path::new(&name)
                    .extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default();
                *s.files_by_extension.entry(ext).or_insert(0) += 1;
            }
        }
        // Reversed so the walk visits directories in the order they were listed.
        stack.extend(subdirs.into_iter().rev());
    }
    s.elapsed_ms = start.elapsed().as_millis() as u64;
    s
}

/// The largest ignore file read; a bigger one is not honoured.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// Parses an ignore file (a capped regular file; anything else is skipped) whose patterns are
/// relative to `base`.
fn ignore_file(cap: &CapDir, rel: &Path, base: &Path) -> Option<Gitignore> {
    let bytes = cap.read_capped(rel, MAX_IGNORE_FILE).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut b = GitignoreBuilder::new(base);
    for line in text.lines() {
        let _ = b.add_line(None, line);
    }
    b.build().ok()
}

/// Deepest matcher first, as git does: the last word wins.
fn ignored(matchers: &[(usize, Gitignore)], path: &Path, is_dir: bool) -> bool {
    for (_, m) in matchers.iter().rev() {
        match m.matched(path, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The operating system as `uname -s` names it (for example `"os": "Linux"`).
fn os_name(rust_os: &str) -> String {
    match rust_os {
        "linux" => "Linux".into(),
        "macos" => "Darwin".into(),
        "windows" => "Windows".into(),
        "freebsd" => "FreeBSD".into(),
        "netbsd" => "NetBSD".into(),
        "openbsd" => "OpenBSD".into(),
        other => {
            let mut c = other.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn pr(root: Option<PathBuf>, cwd: Option<PathBuf>, source: &'static str) -> ProjectRoot {
        ProjectRoot {
            root,
            source,
            cwd,
            env_root: None,
        }
    }

    #[test]
    fn relative_cwd_only_inside_root() {
        let i = info(
            &pr(Some("/p".into()), Some("/p/src".into()), "git"),
            "0.11.4",
            false,
            Duration::ZERO,
        );
        assert_eq!(i.relative_cwd.as_deref(), Some("src"));
        assert_eq!(i.project_root_source, "git");
        let i = info(
            &pr(Some("/p".into()), Some("/p".into()), "cwd"),
            "0.11.4",
            false,
            Duration::ZERO,
        );
        assert_eq!(i.relative_cwd.as_deref(), Some("."));
        let i = info(
            &pr(Some("/p".into()), Some("/tmp".into()), "env"),
            "",
            false,
            Duration::ZERO,
        );
        assert_eq!(i.relative_cwd, None);
        assert_eq!(i.nvim_version, UNAVAILABLE);
        let v = serde_json::to_value(&i).unwrap();
        assert!(v.get("relative_cwd").is_none());
        assert!(v.get("stats").is_none());
    }

    #[test]
    fn os_is_named_as_uname_does() {
        assert_eq!(os_name("linux"), "Linux");
        assert_eq!(os_name("macos"), "Darwin");
        assert_eq!(os_name("windows"), "Windows");
        assert_eq!(os_name("freebsd"), "FreeBSD");
        let i = info(
            &pr(Some("/p".into()), Some("/p".into()), "cwd"),
            "0.11.4",
            false,
            Duration::ZERO,
        );
        assert_eq!(i.os, os_name(std::env::consts::OS));
        #[cfg(target_os = "linux")]
        assert_eq!(serde_json::to_value(&i).unwrap()["os"], "Linux");
    }

    #[test]
    fn unavailable_cwd() {
        let i = info(
            &pr(None, None, "cwd"),
            "0.11.4",
            true,
            Duration::from_secs(1),
        );
        assert_eq!(i.cwd, UNAVAILABLE);
        assert_eq!(i.project_root, UNAVAILABLE);
        assert!(i.stats.is_none());
    }

    #[test]
    fn stats_honour_gitignore() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/HEAD"), "x").unwrap();
        std::fs::write(r.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::create_dir_all(r.join("src")).unwrap();
        std::fs::write(r.join("src/a.rs"), "12345").unwrap();
        std::fs::write(r.join("src/b.rs"), "123").unwrap();
        std::fs::write(r.join("README"), "1").unwrap();
        std::fs::write(r.join("x.log"), "ignored").unwrap();
        std::fs::create_dir_all(r.join("target")).unwrap();
        std::fs::write(r.join("target/big"), "ignored").unwrap();
        let s = walk(r, Duration::from_secs(10));
        // .gitignore, src/a.rs, src/b.rs, README
        assert_eq!(s.total_files, 4, "{s:?}");
        assert_eq!(s.files_by_extension.get("rs"), Some(&2));
        assert_eq!(s.files_by_extension.get(""), Some(&2));
        assert_eq!(
            s.total_size_bytes,
            5 + 3 + 1 + "target/\n*.log\n".len() as u64
        );
        assert!(!s.truncated);
        let s = walk(r, Duration::ZERO);
        assert!(s.truncated);
    }
}
