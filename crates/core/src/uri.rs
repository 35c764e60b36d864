//! `file://` URIs, percent-encoded properly (spaces, `#`, `%`, non-ASCII…).

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path. Relative paths are returned as `file://` + the path
/// percent-encoded, which never happens for the paths we produce.
pub fn file_uri(path: &Path) -> String {
    match url::Url::from_file_path(path) {
        Ok(u) => u.to_string(),
        Err(()) => format!("file://{}", path.display()),
    }
}

/// The path of a `file://` URI; `None` for other schemes or malformed URIs.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
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
        assert_eq!(file_uri(Path::new("/")), "file:///");
    }

    #[test]
    fn round_trips() {
        let p = Path::new("/tmp/x y/%z/é");
        assert_eq!(uri_to_path(&file_uri(p)).unwrap(), p);
        assert!(uri_to_path("http://example.invalid/x").is_none());
    }
}
