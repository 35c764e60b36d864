//! The lock file's `workspaceFolders` ends on the editor's newest folders, however fast the
//! editor changes directory (`:cd`, `:tcd`, `:lcd`, window switches): each change rewrites the
//! lock file on the bridge's blocking pool, and two rewrites racing must never leave the older
//! snapshot on disk.

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn folders_on_disk(lock: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(lock).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(
        v["workspaceFolders"]
            .as_array()?
            .iter()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect(),
    )
}

fn state(cwd: &Path) -> EditorState {
    EditorState {
        cwd: Some(cwd.to_path_buf()),
        ..Default::default()
    }
}

#[test]
fn the_last_of_many_rapid_changes_wins() {
    let dir = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..4).map(|i| dir.path().join(format!("d{i}"))).collect();
    let config = Config {
        lock_dir: Some(dir.path().join("ide")),
        ..Config::default()
    };
    let server = Server::start(config, state(&dirs[0]), Arc::new(NoEditor)).unwrap();
    let lock = PathBuf::from(server.shared().status().lock_file.unwrap());
    for round in 0..20 {
        for i in 0..200 {
            server.update_editor_state(state(&dirs[(i + round) % dirs.len()]));
        }
        let last = &dirs[(round + 3) % dirs.len()];
        server.update_editor_state(state(last));
        let want = vec![last.display().to_string()];
        // Wait for the rewrites to settle, then require the newest folders.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut settled = 0;
        while settled < 20 {
            assert!(
                Instant::now() < deadline,
                "round {round}: lock file says {:?}, the editor {want:?}",
                folders_on_disk(&lock)
            );
            if folders_on_disk(&lock).as_ref() == Some(&want) {
                settled += 1;
            } else {
                settled = 0;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    server.stop();
}
