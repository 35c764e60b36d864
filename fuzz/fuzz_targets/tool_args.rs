//! Tool argument parsing and the tools themselves: structured arguments built from the fields
//! the tools know plus arbitrary ones, for every tool. Each call is a result or -32602, never a
//! panic; any file-system result names a path inside the project root.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use claude_context_fuzz::{assert_no_contained_panic, bridge, physically_inside, NAMES};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "path", "offset", "limit", "content", "stats", "blocking", "x",
];

fn string(u: &mut Unstructured) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => String::arbitrary(u)?,
        1 => u.choose(NAMES)?.to_string(),
        _ => {
            let n = u.int_in_range(0..=6)?;
            let mut parts = Vec::new();
            for _ in 0..n {
                parts.push(*u.choose(NAMES)?);
            }
            let abs = if bool::arbitrary(u)? { "/" } else { "" };
            format!("{abs}{}", parts.join("/"))
        }
    })
}

fn value(u: &mut Unstructured, depth: u32) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0..=if depth > 3 { 5 } else { 7 })? {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => Value::from(u64::arbitrary(u)?),
        3 => Value::from(i64::arbitrary(u)?),
        4 => serde_json::Number::from_f64(f64::arbitrary(u)?).map_or(Value::Null, Value::Number),
        5 => Value::String(string(u)?),
        6 => {
            let n = u.int_in_range(0..=3)?;
            let mut a = Vec::new();
            for _ in 0..n {
                a.push(value(u, depth + 1)?);
            }
            Value::Array(a)
        }
        _ => Value::Object(object(u, depth + 1)?),
    })
}

fn object(u: &mut Unstructured, depth: u32) -> arbitrary::Result<Map<String, Value>> {
    let n = u.int_in_range(0..=4)?;
    let mut m = Map::new();
    for _ in 0..n {
        let k = if u.ratio(4, 5)? {
            u.choose(KEYS)?.to_string()
        } else {
            String::arbitrary(u)?
        };
        m.insert(k, value(u, depth)?);
    }
    Ok(m)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let b = bridge();
    let names: Vec<&'static str> = b.shared().catalog.names().collect();
    let Ok(tool) = u.choose(&names).copied() else {
        return;
    };
    let Ok(args) = object(&mut u, 0) else { return };
    b.tidy();
    let r = b.runtime.block_on(claude_context_core::mcp::call_tool(
        b.shared(),
        tool,
        Value::Object(args),
    ));
    match r {
        Err(e) => assert_eq!(e.code, -32602, "{tool}: {e:?}"),
        Ok(v) => {
            assert_no_contained_panic(&v.to_string());
            if v["isError"] != Value::Bool(true)
                && tool.starts_with("fs-")
                && tool != "fs-get-project-info"
            {
                let p = v["structuredContent"]["path"].as_str().expect("a path");
                if let Err(why) = physically_inside(std::path::Path::new(p), &b.root) {
                    panic!("{tool} escaped the root: {why}");
                }
            }
        }
    }
});
