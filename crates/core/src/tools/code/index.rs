//! Where a symbol may be defined when no running language server can search the workspace: the
//! project's files that hold its name as a word. The files are walked as a checkpoint walks
//! them (no link followed, `.git` skipped, `.gitignore` files and `.git/info/exclude` obeyed),
//! each read through the capability layer and reduced to the hashes of its words, kept per file
//! by its `lstat` (size, mtime, inode): the next question stats the files and reads only those
//! that changed. The editor then parses the candidates (tree-sitter) for the definitions.

use crate::capfs::{CapDir, EntryType, Stat};
use crate::checkpoint::ignore_rules::{parse_ignore, read_ignore_bytes, Rules};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The largest file whose words are indexed.
pub const MAX_INDEXED_BYTES: u64 = 1024 * 1024;
/// The most files one root's walk takes.
pub const MAX_FILES: usize = 200_000;
/// The most candidates handed to the editor.
pub const MAX_CANDIDATES: usize = 300;

/// One indexed file: its stat when read and its words' hashes, sorted.
struct Entry {
    stat: Stat,
    words: Box<[u32]>,
    /// The last search that saw the file.
    pass: u64,
}

/// A root's files by their path relative to it.
#[derive(Default)]
struct RootIndex {
    files: HashMap<PathBuf, Entry>,
    /// Searches made (each marks the entries it saw).
    pass: u64,
}

/// Every root's index, by the root's path.
type Indexes = Mutex<HashMap<PathBuf, Arc<Mutex<RootIndex>>>>;

fn indexes() -> &'static Indexes {
    static I: OnceLock<Indexes> = OnceLock::new();
    I.get_or_init(Default::default)
}

/// A file that holds the symbol's name, with the stat key the editor caches its outline by.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct Candidate {
    pub path: String,
    /// `size:sec.nsec:ino` of the file when its words were read.
    pub key: String,
}

/// What a search found: the candidates, how many files were looked at, whether some were left
/// out (more than [`MAX_CANDIDATES`], or a root over [`MAX_FILES`]).
#[derive(Debug, Default)]
pub struct Found {
    pub candidates: Vec<Candidate>,
    pub files: usize,
    pub truncated: bool,
}

/// The stat key of a file as the editor writes it from its own `fstat`.
pub fn key_of(s: &Stat) -> String {
    format!(
        "{}:{}.{}:{}",
        s.size,
        s.mtime_ns.div_euclid(1_000_000_000),
        s.mtime_ns.rem_euclid(1_000_000_000),
        s.ino
    )
}

