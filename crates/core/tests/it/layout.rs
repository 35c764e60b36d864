//! The source layout the README describes, held by a test (tests/nvim/layout_spec.lua does the
//! same for the Lua modules).
//!
//! * The crate's top-level modules depend on each other one way: every one of them is in a layer
//!   of [`LAYERS`] (bottom first), and its production code uses (`crate::m`, `super::…::m`,
//!   `use crate::{m, …}`) modules of its own layer or below, never in a cycle. The graph is
//!   computed from the sources; tests are exempt (the tools' tests call them through the MCP
//!   dispatch, as a client does). Nothing below the server names it, not even in a comment or a
//!   test.
//! * The tools are grouped by family: every file defining a tool (`fn def() -> ToolDef`) lives in
//!   `src/tools/<family>/` for one of the six families, defines exactly one tool, and the files
//!   and [`tools::registry`] name the same tools.
//! * The files inside the modules depend one way too: `file_cycles.rs`.
//! * Errors are typed: no production code of either crate (`crates/core/src/`, `src/`) has a
//!   `Result` whose error is a bare `String` (or `&str`, or a tuple holding one), nor makes one
//!   with `.map_err(|e| e.to_string())` or `.map_err(|e| format!(…))`; each module has its
//!   `thiserror` enum ([`STRING_ERRORS_ELSEWHERE`] lists the files converted by a change of
//!   their own). Tests and test support are exempt.

use claude_context_core::tools;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The families of `src/tools/`, as the README lists them.
const FAMILIES: &[&str] = &[
    "ide",
    "workspace",
    "memory_bank",
    "decision",
    "claude",
    "code",
    "hook",
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

/// The crate's top-level modules (a file or folder under `src/`), bottom layer first. A module
/// may use modules of its own layer or a layer below it, never one above; and no modules may
/// use each other in a cycle, within a layer either. Every top-level module is in exactly one
/// layer: a new module joins the one it belongs to.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves: small helpers, none using another module",
        &[
            "auth",
            "fsutil",
            "json_limits",
            "jsonrpc",
            "logging",
            "paths",
            "text",
            "threads",
            "uri",
            "worktree",
        ],
    ),
    (
        "the foundations: errors, every file access, the editor's snapshot, prompts",
        &["error", "capfs", "editor", "prompts"],
    ),
    (
        "configuration and storage",
        &[
            "lockfile",
            "config",
            "discovery",
            "project",
            "proposal",
            "merge",
            "memory_bank",
            "decision",
            "checkpoint",
            "claude",
            "transcript",
            "conversations",
        ],
    ),
    (
        "Claude Code's hooks: their events, reviews",
        &["plans", "hook"],
    ),
    ("what every tool reads", &["state"]),
    (
        "over the state: the tools, the sessions' turns",
        &["tools", "turns"],
    ),
    ("the MCP dispatch", &["mcp"]),
    ("the server", &["server"]),
    (
        "the server's clients: the relay, the --mcp-config file",
        &["relay", "mcp_config"],
    ),
];

/// The layer `module` is in (its index in [`LAYERS`]).
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// The top-level module a path under `src/` belongs to (`None` for `lib.rs` and `bin/`).
fn top_module(path: &str) -> Option<&str> {
    let top = path.split('/').next()?;
    let top = top.strip_suffix(".rs").unwrap_or(top);
    (top != "lib" && top != "bin").then_some(top)
}

/// The module path of a file under `src/` (`tools/ide/mod.rs` is `["tools", "ide"]`).
fn module_path(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    let last = parts.pop().unwrap_or("");
    if last != "mod.rs" {
        parts.push(last.strip_suffix(".rs").unwrap_or(last));
    }
    parts
}

