//! The source layout the README describes, held by a test (tests/nvim/layout_spec.lua does the
//! same for the Lua modules).
//!
//! * The modules depend on each other one way: `jsonrpc` ← `state` ← `tools` ← `mcp` ←
//!   `server`. Nothing under `src/tools/`, `src/mcp/`, the state module or `src/jsonrpc.rs` names
//!   the server (`crate::server`, `super::server`, `use crate::{…, server, …}`), not even in a
//!   comment or a test; and no layer's code names a layer above it ([`LAYERS`]). Tests are
//!   exempt from the second rule: the tools' tests call them through the MCP dispatch, as a
//!   client does.
//! * The tools are grouped by family: every file defining a tool (`fn def() -> ToolDef`) lives in
//!   `src/tools/<family>/` for one of the six families, defines exactly one tool, and the files
//!   and [`tools::registry`] name the same tools.
//! * Errors are typed: no production code of either crate (`crates/core/src/`, `src/`) has a
//!   `Result` whose error is a bare `String` (or `&str`, or a tuple holding one), nor makes one
//!   with `.map_err(|e| e.to_string())` or `.map_err(|e| format!(…))`; each module has its
//!   `thiserror` enum ([`STRING_ERRORS_ELSEWHERE`] lists the files converted by a change of
//!   their own). Tests and test support are exempt.

use claude_context_core::tools;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The families of `src/tools/`, as the README lists them.
const FAMILIES: &[&str] = &[
    "ide",
    "workspace",
    "memory_bank",
    "decision",
    "claude",
    "code",
];

/// Tool files allowed outside the families: `test_panic` is a fixture compiled only with the
/// `test-tools` feature (it panics on purpose), not a tool the bridge serves.
const FIXTURES: &[&str] = &["test_panic.rs"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir` (or `dir` itself when it is a file), sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return out;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Where `text` names module `module` of the crate (`crate::m`, `super::m`, `super::super::m`,
/// `claude_context_core::m`, or `m` inside a `crate::{…}` group); one line per place.
fn names_module(text: &str, module: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    for prefix in ["crate::", "super::", "claude_context_core::"] {
        let pat = format!("{prefix}{module}");
        let mut from = 0;
        while let Some(i) = squeezed[from..].find(&pat) {
            let at = from + i;
            let end = at + pat.len();
            // `crate::server` but not `crate::servers` or `crate::server_x`.
            let next = squeezed[end..].chars().next();
            if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                hits.push(pat.clone());
            }
            from = end;
        }
    }
    // `use crate::{mcp, server::Shared}` and the like.
    let mut from = 0;
    while let Some(i) = squeezed[from..].find("crate::{") {
        let open = from + i + "crate::{".len();
        let mut depth = 1;
        let mut close = open;
        for (j, c) in squeezed[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                close = open + j;
                break;
            }
        }
        let group = &squeezed[open..close.max(open)];
        let top_level = group.split(',').any(|item| {
            let first = item.split("::").next().unwrap_or("");
            first == module
        });
        if top_level {
            hits.push(format!("crate::{{{group}}}"));
        }
        from = open;
    }
    hits
}

/// Each layer (a file or folder under `src/`) and the modules its code must not use: the ones
/// above it.
const LAYERS: &[(&str, &[&str])] = &[
    ("jsonrpc", &["state", "tools", "mcp", "server"]),
    ("state", &["tools", "mcp", "server"]),
    ("tools", &["mcp", "server"]),
    ("mcp", &["server"]),
    // A leaf the layers above build on: it uses none of them.
    ("checkpoint", &["state", "tools", "mcp", "server"]),
];

/// The layer a path under `src/` belongs to.
fn layer_of(path: &str) -> Option<&'static str> {
    let top = path.split('/').next()?;
    let top = top.strip_suffix(".rs").unwrap_or(top);
    LAYERS.iter().map(|(l, _)| *l).find(|l| *l == top)
}

/// How `{` and `}` change the nesting depth on `line`, outside string and char literals.
fn brace_delta(line: &str) -> i32 {
    let mut depth = 0;
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_str => {
                chars.next();
            }
            '"' => in_str = !in_str,
            '\'' if !in_str => {
                // A char literal ('{', '\'') or a lifetime ('a): skip the literal only.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.next();
                    chars.next();
                    chars.next();
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            '{' if !in_str => depth += 1,
            '}' if !in_str => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `text` without comment lines and without the items under `#[cfg(test)]`; and the names of
/// the test-only modules it declares in files of their own (`#[cfg(test)] mod testutil;`).
fn non_test_code(text: &str) -> (String, Vec<String>) {
    let mut out = Vec::new();
    let mut test_mods = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("//") {
            continue;
        }
        if t != "#[cfg(test)]" {
            out.push(line);
            continue;
        }
        // Skip the item the attribute is on: one `…;` line, or a `{ … }` block.
        let mut depth = 0;
        let mut opened = false;
        for n in lines.by_ref() {
            let nt = n.trim();
            if !opened && (nt.is_empty() || nt.starts_with("//") || nt.starts_with("#[")) {
                continue;
            }
            if !opened && nt.ends_with(';') && !nt.contains('{') {
                let words: Vec<&str> = nt.trim_end_matches(';').split_whitespace().collect();
                if let [.., "mod", name] = words.as_slice() {
                    test_mods.push(name.to_string());
                }
                break;
            }
            let d = brace_delta(n);
            opened |= nt.contains('{');
            depth += d;
            if opened && depth <= 0 {
                break;
            }
        }
    }
    (out.join("\n"), test_mods)
}

