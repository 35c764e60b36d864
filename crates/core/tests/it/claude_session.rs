//! The Claude-session tools against fake CLIs (small shell scripts): continuity, serialisation,
//! timeouts that leave no process behind, error objects, discovery failures, persistence.
#![cfg(unix)]

use claude_context_core::claude::args::RunOptions;
use claude_context_core::claude::discovery::DiscoveryEnv;
use claude_context_core::claude::manager::{ExecRequest, Manager};
use claude_context_core::claude::results::ExecResult;
use claude_context_core::config::{ClaudeConfig, Config};
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fake `claude`: logs its arguments, keeps its stdin, answers in the CLI's JSON shape with
/// `session_id` = the resumed id or `sess-<n>`. `$EXTRA` runs first (to misbehave).
fn fake_cli(dir: &Path, extra: &str) -> PathBuf {
    let script = format!(
        r#"#!/bin/sh
d="{dir}"
input=$(cat)
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$d/count"
printf '%s\n' "$*" >> "$d/args.log"
printf '%s' "$input" > "$d/stdin.$n"
echo "start $n" >> "$d/order.log"
{extra}
resume=""
prev=""
for a in "$@"; do
  if [ "$prev" = "--resume" ]; then resume="$a"; fi
  prev="$a"
done
sid=${{resume:-sess-$n}}
echo "end $n" >> "$d/order.log"
printf '{{"type":"result","subtype":"success","is_error":false,"result":"answer %s","session_id":"%s","total_cost_usd":0.25,"duration_ms":7,"num_turns":1,"usage":{{"input_tokens":10,"output_tokens":3}}}}\n' "$n" "$sid"
"#,
        dir = dir.display(),
        extra = extra
    );
    write_exe(&dir.join("claude"), &script)
}

fn write_exe(p: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.to_path_buf()
}

fn cfg(cmd: &Path) -> ClaudeConfig {
    ClaudeConfig {
        cmd: Some(cmd.display().to_string()),
        ..ClaudeConfig::default()
    }
}

fn req(prompt: &str, root: &Path) -> ExecRequest {
    ExecRequest {
        prompt: prompt.into(),
        file_path: None,
        timeout: Duration::from_secs(60),
        options: RunOptions::default(),
        project_root: Some(root.to_path_buf()),
    }
}

