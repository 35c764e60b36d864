//! Paths in the turns journal and in what the editor is told: bytes, not lossy strings.
//!
//! The journal (`turns.json`) keeps each path as a string that round-trips every byte a Unix
//! file name may hold: valid UTF-8 as it is, `\` as `\\`, and every byte that is not part of
//! valid UTF-8 as `\xNN`. The editor gets names it can show: valid UTF-8 as it is, else the same
//! escaped form ([`shown`]); the editor escapes control characters itself when it shows them.

use serde::{Deserialize, Deserializer, Serializer};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The escaped form of `p`'s bytes (see the module's text).
pub fn encode(p: &Path) -> String {
    let bytes = p.as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The path [`encode`] gave `s` (`None`: not such a form).
pub fn decode(s: &str) -> Option<PathBuf> {
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => {
                out.push(b'\\');
                i += 2;
            }
            Some(b'x') => {
                let hex = s.get(i + 2..i + 4)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 4;
            }
            _ => return None,
        }
    }
    Some(PathBuf::from(os_from_bytes(out)))
}

#[cfg(unix)]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(b)
}

#[cfg(not(unix))]
fn os_from_bytes(b: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&b).into_owned())
}

/// How the editor is given `p`: as it is when it is UTF-8, else [`encode`]d.
pub fn shown(p: &Path) -> String {
    match p.to_str() {
        Some(s) => s.to_string(),
        None => encode(p),
    }
}

/// `serde(with)` for one path.
pub mod one {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(p))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        let s = String::deserialize(d)?;
        decode(&s).ok_or_else(|| serde::de::Error::custom(format!("not an encoded path: {s:?}")))
    }
}

/// `serde(with)` for a list of paths.
pub mod list {
    use super::*;
    use serde::ser::SerializeSeq;

    pub fn serialize<S: Serializer>(v: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for p in v {
            seq.serialize_element(&encode(p))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|s| {
                decode(s)
                    .ok_or_else(|| serde::de::Error::custom(format!("not an encoded path: {s:?}")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (1u8..=255).filter(|b| *b != b'/').collect();
        for name in [
            all.clone(),
            b"caf\xe9.txt".to_vec(),
            b"a\\x41b".to_vec(),
            "ümlaut\n\x1b[201~".as_bytes().to_vec(),
        ] {
            let p = PathBuf::from(os_from_bytes(name.clone()));
            let e = encode(&p);
            assert_eq!(decode(&e).unwrap(), p, "{e}");
        }
        assert_eq!(encode(Path::new("a\\b")), "a\\\\b");
        assert_eq!(
            shown(&PathBuf::from(os_from_bytes(b"caf\xe9".to_vec()))),
            "caf\\xe9"
        );
        assert!(decode("bad\\q").is_none());
    }
}
