use super::folders::{encode, Project};
use super::parse::{iso_ms, Meta};
use super::*;
use std::io::Write;

fn line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

fn user(text: &str, ts: &str, cwd: &str) -> String {
    line(serde_json::json!({
        "parentUuid": null, "isSidechain": false, "type": "user",
        "message": {"role": "user", "content": text},
        "timestamp": ts, "cwd": cwd, "sessionId": "s", "gitBranch": "main"
    }))
}

fn assistant(text: &str, ts: &str) -> String {
    line(serde_json::json!({
        "type": "assistant", "timestamp": ts,
        "message": {"role": "assistant", "content": [{"type": "text", "text": text},
            {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/x"}}]}
    }))
}

fn tool_result(ts: &str) -> String {
    line(serde_json::json!({
        "type": "user", "timestamp": ts,
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "file text"}]}
    }))
}

/// A conversation of `cwd` as the CLI writes one: two prompts, tool use, metadata records.
fn conversation(cwd: &str, first: &str) -> String {
    [
        line(serde_json::json!({"type": "queue-operation", "operation": "enqueue", "content": first})),
        user(first, "2026-11-29T02:20:29.656Z", cwd),
        line(serde_json::json!({"type": "attachment", "attachment": {"type": "x", "text": "\"type\":\"user\""}, "timestamp": "2026-11-29T02:20:29.700Z"})),
        assistant("Reading it.", "2026-11-29T02:20:30.000Z"),
        tool_result("2026-11-29T02:20:30.100Z"),
        assistant("The answer is 42.", "2026-11-29T02:20:31.000Z"),
        line(serde_json::json!({"type": "last-prompt", "lastPrompt": first})),
        user("second prompt", "2026-11-29T02:21:00.000Z", cwd),
        line(serde_json::json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "meta"}})),
        assistant("Done.", "2026-11-29T02:21:05.000Z"),
        line(serde_json::json!({"type": "cost-state", "totalCostUSD": 0.125})),
    ]
    .concat()
}

const ID1: &str = "11111111-1111-4111-8111-111111111111";
const ID2: &str = "22222222-2222-4222-8222-222222222222";

struct Fixture {
    _d: tempfile::TempDir,
    cfg: PathBuf,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let d = tempfile::tempdir().unwrap();
        let cfg = d.path().join("cfg");
        let root = d.path().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        let root = root.canonicalize().unwrap();
        Fixture { _d: d, cfg, root }
    }

    fn folder(&self, cwd: &Path) -> PathBuf {
        let f = self.cfg.join("projects").join(encode(cwd));
        std::fs::create_dir_all(&f).unwrap();
        f
    }

    fn write(&self, cwd: &Path, id: &str, body: &str) -> PathBuf {
        let p = self.folder(cwd).join(format!("{id}.jsonl"));
        std::fs::write(&p, body).unwrap();
        p
    }

    fn list(&self, query: Option<&str>) -> Vec<Conversation> {
        list(&ListOptions {
            root: Some(self.root.clone()),
            config_dir: Some(self.cfg.clone()),
            query: query.map(str::to_string),
            ..ListOptions::default()
        })
        .unwrap()
    }
}

#[test]
fn the_folder_name_is_the_clis() {
    assert_eq!(encode(Path::new("/tmp/cv/proj")), "-tmp-cv-proj");
    assert_eq!(encode(Path::new("/home/me/my.app_x")), "-home-me-my-app-x");
    // One dash per UTF-16 unit: é is one, an emoji two.
    assert_eq!(encode(Path::new("/é/😀")), "-----");
    // Long names: 200 units, a dash and the JS string hash in base 36.
    let long = format!("/{}", "a".repeat(250));
    let e = encode(Path::new(&long));
    assert!(e.starts_with(&format!("-{}", "a".repeat(199))));
    assert_eq!(e.as_bytes()[200], b'-');
    // The hash of "/" + 250 × "a", computed as JavaScript does ((h<<5)-h+c|0, abs, base 36).
    let mut h: i32 = 0;
    for c in long.encode_utf16() {
        h = h.wrapping_shl(5).wrapping_sub(h).wrapping_add(c as i32);
    }
    assert!(e.ends_with(&format!("-{}", radix36(h.unsigned_abs()))));
}

fn radix36(mut n: u32) -> String {
    let mut s = Vec::new();
    loop {
        s.push(std::char::from_digit(n % 36, 36).unwrap());
        n /= 36;
        if n == 0 {
            break;
        }
    }
    s.iter().rev().collect()
}