/// An args.log line without the confinement settings (`--settings=…`, its JSON holds spaces)
/// and with the project root written as `<root>`.
fn plain(line: &str, root: &Path) -> String {
    let mut l = line.to_string();
    if let (Some(a), Some(b)) = (l.find(" --settings="), l.find(" --strict-mcp-config")) {
        l.replace_range(a..b, "");
    }
    l.replace(&root.display().to_string(), "<root>")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// True when `pid` is gone or a zombie nobody reaped yet (it runs nothing either way).
fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

fn wait_dead(pid: i32) -> bool {
    // The kernel may need a moment to tear a killed process down.
    for _ in 0..50 {
        if dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn continuity_resumes_the_previous_session_and_maps_the_spec_fields() {
    let d = tempfile::tempdir().unwrap();
    let cli = fake_cli(d.path(), "");
    let m = Manager::new(cfg(&cli), None);
    let r1 = m.execute(req("first question", d.path())).await;
    assert!(r1.success, "{r1:?}");
    assert_eq!(r1.response.as_deref(), Some("answer 1"));
    assert_eq!(r1.prompt, "first question");
    assert_eq!(r1.error, None);
    assert_eq!(r1.context_file, None);
    assert!(r1.execution_time > 0.0);
    assert!(
        chrono::DateTime::parse_from_rfc3339(&r1.timestamp).is_ok(),
        "{}",
        r1.timestamp
    );
    assert_eq!(
        m.current_session(Some(d.path()))
            .await
            .session_id
            .as_deref(),
        Some("sess-1")
    );
    let r2 = m.execute(req("second question", d.path())).await;
    assert_eq!(r2.response.as_deref(), Some("answer 2"));
    let args: Vec<String> = read(&d.path().join("args.log"))
        .lines()
        .map(|l| plain(l, d.path()))
        .collect();
    assert_eq!(
        args[0],
        "--output-format json -p --permission-mode=dontAsk --setting-sources=user --tools=Read,Grep,Glob \
         --allowedTools=Read(/<root>/**) --strict-mcp-config"
    );
    assert_eq!(
        args[1],
        "--output-format json -p --permission-mode=dontAsk --setting-sources=user --tools=Read,Grep,Glob \
         --allowedTools=Read(/<root>/**) --strict-mcp-config --resume sess-1"
    );
    // The prompt goes on stdin, not on the command line.
    assert_eq!(read(&d.path().join("stdin.1")), "first question");
    assert_eq!(read(&d.path().join("stdin.2")), "second question");

    // Reset: the next run starts fresh.
    let reset = m.reset_session(Some(d.path())).await;
    assert_eq!(reset.old_session_id.as_deref(), Some("sess-1"));
    assert!(reset.success);
    assert!(!m.current_session(Some(d.path())).await.has_session);
    let r3 = m.execute(req("third", d.path())).await;
    assert!(r3.success);
    let last = read(&d.path().join("args.log"));
    assert!(!last.lines().nth(2).unwrap().contains("--resume"), "{last}");
    assert_eq!(
        m.current_session(Some(d.path()))
            .await
            .session_id
            .as_deref(),
        Some("sess-3")
    );

    // set_current_session: the next run resumes the given id (one of the project's).
    let s = m.set_session(Some(d.path()), "sess-1").await.unwrap();
    assert_eq!(s.old_session_id.as_deref(), Some("sess-3"));
    m.execute(req("fourth", d.path())).await;
    assert!(read(&d.path().join("args.log"))
        .lines()
        .nth(3)
        .unwrap()
        .ends_with("--resume sess-1"));
    assert!(m.set_session(Some(d.path()), "--evil").await.is_err());
    assert!(m.set_session(Some(d.path()), "").await.is_err());
    assert!(m.set_session(Some(d.path()), "a b").await.is_err());

    let st = m.stats(Some(d.path())).await;
    assert_eq!((st.runs, st.successes, st.failures), (4, 4, 0));
    assert_eq!((st.input_tokens, st.output_tokens), (40, 12));
    assert!((st.total_cost_usd - 1.0).abs() < 1e-9);
    assert_eq!(st.mean_duration_ms, Some(7.0));
}

#[tokio::test]
async fn concurrent_calls_run_one_at_a_time_in_order_and_the_second_resumes_the_first() {
    let d = tempfile::tempdir().unwrap();
    let cli = fake_cli(d.path(), "sleep 0.5");
    let m = Manager::new(cfg(&cli), None);
    let (a, b, c) = tokio::join!(
        m.execute(req("one", d.path())),
        m.execute(req("two", d.path())),
        m.execute(req("three", d.path())),
    );
    assert!(a.success && b.success && c.success, "{a:?} {b:?} {c:?}");
    // Never overlapping, in call order.
    assert_eq!(
        read(&d.path().join("order.log")),
        "start 1\nend 1\nstart 2\nend 2\nstart 3\nend 3\n"
    );
    assert_eq!(read(&d.path().join("stdin.1")), "one");
    assert_eq!(read(&d.path().join("stdin.2")), "two");
    let args = read(&d.path().join("args.log"));
    let lines: Vec<&str> = args.lines().collect();
    assert!(!lines[0].contains("--resume"));
    assert!(lines[1].ends_with("--resume sess-1"), "{args}");
    assert!(lines[2].ends_with("--resume sess-1"), "{args}");
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let d = tempfile::tempdir().unwrap();
    // The CLI starts a grandchild, ignores SIGTERM, and would run for a minute.
    let extra = format!(
        "trap '' TERM\necho $$ > '{0}/cli.pid'\nsleep 60 &\necho $! > '{0}/child.pid'\nwait\nsleep 60",
        d.path().display()
    );
    let cli = fake_cli(d.path(), &extra);
    let m = Manager::new(cfg(&cli), None);
    let started = Instant::now();
    let r = m
        .execute(ExecRequest {
            timeout: Duration::from_secs(2),
            ..req("slow", d.path())
        })
        .await;
    let took = started.elapsed();
    assert!(!r.success);
    assert_eq!(r.response, None);
    let err = r.error.unwrap();
    assert!(err.contains("timed out after 2 s"), "{err}");
    assert!(err.contains("process group was killed"), "{err}");
    // Far less than the minute the script wanted: the call did not wait for it.
    assert!(took < Duration::from_secs(30), "{took:?}");
    let pid: i32 = read(&d.path().join("cli.pid")).trim().parse().unwrap();
    let child: i32 = read(&d.path().join("child.pid")).trim().parse().unwrap();
    assert!(wait_dead(pid), "the CLI {pid} is still running");
    assert!(wait_dead(child), "its child {child} is still running");
    // The failure is in the history and the counters.
    let h = m.history(Some(d.path()), 10).await;
    assert_eq!(h.total_entries, 1);
    assert!(!h.history[0].result.success);
    assert_eq!(m.stats(Some(d.path())).await.failures, 1);
}

#[tokio::test]
async fn dropping_the_call_kills_the_process_group() {
    let d = tempfile::tempdir().unwrap();
    let extra = format!(
        "echo $$ > '{0}/cli.pid'\nsleep 60 &\necho $! > '{0}/child.pid'\nwait",
        d.path().display()
    );
    let cli = fake_cli(d.path(), &extra);
    let m = Manager::new(cfg(&cli), None);
    let pidfile = d.path().join("child.pid");
    let fut = m.execute(req("abandoned", d.path()));
    tokio::select! {
        _ = fut => panic!("the fake CLI should still be running"),
        _ = async {
            while read(&pidfile).trim().is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        } => {}
    }
    let pid: i32 = read(&d.path().join("cli.pid")).trim().parse().unwrap();
    let child: i32 = read(&pidfile).trim().parse().unwrap();
    assert!(wait_dead(pid) && wait_dead(child));
}

#[tokio::test]
async fn cancel_stops_the_running_call_and_the_queued_ones() {
    let d = tempfile::tempdir().unwrap();
    let extra = format!(
        "echo $$ > '{0}'/cli.pid.$n\nsleep 60 &\nwait",
        d.path().display()
    );
    let cli = fake_cli(d.path(), &extra);
    let m = Arc::new(Manager::new(cfg(&cli), None));
    let m2 = m.clone();
    let dir = d.path().to_path_buf();
    let canceller = async move {
        while read(&dir.join("cli.pid.1")).trim().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        m2.cancel()
    };
    let (a, b, c) = tokio::join!(
        m.execute(req("one", d.path())),
        m.execute(req("two", d.path())),
        canceller
    );
    assert_eq!(c.cancelled, 2);
    assert!(!a.success && a.error.as_deref().unwrap().contains("cancelled"));
    assert!(!b.success && b.error.as_deref().unwrap().contains("before it started"));
    // The second never started a CLI.
    assert_eq!(read(&d.path().join("count")).trim(), "1");
    let pid: i32 = read(&d.path().join("cli.pid.1")).trim().parse().unwrap();
    assert!(wait_dead(pid));
    // Later calls are not affected by an earlier cancel.
    std::fs::write(
        &cli,
        "#!/bin/sh\ncat >/dev/null\necho '{\"result\":\"ok\",\"session_id\":\"s9\"}'\n",
    )
    .unwrap();
    assert!(m.execute(req("three", d.path())).await.success);
    assert_eq!(m.cancel().cancelled, 0);
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Lets a reader blocked opening the FIFO go (it then reads EOF), so no blocking-pool thread
/// stays pinned when the test's runtime shuts down.
fn release_fifo(p: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..500 {
        // O_NONBLOCK write-open succeeds only while a reader has it open.
        if std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
            .is_ok()
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// On a failed assertion, releases the FIFO so the runtime's shutdown does not wait forever for
/// the blocked reader (the test then fails instead of hanging).
struct ReleaseOnPanic(PathBuf);
impl Drop for ReleaseOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            release_fifo(&self.0);
        }
    }
}

/// The attack: `execute_claude_with_context` on a FIFO in the project blocked in the context read
/// while holding the run queue, so every later run waited forever and `cancel_claude_execution`
/// did not free it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_context_file_holds_no_queue_and_cancel_frees_it() {
    let d = tempfile::tempdir().unwrap();
    let cli = fake_cli(d.path(), "");
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let fifo = root.join("pipe.md");
    mkfifo(&fifo);
    let _release = ReleaseOnPanic(fifo.clone());
    let m = Arc::new(Manager::new(cfg(&cli), None));
    let stuck = {
        let m = m.clone();
        let root = root.clone();
        tokio::spawn(async move {
            m.execute(ExecRequest {
                file_path: Some("pipe.md".into()),
                ..req("read the pipe", &root)
            })
            .await
        })
    };
    // The capability layer refuses a FIFO at once, so the run may already be over.
    while m.active() == 0 && !stuck.is_finished() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another run goes ahead while the context read is stuck.
    let other = tokio::time::timeout(Duration::from_secs(60), m.execute(req("plain", &root)))
        .await
        .expect("a run waited behind a stuck context-file read");
    assert!(other.success, "{other:?}");
    assert_eq!(other.response.as_deref(), Some("answer 1"));
    // Cancel frees the stuck one. (Once the file layer refuses FIFOs at once, the run has
    // already ended with that refusal and there is nothing left to cancel.)
    assert!(m.cancel().cancelled <= 1);
    let r = tokio::time::timeout(Duration::from_secs(60), stuck)
        .await
        .expect("cancel_claude_execution did not free a run stuck before its CLI started")
        .unwrap();
    assert!(!r.success, "{r:?}");
    let err = r.error.as_deref().unwrap();
    assert!(
        err.contains("cancelled") || err.contains("pipe.md"),
        "{r:?}"
    );
    assert_eq!(r.context_file.as_deref(), Some("pipe.md"));
    assert_eq!(m.active(), 0);
    // Its CLI never ran; the history has both runs.
    assert_eq!(read(&d.path().join("count")).trim(), "1");
    assert_eq!(m.history(Some(&root), 10).await.total_entries, 2);
    release_fifo(&fifo);

    // A stuck read also ends at the call's timeout (or is refused at once), with an error
    // naming the file.
    let m2 = m.clone();
    let root2 = root.clone();
    let timed = tokio::spawn(async move {
        m2.execute(ExecRequest {
            file_path: Some("pipe.md".into()),
            timeout: Duration::from_millis(300),
            ..req("again", &root2)
        })
        .await
    });
    let r = tokio::time::timeout(Duration::from_secs(60), timed)
        .await
        .expect("the timeout did not end a stuck context read")
        .unwrap();
    assert!(r.error.as_deref().unwrap().contains("pipe.md"), "{r:?}");
    release_fifo(&fifo);
}

/// The same attack against any slow step before the CLI starts, whatever the file layer does
/// with FIFOs: a context read that stalls (until the test lets it go) neither holds the queue
/// nor survives `cancel`, and the call's timeout ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_context_read_holds_no_queue_and_cancel_or_timeout_frees_it() {
    let d = tempfile::tempdir().unwrap();
    let cli = fake_cli(d.path(), "");
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    // Reads block until the gate opens; they count themselves.
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (g, n) = (gate.clone(), reads.clone());
    let reader: Arc<claude_context_core::claude::context::ContextReader> =
        Arc::new(move |_root: Option<&Path>, fp: &str, _limit: u64| {
            n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let (lock, cv) = &*g;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
            Ok((fp.to_string(), "late content".to_string()))
        });
    struct OpenOnDrop(Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);
    impl Drop for OpenOnDrop {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap() = true;
            self.0 .1.notify_all();
        }
    }
    let _open = OpenOnDrop(gate.clone());
    let m = Arc::new(Manager::new(cfg(&cli), None).with_context_reader(reader));
    let spawn_ctx = |timeout: Duration| {
        let m = m.clone();
        let root = root.clone();
        tokio::spawn(async move {
            m.execute(ExecRequest {
                file_path: Some("slow.md".into()),
                timeout,
                ..req("with context", &root)
            })
            .await
        })
    };
    let stuck = spawn_ctx(Duration::from_secs(600));
    while reads.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let other = tokio::time::timeout(Duration::from_secs(60), m.execute(req("plain", &root)))
        .await
        .expect("a run waited behind a stalled context read");
    assert_eq!(other.response.as_deref(), Some("answer 1"), "{other:?}");
    assert_eq!(m.cancel().cancelled, 1);
    let r = tokio::time::timeout(Duration::from_secs(60), stuck)
        .await
        .expect("cancel_claude_execution did not free a run stuck before its CLI started")
        .unwrap();
    assert!(
        !r.success && r.error.as_deref().unwrap().contains("cancelled"),
        "{r:?}"
    );
    assert_eq!(m.active(), 0);
    // The timeout ends a stalled read too.
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        spawn_ctx(Duration::from_millis(300)),
    )
    .await
    .expect("the timeout did not end a stalled context read")
    .unwrap();
    let err = r.error.as_deref().unwrap();
    assert!(
        err.contains("timed out") && err.contains("slow.md"),
        "{r:?}"
    );
    // Neither started a CLI.
    assert_eq!(read(&d.path().join("count")).trim(), "1");
}