/// The part of a symbol that names it in source (`Shape.area` → `area`, `area()` → `area`).
pub fn word_of(symbol: &str) -> &str {
    let s = symbol.trim();
    let s = s.split('(').next().unwrap_or(s);
    s.rsplit(['.', ':']).next().unwrap_or(s).trim()
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// FNV-1a of a word.
fn hash(w: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in w {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The sorted, distinct hashes of `text`'s words.
fn words(text: &[u8]) -> Box<[u32]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if is_word_byte(text[i]) {
            let s = i;
            while i < text.len() && is_word_byte(text[i]) {
                i += 1;
            }
            out.push(hash(&text[s..i]));
        } else {
            i += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_boxed_slice()
}

/// Whether `bytes` looks like text (no NUL in its first 8 KB).
fn is_text(bytes: &[u8]) -> bool {
    !bytes[..bytes.len().min(8192)].contains(&0)
}

/// One file the walk found: its directory handle, its name there and its path from the root.
struct Listed {
    dir: Arc<CapDir>,
    name: PathBuf,
    rel: PathBuf,
}

/// Walks `dir` (at `rel` from the root, under `rules`) and appends its files to `out`.
fn walk(dir: Arc<CapDir>, rel: &Path, rules: &Rules, out: &mut Vec<Listed>, full: &mut bool) {
    let Ok(mut listed) = dir.list_nofollow() else {
        return;
    };
    listed.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    let prefix = if rel.as_os_str().is_empty() {
        0
    } else {
        rel.as_os_str().len() + 1
    };
    let here = match listed
        .iter()
        .any(|l| l.name == ".gitignore" && l.kind == EntryType::File)
    {
        true => match read_ignore_bytes(&dir, Path::new(".gitignore")) {
            Some(bytes) => {
                let gi = parse_ignore(&bytes).map(Arc::new);
                rules.with(prefix, &bytes, gi.as_ref())
            }
            None => rules.clone(),
        },
        false => rules.clone(),
    };
    for l in listed {
        if out.len() >= MAX_FILES {
            *full = true;
            return;
        }
        if l.name == ".git" || !matches!(l.kind, EntryType::File | EntryType::Dir) {
            continue;
        }
        let child = rel.join(&l.name);
        let is_dir = l.kind == EntryType::Dir;
        if here.ignored(child.as_os_str().as_encoded_bytes(), is_dir) {
            continue;
        }
        if is_dir {
            if let Ok(sub) = dir.open_subdir_nofollow(Path::new(&l.name)) {
                walk(Arc::new(sub), &child, &here, out, full);
            }
        } else {
            out.push(Listed {
                dir: dir.clone(),
                name: PathBuf::from(&l.name),
                rel: child,
            });
        }
    }
}

/// The rules every walk of `root` starts with: `.git/info/exclude`.
fn root_rules(root: &CapDir) -> Rules {
    let rules = Rules::none();
    if let Ok(Some((dir, name))) = root.parent_nofollow(Path::new(".git/info/exclude")) {
        if let Some(bytes) = read_ignore_bytes(&dir, &name) {
            let gi = parse_ignore(&bytes).map(Arc::new);
            return rules.with(0, &bytes, gi.as_ref());
        }
    }
    rules
}

/// A file's stat and its words (`None`: unchanged, the cached ones hold).
type Fresh = (Stat, Option<Box<[u32]>>);

/// A file's entry: the cached one when its stat is unchanged, else read again (`None`: gone,
/// not a regular file, too large or not text).
fn entry(l: &Listed, old: Option<&Entry>) -> Option<Fresh> {
    let (kind, stat) = l.dir.stat_nofollow(&l.name).ok()?;
    if kind != EntryType::File || stat.size > MAX_INDEXED_BYTES {
        return None;
    }
    if old.is_some_and(|o| o.stat == stat) {
        return Some((stat, None));
    }
    let (file, meta) = l.dir.open_file_nofollow(&l.name).ok()?;
    let stat = crate::capfs::stat_of_file(&meta);
    if !meta.is_file() || stat.size > MAX_INDEXED_BYTES {
        return None;
    }
    let bytes = crate::capfs::read_capped_from(file, MAX_INDEXED_BYTES).ok()?;
    if !is_text(&bytes) {
        return None;
    }
    Some((stat, Some(words(&bytes))))
}

/// The files under `root` that hold `word`, its index brought up to date on the way.
fn search_root(root: &Path, word: &str, found: &mut Found) {
    let Ok(dir) = CapDir::open_root(root) else {
        return;
    };
    let index = {
        let mut all = indexes().lock().unwrap_or_else(|e| e.into_inner());
        all.entry(root.to_path_buf()).or_default().clone()
    };
    let mut index = index.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Arc::new(dir);
    let rules = root_rules(&dir);
    let mut listed = Vec::new();
    walk(
        dir,
        Path::new(""),
        &rules,
        &mut listed,
        &mut found.truncated,
    );
    let fresh: Vec<Option<Fresh>> = listed
        .par_iter()
        .map(|l| entry(l, index.files.get(&l.rel)))
        .collect();
    // The index updated in place: an unchanged file's entry stays where it is (no map rebuilt
    // per question); what the walk did not see again is dropped at the end.
    index.pass = index.pass.wrapping_add(1);
    let pass = index.pass;
    let want = hash(word.as_bytes());
    for (l, e) in listed.into_iter().zip(fresh) {
        let Some((stat, words)) = e else {
            index.files.remove(&l.rel);
            continue;
        };
        let kept = match words {
            Some(words) => index
                .files
                .entry(l.rel.clone())
                .insert_entry(Entry { stat, words, pass })
                .into_mut(),
            None => match index.files.get_mut(&l.rel) {
                Some(o) => {
                    o.stat = stat;
                    o.pass = pass;
                    o
                }
                None => continue,
            },
        };
        found.files += 1;
        if kept.words.binary_search(&want).is_ok() {
            if found.candidates.len() < MAX_CANDIDATES {
                found.candidates.push(Candidate {
                    path: root.join(&l.rel).to_string_lossy().into_owned(),
                    key: key_of(&stat),
                });
            } else {
                found.truncated = true;
            }
        }
    }
    index.files.retain(|_, e| e.pass == pass);
}

/// The files under `roots` whose text holds `symbol`'s name as a word (a hash of it: a rare
/// false candidate is parsed and dropped by the editor).
pub fn search(roots: &[PathBuf], symbol: &str) -> Found {
    let mut found = Found::default();
    let word = word_of(symbol);
    if word.is_empty() {
        return found;
    }
    for r in roots {
        search_root(r, word, &mut found);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_names() {
        assert_eq!(word_of("Shape.area"), "area");
        assert_eq!(word_of("area()"), "area");
        assert_eq!(word_of("mod::f"), "f");
        let w = words(b"def area(self):\n  return self.w * h_2");
        for x in ["def", "area", "self", "return", "w", "h_2"] {
            assert!(w.binary_search(&hash(x.as_bytes())).is_ok(), "{x}");
        }
        assert!(w.binary_search(&hash(b"are")).is_err());
    }

    #[test]
    fn finds_files_by_word_and_obeys_gitignore() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg/deep")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("pkg/deep/a.py"), "def target_fn():\n  pass\n").unwrap();
        std::fs::write(root.join("pkg/b.py"), "x = target_fnx\n").unwrap();
        std::fs::write(root.join("build/c.py"), "def target_fn(): pass\n").unwrap();
        let f = search(std::slice::from_ref(&root), "target_fn");
        let paths: Vec<_> = f.candidates.iter().map(|c| c.path.clone()).collect();
        assert_eq!(
            paths,
            vec![root.join("pkg/deep/a.py").to_string_lossy().into_owned()]
        );
        // Changed on disk: read again (the stat differs), found in its new place.
        std::fs::write(root.join("pkg/b.py"), "def target_fn(a, b):\n  pass\n").unwrap();
        let f = search(std::slice::from_ref(&root), "target_fn");
        assert_eq!(f.candidates.len(), 2);
        assert_eq!(f.files, 3);
        // Gone from disk: gone from the index (updated in place, not rebuilt).
        std::fs::remove_file(root.join("pkg/deep/a.py")).unwrap();
        let f = search(std::slice::from_ref(&root), "target_fn");
        let paths: Vec<_> = f.candidates.iter().map(|c| c.path.clone()).collect();
        assert_eq!(
            paths,
            vec![root.join("pkg/b.py").to_string_lossy().into_owned()]
        );
        assert_eq!(f.files, 2);
        std::fs::write(root.join("pkg/deep/a.py"), "def target_fn():\n  pass\n").unwrap();
        assert_eq!(
            search(std::slice::from_ref(&root), "target_fn")
                .candidates
                .len(),
            2
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::write(out.path().join("secret.py"), "def hidden_fn(): pass\n").unwrap();
        std::os::unix::fs::symlink(out.path(), root.join("dir")).unwrap();
        std::os::unix::fs::symlink(out.path().join("secret.py"), root.join("f.py")).unwrap();
        let f = search(std::slice::from_ref(&root), "hidden_fn");
        assert!(f.candidates.is_empty());
    }
}
