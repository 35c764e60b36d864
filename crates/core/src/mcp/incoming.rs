//! A message as read: its JSON-RPC members, each kept only when it is there (`null` is there).
//!
//! A message that is one object is read straight into these members ([`parse`]): its `params`
//! become a `Value`, the envelope itself never does, so no map of the envelope is built,
//! hashed and taken apart again. Anything else (a batch, a scalar, an object naming a member
//! twice) is read as a `Value` as before; the same rules then apply to it ([`Incoming::of`]).

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

/// A parsed message: one object's members, or any other JSON (a batch, a scalar). (It lives
/// for one message on the stack; boxing the larger variant would cost an allocation a message.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Parsed {
    One(Incoming),
    Other(Value),
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

/// Parses a message; a syntax error is answered with [`ParseError::reply`].
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    // (Only an object: serde would also read an array into the members, by position.)
    if text.trim_start().starts_with('{') {
        if let Ok(one) = serde_json::from_str::<Incoming>(text) {
            return Ok(Parsed::One(one));
        }
    }
    let v: Value = serde_json::from_str(text).map_err(ParseError)?;
    Ok(match Incoming::of(v) {
        Ok(one) => Parsed::One(one),
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
            let Ok(Parsed::One(read)) = parse(t) else {
                panic!("{t}: not one message")
            };
            assert_eq!(members(&read), members(&via_value), "{t}");
        }
        assert_eq!(
            members(
                &parse(r#"{"id":1,"id":2}"#)
                    .map(|p| match p {
                        Parsed::One(i) => i,
                        Parsed::Other(_) => unreachable!(),
                    })
                    .unwrap()
            )[1],
            json!(2)
        );
        assert!(matches!(parse("[1,2]"), Ok(Parsed::Other(Value::Array(_)))));
        assert!(matches!(parse("7"), Ok(Parsed::Other(_))));
        assert!(parse("{").is_err());
    }
}