#[test]
fn iso_times() {
    assert_eq!(iso_ms("1970-01-01T00:00:00.000Z"), Some(0));
    assert_eq!(iso_ms("2026-11-29T02:20:29.420Z"), Some(1_795_918_829_420));
    assert_eq!(iso_ms("2000-02-29T12:00:00Z"), Some(951_825_600_000));
    assert_eq!(iso_ms("nonsense"), None);
}

#[test]
fn a_conversation_is_read_with_its_title_prompts_times_and_cost() {
    let m = Meta::read(conversation("/p", "hello there").as_bytes(), &[]);
    assert_eq!(m.prompts, 2, "{m:?}");
    assert_eq!(m.first_prompt.as_deref(), Some("hello there"));
    assert_eq!(m.last_prompt.as_deref(), Some("second prompt"));
    assert_eq!(m.title(), Some("hello there"));
    assert_eq!(m.cwd.as_deref(), Some("/p"));
    assert_eq!(m.branch.as_deref(), Some("main"));
    assert_eq!(m.cost_usd, Some(0.125));
    assert_eq!(m.started_ms, iso_ms("2026-11-29T02:20:29.656Z"));
    assert_eq!(m.updated_ms, iso_ms("2026-11-29T02:21:05.000Z"));
    // A title record wins over the first prompt; the person's over the CLI's and a summary.
    let titled = format!(
        "{}{}{}",
        conversation("/p", "hello"),
        line(serde_json::json!({"type": "summary", "summary": "A summary"})),
        line(serde_json::json!({"type": "ai-title", "aiTitle": "AI title"}))
    );
    assert_eq!(Meta::read(titled.as_bytes(), &[]).title(), Some("AI title"));
    let named = format!(
        "{titled}{}",
        line(serde_json::json!({"type": "custom-title", "customTitle": "Mine"}))
    );
    assert_eq!(Meta::read(named.as_bytes(), &[]).title(), Some("Mine"));
    // A long prompt (its type is near the line's start) counts; a long attachment that holds a
    // user record's words deep inside is not one.
    let long = format!(
        "{}{}{}",
        user(&"x".repeat(200_000), "2026-11-29T02:20:29.656Z", "/p"),
        line(
            serde_json::json!({"attachment": {"x": "y".repeat(10_000), "inner": {"type": "user", "message": {"content": "no"}}}, "type": "attachment"})
        ),
        user("short", "2026-11-29T02:20:29.656Z", "/p")
    );
    let m = Meta::read(long.as_bytes(), &[]);
    assert_eq!(m.prompts, 2);
    assert_eq!(m.last_prompt.as_deref(), Some("short"));
}

#[test]
fn damaged_lines_are_skipped() {
    let mut body = String::new();
    body.push_str("not json at all\n");
    body.push_str(&user("first", "2026-01-01T00:00:00.000Z", "/p"));
    body.push_str("{\"type\":\"user\", \"message\": {\"content\": 5}}\n");
    body.push_str("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"trunc");
    let mut bytes = body.into_bytes();
    bytes.splice(0..0, b"\xff\xfe invalid utf-8 \xc3\n".iter().copied());
    let m = Meta::read(&bytes, &[]);
    assert_eq!(m.prompts, 1);
    assert_eq!(m.first_prompt.as_deref(), Some("first"));
}

#[test]
fn a_project_lists_its_own_and_its_worktrees_conversations_newest_first() {
    let f = Fixture::new();
    f.write(
        &f.root,
        ID1,
        &conversation(f.root.to_str().unwrap(), "older"),
    );
    let wt = f.root.join(".claude/worktrees/feat");
    let newer =
        conversation(wt.to_str().unwrap(), "in the worktree").replace("2026-11-29", "2026-11-30");
    f.write(&wt, ID2, &newer);
    // Another project's (a sibling whose name starts the same) is not listed.
    let other = f.root.with_file_name("proj-other");
    f.write(
        &other,
        "33333333-3333-4333-8333-333333333333",
        &conversation(other.to_str().unwrap(), "x"),
    );
    // Neither are files that are not conversations.
    std::fs::write(f.folder(&f.root).join("notes.txt"), "x").unwrap();
    let l = f.list(None);
    let ids: Vec<&str> = l.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [ID2, ID1]);
    assert_eq!(l[0].worktree.as_deref(), Some("feat"));
    assert_eq!(l[0].title, "in the worktree");
    assert_eq!(l[1].worktree, None);
    assert_eq!(l[1].prompts, 2);
    assert!(l[1].bytes > 0);
    // all: every project's.
    let all = list(&ListOptions {
        all: true,
        config_dir: Some(f.cfg.clone()),
        ..ListOptions::default()
    })
    .unwrap();
    assert_eq!(all.len(), 3);
    assert!(owns(&f.cfg, &f.root, ID1) && owns(&f.cfg, &f.root, ID2));
    assert!(!owns(
        &f.cfg,
        &f.root,
        "33333333-3333-4333-8333-333333333333"
    ));
    assert!(!owns(
        &f.cfg,
        &f.root,
        "44444444-4444-4444-8444-444444444444"
    ));
}

