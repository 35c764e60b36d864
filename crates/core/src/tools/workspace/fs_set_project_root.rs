//! `fs-set-project-root {path}` — cl-mcp's tool: the project root for the calling connection
//! only (other clients and the editor keep theirs), so the file tools, the memory bank and the
//! decision store of that connection resolve against it.
//!
//! The model's argument is untrusted; the person's setup decides what is allowed: the new root
//! must be an existing directory equal to or below the project root the setup gives
//! (MCP_PROJECT_ROOT / setup{project_root} / LSP / git / cwd), the editor's working directory, or
//! a root the person added (`setup{workspace = {extra_roots}}`; language servers' folders only
//! with `allow_lsp_roots`: see [`crate::state::State::model_roots`]), after symbolic links are
//! resolved, and never inside a `.git` directory. The process's
//! working directory is never changed (the bridge lives in Neovim). Answers cl-mcp's fields
//! `{project_root, cwd, previous_root, status}` plus `project_root_source` and `allowed_by`.

use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The new project root: absolute, or relative to the current one ("." keeps it). It must be
    /// the configured project root, a workspace folder, or a directory inside one.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SetRoot {
    pub project_root: String,
    /// The editor's working directory (the bridge never changes the process's).
    pub cwd: Option<String>,
    /// The root before, or "(not set)".
    pub previous_root: String,
    pub status: String,
    /// "explicit": set by fs-set-project-root for this connection.
    pub project_root_source: &'static str,
    /// The configured root or workspace folder that allows it.
    pub allowed_by: String,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "fs-set-project-root",
        aliases: &[],
        description: "Set the project root for this connection (the file tools, memory bank and \
                      decision tools then resolve against it). Only the configured project \
                      root, a workspace folder, or a directory inside one is accepted; other \
                      clients are not affected. Returns {project_root, cwd, previous_root, \
                      status}.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<SetRoot>()),
        run: Run::State(run),
    }
}

/// Why a directory cannot be the project root. An empty path is the caller's mistake (-32602);
/// the rest the tool's refusal (`isError: true`).
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("fs-set-project-root: path must be a non-empty path")]
    EmptyPath,
    #[error("fs-set-project-root sets the root of a client connection; this call came from none")]
    NoConnection,
    #[error("cannot use '{path}' as the project root: {err}")]
    Unusable { path: String, err: std::io::Error },
    #[error("'{path}' is not a directory")]
    NotADirectory { path: String },
    /// `bases`: the allowed bases, each quoted, joined with " or "; `which`: "it" or "one of
    /// them".
    #[error(
        "'{path}' is outside what the setup allows: the project root must be {bases} or a \
         directory inside {which} (the person adds roots with setup{{workspace = \
         {{extra_roots = {{…}}}}}}; language servers' folders count with \
         allow_lsp_roots = true)"
    )]
    Outside {
        path: String,
        bases: String,
        which: &'static str,
    },
    #[error("'{path}' is inside a .git directory; refused")]
    InGit { path: String },
}

impl crate::error::Fault for RootError {
    fn is_callers(&self) -> bool {
        matches!(self, RootError::EmptyPath)
    }
}

/// The base among `bases` that contains `p` (both canonical), if any.
fn allowed_base<'a>(p: &Path, bases: &'a [PathBuf]) -> Option<&'a PathBuf> {
    bases.iter().find(|b| p.starts_with(b))
}

/// `path` (relative to the current project root) made canonical, and the allowed base it lies
/// in: a directory inside the roots the setup allows, not inside a `.git` directory.
fn checked_root(ctx: &Ctx, path: &str) -> Result<(PathBuf, PathBuf), ToolError> {
    let shown = |p: &Path| p.display().to_string();
    let current = ctx.project_root_dir()?;
    let requested = {
        let p = PathBuf::from(path.trim());
        if p.is_absolute() {
            p
        } else {
            current.join(p)
        }
    };
    let canon = requested
        .canonicalize()
        .map_err(|err| RootError::Unusable {
            path: shown(&requested),
            err,
        })?;
    if !canon.is_dir() {
        return Err(RootError::NotADirectory {
            path: shown(&canon),
        }
        .into());
    }
    // The project root, the working directory and the roots the person added; a language
    // server's folder only when the person allows them (setup{workspace}).
    let bases: Vec<PathBuf> = ctx.model_roots();
    let Some(base) = allowed_base(&canon, &bases).cloned() else {
        return Err(RootError::Outside {
            path: shown(&canon),
            bases: bases
                .iter()
                .map(|b| format!("'{}'", b.display()))
                .collect::<Vec<_>>()
                .join(" or "),
            which: if bases.len() == 1 {
                "it"
            } else {
                "one of them"
            },
        }
        .into());
    };
    let inner = canon.strip_prefix(&base).unwrap_or(Path::new(""));
    if inner
        .components()
        // Any case: `.GIT` is `.git` on a case-insensitive file system (as capfs sees it).
        .any(|c| matches!(c, Component::Normal(n) if n.eq_ignore_ascii_case(".git")))
    {
        return Err(RootError::InGit {
            path: shown(&canon),
        }
        .into());
    }
    Ok((canon, base))
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let a: Args = match parse_args("fs-set-project-root", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let Some(slot) = crate::project::connection_slot() else {
            return Err(RootError::NoConnection.into());
        };
        if a.path.trim().is_empty() || a.path.contains('\0') {
            return Err(RootError::EmptyPath.into());
        }
        let default = ctx.default_project();
        let (canon, base) = checked_root(&ctx, &a.path)?;
        let previous = {
            let mut g = slot.lock().unwrap_or_else(|p| p.into_inner());
            let prev = g.clone();
            *g = Some(canon.clone());
            prev
        };
        let previous_root = previous
            .or(default.root.clone())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(not set)".into());
        ToolOutput::of(&SetRoot {
            status: format!(
                "Project root set to {} (for this connection)",
                canon.display()
            ),
            project_root: canon.display().to_string(),
            cwd: default.cwd.map(|c| c.display().to_string()),
            previous_root,
            project_root_source: "explicit",
            allowed_by: base.display().to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_keep_their_words_and_their_kind() {
        let e = ToolError::from(RootError::EmptyPath);
        assert_eq!(
            e,
            ToolError::InvalidParams("fs-set-project-root: path must be a non-empty path".into())
        );
        let failed = |e: RootError| match ToolError::from(e) {
            ToolError::Failed(m) => m,
            other => panic!("not the tool's failure: {other:?}"),
        };
        assert_eq!(
            failed(RootError::NoConnection),
            "fs-set-project-root sets the root of a client connection; this call came from none"
        );
        assert_eq!(
            failed(RootError::NotADirectory {
                path: "/p/f".into()
            }),
            "'/p/f' is not a directory"
        );
        assert_eq!(
            failed(RootError::InGit {
                path: "/p/.git/x".into()
            }),
            "'/p/.git/x' is inside a .git directory; refused"
        );
        assert_eq!(
            failed(RootError::Outside {
                path: "/elsewhere".into(),
                bases: "'/p' or '/q'".into(),
                which: "one of them",
            }),
            "'/elsewhere' is outside what the setup allows: the project root must be '/p' or \
             '/q' or a directory inside one of them (the person adds roots with \
             setup{workspace = {extra_roots = {…}}}; language servers' folders count with \
             allow_lsp_roots = true)"
        );
    }
}
