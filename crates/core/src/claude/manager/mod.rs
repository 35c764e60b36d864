//! The process manager: runs are strictly one at a time, in call order (doc/protocol.md,
//! Limits: parallel runs would break `--resume` continuity); a fair (FIFO)
//! `tokio::sync::Mutex` is the queue. Each run finds the CLI, builds its command line
//! ([`super::args`]), runs it ([`super::runner`]), interprets what it printed
//! ([`super::outcome`]) and records the result in its project's state ([`super::projects`]).
//! Nothing here blocks the caller's thread; file work runs on the blocking pool.

mod sessions;

use super::args::{child_env, child_home, narrow_tools, sub_agent_args, RunOptions};
use super::context::{compose_with_context, read_context_file, ContextReader};
use super::discovery::{self, DiscoveryEnv, Found};
use super::outcome::{self, describe_status};
use super::projects::{lock, Project, Projects, State};
use super::reply;
use super::results::{CancelResult, CliTestResult, ExecResult, HistoryEntry};
use super::runner;
use super::ClaudeError;
use crate::config::ClaudeConfig;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// `test_claude_cli`'s budget for `claude --version`.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// One `execute_claude*` call.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub prompt: String,
    /// `execute_claude_with_context`'s `file_path`, as given.
    pub file_path: Option<String>,
    pub timeout: Duration,
    pub options: RunOptions,
    /// The project root: context files resolve against it and the CLI runs in it.
    pub project_root: Option<PathBuf>,
}

/// The Claude-session state of one bridge.
pub struct Manager {
    cfg: ClaudeConfig,
    queue: tokio::sync::Mutex<()>,
    projects: Projects,
    cli: Mutex<Option<Found>>,
    discovery_env: Option<DiscoveryEnv>,
    cancel_tx: watch::Sender<u64>,
    seq: AtomicU64,
    active: Arc<AtomicUsize>,
    /// Replaces [`read_context_file`] (tests: a read that stalls).
    context_reader: Option<Arc<ContextReader>>,
}