async fn run_with(body: &str) -> ExecResult {
    let d = tempfile::tempdir().unwrap();
    let cli = write_exe(&d.path().join("claude"), body);
    Manager::new(cfg(&cli), None)
        .execute(req("q", d.path()))
        .await
}

#[tokio::test]
async fn misbehaving_clis_give_the_spec_error_object() {
    let r = run_with("#!/bin/sh\ncat >/dev/null\necho 'hello, this is not json'\n").await;
    assert!(!r.success && r.response.is_none());
    let e = r.error.unwrap();
    assert!(
        e.contains("cannot parse the Claude CLI output as JSON"),
        "{e}"
    );
    assert!(e.contains("hello, this is not json"), "{e}");
    assert!(e.contains("exited with status 0"), "{e}");

    let r = run_with(
        "#!/bin/sh\ncat >/dev/null\necho 'line one' >&2\necho 'fatal: boom' >&2\nexit 1\n",
    )
    .await;
    assert!(!r.success && r.response.is_none());
    let e = r.error.unwrap();
    assert!(e.contains("exited with status 1"), "{e}");
    assert!(e.contains("fatal: boom"), "{e}");

    let r = run_with("#!/bin/sh\nkill -9 $$\n").await;
    assert!(r.error.unwrap().contains("killed by signal 9"));

    // The CLI's own error report (is_error) keeps its text and the session it made.
    let r = run_with(
        "#!/bin/sh\ncat >/dev/null\necho '{\"is_error\":true,\"subtype\":\"error_max_turns\",\"result\":\"too many turns\",\"session_id\":\"s1\"}'\nexit 1\n",
    )
    .await;
    let e = r.error.unwrap();
    assert!(
        e.contains("too many turns") && e.contains("error_max_turns"),
        "{e}"
    );

    // Exit 0 but no result field.
    let r = run_with("#!/bin/sh\ncat >/dev/null\necho '{\"session_id\":\"s1\"}'\n").await;
    let e = r.error.unwrap();
    assert!(e.contains("without a \"result\" field"), "{e}");
    assert!(e.contains("exited with status 0"), "{e}");

    // A CLI that does not read its stdin at all still gets a clean answer.
    let r = run_with("#!/bin/sh\necho '{\"result\":\"fine\",\"session_id\":\"s1\"}'\n").await;
    assert_eq!(r.response.as_deref(), Some("fine"));
}