#[test]
fn a_worktree_named_folder_of_another_project_is_not_listed() {
    // A folder whose name looks like a worktree's of this project but whose records say another
    // directory (`/proj/.claude-worktrees-x` encodes the same).
    let f = Fixture::new();
    let lookalike = PathBuf::from(format!("{}/.claude-worktrees-x", f.root.display()));
    f.write(
        &lookalike,
        ID1,
        &conversation(lookalike.to_str().unwrap(), "y"),
    );
    assert!(f.list(None).is_empty());
    assert!(!owns(&f.cfg, &f.root, ID1));
}

#[cfg(unix)]
#[test]
fn a_fifo_a_link_and_a_huge_sparse_file_are_listed_or_left_without_a_stall() {
    let f = Fixture::new();
    let dir = f.folder(&f.root);
    let fifo = dir.join("55555555-5555-4555-8555-555555555555.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink(
        "/etc/passwd",
        dir.join("66666666-6666-4666-8666-666666666666.jsonl"),
    )
    .unwrap();
    // 2 GB, sparse, with a conversation at its start and its end.
    let big = f.write(
        &f.root,
        ID1,
        &conversation(f.root.to_str().unwrap(), "big one"),
    );
    let file = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
    file.set_len(2 << 30).unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
    file.write_all(
        format!(
            "\n{}",
            line(serde_json::json!({"type": "custom-title", "customTitle": "Big"}))
        )
        .as_bytes(),
    )
    .unwrap();
    let t = std::time::Instant::now();
    let l = f.list(None);
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(l[0].title, "Big");
    assert_eq!(l[0].first_prompt.as_deref(), Some("big one"));
    assert!(l[0].partial);
    assert!(l[0].bytes > 2 << 30);
    // Read by its ends (a whole read of 2 GB would take seconds).
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    // A query reads a capped part of it, and does not stall on the FIFO either.
    assert_eq!(f.list(Some("big one")).len(), 1);
}

#[test]
fn the_cache_rereads_a_changed_file_only() {
    let f = Fixture::new();
    let p = f.write(
        &f.root,
        ID1,
        &conversation(f.root.to_str().unwrap(), "first"),
    );
    assert_eq!(f.list(None)[0].prompts, 2);
    let stat = crate::capfs::stat_of_file(&std::fs::metadata(&p).unwrap());
    let cached = read::cached(&p, &stat).expect("cached after a listing");
    // Appended to (a running conversation): read again.
    let mut file = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    file.write_all(user("third", "2026-11-29T03:00:00.000Z", "/x").as_bytes())
        .unwrap();
    let l = f.list(None);
    assert_eq!(l[0].prompts, 3);
    assert_eq!(l[0].last_prompt.as_deref(), Some("third"));
    assert!(read::cached(&p, &stat).is_none());
    assert_eq!(cached.meta.prompts, 2);
    // Removed: forgotten.
    std::fs::remove_file(&p).unwrap();
    assert!(f.list(None).is_empty());
}

#[test]
fn a_query_finds_messages_not_tool_output_or_system_text() {
    let f = Fixture::new();
    let cwd = f.root.to_str().unwrap().to_string();
    f.write(
        &f.root,
        ID1,
        &conversation(&cwd, "where is the \"parser\"?"),
    );
    f.write(&f.root, ID2, &conversation(&cwd, "something else"));
    let l = f.list(Some("answer is 42"));
    assert_eq!(l.len(), 2);
    let m = l[0].matches.as_ref().unwrap();
    assert_eq!(m[0].role, "assistant");
    assert!(m[0].text.contains("The answer is 42."));
    assert_eq!(m[0].ts, iso_ms("2026-11-29T02:20:31.000Z"));
    // Case-insensitive without a capital, quotes as JSON escapes them.
    let l = f.list(Some("the \"PARSER\""));
    assert!(l.is_empty());
    let l = f.list(Some("the \"parser\""));
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].matches.as_ref().unwrap()[0].role, "user");
    assert_eq!(f.list(Some("WHERE is")).len(), 0);
    assert_eq!(f.list(Some("where IS")).len(), 0);
    assert_eq!(f.list(Some("where is")).len(), 1);
    // Text only in a tool's output or an attachment is not a match.
    assert!(f.list(Some("file text")).is_empty());
    assert!(f.list(Some("\"type\":\"user\"")).is_empty());
}

