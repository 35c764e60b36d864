//! The model's door: what the IDE tools may open and report to a client of `/mcp`.
//!
//! Two kinds of client reach the bridge (see [`crate::mcp::catalog::Surface`]): Claude Code itself, by
//! the lock file's URL (the IDE door), and the model's tools, by `/mcp` (`--mcp-config`,
//! `claude-context-mcp`). The fs-* tools keep the model inside the project root; without this
//! module the IDE tools would not: `openFile` of `~/.ssh/id_rsa` followed by
//! `getCurrentSelection` would hand the model any file the person can read.
//!
//! On `/mcp` (and only there: Claude Code's own connection is unchanged):
//! - `openFile` opens files inside the project root or another root the model may reach
//!   ([`State::model_roots`]: the working directory, the person's extra roots; a language
//!   server's folder only when the person allows it) only; anything else
//!   (symlinks resolved: a link inside the project pointing at `~/.aws` is outside) is refused
//!   with a tool error before the editor is asked. Relative paths are taken from the project
//!   root, and the editor is handed the absolute path that was checked.
//! - `getCurrentSelection` / `getLatestSelection` of a buffer whose file is outside answer
//!   `{success: false, message}` (as when there is no selection), the message saying why.
//! - `getOpenEditors` leaves out the editors whose file is outside, `getDiagnostics` the
//!   diagnostics of files outside (their messages quote code).
//! - `saveDocument` and `checkDocumentDirty` of a file outside are refused as `openFile` is.
//!
//! Each tool names its own rule in its catalog entry ([`DoorRule`], the `DOOR` constant of its
//! file). The checks are filters around the tools' ordinary `run` ([`run`]), so they hold
//! whatever way a tool gets its answer (the editor's main thread or a snapshot).

use super::ide::AnswerError;
use super::{Ctx, Entry, ToolError, ToolOutput};
use crate::state::State;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a tool is on `/mcp`: each tool's catalog entry names its own ([`super::Entry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoorRule {
    /// The same on both doors.
    Open,
    /// The IDE door only: not listed and not callable on `/mcp` (the diff tabs' plumbing,
    /// which Claude Code drives itself; a model opening diff tabs would compete with it).
    IdeOnly,
    /// The `filePath` argument must lie inside the door's roots; it is handed on absolute.
    PathInside,
    /// A selection answer from a file outside is withheld (`latest`: the latest selection's
    /// wording rather than the active editor's).
    Selection { latest: bool },
    /// The open-editors answer without the editors whose file is outside.
    OpenEditors,
    /// The diagnostics answer without the files outside.
    Diagnostics,
    /// Claude Code's hook tool ([`crate::tools::hook`]): listed on neither door (offered to no
    /// one), callable on `/mcp` only; the IDE door does not know it.
    Hook,
}

impl DoorRule {
    /// Whether a client of `/mcp` may call the tool (and sees it, when it is [`listed`]).
    ///
    /// [`listed`]: DoorRule::listed
    pub fn on_mcp(self) -> bool {
        self != DoorRule::IdeOnly
    }

    /// Whether a client of the IDE door may call the tool (and sees it, when it is
    /// [`listed`]).
    ///
    /// [`listed`]: DoorRule::listed
    pub fn on_ide(self) -> bool {
        self != DoorRule::Hook
    }

    /// Whether `tools/list` names the tool where it may be called.
    pub fn listed(self) -> bool {
        self != DoorRule::Hook
    }
}

/// The directories a `/mcp` client may see files in: the project root and the workspace
/// folders, each with its symlinks resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Door {
    roots: Vec<PathBuf>,
    /// Where relative paths are taken from (the project root, as the fs-* tools do).
    base: Option<PathBuf>,
}