/// Now, ISO 8601 with the local offset and microseconds.
pub fn now_iso() -> String {
    chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

struct ActiveGuard(Arc<AtomicUsize>);
impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What one run produced besides the result.
#[derive(Default)]
struct RunInfo {
    reply: Option<reply::Reply>,
    new_session: Option<String>,
    session_cwd: Option<PathBuf>,
    resumed: Option<String>,
    /// The resumed session no longer exists: forget it.
    stale_session: bool,
    /// The state's epoch when the run started.
    epoch: Option<u64>,
}

impl Manager {
    /// `state_dir` is where history persists; `None` keeps it in memory only.
    pub fn new(cfg: ClaudeConfig, state_dir: Option<&Path>) -> Manager {
        let (cancel_tx, _) = watch::channel(0);
        Manager {
            cfg,
            queue: tokio::sync::Mutex::new(()),
            projects: Projects::new(state_dir),
            cli: Mutex::new(None),
            discovery_env: None,
            cancel_tx,
            seq: AtomicU64::new(0),
            active: Arc::new(AtomicUsize::new(0)),
            context_reader: None,
        }
    }

    /// Context files are read by `reader` instead of [`read_context_file`] (on the blocking
    /// pool, like it). For tests: a read that stalls, whatever the file layer refuses.
    pub fn with_context_reader(mut self, reader: Arc<ContextReader>) -> Manager {
        self.context_reader = Some(reader);
        self
    }

    /// Discovery looks at `env` instead of the process environment (tests).
    pub fn with_discovery_env(mut self, env: DiscoveryEnv) -> Manager {
        self.discovery_env = Some(env);
        self
    }

    /// The file the state of the project at `root` persists to.
    pub fn state_file(&self, root: &Path) -> Option<PathBuf> {
        self.projects.state_file(root)
    }

    /// The state of the project at `root`.
    async fn project(&self, root: Option<&Path>) -> Arc<Project> {
        self.projects.get(root).await
    }

    async fn state(&self, root: Option<&Path>) -> Arc<Mutex<State>> {
        self.project(root).await.state.clone()
    }

    fn persist_soon(&self, pr: &Arc<Project>) {
        self.projects.persist_soon(pr);
    }

    async fn persist(&self, pr: &Arc<Project>) {
        self.projects.persist(pr).await;
    }

    /// Waits for every state write started so far, of every project.
    pub async fn flush(&self) {
        self.projects.flush().await;
    }

    fn discovery_env(&self) -> DiscoveryEnv {
        self.discovery_env.clone().unwrap_or_else(|| {
            DiscoveryEnv::from_process(self.cfg.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        })
    }

    /// The CLI: the cached path while it still exists, else a fresh discovery.
    async fn cli(&self) -> Result<Found, ClaudeError> {
        let cached = lock(&self.cli).clone();
        // One stat: cheap enough to do in place.
        if let Some(f) = cached.filter(|f| discovery::is_executable(&f.path)) {
            return Ok(f);
        }
        let cmd = self.cfg.cmd.clone();
        let env = self.discovery_env();
        let found = tokio::task::spawn_blocking(move || discovery::discover(cmd.as_deref(), &env))
            .await
            .map_err(|e| ClaudeError::Cli(format!("Claude CLI discovery failed: {e}")))?
            .map_err(|nf| ClaudeError::Cli(nf.to_string()))?;
        *lock(&self.cli) = Some(found.clone());
        Ok(found)
    }

    fn forget_cli(&self) {
        lock(&self.cli).take();
    }

    /// The child's environment ([`child_env`]).
    fn child_env(&self, cli: &Path) -> Vec<(String, String)> {
        child_env(&self.cfg, cli)
    }

    /// Claude Code's configuration folder the CLI sees (where its conversations are):
    /// setup{claude.env}'s `CLAUDE_CONFIG_DIR`, else ours, else its home's `.claude`.
    pub fn claude_config_dir(&self) -> Option<PathBuf> {
        let env = match self.cfg.env.get("CLAUDE_CONFIG_DIR") {
            Some(v) => Some(std::ffi::OsString::from(v)),
            None => std::env::var_os("CLAUDE_CONFIG_DIR"),
        };
        let home = self.child_home();
        crate::conversations::config_dir_from(env.as_deref(), home.as_deref().map(Path::as_os_str))
    }

    /// The home folder the child sees ([`child_home`]).
    fn child_home(&self) -> Option<PathBuf> {
        child_home(&self.cfg)
    }

    /// The tools a run with these options may use, or why the options ask for more than the
    /// person allowed.
    pub fn narrow_tools(&self, options: &RunOptions) -> Result<Vec<String>, ClaudeError> {
        narrow_tools(&self.cfg.allowed_tools, options.allowed_tools.as_deref())
    }

    /// Runs the CLI once, in turn: waits for earlier calls, resumes the current session, records
    /// the outcome in the history. Never fails: problems come back as `success: false`.
    pub async fn execute(&self, req: ExecRequest) -> ExecResult {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        self.active.fetch_add(1, Ordering::SeqCst);
        let _active = ActiveGuard(self.active.clone());
        let rx = self.cancel_tx.subscribe();
        let cancelled = move || {
            let mut rx = rx.clone();
            async move {
                if rx.wait_for(|w| *w > seq).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        let tool = if req.file_path.is_some() {
            "execute_claude_with_context"
        } else {
            "execute_claude"
        };
        const CANCELLED_BEFORE: &str =
            "cancelled before it started (cancel_claude_execution / :ClaudeContext cancel)";
        // Whatever may be slow before the CLI starts (reading the context file: a FIFO, a slow
        // disk) happens before the run takes its place in the queue, and can be cancelled or
        // time out: it never holds the queue. A call without a context file has nothing to
        // wait for here, so it reaches the queue in the same poll, in call order.
        let prep_start = Instant::now();
        let prep = async {
            match &req.file_path {
                None => Ok(req.prompt.clone()),
                Some(fp) => self
                    .read_context(req.project_root.clone(), fp)
                    .await
                    .map(|(rel, content)| compose_with_context(&req.prompt, &rel, &content)),
            }
        };
        let stdin = tokio::select! {
            biased;
            _ = cancelled() => Err(ClaudeError::Stopped(CANCELLED_BEFORE.to_string())),
            r = tokio::time::timeout(req.timeout, prep) => r.unwrap_or_else(|_| {
                Err(ClaudeError::Stopped(format!(
                    "timed out after {} s (timeout) reading the context file '{}'",
                    fmt_secs(req.timeout),
                    req.file_path.as_deref().unwrap_or_default()
                )))
            }),
        };
        let prep_time = prep_start.elapsed();
        // Then the queue: the fair mutex serves calls in the order they reach it.
        let turn = match &stdin {
            Ok(_) => tokio::select! {
                biased;
                _ = cancelled() => None,
                g = self.queue.lock() => Some(g),
            },
            Err(_) => None,
        };
        let project = self.project(req.project_root.as_deref()).await;
        let state = project.state.clone();
        let timestamp = now_iso();
        // execution_time counts the preparation and the run, not the wait in the queue.
        let started = Instant::now()
            .checked_sub(prep_time)
            .unwrap_or_else(Instant::now);
        let (r, info) = match (&turn, stdin) {
            (_, Err(e)) => (Err(e), RunInfo::default()),
            (Some(_), Ok(stdin)) if *self.cancel_tx.borrow() <= seq => {
                self.run_once(&req, stdin, &state, &cancelled).await
            }
            _ => (
                Err(ClaudeError::Stopped(CANCELLED_BEFORE.to_string())),
                RunInfo::default(),
            ),
        };
        // Recorded before the turn passes on, so the next call resumes this run's session.
        let result = self.finish(&req, r, info, tool, timestamp, started, &state);
        drop(turn);
        self.persist_soon(&project);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        req: &ExecRequest,
        r: Result<String, ClaudeError>,
        info: RunInfo,
        tool: &str,
        timestamp: String,
        started: Instant,
        state: &Arc<Mutex<State>>,
    ) -> ExecResult {
        let execution_time = started.elapsed().as_secs_f64();
        let (response, error) = match r {
            Ok(text) => (Some(text), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let result = ExecResult {
            success: error.is_none(),
            prompt: req.prompt.clone(),
            response,
            execution_time,
            timestamp: timestamp.clone(),
            error,
            context_file: req.file_path.clone(),
        };
        let reply = info.reply.clone().unwrap_or_default();
        let usage = reply.usage.clone().unwrap_or_default();
        let mut st = lock(state);
        let epoch = st.epoch;
        let p = &mut st.p;
        if let Some(sid) = &info.new_session {
            // A reset or set during the run wins over the run's session.
            if info_epoch_matches(&info, epoch) {
                p.current_session_id = Some(sid.clone());
                p.session_cwd = info.session_cwd.clone();
            }
        } else if info.stale_session && p.current_session_id == info.resumed {
            p.current_session_id = None;
            p.session_cwd = None;
        }
        let c = &mut p.stats;
        let t = &mut c.totals;
        t.since.get_or_insert(timestamp);
        t.runs += 1;
        if result.success {
            t.successes += 1;
        } else {
            t.failures += 1;
        }
        t.total_cost_usd += reply.total_cost_usd.unwrap_or(0.0);
        t.input_tokens += usage.input_tokens;
        t.output_tokens += usage.output_tokens;
        t.cache_creation_input_tokens += usage.cache_creation_input_tokens;
        t.cache_read_input_tokens += usage.cache_read_input_tokens;
        if let Some(d) = reply.duration_ms {
            c.duration_ms_total += d;
            c.duration_ms_runs += 1;
        }
        c.execution_time_total += execution_time;
        p.push(HistoryEntry {
            result: result.clone(),
            tool: tool.into(),
            session_id: reply.session_id.clone(),
            resumed_session_id: info.resumed.clone(),
            total_cost_usd: reply.total_cost_usd,
            input_tokens: reply.usage.as_ref().map(|u| u.input_tokens),
            output_tokens: reply.usage.as_ref().map(|u| u.output_tokens),
            duration_ms: reply.duration_ms,
        });
        result
    }

    async fn run_once<F: std::future::Future<Output = ()>>(
        &self,
        req: &ExecRequest,
        stdin: String,
        state: &Arc<Mutex<State>>,
        cancelled: &impl Fn() -> F,
    ) -> (Result<String, ClaudeError>, RunInfo) {
        let mut info = RunInfo::default();
        // Discovery stats files on the blocking pool: cancellable like everything before the
        // process starts.
        let cli = tokio::select! {
            biased;
            _ = cancelled() => {
                return (
                    Err(ClaudeError::Stopped(
                        "cancelled before the Claude CLI started (cancel_claude_execution / \
                         :ClaudeContext cancel)"
                            .into(),
                    )),
                    info,
                )
            }
            c = self.cli() => match c {
                Ok(c) => c,
                Err(e) => return (Err(e), info),
            },
        };
        let (resume, epoch) = {
            let st = lock(state);
            (st.p.current_session_id.clone(), st.epoch)
        };
        // The project's own session, run in the project root: the CLI keeps sessions per
        // working directory, and the project root is the only one this state belongs to.
        let cwd = req.project_root.clone().filter(|d| d.is_dir());
        info.resumed = resume.clone();
        info.session_cwd = cwd.clone();
        info.epoch = Some(epoch);
        let tools = match self.narrow_tools(&req.options) {
            Ok(t) => t,
            Err(e) => return (Err(e), info),
        };
        let inv = runner::Invocation {
            program: cli.path.clone(),
            args: sub_agent_args(
                &self.cfg,
                &tools,
                &req.options,
                resume.as_deref(),
                req.project_root.as_deref(),
                self.child_home().as_deref(),
            ),
            env: self.child_env(&cli.path),
            cwd,
            stdin,
            timeout: req.timeout,
        };
        let out = match runner::run(inv, cancelled()).await {
            Ok(o) => o,
            Err(e) => return (Err(self.run_failed(e, &cli)), info),
        };
        let done = outcome::interpret(&out, resume.as_deref());
        info.stale_session = done.stale_session();
        info.new_session = done.new_session;
        info.reply = done.reply;
        let r = done.answer.map_err(ClaudeError::from);
        (r, info)
    }

    /// What a run that did not finish says (the CLI not started, lost, timed out or cancelled).
    fn run_failed(&self, e: runner::RunError, cli: &Found) -> ClaudeError {
        match e {
            runner::RunError::Spawn(e) => {
                self.forget_cli();
                ClaudeError::Cli(format!(
                    "cannot start the Claude CLI at {} (found via {}): {e}",
                    cli.path.display(),
                    cli.source
                ))
            }
            runner::RunError::Wait(e) => {
                ClaudeError::Cli(format!("lost track of the Claude CLI: {e}"))
            }
            runner::RunError::Timeout {
                timeout, stderr, ..
            } => {
                let tail = runner::tail_text(&stderr, 10, 1500);
                let mut msg = format!(
                    "Claude CLI timed out after {} s (timeout = {}); its process group was killed",
                    fmt_secs(timeout),
                    fmt_secs(timeout)
                );
                if !tail.is_empty() {
                    msg.push_str(&format!(". stderr: {tail}"));
                }
                ClaudeError::Stopped(msg)
            }
            runner::RunError::Cancelled { .. } => ClaudeError::Stopped(
                "cancelled (cancel_claude_execution / :ClaudeContext cancel); the Claude CLI's \
                 process group was killed"
                    .into(),
            ),
        }
    }

    /// Reads the context file: confined to the project root, size-limited, UTF-8. The caller
    /// ([`Manager::execute`]) runs it before the run joins the queue and drops it on cancel or
    /// timeout, so a slow read holds no other run.
    async fn read_context(
        &self,
        root: Option<PathBuf>,
        file_path: &str,
    ) -> Result<(String, String), ClaudeError> {
        let limit = self.cfg.max_context_bytes;
        let fp = file_path.to_string();
        let reader = self.context_reader.clone();
        tokio::task::spawn_blocking(move || match reader {
            Some(r) => r(root.as_deref(), &fp, limit),
            None => read_context_file(root.as_deref(), &fp, limit),
        })
        .await
        .map_err(|e| ClaudeError::ContextRead(e.to_string()))?
    }

    /// Finds the CLI afresh and runs `claude --version`.
    pub async fn test_cli(&self) -> CliTestResult {
        self.forget_cli();
        let cli = match self.cli().await {
            Ok(c) => c,
            Err(e) => {
                return CliTestResult {
                    success: false,
                    path: None,
                    source: None,
                    version: None,
                    error: Some(e.to_string()),
                }
            }
        };
        let inv = runner::Invocation {
            program: cli.path.clone(),
            args: vec!["--version".into()],
            env: self.child_env(&cli.path),
            cwd: None,
            stdin: String::new(),
            timeout: VERSION_TIMEOUT,
        };
        let mut r = CliTestResult {
            success: false,
            path: Some(cli.path.display().to_string()),
            source: Some(cli.source.into()),
            version: None,
            error: None,
        };
        match runner::run(inv, std::future::pending()).await {
            Ok(o) if o.status.success() => {
                let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
                r.success = !v.is_empty();
                if v.is_empty() {
                    r.error = Some("`claude --version` printed nothing".into());
                } else {
                    r.version = Some(v);
                }
            }
            Ok(o) => {
                r.error = Some(format!(
                    "`{} --version` {}: {}",
                    cli.path.display(),
                    describe_status(&o.status),
                    runner::tail_text(&o.stderr, 10, 1500)
                ))
            }
            Err(runner::RunError::Timeout { .. }) => {
                r.error = Some(format!(
                    "`{} --version` did not answer within {} s",
                    cli.path.display(),
                    VERSION_TIMEOUT.as_secs()
                ))
            }
            Err(e) => {
                self.forget_cli();
                r.error = Some(format!("cannot run {}: {e:?}", cli.path.display()))
            }
        }
        r
    }

    /// Cancels the run in progress and every run waiting for its turn.
    pub fn cancel(&self) -> CancelResult {
        let n = self.active.load(Ordering::SeqCst);
        self.cancel_tx.send_replace(self.seq.load(Ordering::SeqCst));
        CancelResult {
            success: true,
            cancelled: n,
            message: if n == 0 {
                "No Claude run was in progress".into()
            } else {
                format!("Cancelled {n} Claude run{}", if n == 1 { "" } else { "s" })
            },
        }
    }

    /// Runs in progress or waiting.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }
}

fn info_epoch_matches(info: &RunInfo, epoch: u64) -> bool {
    info.epoch.is_none_or(|e| e == epoch)
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s:.1}")
    }
}
