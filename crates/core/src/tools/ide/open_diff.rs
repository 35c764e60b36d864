//! `openDiff` — show the proposed contents of a file against the file, in a new tab, and wait
//! until the person decides (without blocking the editor or other calls: the Lua handler keeps
//! its `respond` and calls it later). Accepting (`:w` in the proposal, or
//! `:ClaudeContext accept`) answers `FILE_SAVED` + the final contents, the person's edits to
//! the proposal included; Claude Code then writes the file. Rejecting (`:q`, or
//! `:ClaudeContext reject`) answers `DIFF_REJECTED` + the tab name. When the client goes away
//! first, the wait is cancelled and the view closes. Handler: `lua/claude_context/ide/open_diff.lua`.
//!
//! Nothing that grows with the file happens on Neovim's main thread: here, on the bridge's
//! threads, the file on disk is read, both sides are split into lines and the hunks computed
//! ([`crate::proposal`]); the editor gets a summary and pulls the lines a slice at a time.
//! Accepting an unedited proposal answers with the text Claude sent, kept here; an edited one's
//! lines come back in slices and are joined here.

use crate::editor::methods;
use crate::tools::ide::forward;
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Args {
    /// The file the proposal changes (it need not exist yet: a new file).
    pub old_file_path: String,
    /// Where the proposal goes (Claude Code sends the same path).
    pub new_file_path: String,
    /// The complete proposed contents.
    pub new_file_contents: String,
    /// The name of the diff view; `close_tab` closes it by this name.
    pub tab_name: String,
}

/// The person's decision, as the Lua handler reports it. `FILE_SAVED` carries the contents,
/// or says where they are: `unchanged` (the proposal as sent), `pushed` (the lines collected
/// into the prepared proposal, joined with `eol` / `crlf`) or `take` (the file on disk with
/// only those hunks of the proposal: a partial accept).
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "result")]
enum Decision {
    #[serde(rename = "FILE_SAVED")]
    Saved {
        #[serde(default)]
        contents: Option<String>,
        #[serde(default)]
        unchanged: bool,
        #[serde(default)]
        pushed: bool,
        /// A partial accept of an unedited proposal: the hunks (0-based) to apply.
        #[serde(default)]
        take: Option<Vec<usize>>,
        #[serde(default)]
        eol: bool,
        #[serde(default)]
        crlf: bool,
    },
    #[serde(rename = "DIFF_REJECTED")]
    Rejected { tab_name: String },
}

/// The door rule: on `/mcp`, IDE plumbing: neither listed nor callable.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::IdeOnly;

