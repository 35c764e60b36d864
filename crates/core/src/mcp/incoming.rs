//! A message as read: its JSON-RPC members, each kept only when it is there (`null` is there).
//!
//! A message that is one object is read straight into these members ([`parse`]): its `params`
//! become a `Value`, the envelope itself never does, so no map of the envelope is built,
//! hashed and taken apart again. Anything else (a batch, a scalar, an object naming a member
//! twice) is read as a `Value` as before; the same rules then apply to it ([`Incoming::of`]).
//!
//! A `tools/call` request, most of what a client sends, is read one step further: its tool's
//! name and arguments straight from the text ([`Call`]), so no map of its params is built,
//! hashed and taken apart either. Whatever that reading does not take as it is (a member named
//! twice, a name that is not a string, `null` params, escapes in `jsonrpc` or `method`) is read
//! the general way, so the answers are the same either way (tests below and in `mcp`).

use super::ParseError;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The JSON-RPC members of one message object (other members are ignored).
#[derive(Debug, Default, Deserialize)]
pub struct Incoming {
    #[serde(default, deserialize_with = "present")]
    pub jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

/// A member that is there, `null` included (serde's `Option` would read `null` as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A parsed message: a `tools/call` request, one object's members, or any other JSON (a
/// batch, a scalar). (Boxed: each layer of the dispatch's futures would otherwise hold and
/// copy the members, 432 bytes, where a pointer does.)
#[derive(Debug)]
pub enum Parsed {
    Call(Box<Call>),
    One(Box<Incoming>),
    Other(Value),
}

/// A `tools/call` request with a valid id, a string `name` and `arguments` that are absent,
/// `null` or any other JSON (what they must be is the dispatch's to say).
#[derive(Debug)]
pub struct Call {
    pub id: Value,
    pub name: String,
    /// `Null` when absent.
    pub arguments: Value,
}

/// The members [`Call`] is read from (borrowed: the two fixed strings are only compared).
/// `result` and `error` are read as the general way reads them (a `Value`), only so that what
/// a `Value` refuses there (a lone surrogate, a number out of range, nesting past 128) is
/// refused alike; other members are ignored, as [`Incoming`] ignores them.
#[derive(Deserialize)]
struct CallText<'a> {
    jsonrpc: &'a str,
    id: Value,
    method: &'a str,
    params: CallParams,
    #[serde(default, rename = "result")]
    _result: Option<Value>,
    #[serde(default, rename = "error")]
    _error: Option<Value>,
}

/// `params` as an object only (a derived struct would also take an array, by position), each
/// member at most once, every member read as a `Value` would read it.
struct CallParams {
    name: String,
    arguments: Value,
}

impl<'de> Deserialize<'de> for CallParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CallParamsVisitor)
    }
}

struct CallParamsVisitor;

impl<'de> serde::de::Visitor<'de> for CallParamsVisitor {
    type Value = CallParams;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tools/call's params")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<CallParams, A::Error> {
        use serde::de::Error;
        let (mut name, mut arguments) = (None, None);
        while let Some(k) = m.next_key::<&'de str>()? {
            match k {
                "name" if name.is_none() => name = Some(m.next_value::<String>()?),
                "arguments" if arguments.is_none() => arguments = Some(m.next_value::<Value>()?),
                "name" | "arguments" => return Err(A::Error::custom("named twice")),
                // (Read as a `Value` and dropped: the general way reads the whole params so.)
                _ => {
                    m.next_value::<Value>()?;
                }
            }
        }
        Ok(CallParams {
            name: name.ok_or_else(|| A::Error::missing_field("name"))?,
            arguments: arguments.unwrap_or(Value::Null),
        })
    }
}

impl Call {
    /// `text` read as a `tools/call`, when it is one this reading takes (see the module docs).
    fn read(text: &str) -> Option<Call> {
        let t: CallText = serde_json::from_str(text).ok()?;
        (t.jsonrpc == "2.0" && t.method == "tools/call" && super::valid_id(&t.id)).then_some(Call {
            id: t.id,
            name: t.params.name,
            arguments: t.params.arguments,
        })
    }
}

impl Incoming {
    /// The members of `v` when it is an object (`Err(v)` when it is not).
    pub fn of(v: Value) -> Result<Incoming, Value> {
        let Value::Object(mut m) = v else {
            return Err(v);
        };
        Ok(Incoming {
            jsonrpc: m.remove("jsonrpc"),
            id: m.remove("id"),
            method: m.remove("method"),
            params: m.remove("params"),
            result: m.remove("result"),
            error: m.remove("error"),
        })
    }
}