#[tokio::test]
async fn a_stale_session_is_forgotten() {
    let d = tempfile::tempdir().unwrap();
    let cli = write_exe(
        &d.path().join("claude"),
        "#!/bin/sh\ncat >/dev/null\ncase \"$*\" in *--resume*) echo 'No conversation found with session ID: gone' >&2; exit 1;; esac\necho '{\"result\":\"new\",\"session_id\":\"fresh\"}'\n",
    );
    // A conversation of the project the person may resume, which the CLI then cannot find.
    let claude_cfg = d.path().join("claude-config");
    let folder =
        claude_cfg
            .join("projects")
            .join(claude_context_core::conversations::folders::encode(
                d.path(),
            ));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("gone.jsonl"), "").unwrap();
    let mut c = cfg(&cli);
    c.env
        .insert("CLAUDE_CONFIG_DIR".into(), claude_cfg.display().to_string());
    let m = Manager::new(c, None);
    m.set_session(Some(d.path()), "gone").await.unwrap();
    let r = m.execute(req("q", d.path())).await;
    let e = r.error.unwrap();
    assert!(e.contains("no longer exists") && e.contains("gone"), "{e}");
    assert!(!m.current_session(Some(d.path())).await.has_session);
    let r = m.execute(req("q", d.path())).await;
    assert_eq!(r.response.as_deref(), Some("new"));
}

