//! What land reads of a background session's worktree, checked: git's `-z` outputs run on it
//! (`diff --name-status -z`, `ls-files -z`, `cat-file --batch`), the registration of the
//! worktree in the project's git directory and the `.git` file that must point back there, and
//! the paths a land may write. The worktree is the model's: every byte here is untrusted. Pure
//! functions over bytes (paths are bytes); the Lua side (`lua/claude_context/agents/`) runs git
//! and reads the few small files, and asks these through the native API.
//!
//! A leaf: it uses no other module of the crate.

/// Why git's output or a worktree's file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorktreeError {
    /// The output ends inside an entry.
    #[error("git's output ends inside an entry")]
    Truncated,
    /// A status letter git does not print.
    #[error("git printed an unknown status {0:?}")]
    Status(u8),
    /// No registration names the worktree's `.git`.
    #[error("not registered")]
    NotRegistered,
    /// More than one registration names it.
    #[error("registered more than once")]
    RegisteredTwice,
}

/// Why a path of the worktree's change is not landed (a plain reason, shown to the person).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotLanded {
    /// Empty, absolute, with an empty, `.` or `..` component, a NUL, or a folder (a trailing
    /// `/`, as `ls-files --others` names a nested repository).
    #[error("not a plain relative path")]
    NotPlain,
    /// A `.git` component, in any case: git's own files, the project's or a nested one's.
    #[error("git's own files")]
    GitFiles,
    /// Under `.claude/worktrees/`: the sessions' checkouts, never the project's files.
    #[error("a session's worktree")]
    Worktrees,
    /// A line break in the name: git's batch reader takes one name a line, so its base could
    /// not be asked for without another name's answer taking its place.
    #[error("a name with a line break: copy it by hand")]
    LineBreak,
}

/// One changed path of `git diff --name-status -z`: its status letter (`A`, `C`, `D`, `M`,
/// `R`, `T`, `U`, `X`) and path; a rename or copy gives its old path as `D`, its new as `A`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub status: u8,
    pub path: Vec<u8>,
}

/// The fields of `out`, each ended by a NUL (empty fields kept, so that a missing path is seen);
/// None when the last one has no NUL: git's output was cut inside it.
fn fields(out: &[u8]) -> Option<Vec<&[u8]>> {
    let body = match out {
        [] => return Some(Vec::new()),
        [body @ .., 0] => body,
        _ => return None,
    };
    Some(body.split(|b| *b == 0).collect())
}

/// The changes of `git diff --name-status -z` output `out`.
pub fn name_status(out: &[u8]) -> Result<Vec<Change>, WorktreeError> {
    let f = fields(out).ok_or(WorktreeError::Truncated)?;
    let mut list = Vec::new();
    let mut i = 0;
    while i < f.len() {
        let status = *f[i].first().ok_or(WorktreeError::Truncated)?;
        // Renames and copies carry a score (`R100`) and two paths.
        let paths = match status {
            b'R' | b'C' => 2,
            b'A' | b'D' | b'M' | b'T' | b'U' | b'X' => 1,
            other => return Err(WorktreeError::Status(other)),
        };
        if i + paths >= f.len() {
            return Err(WorktreeError::Truncated);
        }
        if paths == 2 {
            list.push(Change {
                status: b'D',
                path: f[i + 1].to_vec(),
            });
            list.push(Change {
                status: b'A',
                path: f[i + 2].to_vec(),
            });
        } else {
            list.push(Change {
                status,
                path: f[i + 1].to_vec(),
            });
        }
        i += 1 + paths;
    }
    Ok(list)
}