/// The files a test-only module declaration in `path` points at.
fn test_only_files(path: &str, module: &str) -> [String; 2] {
    let dir = match path.strip_suffix("mod.rs") {
        Some(dir) => dir.to_string(),
        None => format!("{}/", path.trim_end_matches(".rs")),
    };
    [format!("{dir}{module}.rs"), format!("{dir}{module}/mod.rs")]
}

/// Every violation of the dependency rules among `files` (path relative to `src/`, text).
fn dependency_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    let mut test_only: Vec<String> = Vec::new();
    let code: Vec<(String, String)> = files
        .iter()
        .map(|(path, text)| {
            let (code, mods) = non_test_code(text);
            for m in mods {
                test_only.extend(test_only_files(path, &m));
            }
            (path.clone(), code)
        })
        .collect();
    for ((path, text), (_, code)) in files.iter().zip(&code) {
        let Some(layer) = layer_of(path) else {
            continue;
        };
        for hit in names_module(text, "server") {
            bad.push(format!("src/{path} names the server ({hit})"));
        }
        if test_only.contains(path) {
            continue;
        }
        let above = LAYERS.iter().find(|(l, _)| *l == layer).unwrap().1;
        for m in above.iter().filter(|m| **m != "server") {
            for hit in names_module(code, m) {
                bad.push(format!(
                    "src/{path}: {layer} uses {m}, a layer above it ({hit})"
                ));
            }
        }
    }
    bad
}

/// The tool a file defines: the `name` of the `ToolDef` its `fn def()` builds.
fn tool_name(text: &str) -> Option<String> {
    let i = text.find("fn def() -> ToolDef")?;
    let rest = &text[i..];
    let n = rest.find("name:")?;
    let q = rest[n..].find('"')? + n + 1;
    let end = rest[q..].find('"')? + q;
    Some(rest[q..end].to_string())
}

/// Every violation of the family layout among the files under `src/tools/` (path relative to
/// `src/tools/`, text); `registered` is what the registry serves.
fn family_violations(files: &[(String, String)], registered: &BTreeSet<String>) -> Vec<String> {
    let mut bad = Vec::new();
    let mut found = BTreeSet::new();
    for (path, text) in files {
        let parts: Vec<&str> = path.split('/').collect();
        if parts.len() > 1 && !FAMILIES.contains(&parts[0]) {
            bad.push(format!(
                "src/tools/{path}: {} is not a tool family ({FAMILIES:?})",
                parts[0]
            ));
        }
        let defs = text.matches("fn def() -> ToolDef").count();
        if defs == 0 {
            continue;
        }
        if defs > 1 {
            bad.push(format!(
                "src/tools/{path} defines {defs} tools (one tool, one file)"
            ));
        }
        if parts.len() != 2 && !FIXTURES.contains(&path.as_str()) {
            bad.push(format!(
                "src/tools/{path} defines a tool outside the family folders ({FAMILIES:?})"
            ));
        }
        if parts.last() == Some(&"mod.rs") {
            bad.push(format!(
                "src/tools/{path}: a tool in a family's mod.rs, not a file of its own"
            ));
        }
        match tool_name(text) {
            Some(_) if FIXTURES.contains(&path.as_str()) => {}
            Some(name) => {
                if !found.insert(name.clone()) {
                    bad.push(format!("src/tools/{path}: {name} is defined twice"));
                }
            }
            None => bad.push(format!("src/tools/{path}: cannot read its tool's name")),
        }
    }
    for name in registered.difference(&found) {
        bad.push(format!(
            "{name} is served but no file under src/tools/<family>/ defines it"
        ));
    }
    for name in found.difference(registered) {
        bad.push(format!("{name} has a file but is not in tools::registry()"));
    }
    bad
}

