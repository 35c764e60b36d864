//! The command line of the edit-in-place process (`:ClaudeContext edit`, lua/claude_context/edit/):
//! one warm Claude Code process that reads user messages as stream-json on stdin and prints its
//! answers as stream-json, text deltas included.
//!
//! It is the sub-agent's command line ([`sub_agent_args`]) with the read tools only: it may read
//! the project (Read, Grep, Glob, each only when the person's `claude.allowed_tools` allows it)
//! and nothing more, under the same confinement. Its answer is text the editor applies; the
//! process writes nothing itself. It keeps no conversation on disk unless the person asks
//! (`edit.persist`).

use super::args::{
    child_env, child_home, narrow_tools, sub_agent_args, RunOptions, FILE_READ_TOOLS,
};
use crate::config::ClaudeConfig;
use std::path::Path;

/// The flags the edit process needs to speak stream-json both ways, deltas included. The
/// person's own `--output-format`/`--input-format` in `claude.args` (a one-shot run's JSON) give
/// way to these.
pub const STREAM_FLAGS: [&str; 4] = [
    "--input-format=stream-json",
    "--output-format=stream-json",
    "--verbose",
    "--include-partial-messages",
];

/// The flag that keeps the conversation off the disk.
pub const NO_PERSISTENCE: &str = "--no-session-persistence";

/// How the edit process is started: its arguments and the environment on top of the editor's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EditCommand {
    /// The arguments after the program.
    pub args: Vec<String>,
    /// Environment variables to set (setup{claude.env}, PATH with the CLI's folder).
    pub env: Vec<(String, String)>,
}

/// The read tools the person allows (all three by default; none when they allow none).
pub fn edit_tools(cfg: &ClaudeConfig) -> Vec<String> {
    FILE_READ_TOOLS
        .iter()
        .map(|t| t.to_string())
        .filter(|t| narrow_tools(&cfg.allowed_tools, Some(std::slice::from_ref(t))).is_ok())
        .collect()
}

/// The person's `claude.args` without the format flags the edit process sets itself (and
/// their values when given as the next argument).
fn without_formats(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "--output-format" || a == "--input-format" {
            skip = true;
            continue;
        }
        if a.starts_with("--output-format=") || a.starts_with("--input-format=") {
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// The edit process's command for the CLI at `cli`, run in `root` (the project): the
/// sub-agent's confinement with the read tools, stream-json both ways, and
/// `--no-session-persistence` unless `persist`.
pub fn edit_command(
    cfg: &ClaudeConfig,
    cli: &Path,
    root: Option<&Path>,
    persist: bool,
) -> EditCommand {
    let cfg = ClaudeConfig {
        args: without_formats(&cfg.args),
        ..cfg.clone()
    };
    let tools = edit_tools(&cfg);
    let home = child_home(&cfg);
    let mut args = sub_agent_args(
        &cfg,
        &tools,
        &RunOptions::default(),
        None,
        root,
        home.as_deref(),
    );
    args.extend(STREAM_FLAGS.iter().map(|f| f.to_string()));
    if !persist {
        args.push(NO_PERSISTENCE.into());
    }
    EditCommand {
        args,
        env: child_env(&cfg, cli),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(cfg: &ClaudeConfig, persist: bool) -> Vec<String> {
        edit_command(
            cfg,
            Path::new("/opt/cc/claude"),
            Some(Path::new("/w")),
            persist,
        )
        .args
    }

    /// The attack: an edit whose prompt (repository text) asks the model to run a command or
    /// write a file. The process gets the read tools only, confined to the project.
    #[test]
    fn the_edit_process_reads_the_project_and_nothing_more() {
        let a = cmd(&ClaudeConfig::default(), false);
        assert!(a.contains(&"--tools=Read,Grep,Glob".to_string()), "{a:?}");
        assert!(
            a.contains(&"--allowedTools=Read(//w/**)".to_string()),
            "{a:?}"
        );
        assert!(a.contains(&"--permission-mode=dontAsk".to_string()));
        assert!(a.contains(&"--strict-mcp-config".to_string()));
        assert!(a.iter().any(|x| x.starts_with("--settings=")));
        for f in STREAM_FLAGS {
            assert!(a.contains(&f.to_string()), "{f} in {a:?}");
        }
        // The default args' one-shot JSON output gives way to stream-json.
        assert!(
            !a.iter().any(|x| x == "--output-format" || x == "json"),
            "{a:?}"
        );
        assert!(a.contains(&NO_PERSISTENCE.to_string()));
        assert!(!cmd(&ClaudeConfig::default(), true).contains(&NO_PERSISTENCE.to_string()));
    }

    #[test]
    fn tools_the_person_widened_are_not_given_to_the_edit() {
        let cfg = ClaudeConfig {
            allowed_tools: vec!["*".into()],
            args: vec!["--output-format=json".into(), "--model=opus".into()],
            ..ClaudeConfig::default()
        };
        let a = cmd(&cfg, false);
        assert!(a.contains(&"--tools=Read,Grep,Glob".to_string()), "{a:?}");
        assert!(a.contains(&"--model=opus".to_string()));
        assert!(!a.contains(&"--output-format=json".to_string()));
        // The person allows Read only: the edit gets Read only.
        let cfg = ClaudeConfig {
            allowed_tools: vec!["Read".into(), "Bash".into()],
            ..ClaudeConfig::default()
        };
        assert!(cmd(&cfg, false).contains(&"--tools=Read".to_string()));
        // None at all.
        let cfg = ClaudeConfig {
            allowed_tools: vec![],
            ..ClaudeConfig::default()
        };
        assert!(cmd(&cfg, false).contains(&"--tools=".to_string()));
    }

    #[test]
    fn the_cli_folder_joins_path() {
        let c = edit_command(
            &ClaudeConfig::default(),
            Path::new("/opt/cc/claude"),
            None,
            false,
        );
        let path = c.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v);
        assert!(path.is_some_and(|p| p.ends_with(":/opt/cc")), "{:?}", c.env);
    }
}
