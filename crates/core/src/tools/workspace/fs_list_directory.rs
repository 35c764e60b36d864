//! `fs-list-directory {path}` — the entries of a directory inside the project root.

use crate::capfs::CapDir;
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory relative to the project root, or an absolute path inside it.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Entry {
    pub name: String,
    /// "file", "directory", "symlink" or "other".
    #[serde(rename = "type")]
    pub kind: String,
    pub size: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub path: String,
    pub entries: Vec<Entry>,
}

pub fn def() -> ToolDef {
    ToolDef {
        name: "fs-list-directory",
        aliases: &["fs_list_directory"],
        description: "List a directory inside the project root (relative paths resolve against \
                      project_root; see fs-get-project-info). Entries are sorted by name.",
        input_schema: schema_of::<Args>(),
        output_schema: Some(schema_of::<Listing>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    let args: Args = match parse_args("fs-list-directory", args) {
        Ok(a) => a,
        Err(e) => return crate::tools::ready(Err(e)),
    };
    crate::tools::blocking(move || {
        let root = ctx.project_root_dir()?;
        ToolOutput::of(&list(&root, &args.path)?)
    })
}

pub fn list(root: &std::path::Path, path: &str) -> Result<Listing, ToolError> {
    let cap = CapDir::open_root(root)?;
    let rel = cap.rel(path)?;
    let dir = cap.display(&rel);
    let rd = cap.read_dir(&rel).map_err(|e| {
        ToolError::Failed(format!(
            "{e} (from '{path}', project root '{}')",
            root.display()
        ))
    })?;
    let mut entries: Vec<Entry> = rd
        .flatten()
        .map(|e| {
            let ft = e.file_type().ok();
            let kind = match ft {
                Some(t) if t.is_symlink() => "symlink",
                Some(t) if t.is_dir() => "directory",
                Some(t) if t.is_file() => "file",
                _ => "other",
            };
            Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                kind: kind.into(),
                size: e.metadata().map(|m| m.len()).unwrap_or(0),
            }
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Listing {
        path: dir.to_string_lossy().into_owned(),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_sorted_with_kinds() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("b.txt"), "12").unwrap();
        let l = list(d.path(), ".").unwrap();
        let names: Vec<_> = l
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.kind.as_str()))
            .collect();
        assert_eq!(names, vec![("b.txt", "file"), ("sub", "directory")]);
        assert_eq!(l.entries[0].size, 2);
    }

    #[test]
    fn missing_directory_names_resolved_path_and_root() {
        let d = tempfile::tempdir().unwrap();
        let e = list(d.path(), "src").unwrap_err().to_string();
        assert!(e.contains("src") && e.contains("project root"), "{e}");
        assert!(list(d.path(), "..").is_err());
    }
}
