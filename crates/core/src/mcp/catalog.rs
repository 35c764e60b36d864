//! The catalog: the tools the bridge serves, their `tools/list` answers (schemas described the
//! MCP way, built once per door), the name and alias lookup, and which door sees which tool
//! (each tool's [`DoorRule`], from its catalog entry).
//!
//! [`DoorRule`]: crate::tools::door::DoorRule

use crate::tools::{Entry, ToolDef};
use rmcp::model::Tool;
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};

/// Which door a client came in by: it decides the tools it sees.
///
/// Claude Code connects twice to an editor it runs in: as the IDE (the lock file's URL, path
/// `/`), where it drives the diff flow itself and shows the model only a few tools, and — when
/// started by `:ClaudeContext open` or through `claude-context-mcp` — as an ordinary MCP server
/// (path [`MCP_PATH`]), whose every listed tool the model may call. The IDE's plumbing
/// (opening and closing diff tabs: [`DoorRule::IdeOnly`]) is offered on the first only; each
/// tool's catalog entry says what it is on `/mcp` ([`DoorRule`]).
///
/// [`DoorRule`]: crate::tools::door::DoorRule
/// [`DoorRule::IdeOnly`]: crate::tools::door::DoorRule::IdeOnly
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    #[default]
    Ide,
    Mcp,
}

/// The request path of MCP-server connections (`--mcp-config`, `claude-context-mcp`).
pub const MCP_PATH: &str = "/mcp";

impl Surface {
    /// The surface of a WebSocket request to `path` (query ignored).
    pub fn of_path(path: &str) -> Surface {
        let path = path.split('?').next().unwrap_or("");
        if path.trim_end_matches('/') == MCP_PATH {
            Surface::Mcp
        } else {
            Surface::Ide
        }
    }

    /// Whether a client on this surface may call `tool`.
    pub fn offers(self, tool: &Entry) -> bool {
        match self {
            Surface::Ide => tool.door.on_ide(),
            Surface::Mcp => tool.door.on_mcp(),
        }
    }

    /// Whether a client on this surface sees `tool` in `tools/list`.
    pub fn lists(self, tool: &Entry) -> bool {
        self.offers(tool) && tool.door.listed()
    }
}

/// The tools and their `tools/list` answers, built once.
pub struct Catalog {
    tools: Vec<Entry>,
    /// Names and aliases, with their tool's index. (FxHash: the keys are the registry's own,
    /// so a client's names can only miss, never crowd a bucket; SipHash of the name cost more
    /// than the rest of a call's lookup.)
    by_name: rustc_hash::FxHashMap<&'static str, usize>,
    /// The configured memory bank language (`memory_bank_language`): what a tool that takes a
    /// `language` gets when called without one, and the default its listed schema shows.
    language: String,
    /// The tools whose input has a `language` property, sorted (found at first use).
    takes_language: OnceLock<Vec<&'static str>>,
    /// Built at the first `tools/list` of each surface (on a bridge thread): generating ~30
    /// tools' schemas and describing them the MCP way would otherwise be done by `setup()`,
    /// on Neovim's start-up path (start-up figures: BENCHMARKS.md).
    list: [OnceLock<Value>; 2],
}

impl Catalog {
    pub fn new(tools: Vec<Entry>) -> Catalog {
        let mut by_name = rustc_hash::FxHashMap::default();
        for (i, t) in tools.iter().enumerate() {
            by_name.insert(t.name, i);
            for a in t.aliases {
                by_name.entry(*a).or_insert(i);
            }
        }
        Catalog {
            tools,
            by_name,
            language: "ja".into(),
            takes_language: OnceLock::new(),
            list: Default::default(),
        }
    }

    /// The same catalog with `language` as the memory bank tools' default.
    pub fn with_language(mut self, language: &str) -> Catalog {
        self.language = language.to_string();
        self
    }

