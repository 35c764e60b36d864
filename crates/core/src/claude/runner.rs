//! Running one CLI process: its own process group, the prompt on stdin, stdout collected (with a
//! cap), the tail of stderr kept, and on timeout or cancellation the whole group killed.
//!
//! The group is also killed when the future is dropped half-way (a client that went away), so
//! no CLI process outlives the call that started it.

use std::future::Future;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// The most stdout kept (the JSON answer); anything beyond is dropped and reported.
pub const MAX_STDOUT: usize = 64 << 20;
/// How much of stderr's end is kept for error messages.
pub const STDERR_TAIL: usize = 16 << 10;
/// After SIGTERM to the group, how long before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(300);
/// After the CLI exits, how long its pipes may stay open (a straggling grandchild) before the
/// rest of its group is killed.
const PIPE_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Set on top of the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub stdin: String,
    pub timeout: Duration,
}

#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr: Vec<u8>,
    /// The process group id (= the CLI's pid).
    pub pgid: i32,
}

#[derive(Debug)]
pub enum RunError {
    Spawn(std::io::Error),
    Wait(std::io::Error),
    Timeout {
        timeout: Duration,
        stderr: Vec<u8>,
        pgid: i32,
    },
    Cancelled {
        pgid: i32,
    },
}

/// Kills the process group (Unix) or job object (Windows) when dropped while armed.
struct GroupGuard {
    /// The process group to signal (Unix only; Windows uses `job`).
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: i32,
    armed: bool,
    #[cfg(windows)]
    job: Option<job::Job>,
}

impl GroupGuard {
    fn signal(&self, sig: i32) {
        #[cfg(unix)]
        if self.pgid > 0 {
            // SAFETY: killpg only sends a signal; the group is the one we created for the CLI.
            unsafe {
                libc::killpg(self.pgid, sig);
            }
        }
        // Windows has no SIGTERM for console programs: both signals end every process of the job.
        #[cfg(windows)]
        if let Some(job) = &self.job {
            let _ = sig;
            job.terminate();
        }
        #[cfg(not(any(unix, windows)))]
        let _ = sig;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.signal(SIGKILL);
        }
    }
}

/// Windows: the CLI and everything it starts run in a job object, the equivalent of the Unix
/// process group. Terminating the job ends the whole tree; the job is also set to kill its
/// processes when its last handle closes, so a dropped guard cannot leave any behind.
#[cfg(windows)]
mod job {
    use std::os::windows::io::RawHandle;
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    };

    /// An owned job object handle.
    pub struct Job(HANDLE);

    // SAFETY: a job object handle may be used and closed from any thread.
    unsafe impl Send for Job {}
    // SAFETY: as above; TerminateJobObject is thread-safe.
    unsafe impl Sync for Job {}

    impl Job {
        /// A new job holding `process`; None when Windows refuses (then only the CLI itself is
        /// killed, by `start_kill`).
        pub fn for_process(process: RawHandle) -> Option<Job> {
            // SAFETY: plain Win32 calls with valid arguments; every failure is checked and the
            // handle is owned by the returned Job (closed on drop).
            unsafe {
                let h = CreateJobObjectW(std::ptr::null(), std::ptr::null());
                if h.is_null() {
                    return None;
                }
                let job = Job(h);
                let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                let ok = SetInformationJobObject(
                    job.0,
                    JobObjectExtendedLimitInformation,
                    (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                    std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                );
                if ok == 0 || AssignProcessToJobObject(job.0, process as HANDLE) == 0 {
                    return None;
                }
                Some(job)
            }
        }

        /// Ends every process in the job.
        pub fn terminate(&self) {
            // SAFETY: the handle is valid while self lives.
            unsafe {
                TerminateJobObject(self.0, 1);
            }
        }
    }

    impl Drop for Job {
        fn drop(&mut self) {
            // SAFETY: the handle is ours and closed once.
            unsafe {
                CloseHandle(self.0);
            }
        }
    }
}

#[cfg(unix)]
const SIGKILL: i32 = libc::SIGKILL;
#[cfg(unix)]
const SIGTERM: i32 = libc::SIGTERM;
#[cfg(not(unix))]
const SIGKILL: i32 = 9;
#[cfg(not(unix))]
const SIGTERM: i32 = 15;

async fn read_capped<R: AsyncRead + Unpin>(mut r: R, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut truncated = false;
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(out.len());
                if n > room {
                    truncated = true;
                }
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (out, truncated)
}

async fn read_tail<R: AsyncRead + Unpin>(mut r: R, keep: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.len() > 2 * keep {
                    out.drain(..out.len() - keep);
                }
            }
        }
    }
    if out.len() > keep {
        out.drain(..out.len() - keep);
    }
    out
}

