//! Shared fixtures of the fuzz targets: a real bridge (started once per process) whose project
//! root is a temporary tree, and the oracle for path confinement.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::{Server, Shared};
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

pub struct Bridge {
    pub server: Server,
    pub runtime: tokio::runtime::Runtime,
    pub base: PathBuf,
    pub root: PathBuf,
    _dir: tempfile::TempDir,
}

/// Builds the tree every target uses:
/// base/root/{src/main.rs, sub/deeper/f, links of every kind}, base/root2/x, base/outside/secret.
pub fn make_tree(base: &Path) -> PathBuf {
    let root = base.join("root");
    for d in ["root/src", "root/sub/deeper", "root2", "outside"] {
        let _ = std::fs::create_dir_all(base.join(d));
    }
    let _ = std::fs::write(root.join("src/main.rs"), "fn main() {}\n");
    let _ = std::fs::write(root.join("sub/deeper/f"), "line 1\nline 2\nline 3\n");
    let _ = std::fs::write(base.join("root2/x"), "x");
    let _ = std::fs::write(base.join("outside/secret"), "secret");
    let links: &[(&str, PathBuf)] = &[
        ("root/link_in", root.join("src")),
        ("root/link_out", base.join("outside")),
        ("root/link_out_rel", "../outside".into()),
        ("root/link_up", "..".into()),
        ("root/sub/back", "../..".into()),
        ("root/file_out", base.join("outside/secret")),
        ("root/dangling_out", base.join("outside/nothing/new")),
        ("root/dangling_in", "sub/missing".into()),
        ("root/loop_a", "loop_b".into()),
        ("root/loop_b", "loop_a".into()),
        ("root/to_root2", base.join("root2")),
        ("rootlink", root.clone()),
    ];
    for (name, target) in links {
        let _ = symlink(target, base.join(name));
    }
    root
}

/// The fixture names, for structured inputs.
pub const NAMES: &[&str] = &[
    "..",
    ".",
    "",
    "src",
    "main.rs",
    "sub",
    "deeper",
    "f",
    "link_in",
    "link_out",
    "link_out_rel",
    "link_up",
    "back",
    "file_out",
    "dangling_out",
    "dangling_in",
    "loop_a",
    "to_root2",
    "root",
    "root2",
    "rootlink",
    "outside",
    "secret",
    "x",
    "new",
];

pub fn bridge() -> &'static Bridge {
    static B: OnceLock<Bridge> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = make_tree(&base);
        let mut config = Config::default();
        config.lock_dir = Some(base.join("ide"));
        config.state_dir = Some(base.join("state"));
        config.max_message_size = 1 << 20;
        config.stats_time_budget_ms = 50;
        let state = EditorState {
            cwd: Some(root.clone()),
            nvim_version: "0.11.4".into(),
            ..Default::default()
        };
        let server = Server::start(config, state, Arc::new(NoEditor)).expect("server");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        Bridge {
            server,
            runtime,
            base,
            root,
            _dir: dir,
        }
    })
}

impl Bridge {
    pub fn shared(&self) -> &Arc<Shared> {
        self.server.shared()
    }

    /// Every so often, remove what fs-write-file created so the tree stays small.
    pub fn tidy(&self) {
        static N: AtomicU64 = AtomicU64::new(0);
        if N.fetch_add(1, Ordering::Relaxed) % 2000 != 0 {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.root);
        make_tree(&self.base);
    }
}

/// The oracle: `p` is absolute and normal, under `root`, and none of its existing components is
/// a symlink — the OS resolves it to itself, inside the root.
pub fn physically_inside(p: &Path, root: &Path) -> Result<(), String> {
    if !p.is_absolute()
        || p.components()
            .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
    {
        return Err(format!("{} is not absolute and normal", p.display()));
    }
    if !p.starts_with(root) {
        return Err(format!("{} is not under {}", p.display(), root.display()));
    }
    let mut cur = PathBuf::from("/");
    for c in p.components().skip(1) {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} goes through symlink {}",
                    p.display(),
                    cur.display()
                ))
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// A tool answer must never be a contained panic.
pub fn assert_no_contained_panic(text: &str) {
    assert!(
        !text.contains("panic was contained"),
        "a panic was contained, i.e. something panicked: {text}"
    );
}