#[tokio::test]
async fn no_cli_anywhere_says_where_it_looked() {
    let d = tempfile::tempdir().unwrap();
    let env = DiscoveryEnv {
        home: Some(d.path().to_path_buf()),
        path: Some(d.path().join("bin").into_os_string()),
        claude_path: None,
        cwd: Some(d.path().to_path_buf()),
    };
    let m = Manager::new(
        ClaudeConfig {
            cmd: Some("/nonexistent/claude".into()),
            ..ClaudeConfig::default()
        },
        None,
    )
    .with_discovery_env(env);
    let r = m.execute(req("q", d.path())).await;
    if Path::new("/usr/local/bin/claude").exists() || Path::new("/usr/bin/claude").exists() {
        return; // A machine with a system-wide CLI always finds one.
    }
    assert!(!r.success && r.response.is_none());
    let e = r.error.unwrap();
    for part in [
        "Claude CLI not found",
        "/nonexistent/claude",
        "PATH",
        "/usr/local/bin/claude",
        ".nvm/versions/node/*/bin/claude",
        ".asdf/installs/nodejs/*/bin/claude",
        "CLAUDE_PATH",
        "npm install -g @anthropic-ai/claude-code",
    ] {
        assert!(e.contains(part), "missing {part:?} in {e}");
    }
    let t = m.test_cli().await;
    assert!(!t.success && t.path.is_none());
    assert!(t.error.unwrap().contains("Claude CLI not found"));
}

#[tokio::test]
async fn the_cached_cli_is_rechecked_before_use() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    let first = write_exe(
        &bin.join("claude"),
        "#!/bin/sh\ncat >/dev/null\necho '{\"result\":\"from PATH\",\"session_id\":\"a\"}'\n",
    );
    let env = DiscoveryEnv {
        home: Some(d.path().join("home")),
        path: Some(bin.clone().into_os_string()),
        claude_path: Some(d.path().join("alt").into_os_string()),
        cwd: Some(d.path().to_path_buf()),
    };
    let m = Manager::new(ClaudeConfig::default(), None).with_discovery_env(env);
    assert_eq!(
        m.execute(req("q", d.path())).await.response.as_deref(),
        Some("from PATH")
    );
    std::fs::remove_file(&first).unwrap();
    write_exe(
        &d.path().join("alt/claude"),
        "#!/bin/sh\ncat >/dev/null\necho '{\"result\":\"from CLAUDE_PATH\",\"session_id\":\"a\"}'\n",
    );
    assert_eq!(
        m.execute(req("q", d.path())).await.response.as_deref(),
        Some("from CLAUDE_PATH")
    );
    let t = m.test_cli().await;
    assert_eq!(t.source.as_deref(), Some("CLAUDE_PATH"));
}

#[tokio::test]
async fn test_cli_reports_path_and_version() {
    let d = tempfile::tempdir().unwrap();
    let cli = write_exe(
        &d.path().join("claude"),
        "#!/bin/sh\n[ \"$1\" = --version ] && echo '2.1.197 (Claude Code)' && exit 0\nexit 3\n",
    );
    let t = Manager::new(cfg(&cli), None).test_cli().await;
    assert!(t.success, "{t:?}");
    assert_eq!(t.version.as_deref(), Some("2.1.197 (Claude Code)"));
    assert_eq!(t.path.as_deref(), Some(cli.to_str().unwrap()));
    assert_eq!(t.source.as_deref(), Some("config"));
}

#[tokio::test]
async fn context_file_is_read_relative_to_the_root_and_limited() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn secret_marker() {}\n").unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(2000)).unwrap();
    std::fs::write(root.join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
    std::fs::write(d.path().join("outside.txt"), "no").unwrap();
    let cli = fake_cli(d.path(), "");
    let m = Manager::new(
        ClaudeConfig {
            max_context_bytes: 1000,
            ..cfg(&cli)
        },
        None,
    );
    let with = |fp: &str| ExecRequest {
        file_path: Some(fp.into()),
        ..req("explain this", &root)
    };
    let r = m.execute(with("src/lib.rs")).await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.context_file.as_deref(), Some("src/lib.rs"));
    let stdin = read(&d.path().join("stdin.1"));
    assert!(stdin.contains("fn secret_marker() {}"), "{stdin}");
    assert!(stdin.contains("src/lib.rs"), "{stdin}");
    assert!(stdin.trim_end().ends_with("explain this"), "{stdin}");
    // The serialised result has context_file; execute_claude's does not.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["context_file"], "src/lib.rs");

    for (fp, want) in [
        ("big.txt", "over the 1000 byte limit"),
        ("missing.txt", "No such file"),
        ("../outside.txt", "outside the project root"),
        ("bin.dat", "not UTF-8"),
        ("src", "directory"),
    ] {
        let r = m.execute(with(fp)).await;
        assert!(!r.success && r.response.is_none(), "{fp}");
        assert_eq!(r.context_file.as_deref(), Some(fp));
        let e = r.error.unwrap();
        assert!(e.contains(want), "{fp}: {e}");
    }
    // None of the failures started the CLI.
    assert_eq!(read(&d.path().join("count")).trim(), "1");
}