/// `code` with the whitespace around `::`, `{`, `}` and `,` taken out, so that a path reads as
/// one word (`use crate :: {\n    mcp,` is `use crate::{mcp,`).
pub(crate) fn squeeze_paths(code: &str) -> String {
    let joins = |c: char| matches!(c, ':' | '{' | '}' | ',');
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            let before = out.chars().next_back().is_some_and(joins);
            let after = chars[i..].iter().find(|c| !c.is_whitespace());
            if before || after.is_some_and(|c| joins(*c)) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The crate's top-level modules `code` (of the file at `path` under `src/`) uses: `crate::m`,
/// `claude_context_core::m`, `m` in a `crate::{…}` group, and `super::…::m` reaching the root.
fn modules_used(path: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let squeezed = squeeze_paths(code);
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_at = |s: &str| -> String { s.chars().take_while(|c| ident(*c)).collect() };
    let starts_word = |at: usize| !squeezed[..at].chars().next_back().is_some_and(ident);
    let mut used = BTreeSet::new();
    let mut add = |name: &str| {
        if modules.contains(name) {
            used.insert(name.to_string());
        }
    };
    for prefix in ["crate::", "claude_context_core::"] {
        for (at, _) in squeezed.match_indices(prefix) {
            if !starts_word(at) {
                continue;
            }
            let rest = &squeezed[at + prefix.len()..];
            let Some(group) = rest.strip_prefix('{') else {
                add(&word_at(rest));
                continue;
            };
            // `crate::{mcp, server::Shared, …}`: the group's top-level items.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ if item_start && depth == 0 => {
                        add(&word_at(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        }
    }
    let here = module_path(path);
    for (at, _) in squeezed.match_indices("super::") {
        // Counted once, from a chain's first `super`.
        if !starts_word(at) || squeezed[..at].ends_with("super::") {
            continue;
        }
        let mut rest = &squeezed[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        if ups == here.len() {
            add(&word_at(rest));
        }
    }
    used
}

/// The production code's uses among the crate's top-level modules: module → the modules it
/// uses (itself left out). `files` are (path under `src/`, text); tests and test support are
/// left out.
fn module_graph(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|(p, _)| top_module(p).map(String::from))
        .collect();
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
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (path, code) in &code {
        let Some(top) = top_module(path) else {
            continue;
        };
        if test_only.contains(path) {
            continue;
        }
        let mut used = modules_used(path, code, &modules);
        used.remove(top);
        graph.get_mut(top).unwrap().extend(used);
    }
    graph
}

/// The modules `from` reaches in `graph` (itself only through a cycle).
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for n in graph.get(&m).into_iter().flatten() {
            if seen.insert(n.clone()) {
                todo.push(n.clone());
            }
        }
    }
    seen
}

/// One shortest way from `m` back to itself through `group`, as `m → … → m`.
fn way_round(
    graph: &BTreeMap<String, BTreeSet<String>>,
    m: &str,
    group: &BTreeSet<String>,
) -> String {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([m]);
    let mut last = m;
    'search: while let Some(a) = queue.pop_front() {
        for b in &graph[a] {
            if b == m {
                last = a;
                break 'search;
            }
            if group.contains(b) && !prev.contains_key(b.as_str()) {
                prev.insert(b, a);
                queue.push_back(b);
            }
        }
    }
    let mut way = vec![m, last];
    let mut at = last;
    while at != m {
        at = prev[at];
        way.push(at);
    }
    way.reverse();
    way.join(" → ")
}

