//! `file://` URIs, percent-encoded properly (spaces, `#`, `%`, non-ASCII…).

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};
use std::path::{Path, PathBuf};

/// Bytes escaped in a `file://` URI path: everything but unreserved characters, `/` and the
/// sub-delimiters VS Code leaves alone.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The `file://` URI of an absolute path.
pub fn file_uri(path: &Path) -> String {
    format!(
        "file://{}",
        utf8_percent_encode(&path.to_string_lossy(), PATH)
    )
}

/// The path of a `file://` URI; `None` for other schemes, hosts other than localhost, or
/// encodings that are not UTF-8.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_special_characters() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/c#d")),
            "file:///tmp/a%20b/c%23d"
        );
        assert_eq!(
            file_uri(Path::new("/tmp/日本")),
            "file:///tmp/%E6%97%A5%E6%9C%AC"
        );
        assert_eq!(
            file_uri(Path::new("/tmp/100%/x?y")),
            "file:///tmp/100%25/x%3Fy"
        );
        assert_eq!(file_uri(Path::new("/")), "file:///");
    }

    #[test]
    fn round_trips() {
        let p = Path::new("/tmp/x y/%z/é#?");
        assert_eq!(uri_to_path(&file_uri(p)).unwrap(), p);
        assert_eq!(
            uri_to_path("file://localhost/a%20b").unwrap(),
            Path::new("/a b")
        );
        assert!(uri_to_path("http://example.invalid/x").is_none());
        assert!(uri_to_path("file://host/x").is_none());
    }
}