/// The paths of `git ls-files -z` output `out` (empty fields left out).
pub fn z_list(out: &[u8]) -> Result<Vec<Vec<u8>>, WorktreeError> {
    let f = fields(out).ok_or(WorktreeError::Truncated)?;
    Ok(f.into_iter()
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// The first `n` objects of `git cat-file --batch` output `out`, in order: the object's bytes, or
/// None when git said it is missing (or the output is cut short: the rest are None too).
pub fn batch(out: &[u8], n: usize) -> Vec<Option<Vec<u8>>> {
    let mut res = Vec::with_capacity(n.min(out.len() + 1));
    let mut pos = 0;
    while res.len() < n {
        let Some(nl) = out[pos..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let head = &out[pos..pos + nl];
        pos += nl + 1;
        match batch_size(head) {
            // The object, then a newline.
            Some(size) if out.len() - pos > size && out[pos + size] == b'\n' => {
                res.push(Some(out[pos..pos + size].to_vec()));
                pos += size + 1;
            }
            Some(_) => break,
            None => res.push(None),
        }
    }
    res.resize(n, None);
    res
}

/// The size of a `cat-file --batch` header `<oid> <type> <size>`, or None (`<name> missing`).
fn batch_size(head: &[u8]) -> Option<usize> {
    let mut parts = head.split(|b| *b == b' ');
    let oid = parts.next()?;
    let kind = parts.next()?;
    let size = parts.next()?;
    let ok = parts.next().is_none()
        && !oid.is_empty()
        && oid.iter().all(u8::is_ascii_hexdigit)
        && !kind.is_empty()
        && kind.iter().all(u8::is_ascii_lowercase)
        && !size.is_empty()
        && size.len() <= 19
        && size.iter().all(u8::is_ascii_digit);
    if !ok {
        return None;
    }
    std::str::from_utf8(size).ok()?.parse().ok()
}

/// Absolute path `p` with its `.` and `..` components resolved and its separators single (no
/// file system access); None when it is not absolute or climbs above `/`.
pub fn clean(p: &[u8]) -> Option<Vec<u8>> {
    if p.first() != Some(&b'/') {
        return None;
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for c in p.split(|b| *b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    let mut out = Vec::with_capacity(p.len());
    for c in &parts {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Some(out)
}

/// The path a git file names: `text` is a `.git` file (`gitdir: X`, with `prefix` `gitdir`) or a
/// registration's `gitdir` file (`X`, no prefix); one line ending with at most one line break;
/// a relative `X` is taken from `base`. Absolute and cleaned ([`clean`]), or None.
pub fn named_path(text: &[u8], prefix: Option<&[u8]>, base: &[u8]) -> Option<Vec<u8>> {
    let mut p = text;
    if let Some(word) = prefix {
        p = p.strip_prefix(word)?.strip_prefix(b": ")?;
    }
    p = p.strip_suffix(b"\n").unwrap_or(p);
    p = p.strip_suffix(b"\r").unwrap_or(p);
    if p.is_empty() || p.contains(&0) || p.contains(&b'\n') {
        return None;
    }
    if p[0] == b'/' {
        return clean(p);
    }
    let mut joined = base.to_vec();
    joined.push(b'/');
    joined.extend_from_slice(p);
    clean(&joined)
}

/// Which of the registrations `gitdirs` (`(admin dir, its gitdir file's text)`) names
/// `dotgit`, the worktree's `.git` where the plugin made it: its index, when exactly one does.
pub fn registered(gitdirs: &[(Vec<u8>, Vec<u8>)], dotgit: &[u8]) -> Result<usize, WorktreeError> {
    let mut found = None;
    for (i, (admin, text)) in gitdirs.iter().enumerate() {
        if named_path(text, None, admin).as_deref() == Some(dotgit) {
            if found.is_some() {
                return Err(WorktreeError::RegisteredTwice);
            }
            found = Some(i);
        }
    }
    found.ok_or(WorktreeError::NotRegistered)
}

/// Whether land may write `path` (relative to the project, as git printed it for the worktree),
/// or why not.
pub fn landable(path: &[u8]) -> Result<(), NotLanded> {
    if path.is_empty() || path[0] == b'/' || path.ends_with(b"/") || path.contains(&0) {
        return Err(NotLanded::NotPlain);
    }
    let parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    if parts
        .iter()
        .any(|c| c.is_empty() || *c == b"." || *c == b"..")
    {
        return Err(NotLanded::NotPlain);
    }
    if parts.iter().any(|c| c.eq_ignore_ascii_case(b".git")) {
        return Err(NotLanded::GitFiles);
    }
    if parts.len() > 2 && parts[0] == b".claude" && parts[1] == b"worktrees" {
        return Err(NotLanded::Worktrees);
    }
    if path.contains(&b'\n') {
        return Err(NotLanded::LineBreak);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_reads_every_kind_and_refuses_a_cut() {
        let out = b"M\0a.txt\0R100\0old\0new\0D\0gone\0A\0n\xffame\0";
        let got = name_status(out).unwrap();
        let pairs: Vec<(u8, &[u8])> = got.iter().map(|c| (c.status, c.path.as_slice())).collect();
        assert_eq!(
            pairs,
            vec![
                (b'M', &b"a.txt"[..]),
                (b'D', b"old"),
                (b'A', b"new"),
                (b'D', b"gone"),
                (b'A', b"n\xffame")
            ]
        );
        assert_eq!(name_status(b"M\0"), Err(WorktreeError::Truncated));
        assert_eq!(name_status(b"M\0a.t"), Err(WorktreeError::Truncated));
        assert_eq!(z_list(b"a\0b"), Err(WorktreeError::Truncated));
        assert_eq!(z_list(b"a\0\0b\0"), Ok(vec![b"a".to_vec(), b"b".to_vec()]));
        assert_eq!(name_status(b"R100\0old\0"), Err(WorktreeError::Truncated));
        assert_eq!(name_status(b"Q\0x\0"), Err(WorktreeError::Status(b'Q')));
        assert_eq!(name_status(b""), Ok(vec![]));
    }

    #[test]
    fn batch_reads_objects_and_missing_ones() {
        let out = b"abc blob 3\none\nzz missing\n0a blob 0\n\n";
        assert_eq!(
            batch(out, 3),
            vec![Some(b"one".to_vec()), None, Some(vec![])]
        );
        // Cut short: what is there, then None.
        assert_eq!(batch(b"abc blob 9\none", 2), vec![None, None]);
        assert_eq!(batch(b"", 1), vec![None]);
    }

    #[test]
    fn git_files_name_paths_and_one_registration() {
        let base = b"/p/.claude/w";
        assert_eq!(
            named_path(b"gitdir: /p/.git/worktrees/x\n", Some(b"gitdir"), base),
            Some(b"/p/.git/worktrees/x".to_vec())
        );
        assert_eq!(
            named_path(b"gitdir: ../../.git/worktrees/x", Some(b"gitdir"), base),
            Some(b"/p/.git/worktrees/x".to_vec())
        );
        assert_eq!(named_path(b"gitdir:/p", Some(b"gitdir"), base), None);
        assert_eq!(
            named_path(b"gitdir: ../../../../x", Some(b"gitdir"), b"/p/w"),
            None
        );
        assert_eq!(named_path(b"/a\n/b", None, base), None);
        let regs = vec![
            (b"/c/worktrees/x".to_vec(), b"/p/w/x/.git\n".to_vec()),
            (b"/c/worktrees/y".to_vec(), b"/p/w/y/.git\n".to_vec()),
        ];
        assert_eq!(registered(&regs, b"/p/w/x/.git"), Ok(0));
        assert_eq!(
            registered(&regs, b"/p/w/z/.git"),
            Err(WorktreeError::NotRegistered)
        );
        let twice = vec![
            (b"/c/worktrees/x".to_vec(), b"/p/w/x/.git".to_vec()),
            (b"/c/worktrees/x1".to_vec(), b"/p/w/x/.git".to_vec()),
        ];
        assert_eq!(
            registered(&twice, b"/p/w/x/.git"),
            Err(WorktreeError::RegisteredTwice)
        );
    }

    #[test]
    fn land_writes_only_plain_paths_outside_git_and_the_worktrees() {
        assert_eq!(landable(b"src/a.rs"), Ok(()));
        assert_eq!(landable(b"n\xffame"), Ok(()));
        for p in [
            &b""[..],
            b"/etc/x",
            b"a//b",
            b"./a",
            b"a/../b",
            b"sub/",
            b"a\0b",
        ] {
            assert_eq!(landable(p), Err(NotLanded::NotPlain), "{p:?}");
        }
        for p in [
            &b".git/config"[..],
            b"sub/.git/hooks/pre-commit",
            b".GIT/x",
            b".git",
        ] {
            assert_eq!(landable(p), Err(NotLanded::GitFiles), "{p:?}");
        }
        assert_eq!(
            landable(b".claude/worktrees/x/a"),
            Err(NotLanded::Worktrees)
        );
        assert_eq!(landable(b".claude/settings.json"), Ok(()));
        assert_eq!(landable(b"a\nHEAD:b"), Err(NotLanded::LineBreak));
    }
}
