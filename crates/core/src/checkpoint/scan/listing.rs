//! A directory's listing, its own ignore file, and the last walk's entry for each name.

use super::*;

/// The entries of `dir` (at `rel`), sorted by name: the old ones when the listing is the same
/// (`same_listing`, their names taken from `old`), else listed again. `None`: not readable
/// (counted; an error for the root).
pub(super) fn listing(
    dir: &CapDir,
    rel: &[u8],
    old: &mut DirMemo,
    same_listing: bool,
    out: &mut Out,
) -> Result<Option<Listing>, CheckpointError> {
    if same_listing {
        out.stats.dirs_unchanged += 1;
        return Ok(Some(
            old.entries
                .iter_mut()
                .map(|e| (std::mem::take(&mut e.name), e.listed))
                .collect(),
        ));
    }
    let listed = match dir.list_nofollow() {
        Ok(l) => l,
        Err(e) if rel.is_empty() => return Err(e.into()),
        Err(_) => {
            out.stats.unreadable += 1;
            return Ok(None);
        }
    };
    let mut listed: Listing = listed
        .into_iter()
        .map(|l| (l.name.into_encoded_bytes(), l.kind))
        .collect();
    listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(listed))
}

/// The bytes and rules of the directory's own `.gitignore` (when `listed` has one), parsed
/// again only when its bytes differ from those of the walk before (`old`).
pub(super) fn own_ignore(
    dir: &CapDir,
    listed: &[(Vec<u8>, EntryType)],
    old: &mut DirMemo,
) -> Option<(Vec<u8>, Option<Arc<Gitignore>>)> {
    let has_ignore = listed
        .iter()
        .any(|(n, k)| n == b".gitignore" && *k == EntryType::File);
    if !has_ignore {
        return None;
    }
    read_ignore_bytes(dir, Path::new(".gitignore")).map(|bytes| match old.own_ignore.take() {
        Some((b, gi)) if b == bytes => (b, gi),
        _ => {
            let gi = parse_ignore(&bytes).map(Arc::new);
            (bytes, gi)
        }
    })
}

/// The entry of the walk before named `name`: the next of `olds` when the listing is the same,
/// else found by name in the sorted `olds` (those passed by were removed: `changed` when one
/// was kept).
pub(super) fn previous(
    olds: &mut std::iter::Peekable<std::vec::IntoIter<Seen>>,
    name: &[u8],
    same_listing: bool,
    changed: &mut bool,
) -> Option<Seen> {
    if same_listing {
        // The old entries are the listing, in its order.
        return olds.next();
    }
    while let Some(o) = olds.peek() {
        match o.name.as_slice().cmp(name) {
            std::cmp::Ordering::Less => {
                *changed |= olds.next().is_some_and(|o| o.kept.is_some());
            }
            std::cmp::Ordering::Equal => return olds.next(),
            std::cmp::Ordering::Greater => break,
        }
    }
    None
}
