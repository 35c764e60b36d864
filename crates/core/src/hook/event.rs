//! The hook events: one type, one list ([`Event::ALL`]). Everything about an event that is not
//! what it does to a session's state (`turns::on_event`) is answered here, by a `match` the
//! compiler makes complete: its name, whether and how the plugin registers it with Claude Code
//! (the terminal's `--settings`, `lua/claude_context/sessions/hooks.lua`, asks the library for the list;
//! the Claude Code plugin's `hooks.json` is [`plugin_hooks`], tied by
//! `crates/core/tests/it/facts.rs`), what it does to a turn's checkpoints, and whether it is a
//! tool call's own hook. Adding an event: ARCHITECTURE.md, "Adding a hook event".

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One Claude Code hook event (`hook_event_name`). Its name on the wire is the variant's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    /// Never registered: the bridge records it itself when the person declined a reviewed tool
    /// (a plan, a question).
    PostToolUseFailure,
    PermissionRequest,
    Notification,
    Stop,
    SessionEnd,
}

/// What an event does to its session's turn checkpoints (`turns::checkpoints::on_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStep {
    /// A new turn, from a start checkpoint (the one that never ended ends).
    Start,
    /// Before a tool: an edit tool's file is the turn's and is captured.
    BeforeTool,
    /// After a tool: what a Bash call changed (Claude Code's report) is the turn's.
    AfterTool,
    /// The turn ends: its end checkpoint.
    End,
    Nothing,
}

/// How the plugin registers an event with Claude Code when it runs the relay's hook mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// Only for the edit tools ([`super::EDIT_TOOLS`]) instead of every tool (or no matcher).
    pub edit_tools_only: bool,
    /// Claude Code goes on without waiting (an event that only reports).
    pub report_only: bool,
}

const PLAIN: Registration = Registration {
    edit_tools_only: false,
    report_only: false,
};

impl Event {
    /// Every event, in the order the plugin registers them.
    pub const ALL: [Event; 9] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::PermissionRequest,
        Event::Notification,
        Event::Stop,
        Event::SessionEnd,
    ];

    /// Its name (`hook_event_name`, the hook command's argument).
    pub fn as_str(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::PermissionRequest => "PermissionRequest",
            Event::Notification => "Notification",
            Event::Stop => "Stop",
            Event::SessionEnd => "SessionEnd",
        }
    }

    /// The event named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// How the plugin registers it; `None`: it does not (the bridge records it itself).
    pub fn registration(self) -> Option<Registration> {
        match self {
            Event::PreToolUse => Some(Registration {
                edit_tools_only: true,
                ..PLAIN
            }),
            Event::PostToolUse => Some(Registration {
                report_only: true,
                ..PLAIN
            }),
            Event::PostToolUseFailure => None,
            Event::SessionStart
            | Event::UserPromptSubmit
            | Event::PermissionRequest
            | Event::Notification
            | Event::Stop
            | Event::SessionEnd => Some(PLAIN),
        }
    }

    /// What it does to its session's turn checkpoints.
    pub fn turn_step(self) -> TurnStep {
        match self {
            Event::UserPromptSubmit => TurnStep::Start,
            // Before the edit (Claude waits). Not after it: a PostToolUse Claude did not wait for
            // can come after the next prompt (a new turn).
            Event::PreToolUse => TurnStep::BeforeTool,
            Event::PostToolUse => TurnStep::AfterTool,
            Event::Stop | Event::SessionEnd => TurnStep::End,
            Event::SessionStart
            | Event::PostToolUseFailure
            | Event::PermissionRequest
            | Event::Notification => TurnStep::Nothing,
        }
    }

    /// Whether it is a tool call's own hook, before or after the tool: it names the tool and its
    /// file (`tool_call` to the editor), and only these come as calls of the hook tool
    /// ([`super::MCP_TOOL`]).
    pub fn is_tool_call(self) -> bool {
        match self {
            Event::PreToolUse | Event::PostToolUse => true,
            Event::SessionStart
            | Event::UserPromptSubmit
            | Event::PostToolUseFailure
            | Event::PermissionRequest
            | Event::Notification
            | Event::Stop
            | Event::SessionEnd => false,
        }
    }

    /// The events the plugin registers, in order.
    pub fn registered() -> impl Iterator<Item = (Event, Registration)> {
        Event::ALL
            .into_iter()
            .filter_map(|e| e.registration().map(|r| (e, r)))
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the Claude Code plugin's hooks file is, in this repository.
pub const PLUGIN_HOOKS_FILE: &str = "claude-plugin/plugin/hooks/hooks.json";

/// The text of [`PLUGIN_HOOKS_FILE`], generated from [`Event::ALL`] (`make hooks-json` writes
/// it; `crates/core/tests/it/facts.rs` fails when the file differs).
pub fn plugin_hooks_file() -> String {
    let doc = json!({
        "description": "claude-context.nvim: tells the Neovim bridge (when one runs) about prompts, edits and turn ends",
        "hooks": plugin_hooks(),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// The `hooks` of the Claude Code plugin's [`PLUGIN_HOOKS_FILE`]: each registered event runs the
/// plugin's relay (`bin/relay hook <Event>`).
pub fn plugin_hooks() -> Value {
    let mut hooks = serde_json::Map::new();
    for (e, r) in Event::registered() {
        let mut hook = json!({
            "type": "command",
            "command": format!("\"${{CLAUDE_PLUGIN_ROOT}}/bin/relay\" hook {e}"),
            "timeout": 10,
        });
        if r.report_only {
            hook["async"] = Value::Bool(true);
        }
        let mut entry = serde_json::Map::new();
        if r.edit_tools_only {
            entry.insert("matcher".into(), super::EDIT_TOOLS.join("|").into());
        }
        entry.insert("hooks".into(), json!([hook]));
        hooks.insert(e.as_str().into(), json!([entry]));
    }
    Value::Object(hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_read_back_from_its_name_and_nothing_else_is() {
        for e in Event::ALL {
            assert_eq!(Event::parse(e.as_str()), Some(e));
            let wire = serde_json::to_value(e).unwrap();
            assert_eq!(wire, e.as_str());
            assert_eq!(serde_json::from_value::<Event>(wire).unwrap(), e);
        }
        for other in ["", "stop", "Other", "PreToolUse "] {
            assert_eq!(Event::parse(other), None, "{other:?}");
        }
    }
}
