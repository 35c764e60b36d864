//! The shaping of the editor's answers: confinement, columns in characters, grouping, caps.

use super::answer::{chars_of, RawLoc, RawSection};
use super::*;
use crate::tools::door::testing::{door, Tree};
use crate::tools::ide::testing::{ctx, texts, FakeEditor};
use crate::tools::testutil::TestServer;
use serde_json::json;
use std::sync::Arc;

/// A server over the project of `t` whose editor answers with `answer`.
fn server(
    t: &Tree,
    answer: impl Fn(&str, &Value) -> Result<Value, String> + Send + Sync + 'static,
) -> (TestServer, Arc<FakeEditor>) {
    let (_, ed) = ctx(answer);
    let state = t._d.path().join("state");
    (
        TestServer::with_rpc(&t.proj, &state, |_| {}, ed.clone()),
        ed,
    )
}

fn tree() -> Tree {
    let t = Tree::new("lib");
    std::fs::write(
        t.proj.join("src/a.py"),
        "import os\n\ndef área(x):\n    return x\n\nprint(área(1), área(2))\n",
    )
    .unwrap();
    std::fs::write(t.outside.join("os.py"), "SECRET = 1\ndef getcwd(): pass\n").unwrap();
    std::os::unix::fs::symlink(t.outside.join("os.py"), t.proj.join("link.py")).unwrap();
    t
}

fn loc(path: &Path, line: u64, ch: u64, enc: &str) -> RawLoc {
    RawLoc {
        path: path.to_string_lossy().into_owned(),
        line,
        character: ch,
        end_line: Some(line),
        end_character: Some(ch + 4),
        encoding: Some(enc.into()),
        ..Default::default()
    }
}

#[test]
fn columns_are_characters_whatever_the_servers_encoding() {
    // "print(área(1), área(2))": the second `área` starts at character 15 (0-based).
    let line = "print(área(1), área(2))";
    assert_eq!(chars_of(line, 15, "utf-16"), 15);
    assert_eq!(chars_of(line, 16, "utf-8"), 15, "á is two bytes");
    assert_eq!(chars_of(line, 15, "utf-32"), 15);
    assert_eq!(
        chars_of("a😀b", 3, "utf-16"),
        2,
        "an astral char is two UTF-16 units"
    );
    assert_eq!(chars_of("a😀b", 5, "utf-8"), 2);
    assert_eq!(
        chars_of("ab", 4, "utf-16"),
        4,
        "past the end stays past the end"
    );
}

#[test]
fn locations_inside_get_text_and_those_outside_only_path_and_line() {
    let t = tree();
    let d = door(&t);
    let a = t.proj.join("src/a.py");
    let raw = RawAnswer {
        query: "references of área".into(),
        servers: vec!["pylsp".into()],
        sections: vec![RawSection {
            title: "references".into(),
            items: vec![
                loc(&a, 5, 16, "utf-8"),
                loc(&a, 2, 4, "utf-8"),
                loc(&a, 5, 16, "utf-8"), // a duplicate (two servers)
                loc(&t.outside.join("os.py"), 0, 0, "utf-16"),
                loc(&t.proj.join("link.py"), 1, 4, "utf-16"),
            ],
            ordered: false,
        }],
        ..Default::default()
    };
    let ans = shape(&d, raw, 100);
    let sec = &ans.sections[0];
    assert_eq!(sec.total, 4);
    assert_eq!(sec.more, 0);
    let inside = sec.files.iter().find(|f| f.path == "src/a.py").unwrap();
    assert!(inside.inside);
    assert_eq!(inside.locations.len(), 2);
    assert_eq!(inside.locations[0].line, 3);
    assert_eq!(inside.locations[0].col, Some(5));
    assert_eq!(inside.locations[0].text.as_deref(), Some("def área(x):"));
    assert_eq!(inside.locations[1].line, 6);
    assert_eq!(inside.locations[1].col, Some(16));
    let text = render(&ans);
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!serde_json::to_string(&ans).unwrap().contains("SECRET"));
    let outside: Vec<_> = sec.files.iter().filter(|f| !f.inside).collect();
    assert_eq!(
        outside.len(),
        2,
        "the file outside and the link out: {outside:?}"
    );
    for f in outside {
        assert!(Path::new(&f.path).is_absolute());
        assert_eq!(f.locations[0].text, None);
        assert_eq!(f.locations[0].col, None);
    }
    assert!(text.contains("src/a.py\n  3:5-8  | def área(x):"), "{text}");
    assert!(
        text.contains("os.py:1  (outside the project: text withheld)"),
        "{text}"
    );
}