#[tokio::test]
async fn options_env_and_cwd_reach_the_cli() {
    let d = tempfile::tempdir().unwrap();
    let extra = format!(
        "echo \"$CC_TEST_VAR\" > '{0}/env.out'\npwd > '{0}/cwd.out'",
        d.path().display()
    );
    let cli = fake_cli(d.path(), &extra);
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let mut c = cfg(&cli);
    c.env.insert("CC_TEST_VAR".into(), "from-config".into());
    c.allowed_tools = vec!["Read".into(), "Bash".into()];
    let m = Manager::new(c, None);
    let r = m
        .execute(ExecRequest {
            options: RunOptions {
                model: Some("sonnet".into()),
                max_turns: Some(3),
                allowed_tools: Some(vec!["Read".into(), "Bash(git:*)".into()]),
                append_system_prompt: Some("-be brief".into()),
            },
            ..req("q", &root)
        })
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(
        plain(read(&d.path().join("args.log")).trim(), &root),
        "--output-format json -p --permission-mode=dontAsk --setting-sources=user --tools=Read,Bash \
         --allowedTools=Bash(git:*),Read(/<root>/**) --strict-mcp-config --model=sonnet --max-turns=3 \
         --append-system-prompt=-be brief"
    );
    assert_eq!(read(&d.path().join("env.out")).trim(), "from-config");
    assert_eq!(
        PathBuf::from(read(&d.path().join("cwd.out")).trim()),
        root.canonicalize().unwrap()
    );
    assert!(RunOptions {
        max_turns: Some(0),
        ..Default::default()
    }
    .validate()
    .is_err());
    assert!(RunOptions {
        model: Some("--x".into()),
        ..Default::default()
    }
    .validate()
    .is_err());
}

#[tokio::test]
async fn history_and_session_persist_across_restarts() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let cli = fake_cli(d.path(), "");
    {
        let m = Manager::new(cfg(&cli), Some(&state));
        for i in 0..3 {
            assert!(m.execute(req(&format!("q{i}"), d.path())).await.success);
        }
        // Runs return before their state write is on disk; flush waits for it.
        m.flush().await;
    }
    let file = Manager::new(cfg(&cli), Some(&state))
        .state_file(d.path())
        .unwrap();
    assert!(file.starts_with(state.join("claude_sessions")), "{file:?}");
    #[cfg(unix)]
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let m = Manager::new(cfg(&cli), Some(&state));
    let h = m.history(Some(d.path()), 2).await;
    assert_eq!(h.total_entries, 3);
    assert_eq!(h.current_session_id.as_deref(), Some("sess-1"));
    let prompts: Vec<_> = h.history.iter().map(|e| e.result.prompt.as_str()).collect();
    assert_eq!(prompts, ["q1", "q2"]);
    assert_eq!(h.history[1].resumed_session_id.as_deref(), Some("sess-1"));
    assert_eq!(h.history[1].tool, "execute_claude");
    assert_eq!(m.stats(Some(d.path())).await.runs, 3);
    // The resumed session continues after the restart.
    m.execute(req("q3", d.path())).await;
    assert!(read(&d.path().join("args.log"))
        .lines()
        .nth(3)
        .unwrap()
        .ends_with("--resume sess-1"));

    let c = m.clear_history(Some(d.path())).await;
    assert_eq!((c.cleared_count, c.success), (4, true));
    m.reset_session(Some(d.path())).await;
    let m = Manager::new(cfg(&cli), Some(&state));
    let h = m.history(Some(d.path()), 10).await;
    assert_eq!((h.total_entries, h.current_session_id), (0, None));
    // Counters survive clearing the history.
    assert_eq!(m.stats(Some(d.path())).await.runs, 4);
}

#[tokio::test]
async fn history_keeps_the_newest_100_and_a_corrupt_file_is_moved_aside() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let cli = write_exe(
        &d.path().join("claude"),
        "#!/bin/sh\ncat >/dev/null\necho '{\"result\":\"r\",\"session_id\":\"s\"}'\n",
    );
    let m = Manager::new(cfg(&cli), Some(&state));
    let file = m.state_file(d.path()).unwrap();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{not json").unwrap();
    for i in 0..105 {
        m.execute(req(&format!("p{i}"), d.path())).await;
    }
    m.flush().await;
    assert!(PathBuf::from(format!("{}.bad", file.display())).exists());
    let h = Manager::new(cfg(&cli), Some(&state))
        .history(Some(d.path()), 1000)
        .await;
    assert_eq!(h.total_entries, 100);
    assert_eq!(h.history[0].result.prompt, "p5");
    assert_eq!(h.history[99].result.prompt, "p104");
    assert_eq!(m.history(Some(d.path()), 0).await.history.len(), 0);
}

// ---- Through the MCP tool layer ----------------------------------------------------------