impl Door {
    /// The door of the current project: the connection's root and
    /// [`State::model_roots`] (a language server's folder only when the person allows it).
    /// Blocking (it resolves the roots on disk).
    pub fn of(ctx: &State) -> Door {
        let base = ctx.project().root;
        let mut dirs: Vec<PathBuf> = base.iter().cloned().collect();
        dirs.extend(ctx.model_roots());
        Door::with_roots(dirs, base)
    }

    /// A door onto `dirs` (those that exist; symlinks resolved), relative paths from `base`.
    pub fn with_roots(dirs: impl IntoIterator<Item = PathBuf>, base: Option<PathBuf>) -> Door {
        let mut roots: Vec<PathBuf> = Vec::new();
        for d in dirs {
            if let Ok(r) = std::fs::canonicalize(&d) {
                if !roots.contains(&r) {
                    roots.push(r);
                }
            }
        }
        Door { roots, base }
    }

    /// The absolute path `arg` names, as the editor's handlers read it (`file://` decoded, `~`
    /// expanded, relative to [`Door::base`], `.` and `..` resolved lexically); `None` when a
    /// relative path has no base.
    pub fn absolute(&self, arg: &str) -> Option<PathBuf> {
        let p: PathBuf = if arg.starts_with("file://") {
            crate::uri::uri_to_path(arg)?
        } else if arg == "~" || arg.starts_with("~/") {
            let home = std::env::var_os("HOME")?;
            let mut h = PathBuf::from(home);
            if let Some(rest) = arg.strip_prefix("~/") {
                h.push(rest);
            }
            h
        } else {
            PathBuf::from(arg)
        };
        let p = if p.is_absolute() {
            p
        } else {
            self.base.as_ref()?.join(p)
        };
        Some(crate::paths::normalize(&p))
    }

    /// Whether the file at the absolute path `path` (which need not exist) lies inside one of
    /// the roots once every symlink on the way is resolved.
    pub fn admits(&self, path: &Path) -> bool {
        if !path.is_absolute() {
            return false;
        }
        match resolve(&crate::paths::normalize(path)) {
            Some(real) => self.roots.iter().any(|r| real.starts_with(r)),
            None => false,
        }
    }

    /// Where the file at the absolute path `path` really is, when [`Door::admits`] it: the root
    /// it lies in and its path relative to that root (symlinks resolved), for opening it through
    /// the capability layer from that root.
    pub fn locate(&self, path: &Path) -> Option<(PathBuf, PathBuf)> {
        if !path.is_absolute() {
            return None;
        }
        let real = resolve(&crate::paths::normalize(path))?;
        let root = self.roots.iter().find(|r| real.starts_with(r))?;
        let rel = real.strip_prefix(root).ok()?.to_path_buf();
        Some((root.clone(), rel))
    }

    /// The roots (symlinks resolved), project root first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Where relative paths are taken from (the project root), as given.
    pub fn base(&self) -> Option<&Path> {
        self.base.as_deref()
    }

    /// The roots, for messages.
    fn describe(&self) -> String {
        if self.roots.is_empty() {
            return "(no project root is available)".into();
        }
        self.roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `path` with its symlinks resolved as far as it exists (the missing rest appended): where
/// opening it would lead. `None` when that cannot be told (a symlink leading nowhere, a
/// directory that cannot be read): the caller refuses.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut missing: Vec<OsString> = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        match std::fs::symlink_metadata(&cur) {
            Ok(_) => {
                // Exists (maybe as a link): where it really is. A dangling link fails here.
                let mut real = std::fs::canonicalize(&cur).ok()?;
                for m in missing.iter().rev() {
                    real.push(m);
                }
                return Some(real);
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                missing.push(cur.file_name()?.to_owned());
                cur = cur.parent()?.to_path_buf();
            }
            Err(_) => return None,
        }
    }
}

