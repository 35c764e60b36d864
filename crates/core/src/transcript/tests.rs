use super::render::{escape, level, Link, Rendered};
use super::*;
use serde_json::json;

fn render(records: &[serde_json::Value]) -> Rendered {
    let text: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    let mut r = Rendered::default();
    r.records(text.join("\n").as_bytes());
    r
}

fn conversation() -> Vec<serde_json::Value> {
    vec![
        json!({"type": "user", "cwd": "/p", "message": {"role": "user", "content": "fix the bug\nin a.rs"}}),
        json!({"type": "assistant", "cwd": "/p", "message": {"content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/src/a.rs", "offset": 10}}
        ]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one\ntwo"}
        ]}, "toolUseResult": {"type": "text", "file": {"filePath": "/p/src/a.rs", "startLine": 10}}}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}}),
        json!({"type": "cost-state", "totalCostUSD": 0.25, "totalAPIDuration": 1200, "totalLinesAdded": 3, "totalLinesRemoved": 1}),
    ]
}

#[test]
fn a_conversation_renders_prompts_text_and_folded_tool_calls() {
    let r = render(&conversation());
    assert_eq!(r.lines[0], "## fix the bug");
    assert_eq!(r.lines[1], "in a.rs");
    assert!(r.lines.contains(&"Reading it.".to_string()));
    let tool = r
        .lines
        .iter()
        .position(|l| l == "▸ Read src/a.rs:10")
        .unwrap();
    assert_eq!(r.levels[tool], level::TOOL);
    assert_eq!(r.levels[tool + 1], level::RESULT);
    assert_eq!(r.lines[tool + 2], "    one");
    assert_eq!(r.levels[tool + 3], level::IN_RESULT);
    assert_eq!(r.links[0], Link(tool, "/p/src/a.rs".into(), 10));
    assert!(r.lines.contains(&"Done.".to_string()));
    assert_eq!(r.prompts, 1);
    assert_eq!(r.usage.as_ref().unwrap().cost_usd, Some(0.25));
    assert_eq!(r.lines.len(), r.levels.len());
}

#[test]
fn an_edit_result_points_at_its_first_changed_line() {
    let r = render(&[json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "ok"}
    ]}, "toolUseResult": {"filePath": "/p/b.rs", "structuredPatch": [
        {"newStart": 5, "lines": [" a", " b", "-c", "+d"]}
    ]}})]);
    assert_eq!(r.links, vec![Link(0, "/p/b.rs".into(), 7)]);
}

#[test]
fn control_characters_and_escape_sequences_are_shown_not_passed() {
    assert_eq!(escape("a\x1b[31mred\x07"), "a\\x1b[31mred\\x07");
    assert_eq!(escape("tab\there"), "tab\there");
    assert_eq!(escape("c1\u{9b}x"), "c1\\x9bx");
    assert_eq!(escape("bidi\u{202e}x"), "bidi\\u{202e}x");
    let r = render(&[json!({"type": "user", "message": {"content": "\x1b]0;title\x07"}})]);
    assert_eq!(r.lines[0], "## \\x1b]0;title\\x07");
}

#[test]
fn damaged_records_are_skipped_or_noted_never_fatal() {
    let mut r = Rendered::default();
    r.records(b"not json\n{\"type\":\"unknown\"}\n[1,2]\n{\"type\":\"user\",\"message\":{\"content\":\"hi \xff there\"}}\n{\"type\":\"user\",\"message\":{\"content\":7}}\n");
    assert_eq!(r.lines[0], "<!-- a record that is not JSON (8 bytes) -->");
    assert!(r.lines.iter().any(|l| l == "## hi \u{fffd} there"));
    assert_eq!(r.lines.len(), r.levels.len());
}

#[test]
fn a_line_cut_short_is_left_for_the_next_read() {
    assert_eq!(complete(b"{\"a\":1}\n{\"b\":"), 8);
    assert_eq!(complete(b"{\"a\":1}\n{\"b\":2}"), 15);
    assert_eq!(complete(b"{\"a\":1}"), 7);
    assert_eq!(complete(b"{\"a\""), 0);
}

#[test]
fn long_results_are_cut() {
    let text: Vec<String> = (0..500).map(|i| i.to_string()).collect();
    let r = render(&[json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "content": text.join("\n")}
    ]}})]);
    assert_eq!(r.lines.len(), 1 + render::RESULT_LINES + 1);
    assert_eq!(r.lines.last().unwrap(), "    … 300 more lines");
}

