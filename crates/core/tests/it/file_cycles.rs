//! The files of each crate depend on each other one way too, inside a top-level module as
//! across them (`layout.rs` holds the top-level modules' layers): in the core
//! (`crates/core/src/`) and in the Neovim crate (`src/`), no file's production code uses
//! (`crate::…`, `super::…`, `self::…`, groups included) a file that uses it back, directly or
//! round a longer circle. A module and the files below it (`server/mod.rs` and `server/door.rs`)
//! are one parent and its children, not a cycle: a parent declares its children and they may
//! share its items.

use super::layout::{cycles, non_test_code, read_all, squeeze_paths};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The module path of a file under a crate's `src/` (`server/mod.rs` is `server`, `lib.rs` the
/// root, ``).
fn file_module(path: &str) -> String {
    let p = path.trim_end_matches(".rs");
    let p = p.strip_suffix("/mod").unwrap_or(p);
    match p {
        "lib" | "main" => String::new(),
        p => p.replace('/', "::"),
    }
}

/// Whether `a` is `b`, or one of them holds the other (`server` and `server::door`).
fn related(a: &str, b: &str) -> bool {
    let holds = |outer: &str, inner: &str| {
        outer.is_empty() || inner == outer || inner.starts_with(&format!("{outer}::"))
    };
    holds(a, b) || holds(b, a)
}

/// The item paths `code` names from `crate::`, `super::` or `self::`, each as its segments
/// from the crate's root, with `{…}` groups expanded (`super::{door, Shared}` in `server/hooks.rs`
/// is `server::door` and `server::Shared`). `here` is the file's module path; `dir_module` says
/// whether the file is a `mod.rs` (its `self` is itself, a plain file's `super` is its parent).
fn named_paths(code: &str, here: &str) -> Vec<Vec<String>> {
    let squeezed = squeeze_paths(code);
    let here: Vec<String> = match here {
        "" => vec![],
        h => h.split("::").map(String::from).collect(),
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (at, _) in squeezed.match_indices("::") {
        let head_start = squeezed[..at]
            .rfind(|c: char| !ident(c))
            .map_or(0, |i| i + 1);
        let head = &squeezed[head_start..at];
        if squeezed[..head_start].ends_with("::") {
            continue; // not the first segment of its path
        }
        let mut base = match head {
            "crate" => vec![],
            "self" => here.clone(),
            "super" => here[..here.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut rest = &squeezed[at + 2..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        expand(&base, rest, &mut out);
    }
    out
}

/// The paths `rest` (what follows `base::`) names: one path, or a `{…}` group of them.
fn expand(base: &[String], rest: &str, out: &mut Vec<Vec<String>>) {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut path = base.to_vec();
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in group_items(group) {
                expand(&path, item, out);
            }
            return;
        }
        let word: String = rest.chars().take_while(|c| ident(*c)).collect();
        if word.is_empty() {
            break;
        }
        rest = &rest[word.len()..];
        path.push(word);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    out.push(path);
}

/// The top-level items of a `{…}` group's text (after its `{`, up to its `}`).
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The files' graph: file module → the file modules its production code uses (the deepest
/// file each named path reaches), parents and children left out. `files` are (path under
/// `src/`, text).
fn file_graph(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|(p, _)| file_module(p)).collect();
    let mut graph = BTreeMap::new();
    for (path, text) in files {
        let here = file_module(path);
        let (code, _) = non_test_code(text);
        let mut used = BTreeSet::new();
        for segs in named_paths(&code, &here) {
            let file = (1..=segs.len())
                .rev()
                .map(|n| segs[..n].join("::"))
                .find(|m| modules.contains(m));
            if let Some(f) = file.filter(|f| !related(f, &here)) {
                used.insert(f);
            }
        }
        graph.insert(here, used);
    }
    graph
}

/// Every file-level cycle of the crate whose `src/` is `src` (files under `bin/` and test
/// support left out).
fn file_cycles(src: &Path) -> Vec<String> {
    let files: Vec<(String, String)> = read_all(src, src)
        .into_iter()
        .filter(|(p, _)| {
            !p.starts_with("bin/") && !p.contains("testutil") && !p.ends_with("tests.rs")
        })
        .collect();
    assert!(
        files.len() > 5,
        "only {} files read under {}",
        files.len(),
        src.display()
    );
    cycles(&file_graph(&files))
}

#[test]
fn the_cores_files_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = file_cycles(&src);
    assert!(
        bad.is_empty(),
        "the core's files in a circle:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_neovim_crates_files_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src");
    let bad = file_cycles(&src);
    assert!(
        bad.is_empty(),
        "the Neovim crate's files in a circle:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_file_cycle_check_finds_each_way_of_naming_a_file() {
    let files = |a: &str, b: &str, c: &str| {
        vec![
            (
                "server/mod.rs".to_string(),
                "pub mod door;\npub mod hooks;\npub struct Shared;".to_string(),
            ),
            ("server/door.rs".to_string(), a.to_string()),
            ("server/hooks.rs".to_string(), b.to_string()),
            ("api.rs".to_string(), c.to_string()),
        ]
    };
    let found = |a: &str, b: &str, c: &str| cycles(&file_graph(&files(a, b, c)));
    // A circle through `super::x::f`, `crate::server::x` and a `super::{…}` group.
    assert_eq!(
        found(
            "fn f() { super::hooks::record(); }",
            "use super::{door, Shared};",
            ""
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "use crate::server::hooks::record;",
            "use crate::{server::door::Slot, api};",
            ""
        )
        .len(),
        1
    );
    assert_eq!(
        found(
            "use crate::api::X;",
            "",
            "fn f() { crate::server::door::g() }"
        )
        .len(),
        1
    );
    // One way only, a parent and its child, and a use in a test are no cycle.
    assert!(found("use super::hooks;", "use super::Shared;", "").is_empty());
    assert!(found("use super::Shared;", "use crate::server::Shared;", "").is_empty());
    assert!(found(
        "use super::hooks;",
        "#[cfg(test)]\nmod tests {\n    use super::super::door;\n}",
        ""
    )
    .is_empty());
}
