//! Which directory is the project root, and why (`fs-get-project-info`'s `project_root_source`).
//! First that applies: `env` (`MCP_PROJECT_ROOT`), `config` (`setup{project_root=…}`), `lsp`
//! (the current buffer's LSP root, when it lies in the cwd or is the cwd's ancestor in the same
//! git repository), `git` (nearest `.git` upward from cwd), `cwd`.

use crate::editor::EditorState;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A connection's own project root, set by `fs-set-project-root` (None: the bridge's).
pub type ConnectionRoot = Arc<Mutex<Option<PathBuf>>>;

tokio::task_local! {
    /// The project root of the connection whose request is being handled (see
    /// [`ConnectionRoot`]); scoped around each request by the MCP dispatch and carried into
    /// the blocking pool by `tools::blocking`.
    pub static CONNECTION_ROOT: ConnectionRoot;
}

/// The current request's connection-root slot, when the request came over a connection.
pub fn connection_slot() -> Option<ConnectionRoot> {
    CONNECTION_ROOT.try_with(Arc::clone).ok()
}

/// The root `fs-set-project-root` set for the current request's connection, if any.
pub fn connection_root() -> Option<PathBuf> {
    CONNECTION_ROOT
        .try_with(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone())
        .ok()
        .flatten()
}

/// Shown in place of a path that cannot be determined (e.g. the cwd was deleted).
pub const UNAVAILABLE: &str = "(unavailable)";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    pub root: Option<PathBuf>,
    pub source: &'static str,
    /// The working directory, when it still exists.
    pub cwd: Option<PathBuf>,
    /// `MCP_PROJECT_ROOT` when set (an empty value counts as unset).
    pub env_root: Option<String>,
}

/// Resolves the project root from the environment value, the configured root and the editor.
pub fn resolve(
    env_root: Option<String>,
    config_root: Option<&str>,
    st: &EditorState,
) -> ProjectRoot {
    let env_root = env_root.filter(|s| !s.is_empty());
    let cwd = st.cwd.clone().filter(|c| c.is_dir());
    let candidate: Option<(PathBuf, &'static str)> = env_root
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|s| (expand_home(s), "env"))
        .or_else(|| {
            config_root
                .filter(|s| !s.is_empty())
                .map(|s| (expand_home(s), "config"))
        })
        .or_else(|| {
            st.lsp_root
                .clone()
                .filter(|r| cwd.as_deref().is_some_and(|c| lsp_root_follows(r, c)))
                .map(|p| (p, "lsp"))
        })
        .or_else(|| cwd.as_deref().and_then(find_git_root).map(|p| (p, "git")))
        .or_else(|| cwd.clone().map(|p| (p, "cwd")));
    let (root, source) = match candidate {
        Some((p, s)) => (Some(p.canonicalize().unwrap_or(p)), s),
        None => (None, "cwd"),
    };
    ProjectRoot {
        root,
        source,
        cwd: cwd.map(|c| c.canonicalize().unwrap_or(c)),
        env_root,
    }
}

/// Whether the current buffer's language-server root may be the project root: it lies in the
/// directory Neovim works in (`cwd`), or is an ancestor of `cwd` inside the same git repository.
/// A buffer outside (lua_ls on `~/.config/nvim/init.lua` while working in a project) does not
/// move the project, and with it everything the model reaches, out of that directory.
fn lsp_root_follows(root: &Path, cwd: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (root, cwd) = (canon(root), canon(cwd));
    root.starts_with(&cwd)
        || (cwd.starts_with(&root) && find_git_root(&cwd).is_some_and(|g| root.starts_with(g)))
}

/// The nearest directory at or above `start` that contains `.git` (a directory, or a file as in
/// worktrees and submodules).
pub fn find_git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

fn expand_home(s: &str) -> PathBuf {
    if let Some(rest) = s.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        (d, repo)
    }

    fn st(cwd: &Path) -> EditorState {
        EditorState {
            cwd: Some(cwd.to_path_buf()),
            ..Default::default()
        }
    }

    #[test]
    fn precedence_env_config_lsp_git_cwd() {
        let (d, repo) = tree();
        let sub = repo.join("a/b");
        let mut s = st(&sub);
        let other = d.path().canonicalize().unwrap();
        let o = other.to_str().unwrap();

        let r = resolve(Some(o.into()), Some(repo.to_str().unwrap()), &s);
        assert_eq!(
            (r.root.as_deref(), r.source),
            (Some(other.as_path()), "env")
        );

        let r = resolve(None, Some(o), &s);
        assert_eq!(r.source, "config");

        s.lsp_root = Some(repo.join("a"));
        let r = resolve(None, None, &s);
        assert_eq!((r.root, r.source), (Some(repo.join("a")), "lsp"));

        s.lsp_root = None;
        let r = resolve(Some(String::new()), None, &s);
        assert_eq!((r.root.clone(), r.source), (Some(repo.clone()), "git"));
        assert_eq!(
            r.env_root, None,
            "an empty MCP_PROJECT_ROOT counts as unset"
        );

        let r = resolve(None, None, &st(&other));
        assert_eq!((r.root, r.source), (Some(other), "cwd"));
    }

    #[test]
    fn default_root_does_not_follow_a_buffer_outside_the_cwd() {
        let (d, repo) = tree();
        let elsewhere = d.path().canonicalize().unwrap().join("nvim-config");
        std::fs::create_dir_all(&elsewhere).unwrap();
        // lua_ls on ~/.config/nvim/init.lua while working in the repository: not the root.
        let mut s = st(&repo);
        s.lsp_root = Some(elsewhere.clone());
        let r = resolve(None, None, &s);
        assert_eq!((r.root, r.source), (Some(repo.clone()), "git"));
        // Working in a directory above the language server's root: it is inside, so it counts.
        let mut s = st(d.path());
        s.lsp_root = Some(elsewhere.clone());
        assert_eq!(resolve(None, None, &s).source, "lsp");
        // An ancestor of the cwd outside its repository (the home directory) does not count.
        let mut s = st(&repo.join("a/b"));
        s.lsp_root = Some(d.path().canonicalize().unwrap());
        assert_eq!(resolve(None, None, &s).root, Some(repo.clone()));
        // No cwd: nothing to be inside of.
        let mut s = st(&repo.join("gone"));
        s.lsp_root = Some(repo.clone());
        assert_eq!(resolve(None, None, &s).root, None);
    }

    #[test]
    fn deleted_cwd_is_unavailable() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("gone");
        let r = resolve(None, None, &st(&gone));
        assert_eq!(r.cwd, None);
        assert_eq!(r.root, None);
    }
}
