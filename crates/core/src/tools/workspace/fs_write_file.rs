//! `fs-write-file {path, content}` — write a file inside the project root, atomically
//! (temp file + rename), creating missing parent directories inside the root.

use crate::capfs::{CapDir, WritePolicy};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A path relative to the project root, or an absolute path inside it.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteResult {
    pub path: String,
    pub bytes_written: u64,
    pub created: bool,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "fs-write-file",
        aliases: &["fs_write_file"],
        description: "Write a file inside the project root atomically (relative paths resolve \
                      against project_root; see fs-get-project-info). Missing parent \
                      directories are created.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<WriteResult>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("fs-write-file", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let root = ctx.project_root_dir()?;
        ToolOutput::of(&write(&root, &ctx.write_policy, &args)?)
    })
}

pub fn write(
    root: &std::path::Path,
    policy: &WritePolicy,
    a: &Args,
) -> Result<WriteResult, ToolError> {
    let dir = CapDir::open_root(root)?;
    let rel = dir.rel(&a.path)?;
    policy.check(&rel)?;
    let w = dir.write_atomic(&rel, a.content.as_bytes(), true)?;
    Ok(WriteResult {
        path: dir.display(&rel).to_string_lossy().into_owned(),
        bytes_written: a.content.len() as u64,
        created: w.created,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_inside_and_refuses_outside() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let a = |p: &str| Args {
            path: p.into(),
            content: "hé".into(),
        };
        let r = write(&root, &WritePolicy::default(), &a("new/dir/f.txt")).unwrap();
        assert!(r.created);
        assert_eq!(r.bytes_written, 3);
        assert_eq!(
            std::fs::read_to_string(root.join("new/dir/f.txt")).unwrap(),
            "hé"
        );
        assert!(
            !write(&root, &WritePolicy::default(), &a("new/dir/f.txt"))
                .unwrap()
                .created
        );
        let e = write(&root, &WritePolicy::default(), &a("../escape.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the project root"), "{e}");
        assert!(!d.path().join("escape.txt").exists());
    }
}
