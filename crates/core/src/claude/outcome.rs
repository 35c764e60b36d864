//! What a finished CLI run means: its stdout (the JSON answer, or the `--verbose` array of
//! messages, or result lines after a warning), its stderr and its exit status, turned into the
//! answer text or a typed failure. A pure function: no process, no state, no clock.

use super::reply::{self, Reply};
use super::runner::{self, Outcome};
use std::process::ExitStatus;

/// Why a run that did finish gave no answer. The text names the exit status and ends with the
/// tail of the CLI's stderr, when it printed any.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CliFailure {
    /// The JSON answer came without its `result` field.
    #[error("Claude CLI answered without a \"result\" field ({status}){}", stderr_part(.stderr))]
    NoResult { status: String, stderr: String },
    /// The CLI said `is_error: true`.
    #[error(
        "Claude CLI reported an error ({status}{}): {}{}",
        .subtype.as_deref().map(|s| format!(", {s}")).unwrap_or_default(),
        .details.as_deref().unwrap_or("no details"),
        stderr_part(.stderr)
    )]
    Reported {
        status: String,
        subtype: Option<String>,
        details: Option<String>,
        stderr: String,
    },
    /// The session passed to `--resume` is gone; the caller forgets it.
    #[error(
        "Claude CLI {status}: the stored session {session} no longer exists, so it was reset; \
         run again to start a new conversation{}",
        stderr_part(.stderr)
    )]
    StaleSession {
        status: String,
        session: String,
        stderr: String,
    },
    /// A failed exit without a JSON answer.
    #[error("Claude CLI {status}{}", stderr_part(.stderr))]
    Exited { status: String, stderr: String },
    /// A successful exit whose stdout holds no JSON answer.
    #[error(
        "cannot parse the Claude CLI output as JSON (is `--output-format json` among \
         setup{{claude.args}}?; {status}){}: {}{}",
        if *.truncated { " (output truncated)" } else { "" },
        if .shown.is_empty() { "(empty output)" } else { .shown.as_str() },
        stderr_part(.stderr)
    )]
    Unparsable {
        status: String,
        truncated: bool,
        shown: String,
        stderr: String,
    },
}

fn stderr_part(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(". stderr: {tail}")
    }
}

/// A finished run, interpreted.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreted {
    /// The answer text, or why there is none.
    pub answer: Result<String, CliFailure>,
    /// The CLI's JSON answer, when it printed one (cost, usage and duration come from it).
    pub reply: Option<Reply>,
    /// The session the CLI reported, when its id is one `--resume` accepts.
    pub new_session: Option<String>,
}

impl Interpreted {
    /// The resumed session no longer exists.
    pub fn stale_session(&self) -> bool {
        matches!(self.answer, Err(CliFailure::StaleSession { .. }))
    }
}