#[test]
fn a_buffers_text_wins_over_the_files_and_caps_count_the_rest() {
    let t = tree();
    let d = door(&t);
    let a = t.proj.join("src/a.py");
    let mut items = Vec::new();
    for i in 0..7 {
        let mut l = loc(&a, i, 0, "utf-16");
        l.text = Some(format!("unsaved line {i}"));
        items.push(l);
    }
    let raw = RawAnswer {
        query: "q".into(),
        sections: vec![RawSection {
            title: "references".into(),
            items,
            ordered: false,
        }],
        ..Default::default()
    };
    let ans = shape(&d, raw, 5);
    assert_eq!(ans.sections[0].total, 7);
    assert_eq!(ans.sections[0].more, 2);
    assert_eq!(ans.sections[0].files[0].locations.len(), 5);
    assert_eq!(
        ans.sections[0].files[0].locations[0].text.as_deref(),
        Some("unsaved line 0")
    );
    assert!(render(&ans).contains("… 2 more"));
}

#[test]
fn a_file_outside_is_refused_before_the_editor_is_asked() {
    let t = tree();
    let (s, ed) = server(&t, |_, _| Ok(json!({"query": "x", "sections": []})));
    for args in [
        json!({"file": t.outside.join("os.py"), "line": 1, "column": 1}),
        json!({"file": "link.py", "line": 1, "text": "getcwd"}),
        json!({"file": "../lib/os.py", "symbol": "getcwd"}),
    ] {
        let r = s.call("lsp_definition", args.clone());
        assert_eq!(r["isError"], true, "{args}");
        assert!(texts(&r)[0].contains("outside the project"), "{r}");
    }
    let r = s.call(
        "lsp_diagnostics",
        json!({"files": ["src/a.py", t.outside.join("os.py")]}),
    );
    assert_eq!(r["isError"], true);
    assert!(ed.calls.lock().unwrap().is_empty());
    // Inside: the editor gets the absolute path and the door's roots.
    let r = s.call(
        "lsp_references",
        json!({"file": "src/a.py", "line": 3, "text": "área"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let calls = ed.calls.lock().unwrap();
    let (m, p) = &calls[0];
    assert_eq!(m, "lsp_references");
    assert_eq!(p["file"], json!(t.proj.join("src/a.py")));
    assert_eq!(p["roots"], json!([t.proj]));
    assert_eq!(p["include_declaration"], false);
}

#[test]
fn arguments_that_name_no_place_are_invalid() {
    let t = tree();
    let (s, _) = server(&t, |_, _| Ok(json!({})));
    for (tool, args) in [
        ("lsp_definition", json!({})),
        ("lsp_definition", json!({"line": 3})),
        ("lsp_definition", json!({"file": "a.py", "line": 0})),
        ("lsp_hover", json!({"symbol": ""})),
        ("lsp_symbols", json!({})),
        ("code_outline", json!({})),
        ("lsp_diagnostics", json!({})),
        ("lsp_calls", json!({"symbol": "f", "direction": "sideways"})),
    ] {
        let e = s.call(tool, args.clone());
        assert_eq!(e["error"]["code"], -32602, "{tool} {args}: {e}");
    }
}

#[test]
fn the_answer_is_structured_content_with_text() {
    let t = tree();
    let a = t.proj.join("src/a.py");
    let ans = json!({"query": "definition of área", "servers": ["pylsp"],
        "sections": [{"title": "definitions", "items": [
            {"path": a, "line": 2, "character": 4, "end_line": 2, "end_character": 8,
             "encoding": "utf-16"}]}]});
    let (s, _) = server(&t, move |_, _| Ok(ans.clone()));
    let r = s.call("lsp_definition", json!({"symbol": "área"}));
    assert_eq!(r["isError"], false, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(sc["sections"][0]["files"][0]["path"], "src/a.py");
    assert_eq!(sc["sections"][0]["files"][0]["locations"][0]["line"], 3);
    assert_eq!(sc["sections"][0]["files"][0]["locations"][0]["col"], 5);
    assert_eq!(sc["sections"][0]["files"][0]["locations"][0]["end_col"], 9);
    let schema = output_schema().value();
    assert_eq!(schema["type"], "object");
    assert!(texts(&r)[0].starts_with("definition of área (pylsp)"));
    // Every tool of the family answers structure that fits its outputSchema (TestServer checks).
    for (tool, args) in [
        ("lsp_references", json!({"symbol": "área"})),
        ("lsp_implementations", json!({"symbol": "área"})),
        (
            "lsp_type_definition",
            json!({"file": "src/a.py", "line": 3, "column": 5}),
        ),
        ("lsp_hover", json!({"symbol": "área"})),
        ("lsp_symbols", json!({"query": "área"})),
        (
            "lsp_calls",
            json!({"symbol": "área", "direction": "incoming"}),
        ),
        ("code_outline", json!({"file": "src/a.py"})),
        (
            "lsp_diagnostics",
            json!({"file": "src/a.py", "timeout_ms": 100}),
        ),
    ] {
        let r = s.call(tool, args);
        assert_eq!(r["isError"], false, "{tool}: {r}");
        assert!(r["structuredContent"].is_object(), "{tool}: {r}");
    }
}

#[test]
fn argument_errors_are_invalid_params_and_the_rest_failures() {
    let t = Target {
        line: Some(3),
        ..Default::default()
    };
    let e: ToolError = t.check("lsp_references").unwrap_err().into();
    assert!(
        matches!(&e, ToolError::InvalidParams(m) if m == "lsp_references: `line` needs a `file`"),
        "{e:?}"
    );
    let e: ToolError = CodeError::Outside {
        tool: "lsp_calls",
        path: "/etc/passwd".into(),
        roots: "/p".into(),
    }
    .into();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.starts_with("lsp_calls: refused: /etc/passwd is outside")),
        "{e:?}"
    );
    let e: ToolError = CodeError::Editor(crate::editor::EditorError::Handler(
        "no language server is attached".into(),
    ))
    .into();
    assert!(matches!(&e, ToolError::Failed(m) if m == "no language server is attached"));
}

#[test]
fn a_symbol_alone_with_no_workspace_search_gets_the_files_that_hold_its_name() {
    // The editor answers `need_candidates` (no running server searches the workspace); the
    // bridge asks again with the project's files holding the name, and their stat keys.
    let t = tree();
    std::fs::write(t.proj.join("src/b.py"), "from a import área\n").unwrap();
    std::fs::write(t.proj.join("src/c.py"), "x = 1\n").unwrap();
    let a = t.proj.join("src/a.py");
    let (s, ed) = server(&t, move |_, p| {
        if p.get("candidates").is_none() {
            return Ok(json!({"need_candidates": true}));
        }
        Ok(json!({"query": "references of área", "servers": ["pylsp"],
            "sections": [{"title": "references", "items": [
                {"path": a, "line": 2, "character": 4, "encoding": "utf-16"}]}]}))
    });
    let r = s.call("lsp_references", json!({"symbol": "área"}));
    assert_eq!(r["isError"], false, "{r}");
    let calls = ed.calls.lock().unwrap();
    assert_eq!(calls.len(), 2);
    let p = &calls[1].1;
    let mut got: Vec<String> = p["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    let want: Vec<String> = ["src/a.py", "src/b.py"]
        .iter()
        .map(|f| t.proj.join(f).to_string_lossy().into_owned())
        .collect();
    assert_eq!(got, want);
    assert_eq!(p["indexed_files"], 3);
    let key = p["candidates"][0]["key"].as_str().unwrap();
    assert_eq!(key.split(':').count(), 3, "{key}");
}