/// Runs `tool` for a client of `/mcp`, through its [`DoorRule`]. (The dispatch refuses an
/// [`DoorRule::IdeOnly`] tool before it gets here.)
pub async fn run(
    ctx: Ctx,
    tool: &Entry,
    run: fn(Ctx, Value) -> crate::tools::ToolFuture,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    match tool.door {
        DoorRule::PathInside => {
            let args = check_path_arg(ctx.clone(), tool.name, args).await?;
            run(ctx, args).await
        }
        DoorRule::Diagnostics => {
            let out = run(ctx.clone(), args).await?;
            blocking(move || filter_diagnostics(&Door::of(&ctx), out)).await
        }
        DoorRule::Selection { latest } => {
            let out = run(ctx.clone(), args).await?;
            blocking(move || filter_selection(&Door::of(&ctx), out, latest)).await
        }
        DoorRule::OpenEditors => {
            let out = run(ctx.clone(), args).await?;
            blocking(move || filter_editors(&Door::of(&ctx), out)).await
        }
        DoorRule::Open | DoorRule::IdeOnly | DoorRule::Hook => run(ctx, args).await,
    }
}

/// The door's checks on the blocking pool, with the connection's project root along (a relative
/// path resolves against the root this connection set, as in the fs-* tools).
use crate::tools::on_blocking_pool as blocking;

/// The door's refusal of a tool's `filePath` on `/mcp` (the tool's failure).
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    #[error(
        "{tool}: {arg} is relative and there is no project root to take it from; give an \
         absolute path"
    )]
    Relative { tool: &'static str, arg: String },
    /// `leads`: where a link at `path` leads, said as " (it leads to …)", or empty.
    #[error(
        "{tool}: refused: {path}{leads} is outside the project and the workspace folders \
         ({roots}). On this connection (/mcp) the editor's files are reachable inside them \
         only."
    )]
    Outside {
        tool: &'static str,
        path: String,
        leads: String,
        roots: String,
    },
}

impl crate::error::Fault for DoorError {}

/// A tool's arguments with `filePath` checked and made absolute, or the refusal.
async fn check_path_arg(ctx: Ctx, tool: &'static str, mut args: Value) -> Result<Value, ToolError> {
    // Malformed arguments are the tool's to report (its schema, its message).
    let Some(arg) = args
        .get("filePath")
        .and_then(Value::as_str)
        .map(String::from)
    else {
        return Ok(args);
    };
    if arg.is_empty() {
        return Ok(args);
    }
    let door = blocking(move || Ok(Door::of(&ctx))).await?;
    let checked = {
        let door = door.clone();
        blocking(move || {
            let abs = door
                .absolute(&arg)
                .ok_or(DoorError::Relative { tool, arg })?;
            if door.admits(&abs) {
                Ok(abs)
            } else {
                let leads = resolve(&abs)
                    .filter(|r| r != &abs)
                    .map(|r| format!(" (it leads to {})", r.display()))
                    .unwrap_or_default();
                Err(DoorError::Outside {
                    tool,
                    path: abs.display().to_string(),
                    leads,
                    roots: door.describe(),
                }
                .into())
            }
        })
        .await?
    };
    if let Some(o) = args.as_object_mut() {
        o.insert(
            "filePath".into(),
            Value::String(checked.to_string_lossy().into_owned()),
        );
    }
    Ok(args)
}

/// Whether a path reported by the editor (a buffer's name) may be shown.
fn shown(door: &Door, path: Option<&str>) -> bool {
    path.filter(|p| !p.is_empty())
        .is_some_and(|p| door.admits(Path::new(p)))
}

/// A selection answer with its text withheld when its file is outside.
fn filter_selection(door: &Door, out: ToolOutput, latest: bool) -> Result<ToolOutput, ToolError> {
    let v = &out.value;
    if v.get("success").and_then(Value::as_bool) != Some(true)
        || shown(door, v.get("filePath").and_then(Value::as_str))
    {
        return Ok(out);
    }
    let what = if latest {
        "The latest selection was made"
    } else {
        "The active editor shows a file"
    };
    Ok(ToolOutput::json(serde_json::json!({
        "success": false,
        "message": format!(
            "{what} outside the project and the workspace folders: not shown on this \
             connection (/mcp)"
        ),
    })))
}