/// How a process ended, in words: `exited with status 1`, `was killed by signal 9`.
pub fn describe_status(s: &ExitStatus) -> String {
    if let Some(c) = s.code() {
        return format!("exited with status {c}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    "ended abnormally".into()
}

/// Interprets a finished run; `resumed` is the session it was asked to resume.
pub fn interpret(out: &Outcome, resumed: Option<&str>) -> Interpreted {
    let reply = reply::parse(&out.stdout);
    let new_session = reply
        .as_ref()
        .and_then(|r| r.session_id.as_deref())
        .filter(|s| super::args::valid_session_id(s))
        .map(str::to_string);
    let stderr = runner::tail_text(&out.stderr, 10, 1500);
    let status = describe_status(&out.status);
    let answer = match &reply {
        Some(rep) if out.status.success() && !rep.is_error => match &rep.result {
            Some(text) => Ok(text.clone()),
            None => Err(CliFailure::NoResult { status, stderr }),
        },
        Some(rep) if rep.is_error => Err(CliFailure::Reported {
            status,
            subtype: rep.subtype.clone(),
            details: rep.result.clone(),
            stderr,
        }),
        _ if !out.status.success() => match resumed {
            Some(session) if stderr.contains("No conversation found") => {
                Err(CliFailure::StaleSession {
                    status,
                    session: session.to_string(),
                    stderr,
                })
            }
            _ => Err(CliFailure::Exited { status, stderr }),
        },
        _ => Err(CliFailure::Unparsable {
            status,
            truncated: out.stdout_truncated,
            shown: runner::tail_text(&out.stdout, 5, 300),
            stderr,
        }),
    };
    Interpreted {
        answer,
        reply,
        new_session,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// A run that exited with `code` (or was killed by `signal`) after printing these.
    fn run(code: i32, signal: Option<i32>, stdout: &str, stderr: &str) -> Outcome {
        Outcome {
            status: ExitStatus::from_raw(signal.unwrap_or(code << 8)),
            stdout: stdout.as_bytes().to_vec(),
            stdout_truncated: false,
            stderr: stderr.as_bytes().to_vec(),
            pgid: 1,
        }
    }

    #[test]
    fn a_successful_answer_gives_its_text_and_session() {
        let i = interpret(
            &run(
                0,
                None,
                r#"{"type":"result","result":"4","session_id":"abc-1","total_cost_usd":0.5}"#,
                "",
            ),
            None,
        );
        assert_eq!(i.answer, Ok("4".to_string()));
        assert_eq!(i.new_session.as_deref(), Some("abc-1"));
        assert_eq!(i.reply.unwrap().total_cost_usd, Some(0.5));
    }

    #[test]
    fn the_verbose_array_and_result_lines_after_a_warning_are_answers() {
        let i = interpret(
            &run(
                0,
                None,
                r#"[{"type":"system"},{"type":"result","result":"x","session_id":"s2"}]"#,
                "",
            ),
            None,
        );
        assert_eq!(i.answer, Ok("x".to_string()));
        let i = interpret(
            &run(
                0,
                None,
                "warning: old node\n{\"result\":\"ok\",\"session_id\":\"s\"}\n",
                "",
            ),
            None,
        );
        assert_eq!(i.answer, Ok("ok".to_string()));
    }

    #[test]
    fn a_session_id_not_fit_for_resume_is_not_kept() {
        let i = interpret(
            &run(0, None, r#"{"result":"ok","session_id":"--evil"}"#, ""),
            None,
        );
        assert_eq!(i.answer, Ok("ok".to_string()));
        assert_eq!(i.new_session, None);
    }

    #[test]
    fn an_answer_without_result_says_so_with_the_stderr_tail() {
        let i = interpret(&run(0, None, r#"{"session_id":"s"}"#, "oops\n"), None);
        let e = i.answer.unwrap_err();
        assert!(matches!(e, CliFailure::NoResult { .. }));
        assert_eq!(
            e.to_string(),
            "Claude CLI answered without a \"result\" field (exited with status 0). stderr: oops"
        );
    }

    #[test]
    fn a_reported_error_names_its_subtype_and_details() {
        let i = interpret(
            &run(
                1,
                None,
                r#"{"is_error":true,"subtype":"error_max_turns","result":"too long"}"#,
                "",
            ),
            None,
        );
        assert_eq!(
            i.answer.unwrap_err().to_string(),
            "Claude CLI reported an error (exited with status 1, error_max_turns): too long"
        );
        let i = interpret(
            &run(0, None, r#"{"is_error":true,"session_id":"s"}"#, ""),
            None,
        );
        assert_eq!(
            i.answer.unwrap_err().to_string(),
            "Claude CLI reported an error (exited with status 0): no details"
        );
    }

    #[test]
    fn a_missing_resumed_session_is_stale_only_when_one_was_resumed() {
        let out = run(1, None, "", "No conversation found with session ID: abc\n");
        let i = interpret(&out, Some("abc"));
        assert!(i.stale_session());
        assert!(i
            .answer
            .unwrap_err()
            .to_string()
            .starts_with("Claude CLI exited with status 1: the stored session abc no longer"));
        let i = interpret(&out, None);
        assert!(!i.stale_session());
        assert_eq!(
            i.answer.unwrap_err(),
            CliFailure::Exited {
                status: "exited with status 1".into(),
                stderr: "No conversation found with session ID: abc".into(),
            }
        );
    }

    #[test]
    fn a_killed_run_names_the_signal() {
        let i = interpret(&run(0, Some(9), "", ""), None);
        assert_eq!(
            i.answer.unwrap_err().to_string(),
            "Claude CLI was killed by signal 9"
        );
    }

    #[test]
    fn output_that_is_not_json_is_shown_and_marked_truncated() {
        let i = interpret(&run(0, None, "", ""), None);
        assert_eq!(
            i.answer.unwrap_err().to_string(),
            "cannot parse the Claude CLI output as JSON (is `--output-format json` among \
             setup{claude.args}?; exited with status 0): (empty output)"
        );
        let mut out = run(0, None, "plain text", "");
        out.stdout_truncated = true;
        let e = interpret(&out, None).answer.unwrap_err().to_string();
        assert!(
            e.ends_with("exited with status 0) (output truncated): plain text"),
            "{e}"
        );
    }
}