/// Every cycle among the modules of `graph`: one line per group of modules that reach each
/// other, with one way round it.
pub(crate) fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reaches(graph, m).contains(m) {
            continue;
        }
        let group: BTreeSet<String> = reaches(graph, m)
            .into_iter()
            .filter(|n| reaches(graph, n).contains(m))
            .collect();
        done.extend(group.iter().cloned());
        out.push(format!(
            "a cycle: {} (the modules that reach each other: {})",
            way_round(graph, m, &group),
            group.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
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
pub(crate) fn non_test_code(text: &str) -> (String, Vec<String>) {
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

/// Every violation of the dependency rules among `files` (path relative to `src/`, text): a
/// module in no layer of [`LAYERS`], a module using one of a layer above, a cycle; and the
/// server named below its layer, even in a comment or a test.
fn dependency_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    let graph = module_graph(files);
    for (m, used) in &graph {
        let Some(layer) = layer_of(m) else {
            bad.push(format!("src/{m}: a module in no layer (add it to LAYERS)"));
            continue;
        };
        for u in used {
            if let Some(l) = layer_of(u).filter(|l| *l > layer) {
                bad.push(format!(
                    "src/{m} ({}) uses {u}, a layer above it ({})",
                    LAYERS[layer].0, LAYERS[l].0
                ));
            }
        }
    }
    bad.extend(cycles(&graph));
    let server = layer_of("server").unwrap();
    for (path, text) in files {
        let below = top_module(path)
            .and_then(layer_of)
            .is_some_and(|l| l < server);
        if below {
            for hit in names_module(text, "server") {
                bad.push(format!("src/{path} names the server ({hit})"));
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

pub(crate) fn read_all(base: &Path, under: &Path) -> Vec<(String, String)> {
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
    let files = read_all(&src, &src);
    assert!(
        files.len() > 100 && files.iter().any(|(p, _)| p == "state/mod.rs"),
        "only {} files read under src/",
        files.len()
    );
    let mut bad = dependency_violations(&files);
    let modules: BTreeSet<&str> = files.iter().filter_map(|(p, _)| top_module(p)).collect();
    let mut named = BTreeSet::new();
    for m in LAYERS.iter().flat_map(|(_, ms)| ms.iter()) {
        if !named.insert(*m) {
            bad.push(format!("{m} is in two layers"));
        }
        if !modules.contains(m) {
            bad.push(format!("{m} is in LAYERS but not under src/: drop it"));
        }
    }
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
        "use super::super::SUPER::server::conn::Outgoing;",
        "use crate::{config::Config, server::Shared};",
        "use crate::{\n    server,\n    config,\n};",
        "use crate :: server :: Shared;",
    ] {
        // `super::` as many times as it takes to reach the crate's root.
        for (path, up) in [("tools/ide/x.rs", "super::"), ("mcp/client.rs", "")] {
            let text = text.replace("SUPER::", up);
            let bad = dependency_violations(&files(&[(path, &text), ("server/mod.rs", "")]));
            // It names the server, and uses a layer above its own.
            assert_eq!(bad.len(), 2, "{path}: {text:?}: {bad:?}");
            assert!(bad[0].contains("a layer above"), "{bad:?}");
        }
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
        ("mcp/mod.rs", ""),
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
        ("mcp/mod.rs", ""),
    ]))
    .is_empty());
    // ... but code after a test module is checked again, and the server is out even in tests.
    let after = format!("{tested}use crate::mcp::Service;\n");
    let mcp = ("mcp/mod.rs", "");
    assert_eq!(
        dependency_violations(&files(&[("tools/x.rs", &after), mcp])).len(),
        1
    );
    let server_in_test = "#[cfg(test)]\nmod tests {\n    use crate::server::Server;\n}\n";
    assert_eq!(
        dependency_violations(&files(&[("tools/x.rs", server_in_test)])).len(),
        1
    );
}

#[test]
fn the_dependency_check_refuses_a_cycle_and_a_module_in_no_layer() {
    // Two modules of one layer using each other, and a third joining the cycle from a layer
    // above.
    let bad = dependency_violations(&files(&[
        ("config.rs", "use crate::lockfile::Lock;"),
        (
            "lockfile.rs",
            "fn f() { crate::config::Config::default(); }",
        ),
        ("tools/mod.rs", "use crate::{config, lockfile};"),
    ]));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("a cycle: config → lockfile → config"),
        "{bad:?}"
    );
    let bad = dependency_violations(&files(&[
        ("config.rs", "use super::lockfile::Lock;"),
        ("lockfile.rs", "use crate::tools::ToolError;"),
        ("tools/ide/mod.rs", "use super::super::config;"),
    ]));
    assert!(
        bad.iter()
            .any(|b| b.starts_with("a cycle: config → lockfile → tools → config")),
        "{bad:?}"
    );
    // `super::` inside a module names a sibling, not a top-level module.
    assert!(dependency_violations(&files(&[
        ("tools/ide/mod.rs", "use super::state::X;"),
        ("state/mod.rs", ""),
        ("mcp/mod.rs", "use super::tools;"),
    ]))
    .is_empty());
    let bad = dependency_violations(&files(&[("newthing.rs", ""), ("tools/mod.rs", "")]));
    assert_eq!(
        bad,
        vec!["src/newthing: a module in no layer (add it to LAYERS)".to_string()]
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

/// What only `src/binding.rs` may write in the Neovim crate: the binding's plumbing, once (every
/// Lua function made and guarded there, every Lua error made by its `lua_error`, the one registry
/// of waiting callbacks).
const BINDING_ONLY: &[&str] = &[
    "create_function(",
    "Error::runtime(",
    "HashMap<u64, Function>",
    "HashMap<u64, mlua::Function>",
];

/// Where the Neovim crate's files other than `src/binding.rs` write what only it may.
fn binding_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (path, text) in files {
        if path == "src/binding.rs" {
            continue;
        }
        let (code, _) = non_test_code(text);
        for w in BINDING_ONLY {
            if code.contains(w) {
                bad.push(format!("{path}: {w} (use src/binding.rs)"));
            }
        }
    }
    bad
}

#[test]
fn the_binding_makes_lua_functions_errors_and_callbacks_in_one_place() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let src = read_all(&repo, &repo.join("src"));
    assert!(
        src.iter().any(|(p, _)| p == "src/binding.rs") && src.len() > 5,
        "{src:?}"
    );
    let bad = binding_violations(&src);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The check itself.
    let bad = binding_violations(&files(&[
        (
            "src/api_x.rs",
            "t.set(\"f\", lua.create_function(|_, ()| Ok(()))?)?;",
        ),
        ("src/api_y.rs", "Err(mlua::Error::runtime(\"no\"))"),
        ("src/binding.rs", "lua.create_function(f)"),
    ]));
    assert_eq!(bad.len(), 2, "{bad:?}");
}

/// Files that may still build a tool error from another error's text by hand: the conversions
/// themselves, and the code tools (their own `From<CodeError>`, sorting each variant).
const HAND_CONVERSIONS: &[&str] = &[
    "crates/core/src/tools/mod.rs",
    "crates/core/src/tools/code/",
];

#[test]
fn typed_errors_become_tool_errors_through_their_one_from() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut bad = Vec::new();
    for (path, text) in read_all(&repo, &repo.join("crates/core/src/tools")) {
        if HAND_CONVERSIONS.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        let (code, _) = non_test_code(&text);
        let spaced = code.split_whitespace().collect::<Vec<_>>().join(" ");
        for w in [
            "ToolError::Failed(e.to_string())",
            "ToolError::InvalidParams(e.to_string())",
        ] {
            if spaced.contains(w) {
                bad.push(format!(
                    "{path}: {w} (give the error a Fault and use `?`, crates/core/src/error.rs)"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The longest a production function may be, in lines (its signature to its closing brace or
/// `end`), in Rust (both crates) and Lua.
const MAX_FUNCTION_LINES: usize = 80;

/// Functions still longer, by `path:name`: all in files other work is changing now. Shrink it;
/// never grow it.
const LONG_FUNCTIONS: &[&str] = &[
    // Still to be split (the list may only shrink: a listed function that is short fails too).
];

/// The indentation of `line` (leading spaces).
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The name a Rust line declares a function by (`pub async fn run(` is `run`); `None` for a
/// declaration without a body (`fn f();`).
fn rust_fn_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let mut rest = t;
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let after = rest.strip_prefix("fn ")?;
    if line.trim_end().ends_with(';') {
        return None;
    }
    let end = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    Some(&after[..end])
}

/// The name a Lua line declares a function by (`function M.open(`, `local function f(`,
/// `M.f = function(`).
fn lua_fn_name(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.strip_prefix("local ").unwrap_or(t);
    let tail = t.trim_end().trim_end_matches([')', ',']);
    if tail.ends_with(" end") {
        return None; // `function() end` on one line
    }
    if let Some(rest) = t.strip_prefix("function ") {
        let end = rest.find('(')?;
        return Some(rest[..end].trim());
    }
    let (lhs, rhs) = t.split_once('=')?;
    let lhs = lhs.trim();
    let simple = !lhs.is_empty()
        && lhs
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    (simple && rhs.trim_start().starts_with("function(")).then_some(lhs)
}

/// Every function of `code` longer than `max` lines: (name, lines). A function ends at the
/// first later line at its indentation that closes it (`}` in Rust, `end` in Lua).
fn long_functions(code: &str, lua: bool, max: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let name = if lua {
            lua_fn_name(line)
        } else {
            rust_fn_name(line)
        };
        let Some(name) = name else { continue };
        let ind = indent(line);
        let closes = |l: &str| {
            indent(l) == ind
                && if lua {
                    let t = l.trim_start();
                    t.starts_with("end")
                        && !t[3..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                } else {
                    l.trim_end() == format!("{}}}", " ".repeat(ind))
                }
        };
        let end = (i + 1..lines.len()).find(|&k| closes(lines[k]));
        let n = end.map_or(lines.len() - i, |k| k - i + 1);
        if n > max {
            out.push((name.to_string(), n));
        }
    }
    out
}

/// The production functions over [`MAX_FUNCTION_LINES`] among `files` (path, text): Rust
/// outside tests and test support, and Lua.
fn long_function_violations(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    let mut test_only: Vec<String> = Vec::new();
    for (path, text) in files {
        if path.ends_with(".rs") {
            let (_, mods) = non_test_code(text);
            for m in mods {
                test_only.extend(test_only_files(path, &m));
            }
        }
    }
    for (path, text) in files {
        let lua = path.ends_with(".lua");
        if !lua && (test_only.contains(path) || path.ends_with("/tests.rs")) {
            continue;
        }
        let code = if lua {
            text.clone()
        } else {
            non_test_code(text).0
        };
        for (name, n) in long_functions(&code, lua, MAX_FUNCTION_LINES) {
            found.push((format!("{path}:{name}"), n));
        }
    }
    found
        .into_iter()
        .filter(|(at, _)| !LONG_FUNCTIONS.contains(&at.as_str()))
        .map(|(at, n)| format!("{at} is {n} lines (at most {MAX_FUNCTION_LINES})"))
        .collect()
}

#[test]
fn production_functions_are_short() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut files = read_all(&repo, &repo.join("crates/core/src"));
    files.extend(read_all(&repo, &repo.join("src")));
    for p in lua_files(&repo.join("lua")) {
        let rel = p
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        files.push((rel, std::fs::read_to_string(&p).unwrap()));
    }
    assert!(files
        .iter()
        .any(|(p, _)| p == "lua/claude_context/init.lua"));
    let mut bad = long_function_violations(&files);
    for at in LONG_FUNCTIONS {
        // `path:name`, the name itself perhaps holding a colon (`Task:fill`).
        let cut = at
            .find(".rs:")
            .map(|i| i + 3)
            .or(at.find(".lua:").map(|i| i + 4));
        let (path, name) = at.split_at(cut.unwrap());
        let name = &name[1..];
        let still = files.iter().any(|(p, text)| {
            p == path && {
                let lua = p.ends_with(".lua");
                let code = if lua {
                    text.clone()
                } else {
                    non_test_code(text).0
                };
                long_functions(&code, lua, MAX_FUNCTION_LINES)
                    .iter()
                    .any(|(n, _)| n == name)
            }
        });
        if !still {
            bad.push(format!(
                "{at} is short now (or gone): drop it from LONG_FUNCTIONS"
            ));
        }
    }
    assert!(bad.is_empty(), "long functions:\n{}", bad.join("\n"));
    // The check itself.
    let body = |n: usize| "    x();\n".repeat(n);
    let rust = format!(
        "pub async fn long() {{\n{}}}\n\nfn short() {{\n}}\n",
        body(80)
    );
    assert_eq!(long_functions(&rust, false, 80), [("long".to_string(), 82)]);
    let lua = format!(
        "local function f()\n{}  ended = 1\nend\n\nM.g = function()\nend\nM.h = function() end\n",
        body(78)
    );
    assert_eq!(long_functions(&lua, true, 80), [("f".to_string(), 81)]);
}

/// The longest a production file may be, in lines: a Lua module, and a Rust file's code outside
/// its tests.
const MAX_LUA_FILE_LINES: usize = 500;
const MAX_RUST_FILE_LINES: usize = 700;

/// The production files over their limit among `files` (path, text): Rust outside tests and
/// test support (its `#[cfg(test)]` modules not counted), and Lua.
fn long_file_violations(files: &[(String, String)]) -> Vec<String> {
    let mut test_only: Vec<String> = Vec::new();
    for (path, text) in files {
        if path.ends_with(".rs") {
            for m in non_test_code(text).1 {
                test_only.extend(test_only_files(path, &m));
            }
        }
    }
    let mut bad = Vec::new();
    for (path, text) in files {
        let lua = path.ends_with(".lua");
        if !lua && (test_only.contains(path) || path.ends_with("/tests.rs")) {
            continue;
        }
        let (n, max) = if lua {
            (text.lines().count(), MAX_LUA_FILE_LINES)
        } else {
            (non_test_code(text).0.lines().count(), MAX_RUST_FILE_LINES)
        };
        if n > max {
            bad.push(format!("{path} is {n} lines (at most {max})"));
        }
    }
    bad
}

#[test]
fn production_files_are_short() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut tree = read_all(&repo, &repo.join("crates/core/src"));
    tree.extend(read_all(&repo, &repo.join("src")));
    for p in lua_files(&repo.join("lua")) {
        let rel = p
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        tree.push((rel, std::fs::read_to_string(&p).unwrap()));
    }
    assert!(tree.len() > 100, "the tree is read");
    let bad = long_file_violations(&tree);
    assert!(bad.is_empty(), "long files:\n{}", bad.join("\n"));
    // The check itself: a Lua file one line over; a Rust file whose tests make it long is not.
    let lines = |n: usize| "x()\n".repeat(n);
    let rust = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        lines(690),
        lines(400)
    );
    let got = long_file_violations(&files(&[
        ("lua/a.lua", &lines(501)),
        ("lua/b.lua", &lines(500)),
        ("src/c.rs", &rust),
        ("src/d.rs", &lines(701)),
    ]));
    assert_eq!(
        got,
        [
            "lua/a.lua is 501 lines (at most 500)",
            "src/d.rs is 701 lines (at most 700)"
        ]
    );
}

/// Every `.lua` file under `dir`, sorted.
fn lua_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(lua_files(&p));
        } else if p.extension().is_some_and(|x| x == "lua") {
            out.push(p);
        }
    }
    out.sort();
    out
}