/// `getOpenEditors`' answer without the editors whose file is outside.
fn filter_editors(door: &Door, out: ToolOutput) -> Result<ToolOutput, ToolError> {
    let mut v = out.value;
    let Some(tabs) = v.get_mut("tabs").and_then(Value::as_array_mut) else {
        return Err(AnswerError::NoTabs.into());
    };
    tabs.retain(|t| {
        let name = t.get("fileName").and_then(Value::as_str).map(String::from);
        let from_uri = || {
            t.get("uri")
                .and_then(Value::as_str)
                .and_then(crate::uri::uri_to_path)
                .map(|p| p.to_string_lossy().into_owned())
        };
        // Both names must be inside: the model reads either.
        let uri_ok = t.get("uri").is_none() || shown(door, from_uri().as_deref());
        shown(door, name.as_deref()) && uri_ok
    });
    Ok(ToolOutput::json(v))
}

/// `getDiagnostics`' answer (JSON text `[{uri, diagnostics}]`) without the files outside.
fn filter_diagnostics(door: &Door, out: ToolOutput) -> Result<ToolOutput, ToolError> {
    let text = out.text.as_deref().unwrap_or_default();
    let mut files: Vec<Value> =
        serde_json::from_str(text).map_err(|err| AnswerError::Malformed {
            method: "getDiagnostics".into(),
            err,
        })?;
    files.retain(|f| {
        let uri = f.get("uri").and_then(Value::as_str).unwrap_or_default();
        // `file://` + the path as is (Claude Code's form), or percent-encoded.
        let raw = uri.strip_prefix("file://").filter(|p| p.starts_with('/'));
        match raw {
            Some(p) if Path::new(p).exists() => shown(door, Some(p)),
            _ => shown(
                door,
                crate::uri::uri_to_path(uri)
                    .map(|p| p.to_string_lossy().into_owned())
                    .as_deref(),
            ),
        }
    });
    let text = serde_json::to_string(&files).map_err(AnswerError::EncodeDiagnostics)?;
    Ok(ToolOutput::texts([text]))
}

/// The door tests' tree (here and in the code tools' tests).
#[cfg(test)]
pub(crate) mod testing {
    use super::Door;
    use std::path::PathBuf;

    /// A temporary project `proj` (with an empty `src/`) and, beside it, a directory `outside`.
    pub struct Tree {
        pub _d: tempfile::TempDir,
        pub proj: PathBuf,
        pub outside: PathBuf,
    }

    impl Tree {
        /// The tree, `outside` named `outside_name`.
        pub fn new(outside_name: &str) -> Tree {
            let d = tempfile::tempdir().unwrap();
            let base = d.path().canonicalize().unwrap();
            let proj = base.join("proj");
            let outside = base.join(outside_name);
            std::fs::create_dir_all(proj.join("src")).unwrap();
            std::fs::create_dir_all(&outside).unwrap();
            Tree {
                _d: d,
                proj,
                outside,
            }
        }
    }

