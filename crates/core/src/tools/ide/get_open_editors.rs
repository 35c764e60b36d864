//! `getOpenEditors` — the file buffers open in Neovim (listed, with a name, `buftype` empty):
//! JSON `{tabs: [{uri, isActive, label, languageId, isDirty, …}]}`. `isActive` marks the
//! buffer of the active editor (the current window, or the file window used last).
//! Served from the editor snapshot ([`crate::editor::Snapshot`]) without Neovim's main thread;
//! the Lua handler (`lua/claude_context/ide/get_open_editors.lua`) answers only while the
//! snapshot is not live.

use crate::editor::methods;
use crate::tools::ide::{forward, Empty};
use crate::tools::{parse_args, schema_of, Ctx, Run, ToolDef, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    /// `file://` URI of the file.
    pub uri: String,
    pub is_active: bool,
    /// The file name without its directory.
    pub label: String,
    /// The buffer's filetype (`plaintext` when it has none).
    pub language_id: String,
    /// The buffer has unsaved changes.
    pub is_dirty: bool,
    /// Always false: Neovim has no untitled documents with a path.
    pub is_untitled: bool,
    /// The absolute path.
    pub file_name: String,
    /// Lines in the buffer (0 when it is listed but not loaded).
    pub line_count: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct OpenEditors {
    pub tabs: Vec<Tab>,
}

/// The door rule: on `/mcp`, editors whose file is outside the project are left out.
pub const DOOR: crate::tools::door::DoorRule = crate::tools::door::DoorRule::OpenEditors;

pub fn def() -> ToolDef {
    ToolDef {
        name: "getOpenEditors",
        aliases: &[],
        description: "List the files open in the editor, with which one is active and which \
                      have unsaved changes.",
        input_schema: schema_of::<Empty>(),
        output_schema: Some(schema_of::<OpenEditors>()),
        run: Run::State(run),
    }
}

fn run(ctx: Ctx, args: Value) -> crate::tools::ToolFuture {
    if let Err(e) = parse_args::<Option<Empty>>("getOpenEditors", args) {
        return crate::tools::ready(Err(e));
    }
    Box::pin(async move {
        let r: OpenEditors = match from_snapshot(&ctx) {
            Some(r) => r,
            None => {
                forward(
                    &ctx,
                    methods::GET_OPEN_EDITORS,
                    Value::Object(Default::default()),
                )
                .await?
            }
        };
        ToolOutput::of(&r)
    })
}

/// The listed file buffers from the snapshot, in buffer order; `None` when it is not live.
pub fn from_snapshot(ctx: &crate::state::State) -> Option<OpenEditors> {
    let st = ctx.snapshot.state();
    if !st.live {
        return None;
    }
    let tabs = st
        .bufs
        .values()
        .filter(|r| r.listed && r.file)
        .map(|r| {
            let path = std::path::Path::new(&r.name);
            Tab {
                uri: crate::uri::file_uri(path),
                is_active: st.active == Some(r.buf),
                label: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| r.name.clone()),
                language_id: if r.filetype.is_empty() {
                    "plaintext".into()
                } else {
                    r.filetype.clone()
                },
                is_dirty: r.modified,
                is_untitled: false,
                file_name: r.name.clone(),
                line_count: if r.loaded { r.lines } else { 0 },
            }
        })
        .collect();
    Some(OpenEditors { tabs })
}

#[cfg(test)]
mod tests {
    use crate::tools::ide::testing::{call, ctx, texts};
    use serde_json::{json, Value};

    #[test]
    fn tabs_keep_their_shape() {
        let tabs = json!({"tabs": [{"uri": "file:///p/a.rs", "isActive": true, "label": "a.rs",
            "languageId": "rust", "isDirty": false, "isUntitled": false,
            "fileName": "/p/a.rs", "lineCount": 3}]});
        let want = tabs.clone();
        let (s, _) = ctx(move |_, _| Ok(want.clone()));
        let r = call(&s, "getOpenEditors", json!({})).unwrap();
        let t: Value = serde_json::from_str(&texts(&r)[0]).unwrap();
        assert_eq!(t, tabs);
        let (s, _) = ctx(|_, _| Ok(json!({"tabs": []})));
        let r = call(&s, "getOpenEditors", json!({})).unwrap();
        assert_eq!(texts(&r)[0], r#"{"tabs":[]}"#);
    }
}