fn start_server(d: &Path, cmd: &Path) -> Server {
    let config = Config {
        lock_dir: Some(d.join("locks")),
        state_dir: Some(d.join("state")),
        claude: cfg(cmd),
        ..Config::default()
    };
    let root = d.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("ctx.txt"), "context words").unwrap();
    let st = EditorState {
        cwd: Some(root),
        ..Default::default()
    };
    Server::start(config, st, Arc::new(NoEditor)).unwrap()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn tools_return_the_spec_objects_field_for_field() {
    let d = tempfile::tempdir().unwrap();
    let cli = fake_cli(d.path(), "");
    let server = start_server(d.path(), &cli);
    let shared = server.shared().clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let call = |name: &str, args: Value| {
        let s = shared.clone();
        let name = name.to_string();
        rt.block_on(async move { claude_context_core::mcp::call_tool(&s, &name, args).await })
    };
    let sc = |r: Result<Value, _>| -> Value {
        let r: Value = r.unwrap();
        assert_ne!(r["isError"], true, "{r}");
        r["structuredContent"].clone()
    };
    let v = sc(call("execute_claude", json!({"prompt": "hi"})));
    assert_eq!(
        keys(&v),
        [
            "error",
            "execution_time",
            "prompt",
            "response",
            "success",
            "timestamp",
            "tool_name"
        ]
    );
    assert_eq!(v["response"], "answer 1");
    assert_eq!(v["tool_name"], "execute_claude");
    let v = sc(call(
        "execute_claude_with_context",
        json!({"prompt": "hi", "file_path": "ctx.txt", "timeout": 30}),
    ));
    assert_eq!(
        keys(&v),
        [
            "context_file",
            "error",
            "execution_time",
            "prompt",
            "response",
            "success",
            "timestamp",
            "tool_name"
        ]
    );
    assert_eq!(v["tool_name"], "execute_claude_with_context");
    assert!(read(&d.path().join("stdin.2")).contains("context words"));
    let v = sc(call("get_execution_history", json!({"limit": 1})));
    assert_eq!(
        keys(&v),
        [
            "current_session_id",
            "history",
            "success",
            "tool_name",
            "total_entries"
        ]
    );
    // Each entry names its tool, as the original's entries did.
    assert_eq!(v["history"][0]["tool_name"], "execute_claude_with_context");
    assert_eq!(v["total_entries"], 2);
    assert_eq!(v["history"].as_array().unwrap().len(), 1);
    assert_eq!(v["history"][0]["context_file"], "ctx.txt");
    assert_eq!(v["current_session_id"], "sess-1");
    let v = sc(call("get_current_session", json!({})));
    assert_eq!(
        keys(&v),
        ["has_session", "session_id", "success", "tool_name"]
    );
    assert_eq!(
        (v["has_session"].clone(), v["session_id"].clone()),
        (json!(true), json!("sess-1"))
    );
    let v = sc(call("get_execution_stats", Value::Null));
    assert_eq!(v["runs"], 2);
    assert_eq!(v["input_tokens"], 20);
    let v = sc(call("reset_session", json!({})));
    assert_eq!(
        keys(&v),
        ["message", "old_session_id", "success", "tool_name"]
    );
    assert_eq!(v["old_session_id"], "sess-1");
    let v = sc(call("set_current_session", json!({"session_id": "sess-1"})));
    assert_eq!(v["session_id"], "sess-1");
    // The original's name for it, beside ours.
    assert_eq!(v["new_session_id"], "sess-1");
    assert_eq!(v["tool_name"], "set_current_session");
    let v = sc(call("clear_execution_history", json!({})));
    assert_eq!(
        keys(&v),
        ["cleared_count", "message", "success", "tool_name"]
    );
    assert_eq!(v["cleared_count"], 2);
    let v = sc(call("cancel_claude_execution", json!({})));
    assert_eq!(v["cancelled"], 0);
    // Bad arguments are -32602 with the reason.
    for (tool, args, want) in [
        (
            "execute_claude",
            json!({"prompt": "x", "timeout": 0}),
            "timeout",
        ),
        ("execute_claude", json!({"prompt": "  "}), "prompt"),
        ("execute_claude", json!({}), "prompt"),
        (
            "execute_claude",
            json!({"prompt": "x", "options": {"max_turns": 0}}),
            "max_turns",
        ),
        (
            "execute_claude",
            json!({"prompt": "x", "options": {"modle": "a"}}),
            "modle",
        ),
        (
            "execute_claude_with_context",
            json!({"prompt": "x"}),
            "file_path",
        ),
        // A caller cannot widen the sub-agent's tools beyond the person's set.
        (
            "execute_claude",
            json!({"prompt": "x", "options": {"allowed_tools": ["Read", "Bash"]}}),
            "\"Bash\" is not among the tools the person allows",
        ),
        (
            "execute_claude_with_context",
            json!({"prompt": "x", "file_path": "ctx.txt", "options": {"allowed_tools": ["Edit"]}}),
            "only narrow",
        ),
        (
            "set_current_session",
            json!({"session_id": "-x"}),
            "session_id",
        ),
        ("get_execution_history", json!({"limit": -1}), "-1"),
    ] {
        let e = call(tool, args).unwrap_err();
        assert_eq!(e.code, -32602, "{tool}");
        assert!(e.message.contains(want), "{tool}: {}", e.message);
    }
    // Those refused calls never started the CLI.
    assert_eq!(read(&d.path().join("count")).trim(), "2");
    // The tools are listed.
    let names: Vec<String> = shared.status().tools;
    for t in [
        "execute_claude",
        "execute_claude_with_context",
        "get_execution_history",
        "clear_execution_history",
        "get_current_session",
        "reset_session",
        "set_current_session",
        "test_claude_cli",
        "get_execution_stats",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} not registered");
    }
    server.stop();
}

// ---- History, session and working directory belong to one project -------------------------