    /// The door of the project alone.
    pub fn door(t: &Tree) -> Door {
        Door::with_roots([t.proj.clone()], Some(t.proj.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{door, Tree};
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::symlink;

    #[test]
    fn the_refusals_keep_their_words_and_are_the_tools_failures() {
        let failed = |e: ToolError| match e {
            ToolError::Failed(m) => m,
            other => panic!("not the tool's failure: {other:?}"),
        };
        let e = DoorError::Relative {
            tool: "openFile",
            arg: "a.rs".into(),
        };
        assert_eq!(
            failed(e.into()),
            "openFile: a.rs is relative and there is no project root to take it from; give an \
             absolute path"
        );
        let e = DoorError::Outside {
            tool: "openFile",
            path: "/home/x".into(),
            leads: " (it leads to /etc/x)".into(),
            roots: "'/p'".into(),
        };
        assert_eq!(
            failed(e.into()),
            "openFile: refused: /home/x (it leads to /etc/x) is outside the project and the \
             workspace folders ('/p'). On this connection (/mcp) the editor's files are \
             reachable inside them only."
        );
        assert_eq!(
            failed(AnswerError::NoTabs.into()),
            "the editor's answer to getOpenEditors has no tabs"
        );
        let err = serde_json::from_str::<Value>("[").unwrap_err();
        let why = err.to_string();
        let e = AnswerError::Malformed {
            method: "getDiagnostics".into(),
            err,
        };
        assert_eq!(
            failed(e.into()),
            format!("the editor's answer to getDiagnostics is malformed: {why}")
        );
    }

    /// A project and, beside it, a secret, with links from inside pointing out.
    fn tree() -> Tree {
        let t = Tree::new("home");
        let (proj, outside) = (&t.proj, &t.outside);
        std::fs::create_dir_all(outside.join(".aws")).unwrap();
        std::fs::write(proj.join("src/a.rs"), "fn main() {}\n").unwrap();
        std::fs::write(outside.join(".aws/credentials"), "SECRET\n").unwrap();
        symlink(outside.join(".aws"), proj.join("aws")).unwrap();
        symlink(outside.join(".aws/credentials"), proj.join("creds")).unwrap();
        symlink(proj.join("src/a.rs"), proj.join("inner-link")).unwrap();
        symlink(outside.join("nothing-yet"), proj.join("dangling")).unwrap();
        t
    }

    #[test]
    fn open_file_of_a_secret_outside_or_a_link_out_is_refused() {
        let t = tree();
        let d = door(&t);
        let inside = |s: &str| d.admits(&d.absolute(s).unwrap());
        assert!(inside("src/a.rs"));
        assert!(inside(t.proj.join("src/a.rs").to_str().unwrap()));
        assert!(inside("src/new-file.rs"), "a new file inside");
        assert!(inside("inner-link"), "a link that stays inside");
        assert!(inside(&format!("file://{}/src/a.rs", t.proj.display())));
        assert!(!inside(
            t.outside.join(".aws/credentials").to_str().unwrap()
        ));
        assert!(!inside("/etc/passwd"));
        assert!(!inside("../home/.aws/credentials"), "`..` out");
        assert!(!inside("src/../../home/.aws/credentials"));
        assert!(!inside("creds"), "a link inside pointing at a file out");
        assert!(!inside("aws/credentials"), "through a linked directory");
        assert!(
            !inside("aws/not-there-yet"),
            "a new file under a linked directory"
        );
        assert!(!inside("dangling"), "a link leading nowhere (yet)");
        assert!(!inside(&format!(
            "file://{}/.aws/credentials",
            t.outside.display()
        )));
        assert!(!inside("~/.ssh/id_rsa"));
        assert!(!d.admits(Path::new("relative/path")));
    }

    #[test]
    fn a_project_root_behind_a_symlink_still_admits_its_files() {
        let t = tree();
        let alias = t.outside.join("proj-alias");
        symlink(&t.proj, &alias).unwrap();
        let d = Door::with_roots([alias.clone()], Some(alias.clone()));
        assert!(d.admits(&alias.join("src/a.rs")));
        assert!(d.admits(&t.proj.join("src/a.rs")));
        assert!(!d.admits(&alias.join("creds")));
        assert!(!d.admits(&t.outside.join(".aws/credentials")));
    }

    #[test]
    fn a_sibling_with_a_common_prefix_is_outside() {
        let t = tree();
        let sib = t.proj.with_file_name("proj2");
        std::fs::create_dir_all(&sib).unwrap();
        std::fs::write(sib.join("x"), "x").unwrap();
        assert!(!door(&t).admits(&sib.join("x")));
    }

    #[test]
    fn no_roots_admit_nothing_and_relative_paths_need_a_base() {
        let d = Door::with_roots(Vec::<PathBuf>::new(), None);
        assert!(!d.admits(Path::new("/etc/passwd")));
        assert_eq!(d.absolute("a.txt"), None);
    }

    #[test]
    fn normalize_is_lexical() {
        use crate::paths::normalize;
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
    }

    fn sel(path: &str) -> ToolOutput {
        ToolOutput::json(json!({"success": true, "text": "SECRET", "filePath": path,
            "fileUrl": format!("file://{path}"),
            "selection": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": 6}, "isEmpty": false}}))
    }

    #[test]
    fn selection_in_a_secret_outside_is_withheld() {
        let t = tree();
        let d = door(&t);
        let secret = t.outside.join(".aws/credentials");
        for latest in [false, true] {
            let out = filter_selection(&d, sel(secret.to_str().unwrap()), latest).unwrap();
            assert_eq!(out.value["success"], false);
            assert!(!out.value.to_string().contains("SECRET"));
            assert!(out.value["message"].as_str().unwrap().contains("outside"));
            let via_link =
                filter_selection(&d, sel(t.proj.join("creds").to_str().unwrap()), latest).unwrap();
            assert_eq!(via_link.value["success"], false);
            let ok = sel(t.proj.join("src/a.rs").to_str().unwrap());
            assert_eq!(filter_selection(&d, ok.clone(), latest).unwrap(), ok);
        }
        let none = ToolOutput::json(json!({"success": false, "message": "No active editor found"}));
        assert_eq!(filter_selection(&d, none.clone(), false).unwrap(), none);
        let nameless = ToolOutput::json(json!({"success": true, "text": "SECRET"}));
        assert_eq!(
            filter_selection(&d, nameless, false).unwrap().value["success"],
            false
        );
    }

    #[test]
    fn diagnostics_of_files_outside_are_left_out() {
        let t = tree();
        let d = door(&t);
        let entry = |p: &Path| {
            json!({"uri": format!("file://{}", p.display()), "diagnostics": [
            {"message": "SECRET quoted", "severity": "Error",
             "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}]})
        };
        let inside = t.proj.join("src/a.rs");
        let all = json!([
            entry(&inside),
            entry(&t.outside.join(".aws/credentials")),
            entry(&t.proj.join("creds"))
        ]);
        let r = filter_diagnostics(&d, ToolOutput::texts([all.to_string()])).unwrap();
        let got: Value = serde_json::from_str(r.text.as_deref().unwrap()).unwrap();
        assert_eq!(got, json!([entry(&inside)]));
        assert!(filter_diagnostics(&d, ToolOutput::texts(["nope".to_string()])).is_err());
    }

    #[test]
    fn open_editors_outside_are_left_out() {
        let t = tree();
        let d = door(&t);
        let tab = |p: &Path| {
            json!({"uri": crate::uri::file_uri(p), "isActive": false, "label": "x",
                "languageId": "text", "isDirty": false, "isUntitled": false,
                "fileName": p, "lineCount": 1})
        };
        let inside = t.proj.join("src/a.rs");
        let out = ToolOutput::json(json!({"tabs": [
            tab(&inside),
            tab(&t.outside.join(".aws/credentials")),
            tab(&t.proj.join("creds")),
            tab(Path::new("/etc/passwd")),
        ]}));
        let r = filter_editors(&d, out).unwrap();
        assert_eq!(r.value, json!({"tabs": [tab(&inside)]}));
        assert_eq!(r.text, None, "the text is the JSON of what is left");
        // A uri pointing elsewhere than the fileName does not slip through.
        let mut odd = tab(&inside);
        odd["uri"] = json!(crate::uri::file_uri(&t.outside.join(".aws/credentials")));
        let r = filter_editors(&d, ToolOutput::json(json!({"tabs": [odd]}))).unwrap();
        assert_eq!(r.value, json!({"tabs": []}));
    }
}
