//! How deep and how large JSON may get anywhere in the bridge, and measures of a [`Value`] that
//! never recurse.
//!
//! Every JSON text the bridge reads (messages on both doors, documents, the decision store, lock
//! files, the configuration) is parsed by `serde_json`, whose recursion limit refuses nesting of
//! more than [`MAX_DEPTH`] arrays and objects before anything recurses over it. A [`Value`] the
//! bridge builds itself from such input (JSON Patch) is held to the same depth
//! ([`crate::tools::memory_bank::write_document`]): dropping or serializing a value recurses once
//! per level, and a value tens of thousands of levels deep overflows the stack, which aborts the
//! process (Neovim, with the person's unsaved work), unlike a panic, which is contained.
//!
//! A leaf: it uses no other module of the crate.

use serde_json::Value;

/// The deepest nesting of arrays and objects accepted: what `serde_json`'s parser accepts
/// (`[[…]]` 127 levels deep parses, 128 levels is a "recursion limit exceeded" error), so a
/// document held to it can always be read back.
pub const MAX_DEPTH: usize = 127;

/// The nesting depth and an estimate of the compact JSON size of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measure {
    /// Arrays and objects nested (a scalar is 0, `[]` is 1, `[[1]]` is 2).
    pub depth: usize,
    /// Bytes of its compact JSON text, estimated from below: strings and keys count their
    /// UTF-8 bytes plus quotes (escapes are not counted), numbers their shortest text.
    pub bytes: usize,
}

/// Measures `v` without recursion. Stops early (returning what it has, which is then over one
/// of them) once the depth passes `max_depth` or the size passes `max_bytes`.
pub fn measure(v: &Value, max_depth: usize, max_bytes: usize) -> Measure {
    let mut m = Measure::default();
    // (value, its depth: 0 for `v` itself)
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Null => m.bytes += 4,
            Value::Bool(b) => m.bytes += if *b { 4 } else { 5 },
            Value::Number(n) => m.bytes += number_len(n),
            Value::String(s) => m.bytes += s.len() + 2,
            Value::Array(a) => {
                m.depth = m.depth.max(d + 1);
                m.bytes += 2 + a.len().saturating_sub(1);
                stack.extend(a.iter().map(|x| (x, d + 1)));
            }
            Value::Object(o) => {
                m.depth = m.depth.max(d + 1);
                m.bytes += 2 + o.len().saturating_sub(1);
                for (k, x) in o {
                    m.bytes += k.len() + 3;
                    stack.push((x, d + 1));
                }
            }
        }
        if m.depth > max_depth || m.bytes > max_bytes {
            break;
        }
    }
    m
}

/// The nesting depth of `v` (see [`Measure::depth`]), without recursion.
pub fn depth(v: &Value) -> usize {
    measure(v, usize::MAX, usize::MAX).depth
}

fn number_len(n: &serde_json::Number) -> usize {
    if let Some(i) = n.as_i64() {
        decimal_len(i.unsigned_abs()) + usize::from(i < 0)
    } else if let Some(u) = n.as_u64() {
        decimal_len(u)
    } else {
        // A float: its text is at most 24 bytes; counted from below.
        3
    }
}

fn decimal_len(mut u: u64) -> usize {
    let mut n = 1;
    while u >= 10 {
        u /= 10;
        n += 1;
    }
    n
}

/// `n` arrays nested (`[[[…]]]`): JSON text of a given depth, for tests of every entry point.
pub fn nested_array_text(n: usize) -> String {
    let mut s = String::with_capacity(2 * n);
    s.extend(std::iter::repeat_n('[', n));
    s.extend(std::iter::repeat_n(']', n));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn max_depth_is_what_serde_json_parses() {
        let ok: Value = serde_json::from_str(&nested_array_text(MAX_DEPTH)).unwrap();
        assert_eq!(depth(&ok), MAX_DEPTH);
        let e = serde_json::from_str::<Value>(&nested_array_text(MAX_DEPTH + 1)).unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
        // Objects count the same.
        let mut s = String::new();
        for _ in 0..MAX_DEPTH {
            s.push_str("{\"a\":");
        }
        s.push('1');
        s.push_str(&"}".repeat(MAX_DEPTH));
        let v: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(depth(&v), MAX_DEPTH);
    }

    #[test]
    fn measure_counts_depth_and_a_lower_bound_of_the_size() {
        for v in [
            json!(null),
            json!(12345),
            json!(-7),
            json!("héllo"),
            json!([1, [2, [3]], {"a": {"b": []}}]),
            json!({"k": [true, false, null], "x": {"y": "z"}}),
        ] {
            let m = measure(&v, usize::MAX, usize::MAX);
            assert!(m.bytes <= v.to_string().len(), "{v}: {m:?}");
        }
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!([])), 1);
        assert_eq!(depth(&json!([1, [2, [3]], {"a": {"b": []}}])), 4);
        assert_eq!(measure(&json!([1, 2, 3]), 10, 100).bytes, 7);
    }

    #[test]
    fn measure_stops_early_and_never_recurses() {
        // A value far deeper than any stack allows recursion over, built and dropped without
        // recursing (the test's own drop unwinds it level by level).
        let mut v = json!(0);
        for _ in 0..200_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(depth(&v), 200_000);
        assert_eq!(measure(&v, 10, usize::MAX).depth, 11);
        // Drop without recursion.
        while let Value::Array(mut a) = v {
            v = a.pop().unwrap_or(Value::Null);
        }
    }
}