/// The attack: project B's `/mcp` listed project A's prompts (selected lines of any buffer),
/// got A's current session, and `execute_claude` from B ran in A's directory with `--resume` of
/// A's session.
#[tokio::test]
async fn history_is_per_project() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let (a, b) = (d.path().join("A"), d.path().join("B"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let cli = fake_cli(
        d.path(),
        &format!("pwd >> '{}/cwd.log'", d.path().display()),
    );
    {
        let m = Manager::new(cfg(&cli), Some(&state));
        assert!(m.execute(req("secret selection of A", &a)).await.success);
        m.flush().await;
    }
    // Another Neovim (another manager on the same state folder) in project B.
    let m = Manager::new(cfg(&cli), Some(&state));
    let h = m.history(Some(&b), 100).await;
    assert_eq!((h.total_entries, h.current_session_id), (0, None));
    assert!(!m.current_session(Some(&b)).await.has_session);
    assert_eq!(m.stats(Some(&b)).await.runs, 0);
    assert!(m.execute(req("question in B", &b)).await.success);
    let args: Vec<String> = read(&d.path().join("args.log"))
        .lines()
        .map(String::from)
        .collect();
    assert!(!args[1].contains("--resume"), "{}", args[1]);
    let cwds: Vec<PathBuf> = read(&d.path().join("cwd.log"))
        .lines()
        .map(PathBuf::from)
        .collect();
    assert_eq!(cwds[1], b.canonicalize().unwrap());
    let hb = m.history(Some(&b), 100).await;
    assert_eq!(hb.total_entries, 1);
    assert_eq!(hb.history[0].result.prompt, "question in B");
    assert_eq!(hb.current_session_id.as_deref(), Some("sess-2"));
    // Project A keeps its own.
    let ha = m.history(Some(&a), 100).await;
    assert_eq!(ha.history[0].result.prompt, "secret selection of A");
    assert_eq!(ha.current_session_id.as_deref(), Some("sess-1"));
    // Clearing or resetting B leaves A alone.
    m.clear_history(Some(&b)).await;
    m.reset_session(Some(&b)).await;
    assert_eq!(m.history(Some(&a), 100).await.total_entries, 1);
    assert!(m.current_session(Some(&a)).await.has_session);
    // No project root: nothing of any project, nothing persisted.
    assert_eq!(m.history(None, 100).await.total_entries, 0);
    m.flush().await;
    assert_ne!(m.state_file(&a), m.state_file(&b));
}

/// The attack: the model of project A called `set_current_session` with a session id of
/// project B (found in a log, a file, guessed from another listing), then `execute_claude`: the
/// CLI resumes a session of any project by its id, so the sub-agent read B's conversation to the
/// model. Only the project's own conversations (its root's, its worktrees') may be resumed.
#[tokio::test]
async fn set_current_session_refuses_another_projects_conversation() {
    use claude_context_core::conversations::folders::encode;
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("A"), d.path().join("B"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let claude_cfg = d.path().join("claude-config");
    let conversation = |dir: &Path, id: &str| {
        let folder = claude_cfg.join("projects").join(encode(dir));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("{id}.jsonl")), "{}\n").unwrap();
    };
    let b_id = "bbbbbbbb-0000-4000-8000-000000000000";
    let a_id = "aaaaaaaa-0000-4000-8000-000000000000";
    let wt_id = "cccccccc-0000-4000-8000-000000000000";
    conversation(&b, b_id);
    conversation(&a, a_id);
    let wt = a.join(".claude/worktrees/feat");
    let folder = claude_cfg.join("projects").join(encode(&wt));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join(format!("{wt_id}.jsonl")),
        format!(
            "{}\n",
            json!({"type": "user", "cwd": wt, "message": {"role": "user", "content": "hi"}})
        ),
    )
    .unwrap();
    let cli = fake_cli(d.path(), "");
    let mut c = cfg(&cli);
    c.env
        .insert("CLAUDE_CONFIG_DIR".into(), claude_cfg.display().to_string());
    let m = Manager::new(c, None);
    let e = m.set_session(Some(&a), b_id).await.unwrap_err();
    assert!(e.to_string().contains("not one of this project's"), "{e}");
    // Nor an id that is no conversation at all.
    assert!(m
        .set_session(Some(&a), "dddddddd-0000-4000-8000-000000000000")
        .await
        .is_err());
    assert!(m.execute(req("what did they say?", &a)).await.success);
    let args = read(&d.path().join("args.log"));
    assert!(!args.contains(b_id), "{args}");
    assert!(!args.contains("--resume"), "{args}");
    // The project's own conversations, and its worktrees', are resumed.
    m.set_session(Some(&a), a_id).await.unwrap();
    m.set_session(Some(&a), wt_id).await.unwrap();
    m.execute(req("go on", &a)).await;
    let last = read(&d.path().join("args.log"));
    assert!(last
        .lines()
        .last()
        .unwrap()
        .ends_with(&format!("--resume {wt_id}")));
}

/// The attack: four 8 MB prompts left 16.8 MB on disk, all read back into Neovim at start.
#[tokio::test]
async fn stored_history_is_bounded_in_bytes() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let cli = fake_cli(d.path(), "");
    let m = Manager::new(cfg(&cli), Some(&state));
    let big = "x".repeat(8 << 20);
    for _ in 0..4 {
        let r = m.execute(req(&big, d.path())).await;
        // The caller gets the prompt as given; only the stored copy is cut.
        assert_eq!(r.prompt.len(), big.len());
    }
    m.flush().await;
    let on_disk = std::fs::metadata(m.state_file(d.path()).unwrap())
        .unwrap()
        .len();
    assert!(on_disk < 1 << 20, "{on_disk}");
    let h = Manager::new(cfg(&cli), Some(&state))
        .history(Some(d.path()), 100)
        .await;
    assert_eq!(h.total_entries, 4);
    assert!(h.history[0]
        .result
        .prompt
        .contains("cut in the stored history"));
    assert!(h.history[0].result.prompt.len() < 20 << 10);
}
