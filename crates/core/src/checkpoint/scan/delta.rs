//! A changed directory's tree, stored as its changes against the tree it had at the last walk
//! ([`tree::put_tree`]).

use super::*;

impl Ctx<'_> {
    /// The tree of a changed directory (at `rel`) holding `entries`, stored; none for an empty
    /// directory other than the root.
    pub(super) fn tree(
        &self,
        rel: &[u8],
        entries: &[Seen],
        base: Option<Base>,
        out: &mut Out,
    ) -> Result<(Option<ObjectId>, u8), CheckpointError> {
        if !rel.is_empty() && !entries.iter().any(|e| e.kept.is_some()) {
            return Ok((None, 0));
        }
        let kept = || {
            entries
                .iter()
                .filter_map(|e| e.kept.as_ref().map(|k| (e.name.as_slice(), k)))
        };
        let bytes = tree::encode_parts(kept());
        let id = ObjectId::of_tree(&bytes);
        let new = match self.known.lock() {
            Ok(mut k) => k.insert(id),
            Err(_) => true,
        };
        if !new {
            // Stored before, as whatever it was: not a base for a delta.
            return Ok((Some(id), tree::MAX_DELTA_DEPTH));
        }
        let edits = base
            .as_ref()
            .map(|b| edits(&b.entries, kept()))
            .unwrap_or_default();
        let (n, depth) = tree::put_tree(
            self.objects,
            &id,
            &bytes,
            base.as_ref().map(|b| (&b.id, b.depth)),
            edits.iter().map(|(n, s)| (*n, *s)),
        )?;
        if n > 0 {
            out.stats.objects_written += 1;
            out.stats.bytes_written += n;
        }
        Ok((Some(id), depth))
    }
}

/// The tree a directory had at the last walk: its id, how many deltas it is stored as, its
/// entries.
pub(super) struct Base {
    pub(super) id: ObjectId,
    pub(super) depth: u8,
    pub(super) entries: Vec<(Vec<u8>, FileState)>,
}

impl Base {
    /// The tree the last walk kept in the directory it found as `old` (`None`: none).
    pub(super) fn of(old: &DirMemo) -> Option<Base> {
        old.tree.map(|id| Base {
            id,
            depth: old.depth,
            entries: old
                .entries
                .iter()
                .filter_map(|e| e.kept.map(|k| (e.name.clone(), k)))
                .collect(),
        })
    }
}

/// The changes from `old` to `new` (both sorted by name): each name set or removed.
fn edits<'a>(
    old: &'a [(Vec<u8>, FileState)],
    new: impl Iterator<Item = (&'a [u8], &'a FileState)>,
) -> Vec<tree::Edit<'a>> {
    let mut out = Vec::new();
    let mut old = old.iter().peekable();
    for (name, st) in new {
        while let Some((n, _)) = old.next_if(|(n, _)| n.as_slice() < name) {
            out.push((n.as_slice(), None));
        }
        match old.next_if(|(n, _)| n.as_slice() == name) {
            Some((_, was)) if was == st => {}
            _ => out.push((name, Some(st))),
        }
    }
    out.extend(old.map(|(n, _)| (n.as_slice(), None)));
    out
}