/// Runs the invocation to completion, a timeout, or `cancel` resolving.
pub async fn run(inv: Invocation, cancel: impl Future<Output = ()>) -> Result<Outcome, RunError> {
    let (mut child, mut guard) = spawn(&inv)?;
    let pgid = guard.pgid;
    let pipes = Pipes::start(&mut child, inv.stdin);
    enum End {
        Exited(std::io::Result<ExitStatus>),
        Timeout,
        Cancelled,
    }
    let end = tokio::select! {
        r = child.wait() => End::Exited(r),
        _ = tokio::time::sleep(inv.timeout) => End::Timeout,
        _ = cancel => End::Cancelled,
    };
    let status = match end {
        End::Exited(r) => r,
        End::Timeout => {
            let stderr = stop(&mut guard, &mut child, pipes).await;
            return Err(RunError::Timeout {
                timeout: inv.timeout,
                stderr,
                pgid,
            });
        }
        End::Cancelled => {
            stop(&mut guard, &mut child, pipes).await;
            return Err(RunError::Cancelled { pgid });
        }
    };
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            guard.signal(SIGKILL);
            guard.armed = false;
            return Err(RunError::Wait(e));
        }
    };
    let (stdout, stdout_truncated, stderr) = pipes.finish(&mut guard).await;
    Ok(Outcome {
        status,
        stdout,
        stdout_truncated,
        stderr,
        pgid,
    })
}

/// Starts the CLI in a process group of its own, and the guard that ends the group.
fn spawn(inv: &Invocation) -> Result<(tokio::process::Child, GroupGuard), RunError> {
    let mut cmd = tokio::process::Command::new(&inv.program);
    cmd.args(&inv.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &inv.env {
        cmd.env(k, v);
    }
    if let Some(cwd) = &inv.cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let child = cmd.spawn().map_err(RunError::Spawn)?;
    let pgid = child.id().map(|p| p as i32).unwrap_or(0);
    let guard = GroupGuard {
        pgid,
        armed: true,
        // A process the CLI starts before this assignment is not in the job (a window of
        // microseconds; the CLI starts nothing before reading its prompt).
        #[cfg(windows)]
        job: child.raw_handle().and_then(job::Job::for_process),
    };
    Ok((child, guard))
}

/// The tasks writing the prompt to the CLI's stdin and reading its stdout and stderr.
struct Pipes {
    writer: tokio::task::JoinHandle<()>,
    out_task: tokio::task::JoinHandle<(Vec<u8>, bool)>,
    err_task: tokio::task::JoinHandle<Vec<u8>>,
}

impl Pipes {
    fn start(child: &mut tokio::process::Child, prompt: String) -> Pipes {
        let stdin = child.stdin.take();
        let writer = tokio::spawn(async move {
            if let Some(mut w) = stdin {
                // A CLI that exits without reading stdin gives EPIPE: not our error to report.
                let _ = w.write_all(prompt.as_bytes()).await;
                let _ = w.shutdown().await;
            }
        });
        let stdout = child.stdout.take();
        let out_task = tokio::spawn(async move {
            match stdout {
                Some(s) => read_capped(s, MAX_STDOUT).await,
                None => (Vec::new(), false),
            }
        });
        let stderr = child.stderr.take();
        let err_task = tokio::spawn(async move {
            match stderr {
                Some(s) => read_tail(s, STDERR_TAIL).await,
                None => Vec::new(),
            }
        });
        Pipes {
            writer,
            out_task,
            err_task,
        }
    }

    /// What the CLI printed (stdout, whether it was cut, the tail of stderr), once it exited.
    async fn finish(self, guard: &mut GroupGuard) -> (Vec<u8>, bool, Vec<u8>) {
        // The CLI is gone; its pipes close once every process that inherited them is gone too.
        let pipes = async { (self.out_task.await, self.err_task.await) };
        tokio::pin!(pipes);
        let (out, err) = match tokio::time::timeout(PIPE_GRACE, &mut pipes).await {
            Ok(r) => r,
            Err(_) => {
                // A grandchild still holds a pipe: the group still has members, so its id is
                // still ours to signal.
                guard.signal(SIGKILL);
                pipes.await
            }
        };
        guard.armed = false;
        self.writer.abort();
        let (stdout, truncated) = out.unwrap_or_default();
        (stdout, truncated, err.unwrap_or_default())
    }
}

/// Ends the CLI and its group (SIGTERM, then SIGKILL after a grace); returns the tail of its
/// stderr read so far.
async fn stop(guard: &mut GroupGuard, child: &mut tokio::process::Child, pipes: Pipes) -> Vec<u8> {
    guard.signal(SIGTERM);
    if tokio::time::timeout(TERM_GRACE, child.wait())
        .await
        .is_err()
    {
        guard.signal(SIGKILL);
    }
    // Whatever else is left of the group (children that ignore SIGTERM) goes too; the direct
    // kill covers a CLI that somehow left its group.
    guard.signal(SIGKILL);
    let _ = child.start_kill();
    let _ = child.wait().await;
    guard.armed = false;
    pipes.writer.abort();
    pipes.out_task.abort();
    tokio::time::timeout(Duration::from_millis(200), pipes.err_task)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// The last `lines` lines of `bytes` (lossy UTF-8), at most `chars` characters, trimmed.
pub fn tail_text(bytes: &[u8], lines: usize, chars: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = s.trim_end().lines().collect();
    let t = all[all.len().saturating_sub(lines)..].join("\n");
    let count = t.chars().count();
    if count > chars {
        let skip = count - chars;
        let cut: String = t.chars().skip(skip).collect();
        format!("…{}", cut.trim())
    } else {
        t.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail_text(b"a\nb\nc\nd\n", 2, 100), "c\nd");
        assert_eq!(tail_text(b"a\nb", 5, 100), "a\nb");
        assert_eq!(tail_text(b"", 5, 100), "");
        assert_eq!(tail_text(b"abcdef", 5, 3), "…def");
    }
}