#[test]
fn no_projects_folder_is_an_empty_list_and_no_root_an_error() {
    let f = Fixture::new();
    assert!(f.list(None).is_empty());
    assert!(list(&ListOptions::default()).is_err());
    assert!(Project::new(&f.root).fit("-nothing").is_none());
}

/// A conversation larger than a first listing reads whole: a prompt in its middle, between two
/// large tool outputs.
fn long_conversation(cwd: &str) -> String {
    let pad = line(
        serde_json::json!({"type": "attachment", "attachment": {"text": "x".repeat(100 << 10)}}),
    );
    [
        user("first", "2026-11-29T02:00:00.000Z", cwd),
        pad.clone(),
        user("middle", "2026-11-29T02:10:00.000Z", cwd),
        pad,
        user("last", "2026-11-29T02:20:00.000Z", cwd),
        line(serde_json::json!({"type": "ai-title", "aiTitle": "A long one"})),
    ]
    .concat()
}

#[test]
fn a_first_listing_reads_the_ends_then_the_whole_file_later() {
    let f = Fixture::new();
    let p = f.write(&f.root, ID1, &long_conversation(f.root.to_str().unwrap()));
    let first = f.list(None);
    assert_eq!(first.len(), 1);
    // At once: what the ends hold (the title, first and last prompts), marked partial.
    assert_eq!(first[0].title, "A long one");
    assert_eq!(first[0].first_prompt.as_deref(), Some("first"));
    assert_eq!(first[0].last_prompt.as_deref(), Some("last"));
    assert_eq!(first[0].prompts, 2);
    assert!(first[0].partial);
    // Later (a thread of its own reads it whole): every prompt counted.
    let stat = crate::capfs::stat_of_file(&std::fs::metadata(&p).unwrap());
    let t = std::time::Instant::now();
    while read::cached(&p, &stat).is_some_and(|r| r.lite) {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "never read whole"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let later = f.list(None);
    assert_eq!(later[0].prompts, 3);
    assert!(!later[0].partial);
    assert_eq!(later[0].title, "A long one");
}

#[test]
fn the_index_on_disk_is_taken_for_files_that_did_not_change_and_written_after_a_listing() {
    let f = Fixture::new();
    let cache = tempfile::tempdir().unwrap();
    let opts = ListOptions {
        root: Some(f.root.clone()),
        config_dir: Some(f.cfg.clone()),
        cache_dir: Some(cache.path().to_path_buf()),
        ..ListOptions::default()
    };
    let cwd = f.root.to_str().unwrap().to_string();
    let p = f.write(&f.root, ID1, &conversation(&cwd, "first"));
    let q = f.write(&f.root, ID2, &conversation(&cwd, "second"));
    // An index (as an earlier editor wrote it) that knows ID1 as it is now, ID2 as it was.
    let entry = |path: &Path, size_delta: u64, title: &str| {
        let st = crate::capfs::stat_of_file(&std::fs::metadata(path).unwrap());
        serde_json::json!({"path": path.as_os_str().as_encoded_bytes(), "size": st.size + size_delta,
            "mtime_ns": st.mtime_ns, "ino": st.ino, "dev": st.dev,
            "meta": {"custom_title": title, "prompts": 7}})
    };
    let index = serde_json::json!({"version": 1, "files": [entry(&p, 0, "From the index"), entry(&q, 1, "Stale")]});
    std::fs::create_dir_all(cache.path().join("claude-context")).unwrap();
    std::fs::write(cache.path().join(index::FILE), index.to_string()).unwrap();
    let l = list(&opts).unwrap();
    let by_id = |id: &str| l.iter().find(|c| c.id == id).unwrap().clone();
    // Not read: taken from the index. Changed: read.
    assert_eq!(
        (by_id(ID1).title.as_str(), by_id(ID1).prompts),
        ("From the index", 7)
    );
    assert_eq!(
        (by_id(ID2).title.as_str(), by_id(ID2).prompts),
        ("second", 2)
    );
    // The listing read a file: the index is written again (atomically), with both.
    let t = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(cache.path().join(index::FILE)).unwrap_or_default();
        if !text.contains("Stale") && text.contains("second") {
            break;
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(60), "{text}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Titles and prompts: readable by the person only, as Claude Code's own files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(cache.path().join(index::FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