    /// The configured memory bank language.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Whether `tool`'s input has a `language` property.
    fn takes_language(&self, tool: &str) -> bool {
        self.takes_language
            .get_or_init(|| {
                let mut v: Vec<&'static str> = self
                    .tools
                    .iter()
                    .filter(|t| {
                        t.input_schema.value()["properties"]
                            .get("language")
                            .is_some()
                    })
                    .map(|t| t.name)
                    .collect();
                v.sort_unstable();
                v
            })
            .binary_search(&tool)
            .is_ok()
    }

    /// `args` with the configured language added when `tool` takes one and none was given.
    pub fn with_default_language(&self, tool: &ToolDef, mut args: Value) -> Value {
        if let Value::Object(o) = &mut args {
            // (The tool first: a look-up in `o` hashes the key, and most tools take no language.)
            if self.takes_language(tool.name) && !o.contains_key("language") {
                o.insert("language".into(), Value::String(self.language.clone()));
            }
        }
        args
    }

    /// The `tools/list` result for a client on `surface`.
    pub fn list(&self, surface: Surface) -> &Value {
        self.list[surface as usize].get_or_init(|| {
            let tools: Vec<Value> = self
                .tools
                .iter()
                .filter(|t| surface.lists(t))
                .map(|t| {
                    let mut d = describe(t);
                    // The default a caller gets is the configured language, not the schema's.
                    if let Some(l) = d.pointer_mut("/inputSchema/properties/language") {
                        if let Some(o) = l.as_object_mut() {
                            o.insert("default".into(), Value::String(self.language.clone()));
                        }
                    }
                    d
                })
                .collect();
            json!({ "tools": tools })
        })
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tools listed on some door (every tool but the hook tool's).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools
            .iter()
            .filter(|t| t.door.listed())
            .map(|t| t.name)
    }
}

fn as_object(v: &Value) -> Arc<Map<String, Value>> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn describe(t: &ToolDef) -> Value {
    let mut tool = Tool::new(t.name, t.description, as_object(&t.input_schema.value()));
    if let Some(o) = &t.output_schema {
        tool = tool.with_raw_output_schema(as_object(&o.value()));
    }
    serde_json::to_value(tool).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::door::DoorRule;

    #[test]
    fn tools_list_is_built_on_first_use_and_describes_every_tool() {
        let c = Catalog::new(crate::tools::registry());
        assert!(c.list[0].get().is_none(), "built before first use");
        let tools = c.list(Surface::Ide)["tools"].as_array().unwrap();
        assert!(c.list[0].get().is_some());
        assert!(
            c.list[1].get().is_none(),
            "each surface's list is built on its first use"
        );
        let listed: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(listed, c.names().collect::<Vec<_>>());
        assert_eq!(tools[0]["name"], "getWorkspaceFolders");
        assert!(tools[0]["inputSchema"].is_object());
    }

    #[test]
    fn the_mcp_surface_lists_every_tool_but_the_ide_plumbing() {
        let c = Catalog::new(crate::tools::registry());
        let names = |s: Surface| -> Vec<String> {
            c.list(s)["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let (ide, mcp) = (names(Surface::Ide), names(Surface::Mcp));
        let ide_only: Vec<&str> = c
            .tools
            .iter()
            .filter(|t| t.door == DoorRule::IdeOnly)
            .map(|t| t.name)
            .collect();
        assert_eq!(ide_only, ["openDiff", "close_tab", "closeAllDiffTabs"]);
        for t in &ide_only {
            assert!(ide.iter().any(|n| n == t), "{t} is a registered tool");
            assert!(!mcp.iter().any(|n| n == t), "{t} is listed at /mcp");
        }
        let rest: Vec<&String> = ide
            .iter()
            .filter(|n| !ide_only.contains(&n.as_str()))
            .collect();
        assert_eq!(mcp.iter().collect::<Vec<_>>(), rest);
        assert!(mcp.iter().any(|n| n == "getDiagnostics"));
    }
}