fn read_all(base: &Path, under: &Path) -> Vec<(String, String)> {
    rust_files(under)
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn registered() -> BTreeSet<String> {
    tools::registry()
        .iter()
        .map(|t| t.name.to_string())
        .filter(|n| n != "test_panic")
        .collect()
}

#[test]
fn the_layers_depend_one_way() {
    let src = src();
    let mut files = Vec::new();
    for part in [
        "jsonrpc.rs",
        "state.rs",
        "state",
        "tools",
        "mcp",
        "checkpoint",
    ] {
        files.extend(read_all(&src, &src.join(part)));
    }
    assert!(
        files
            .iter()
            .any(|(p, _)| p == "state.rs" || p.starts_with("state/")),
        "the state module (src/state.rs or src/state/) or src/jsonrpc.rs is missing"
    );
    assert!(
        files.len() > 40,
        "only {} files read under src/",
        files.len()
    );
    let bad = dependency_violations(&files);
    assert!(
        bad.is_empty(),
        "the layers depend the wrong way:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_tool_lives_in_its_family_folder() {
    let tools_dir = src().join("tools");
    let files = read_all(&tools_dir, &tools_dir);
    let mut bad = family_violations(&files, &registered());
    for fam in FAMILIES {
        if !tools_dir.join(fam).join("mod.rs").is_file() {
            bad.push(format!("src/tools/{fam}/mod.rs is missing"));
        }
    }
    assert!(bad.is_empty(), "the tools' layout:\n{}", bad.join("\n"));
}

/// Files left out of the typed-errors check, each with why (none today: add one only with a
/// reason a reader accepts).
const STRING_ERRORS_ELSEWHERE: &[(&str, &str)] = &[];

/// Whether `s` names the type `String` or `str` (a whole word, not a path segment such as
/// `str::Utf8Error`).
fn names_a_string_type(s: &str) -> bool {
    let word = |w: &str| {
        s.match_indices(w).any(|(i, _)| {
            let before = s[..i].chars().next_back();
            let after = s[i + w.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !ident(before) && !ident(after) && after != Some(':')
        })
    };
    word("String") || word("str")
}

/// The string-typed errors in `code`: every `Result<T, E>` whose `E` names `String` or `str`,
/// and every `.map_err` that makes a string of an error.
fn string_errors(code: &str) -> Vec<String> {
    // Runs of whitespace as one space (so `&'static str` stays two words).
    let spaced = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut hits = Vec::new();
    for (at, _) in spaced.match_indices("Result<") {
        let before = spaced[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `FooResult<…>`
        }
        let open = at + "Result<".len();
        // Each argument's span.
        let mut depth = 1;
        let mut args: Vec<std::ops::Range<usize>> = Vec::new();
        args.push(open..open);
        let bytes = spaced.as_bytes();
        let mut i = open;
        while i < bytes.len() {
            match bytes[i] {
                b'-' if bytes.get(i + 1) == Some(&b'>') => i += 1, // `Fn() -> T`
                b'<' | b'(' | b'[' => depth += 1,
                b'>' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => args.push(i + 1..i + 1),
                _ => {}
            }
            i += 1;
            args.last_mut().unwrap().end = i;
        }
        if depth != 0 {
            continue;
        }
        // The last argument (a trailing comma adds an empty one).
        let args: Vec<&str> = args
            .into_iter()
            .map(|r| spaced[r].trim())
            .filter(|a| !a.is_empty())
            .collect();
        if args.len() >= 2 && names_a_string_type(args[args.len() - 1]) {
            hits.push(spaced[at..=i].to_string());
        }
    }
    for (at, _) in spaced.match_indices(".map_err(|") {
        let rest = &spaced[at + ".map_err(|".len()..];
        let Some(bar) = rest.find('|') else { continue };
        let var = rest[..bar].trim();
        let body = rest[bar + 1..].trim_start();
        let body = body.strip_prefix('{').unwrap_or(body).trim_start();
        if body.starts_with(&format!("{var}.to_string()")) || body.starts_with("format!(") {
            let shown: String = spaced[at..].chars().take(60).collect();
            hits.push(format!("{shown}…"));
        }
    }
    hits
}

/// Every string-typed error among `files` (path relative to the repository, text), outside
/// tests and test support.
fn string_error_violations(files: &[(String, String)]) -> Vec<String> {
    let mut test_only: Vec<String> = Vec::new();
    let code: Vec<(String, String)> = files
        .iter()
        .map(|(path, text)| {
            let (code, mods) = non_test_code(text);
            for m in mods {
                test_only.extend(test_only_files(path, &m));
            }
            (path.clone(), code)
        })
        .collect();
    let mut bad = Vec::new();
    for (path, code) in &code {
        let elsewhere = STRING_ERRORS_ELSEWHERE
            .iter()
            .any(|(p, _)| path.starts_with(p));
        if test_only.contains(path) || elsewhere {
            continue;
        }
        for hit in string_errors(code) {
            bad.push(format!("{path}: {hit}"));
        }
    }
    bad
}

#[test]
fn production_code_has_typed_errors_not_strings() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut files = read_all(&repo, &repo.join("crates/core/src"));
    files.extend(read_all(&repo, &repo.join("src")));
    assert!(
        files.iter().any(|(p, _)| p == "src/editor.rs")
            && files.iter().any(|(p, _)| p == "crates/core/src/editor.rs"),
        "both crates' sources are read: {:?}",
        files.iter().map(|(p, _)| p).take(5).collect::<Vec<_>>()
    );
    for (p, _) in STRING_ERRORS_ELSEWHERE {
        assert!(
            files.iter().any(|(f, _)| f.starts_with(p)),
            "{p} is gone: drop it from STRING_ERRORS_ELSEWHERE"
        );
    }
    let bad = string_error_violations(&files);
    assert!(
        bad.is_empty(),
        "string errors in production code (give the module a thiserror enum):\n{}",
        bad.join("\n")
    );
}

// The checks themselves, on the layouts they must refuse.

#[test]
fn the_string_error_check_finds_each_spelling_and_spares_tests() {
    for text in [
        "pub fn f() -> Result<u8, String> { todo!() }",
        "fn f(\n    a: u8,\n) -> Result<\n    Vec<u8>,\n    String,\n> {}",
        "type Reply = Result<Value, String>;",
        "fn f() -> Result<(), &'static str> {}",
        "fn f() -> Result<Vec<u8>, (bool, String)> {}",
        "fn f() -> std::result::Result<(), std::string::String> {}",
        "type A = Box<dyn Fn() -> Result<Value, String>>;",
        "let x = y.map_err(|e| e.to_string())?;",
        "let x = y.map_err(|err| format!(\"bad: {err}\"))?;",
        "let x = y.map_err(|e| {\n    format!(\"a long message: {e}\")\n})?;",
    ] {
        let bad = string_error_violations(&files(&[("crates/core/src/x.rs", text)]));
        assert_eq!(bad.len(), 1, "{text:?}: {bad:?}");
    }
    for text in [
        "fn f() -> Result<String, ToolError> {}",
        "fn f() -> std::io::Result<String> {}",
        "fn f() -> Result<Vec<String>, CapError> {}",
        "fn f() -> Result<(Value, Vec<String>), ToolError> {}",
        "fn f() -> Result<u8, StringError> {}",
        "fn f() -> Result<&str, std::str::Utf8Error> {}",
        "fn f() -> IoResult<u8, String> {}",
        "let x = y.map_err(|e| ToolError::Failed(e.to_string()))?;",
        "fn f() -> Result<u8, E> {}\n#[cfg(test)]\nmod tests {\n    fn g() -> Result<u8, String> {}\n}\n",
        "/// Returns `Result<u8, String>` no more.\nfn f() {}",
    ] {
        let bad = string_error_violations(&files(&[("crates/core/src/x.rs", text)]));
        assert!(bad.is_empty(), "{text:?}: {bad:?}");
    }
    // A test-only module in a file of its own.
    let bad = string_error_violations(&files(&[
        (
            "crates/core/src/tools/mod.rs",
            "#[cfg(test)]\npub(crate) mod testutil;\n",
        ),
        (
            "crates/core/src/tools/testutil.rs",
            "fn f() -> Result<(), String> {}",
        ),
    ]));
    assert!(bad.is_empty(), "{bad:?}");
    // The review's API is held like the rest.
    let bad = string_error_violations(&files(&[(
        "src/api_review.rs",
        "fn f() -> Result<(), String> {}",
    )]));
    assert_eq!(bad.len(), 1, "{bad:?}");
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

#[test]
fn the_dependency_check_refuses_each_way_of_naming_the_server() {
    for text in [
        "use crate::server::Shared;",
        "pub fn f(ctx: &crate::server::Shared) {}",
        "use super::super::server::conn::Outgoing;",
        "use crate::{config::Config, server::Shared};",
        "use crate::{\n    server,\n    config,\n};",
        "use crate :: server :: Shared;",
    ] {
        let bad = dependency_violations(&files(&[("tools/mod.rs", text)]));
        assert_eq!(bad.len(), 1, "{text:?}: {bad:?}");
        let bad = dependency_violations(&files(&[("mcp/client.rs", text)]));
        assert_eq!(bad.len(), 1, "{text:?}: {bad:?}");
    }
    // The server may name itself, and names that only start alike are not the server.
    assert!(dependency_violations(&files(&[
        ("server/mod.rs", "use crate::server::conn;"),
        (
            "tools/mod.rs",
            "use crate::servers::X; use crate::{config::server_name};"
        ),
    ]))
    .is_empty());
    // No layer's code uses one above it (doc comments may link to them).
    let bad = dependency_violations(&files(&[
        (
            "state/mod.rs",
            "//! see [`crate::tools::Ctx`]\nuse crate::tools::ToolError;\nuse crate::{mcp::Catalog};",
        ),
        ("tools/decision/x.rs", "let l = crate::mcp::client::current();"),
        ("jsonrpc.rs", "use crate::state::State;"),
    ]));
    assert_eq!(bad.len(), 4, "{bad:?}");
    // Tests may: an inline test module, and a test-only module in a file of its own.
    let tested = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    use crate::mcp::call_tool;\n    \
                  fn g() { let c = '{'; let s = \"}\"; }\n}\n";
    assert!(dependency_violations(&files(&[
        ("tools/ide/open_file.rs", tested),
        (
            "tools/mod.rs",
            "pub mod ide;\n#[cfg(test)]\npub(crate) mod testutil;\n"
        ),
        ("tools/testutil.rs", "use crate::mcp::Service;"),
    ]))
    .is_empty());
    // ... but code after a test module is checked again, and the server is out even in tests.
    let after = format!("{tested}use crate::mcp::Service;\n");
    assert_eq!(
        dependency_violations(&files(&[("tools/x.rs", &after)])).len(),
        1
    );
    let server_in_test = "#[cfg(test)]\nmod tests {\n    use crate::server::Server;\n}\n";
    assert_eq!(
        dependency_violations(&files(&[("tools/x.rs", server_in_test)])).len(),
        1
    );
}

#[test]
fn the_family_check_refuses_a_flat_or_unknown_layout() {
    let tool = |name: &str| {
        format!("pub fn def() -> ToolDef {{\n    ToolDef {{\n        name: \"{name}\",\n")
    };
    let registered: BTreeSet<String> = ["openFile", "fs_read_file"].map(String::from).into();
    let ok = files(&[
        ("mod.rs", "pub mod ide;"),
        ("ide/mod.rs", ""),
        ("ide/open_file.rs", &tool("openFile")),
        ("workspace/fs_read_file.rs", &tool("fs_read_file")),
        ("test_panic.rs", &tool("test_panic")),
    ]);
    assert_eq!(family_violations(&ok, &registered), Vec::<String>::new());
    // The old flat layout: tools directly under src/tools/.
    let flat = files(&[
        ("mod.rs", ""),
        ("open_file.rs", &tool("openFile")),
        ("fs_read_file.rs", &tool("fs_read_file")),
    ]);
    assert_eq!(family_violations(&flat, &registered).len(), 2);
    // A folder that is not a family, two tools in one file, a tool with no file.
    let odd = files(&[
        ("editor/open_file.rs", &tool("openFile")),
        (
            "workspace/fs.rs",
            &format!("{}{}", tool("fs_read_file"), tool("fs_write_file")),
        ),
    ]);
    let bad = family_violations(&odd, &registered);
    assert!(
        bad.iter().any(|b| b.contains("not a tool family")),
        "{bad:?}"
    );
    assert!(bad.iter().any(|b| b.contains("defines 2 tools")), "{bad:?}");
    let missing = files(&[("ide/open_file.rs", &tool("openFile"))]);
    let bad = family_violations(&missing, &registered);
    assert!(
        bad.iter().any(|b| b.contains("fs_read_file is served")),
        "{bad:?}"
    );
}