pub fn def() -> ToolDef {
    ToolDef {
        name: "openDiff",
        aliases: &[],
        description: "Show proposed contents of a file as a diff in the editor and wait for the \
                      user: FILE_SAVED plus the final contents when accepted (with any edits the \
                      user made), DIFF_REJECTED plus the tab name when rejected.",
        input_schema: schema_of::<Args>(),
        output_schema: None,
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("openDiff", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    if args.tab_name.is_empty() {
        return crate::tools::ready(Err(ToolError::InvalidParams(
            "invalid arguments for openDiff: tab_name must not be empty".into(),
        )));
    }
    // closeAllDiffTabs must not answer "nothing open" from the snapshot while this call may
    // still open a view.
    let on_its_way = ctx.snapshot.diff_call();
    Box::pin(async move {
        let _on_its_way = on_its_way;
        let Args {
            old_file_path,
            new_file_path,
            new_file_contents,
            tab_name,
        } = args;
        // As the Lua side's util.abspath makes it (file:// decoded, ~ expanded, relative to the
        // editor's directory, . and .. folded): the file read here is the one the editor shows.
        let old_path = PathBuf::from(crate::editor::abspath(
            &old_file_path,
            ctx.editor_state().cwd.as_deref(),
        ));
        // Reading, splitting and diffing megabytes: on the blocking pool.
        let prepared = crate::tools::on_blocking_pool(move || {
            crate::proposal::prepare(&old_path, new_file_contents)
                .map_err(|why| ToolError::Failed(format!("openDiff: {why}")))
        })
        .await?;
        let handle = crate::proposal::STORE.insert(prepared);
        let params = json!({
            "old_file_path": old_file_path,
            "new_file_path": new_file_path,
            "tab_name": tab_name,
            "prepared": handle.summary(),
        });
        let d: Decision = forward(&ctx, methods::OPEN_DIFF, params).await?;
        // Composing or joining the accepted text (megabytes) too.
        crate::tools::on_blocking_pool(move || shape(d, &handle)).await
    })
}

fn shape(d: Decision, handle: &crate::proposal::Handle) -> Result<ToolOutput, ToolError> {
    let text = |b: Vec<u8>| {
        String::from_utf8(b).map_err(|_| {
            ToolError::Failed(
                "openDiff: the accepted text is not valid UTF-8 (a tool answer must be text): \
                 the file or the proposal holds other bytes"
                    .into(),
            )
        })
    };
    Ok(match d {
        Decision::Saved {
            contents,
            unchanged,
            pushed,
            take,
            eol,
            crlf,
        } => {
            let contents = if let Some(take) = take {
                text(handle.entry.prepared.compose(&take))?
            } else if unchanged {
                String::from_utf8_lossy(handle.entry.prepared.new.bytes()).into_owned()
            } else if pushed {
                text(handle.pushed_text(eol, crlf))?
            } else {
                contents.ok_or_else(|| {
                    ToolError::Failed(
                        "the editor's answer to openDiff is malformed: FILE_SAVED without contents"
                            .into(),
                    )
                })?
            };
            ToolOutput::texts(["FILE_SAVED".to_string(), contents])
        }
        Decision::Rejected { tab_name } => {
            ToolOutput::texts(["DIFF_REJECTED".to_string(), tab_name])
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::json;

    fn args() -> serde_json::Value {
        json!({"old_file_path": "/p/a.txt", "new_file_path": "/p/a.txt",
               "new_file_contents": "new\n", "tab_name": "✻ [Claude Code] a.txt (x1) ⧉"})
    }

    #[test]
    fn accepted_answers_file_saved_and_contents() {
        let (s, ed) = ctx(|_, _| Ok(json!({"result": "FILE_SAVED", "contents": "edited\n"})));
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(texts(&r), vec!["FILE_SAVED", "edited\n"]);
        assert_eq!(r["isError"], false);
        assert!(r.get("structuredContent").is_none());
        // The editor gets a summary, never the contents: it pulls the lines in slices.
        let sent = ed.calls.lock().unwrap()[0].1.clone();
        assert_eq!(sent["old_file_path"], "/p/a.txt");
        assert_eq!(sent["tab_name"], args()["tab_name"]);
        assert!(sent.get("new_file_contents").is_none(), "{sent}");
        let p = &sent["prepared"];
        assert_eq!(
            (
                p["is_new"].clone(),
                p["new_lines"].clone(),
                p["hunks"].clone()
            ),
            (json!(true), json!(1), json!(1)),
            "{p}"
        );
        assert_eq!(
            crate::proposal::STORE
                .get(p["id"].as_u64().unwrap())
                .map(|_| ()),
            None,
            "the prepared proposal is gone once the call ended"
        );
    }

    #[test]
    fn an_unedited_proposal_comes_back_from_the_bridge_and_an_edited_one_from_pushed_lines() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "one\r\ntwo\r\n").unwrap();
        let mut a = args();
        a["old_file_path"] = json!(f.to_str().unwrap());
        a["new_file_contents"] = json!("one\r\nTWO\r\n✓\r\n");
        let (s, _) = ctx(|_, p| {
            let sp = &p["prepared"];
            assert_eq!(
                (sp["old_lines"].clone(), sp["new_lines"].clone()),
                (json!(2), json!(3))
            );
            assert_eq!(
                (sp["old_crlf"].clone(), sp["new_crlf"].clone()),
                (json!(true), json!(true))
            );
            assert_eq!(sp["is_new"], false);
            Ok(json!({"result": "FILE_SAVED", "unchanged": true}))
        });
        let r = call(&s, "openDiff", a.clone()).unwrap();
        assert_eq!(texts(&r), vec!["FILE_SAVED", "one\r\nTWO\r\n✓\r\n"]);

        let (s, _) = ctx(|_, p| {
            let id = p["prepared"]["id"].as_u64().unwrap();
            // What the Lua side does for an edited proposal: pushes its lines, then answers.
            assert!(
                crate::proposal::STORE.push(id, [b"one".to_vec(), "tw\u{f6}".as_bytes().to_vec()])
            );
            Ok(json!({"result": "FILE_SAVED", "pushed": true, "eol": false, "crlf": true}))
        });
        let r = call(&s, "openDiff", a).unwrap();
        assert_eq!(texts(&r), vec!["FILE_SAVED", "one\r\ntw\u{f6}"]);
    }

    #[test]
    fn the_file_read_is_the_one_the_editor_shows_for_a_file_uri_or_a_path_with_dots() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "one\n").unwrap();
        for path in [
            format!("file://{}", f.display()),
            format!("{}/sub/../a.txt", dir.path().display()),
        ] {
            let (s, ed) = ctx(|_, _| Ok(json!({"result": "DIFF_REJECTED", "tab_name": "t"})));
            let mut a = args();
            a["old_file_path"] = json!(path);
            let r = call(&s, "openDiff", a).unwrap();
            assert_eq!(r["isError"], false, "{r}");
            let sent = ed.calls.lock().unwrap()[0].1.clone();
            assert_eq!(
                sent["prepared"]["is_new"], false,
                "{path}: the file was found"
            );
            assert_eq!(sent["prepared"]["old_lines"], 1, "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_cannot_be_shown_is_refused_before_the_editor_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (s, ed) = ctx(|_, _| Ok(json!({"result": "DIFF_REJECTED", "tab_name": "x"})));
        let mut a = args();
        a["old_file_path"] = json!(fifo.to_str().unwrap());
        let r = call(&s, "openDiff", a).unwrap();
        assert_eq!(r["isError"], true);
        let t = texts(&r)[0].to_lowercase();
        assert!(
            t.contains("openDiff".to_lowercase().as_str()) && t.contains("fifo"),
            "{t}"
        );
        assert!(ed.calls.lock().unwrap().is_empty());
    }

    #[test]
    fn rejected_answers_the_tab_name() {
        let (s, _) = ctx(|_, p| Ok(json!({"result": "DIFF_REJECTED", "tab_name": p["tab_name"]})));
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(
            texts(&r),
            vec!["DIFF_REJECTED", "✻ [Claude Code] a.txt (x1) ⧉"]
        );
    }

    #[test]
    fn missing_arguments_and_malformed_answers() {
        let (s, ed) = ctx(|_, _| Ok(json!({"result": "MAYBE"})));
        let (code, msg) = call(&s, "openDiff", json!({"old_file_path": "/p"})).unwrap_err();
        assert_eq!(code, -32602);
        assert!(msg.contains("new_file_path"), "{msg}");
        let mut a = args();
        a["tab_name"] = json!("");
        assert_eq!(call(&s, "openDiff", a).unwrap_err().0, -32602);
        assert!(
            ed.calls.lock().unwrap().is_empty(),
            "bad input never reaches the editor"
        );
        let r = call(&s, "openDiff", args()).unwrap();
        assert_eq!(r["isError"], true);
        assert!(texts(&r)[0].contains("malformed"), "{r}");
    }
}