/// One message as read: a `tools/call` read straight from its text, an object's members, or
/// JSON that is not an object (boxed as in [`Parsed`]).
pub(super) enum Message {
    Call(Box<Call>),
    One(Box<Incoming>),
    NotObject,
}

/// A request's or notification's params: as a `Value`, or a `tools/call`'s name and arguments
/// already read (see [`Call`]).
pub(super) enum Params {
    Value(Option<Value>),
    Call { name: String, arguments: Value },
}

impl Params {
    /// The params as a `Value` (only `tools/call` ever has [`Params::Call`]).
    pub(super) fn value(&self) -> Option<&Value> {
        match self {
            Params::Value(v) => v.as_ref(),
            Params::Call { .. } => None,
        }
    }
}

/// Parses a message; a syntax error is answered with [`ParseError::reply`].
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    // (Only an object: serde would also read an array into the members, by position.)
    if text.trim_start().starts_with('{') {
        if text.contains("\"tools/call\"") {
            if let Some(call) = Call::read(text) {
                return Ok(Parsed::Call(Box::new(call)));
            }
        }
        if let Ok(one) = serde_json::from_str::<Incoming>(text) {
            return Ok(Parsed::One(Box::new(one)));
        }
    }
    let v: Value = serde_json::from_str(text).map_err(ParseError)?;
    Ok(match Incoming::of(v) {
        Ok(one) => Parsed::One(Box::new(one)),
        Err(other) => Parsed::Other(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn members(i: &Incoming) -> Value {
        json!([i.jsonrpc, i.id, i.method, i.params, i.result, i.error])
    }

    /// A message's members as [`Incoming`] holds them (a [`Call`]'s too).
    fn members_of(p: Parsed) -> Value {
        match p {
            Parsed::One(i) => members(&i),
            Parsed::Call(c) => json!(["2.0", c.id, "tools/call",
                {"name": c.name, "arguments": c.arguments}, null, null]),
            Parsed::Other(v) => panic!("not one message: {v}"),
        }
    }

    /// Read straight or through a `Value`, a message has the same members: `null` is there,
    /// a member named twice is its last value, other members are ignored.
    #[test]
    fn read_straight_or_as_a_value_the_members_are_the_same() {
        let texts = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"method":"n","jsonrpc":"2.0","extra":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{"ok":true}}"#,
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"},"result":null}"#,
            r#"{"id":1,"id":2,"method":"twice"}"#,
            r#"{}"#,
        ];
        for t in texts {
            let via_value = Incoming::of(serde_json::from_str(t).unwrap()).unwrap();
            assert_eq!(members_of(parse(t).unwrap()), members(&via_value), "{t}");
        }
        assert_eq!(
            members_of(parse(r#"{"id":1,"id":2}"#).unwrap())[1],
            json!(2)
        );
        assert!(matches!(parse("[1,2]"), Ok(Parsed::Other(Value::Array(_)))));
        assert!(matches!(parse("7"), Ok(Parsed::Other(_))));
        assert!(parse("{").is_err());
    }

    /// The common `tools/call` is read straight; what that reading does not take as it is goes
    /// the general way (the answers are compared in `mcp::tests`).
    #[test]
    fn a_plain_tools_call_is_read_straight_and_an_odd_one_the_general_way() {
        let straight = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1]}}}"#,
            r#"{"method":"tools/call","params":{"name":"x"},"id":"s","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"_meta":{"k":1},"name":"x","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":"s"}}"#,
        ];
        for t in straight {
            assert!(matches!(parse(t), Ok(Parsed::Call(_))), "{t}");
        }
        // What a `Value` refuses is refused (-32700), in a member the dispatch does not read too.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","_meta":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let refused = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":"\udc00"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":-1e999}}}"#,
            &deep,
        ];
        for t in refused {
            assert!(parse(t).is_err(), "{t}");
        }
        let general = [
            // a member named twice, at either level
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"arguments":{}}}"#,
            // params by position, null or missing; a name that is not a string or missing
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["x",{}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            // an id JSON-RPC does not allow, no id, another version, an escape
            r#"{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}"#,
        ];
        for t in general {
            assert!(matches!(parse(t), Ok(Parsed::One(_))), "{t}");
        }
    }
}