fn world() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let project = t.path().join("proj");
    let dir = t
        .path()
        .join("config/projects")
        .join(crate::conversations::folders::encode(&project));
    std::fs::create_dir_all(&dir).unwrap();
    let lines: Vec<String> = conversation().iter().map(|r| r.to_string()).collect();
    std::fs::write(dir.join("abc-1.jsonl"), lines.join("\n") + "\n").unwrap();
    (t, project)
}

fn header(bytes: &[u8]) -> (serde_json::Value, String) {
    let nl = bytes.iter().position(|b| *b == b'\n').unwrap();
    let h = serde_json::from_slice(&bytes[..nl]).unwrap();
    (h, String::from_utf8(bytes[nl + 1..].to_vec()).unwrap())
}

#[test]
fn a_session_is_found_by_id_and_read_from_an_offset() {
    let (t, project) = world();
    let mut q = Query {
        id: Some("abc-1".into()),
        config_dir: Some(t.path().join("config")),
        cwds: vec![project],
        ..Query::default()
    };
    let (h, body) = header(&read(&q).unwrap());
    assert!(body.starts_with("## fix the bug\n"));
    assert_eq!(h["lines"], body.split('\n').count());
    assert_eq!(h["usage"]["cost_usd"], 0.25);
    q.usage_only = true;
    let (hu, bu) = header(&read(&q).unwrap());
    assert_eq!(
        (hu["usage"]["api_ms"].as_f64(), bu.as_str()),
        (Some(1200.0), "")
    );
    q.usage_only = false;
    // Read in pieces: a piece ends at a whole record, the next goes on from there.
    let mut pieces = Query {
        id: q.id.clone(),
        config_dir: q.config_dir.clone(),
        cwds: q.cwds.clone(),
        max_bytes: 200,
        ..Query::default()
    };
    let mut all = Vec::new();
    loop {
        let (hp, bp) = header(&read(&pieces).unwrap());
        if hp["lines"].as_u64() != Some(0) {
            all.push(bp);
        }
        pieces.offset = hp["offset"].as_u64().unwrap();
        pieces.prompts = hp["prompts"].as_u64().unwrap();
        if pieces.offset >= hp["size"].as_u64().unwrap() {
            break;
        }
    }
    assert_eq!(all.join("\n"), body);
    // Nothing new: nothing rendered; a shrunk file is read again from its start.
    q.offset = h["offset"].as_u64().unwrap();
    let (h2, body2) = header(&read(&q).unwrap());
    assert_eq!((h2["lines"].as_u64(), body2.as_str()), (Some(0), ""));
    q.offset = 1 << 40;
    assert_eq!(header(&read(&q).unwrap()).0["reset"], true);
    // Another project's session is found too; a bad id never makes a path.
    q.cwds.clear();
    q.offset = 0;
    assert!(read(&q).is_ok());
    q.id = Some("../x".into());
    assert!(matches!(read(&q), Err(TranscriptError::BadId(_))));
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_the_file_is_refused_at_once() {
    let (t, project) = world();
    let dir = t
        .path()
        .join("config/projects")
        .join(crate::conversations::folders::encode(&project));
    let fifo = dir.join("fifo-1.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let q = Query {
        path: Some(fifo),
        ..Query::default()
    };
    assert!(read(&q).is_err());
}

#[test]
fn the_context_is_the_last_answers_input_over_the_models_window() {
    let answer = |model: &str, input: u64, cache: u64, sidechain: bool| {
        json!({"type": "assistant", "isSidechain": sidechain, "message": {"model": model, "content": [],
            "usage": {"input_tokens": input, "cache_creation_input_tokens": cache,
                "cache_read_input_tokens": cache, "output_tokens": 50}}})
    };
    let mut records = conversation();
    records.insert(1, answer("claude-sonnet-4-5", 10_000, 0, false));
    records.push(answer("claude-sonnet-4-5", 2_000, 24_000, false));
    // A sub-agent's answers are another context.
    records.push(answer("claude-haiku-4-5", 190_000, 0, true));
    let r = render(&records);
    let u = r.usage.as_ref().unwrap();
    assert_eq!((u.cost_usd, u.context_pct), (Some(0.25), Some(25.0)));
    // Read for the statusline alone: the same.
    let text: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    let mut only = Rendered::default();
    only.usage_only(text.join("\n").as_bytes());
    assert_eq!(only.usage, r.usage);
    // A model with a million-token window.
    let big = render(&[answer("claude-sonnet-4-5[1m]", 500_000, 0, false)]);
    assert_eq!(big.usage.unwrap().context_pct, Some(50.0));
}
