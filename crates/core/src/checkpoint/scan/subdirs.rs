//! A directory's subdirectories: walked side by side, or kept as they were when the watch saw
//! nothing change in or beneath them.

use super::*;

impl Ctx<'_> {
    /// Walks the subdirectories `subdirs` of `dir` (whose path prefix is `prefix`), on the
    /// pool's threads when there is one, and notes their trees in `entries`: whether one changed.
    pub(super) fn subdirs(
        &self,
        dir: &CapDir,
        prefix: &[u8],
        below: &Below,
        entries: &mut [Seen],
        subdirs: Vec<Subdir>,
        out: &mut Out,
    ) -> Result<bool, CheckpointError> {
        let place = Place { dir, prefix, below };
        let subdirs = self.skip_unchanged(&place, entries, subdirs, out);
        let walk_sub = |(at, old_sub, _): Subdir| {
            let mut sub_out = Out::default();
            let name = &entries[at].name;
            let r = match dir.open_subdir_nofollow(as_path(name).as_ref()) {
                Ok(sub) => {
                    let sub_rel = join_rel(prefix, name);
                    self.dir(
                        &sub,
                        &sub_rel,
                        old_sub,
                        below.rules,
                        below.force,
                        &mut sub_out,
                    )
                    .map(Some)
                }
                Err(_) => {
                    sub_out.stats.unreadable += 1;
                    Ok(None)
                }
            };
            r.map(|m| (at, m, sub_out))
        };
        let prev_kepts: Vec<(usize, Option<FileState>)> =
            subdirs.iter().map(|(at, _, k)| (*at, *k)).collect();
        let results: Vec<Result<_, CheckpointError>> = if self.parallel && subdirs.len() > 1 {
            subdirs.into_par_iter().map(walk_sub).collect()
        } else {
            subdirs.into_iter().map(walk_sub).collect()
        };
        let mut changed = false;
        for (r, (_, prev_kept)) in results.into_iter().zip(prev_kepts) {
            let (at, memo, sub_out) = r?;
            out.add(sub_out);
            let e = &mut entries[at];
            if let Some(m) = memo {
                e.kept = m.tree.map(|id| FileState {
                    kind: Kind::Dir,
                    size: 0,
                    id,
                });
                e.what = What::Dir(Box::new(m));
            }
            changed |= e.kept != prev_kept;
        }
        Ok(changed)
    }

    /// Of `subdirs`, those to walk: the others (no event in or beneath them, the same
    /// directory as remembered, the same rules) keep what the last walk found, put back in
    /// `entries` as it was.
    fn skip_unchanged(
        &self,
        place: &Place,
        entries: &mut [Seen],
        subdirs: Vec<Subdir>,
        out: &mut Out,
    ) -> Vec<Subdir> {
        let (dir, prefix, below) = (place.dir, place.prefix, place.below);
        let Some(changes) = below.scoped.filter(|_| !below.force) else {
            return subdirs;
        };
        let mut walk = Vec::with_capacity(subdirs.len());
        for (at, old_sub, prev_kept) in subdirs {
            let e = &mut entries[at];
            let keep = match &old_sub {
                Some(m) if !changes.wanted(&join_rel(prefix, &e.name)) => {
                    // The same directory as the one remembered (its inode, without following).
                    match dir.stat_nofollow(as_path(&e.name).as_ref()) {
                        Ok((EntryType::Dir, st)) => m.ident == Some((st.dev, st.ino)),
                        _ => false,
                    }
                }
                _ => false,
            };
            match (keep, old_sub) {
                (true, Some(m)) => {
                    out.stats.dirs_skipped += 1;
                    out.trusted += m.trusted;
                    e.kept = prev_kept;
                    e.what = What::Dir(Box::new(m));
                }
                (_, old_sub) => walk.push((at, old_sub, prev_kept)),
            }
        }
        walk
    }
}

/// The path of `name` in the directory whose entries' paths start with `prefix`.
pub(super) fn join_rel(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + name.len());
    p.extend_from_slice(prefix);
    p.extend_from_slice(name);
    p
}

/// What a directory's subdirectories are walked with.
pub(super) struct Below<'a> {
    /// The rules in force in the directory.
    pub(super) rules: &'a Rules,
    /// Walk every subdirectory whole.
    pub(super) force: bool,
    /// Only the directories with events changed (`None`: everything may have).
    pub(super) scoped: Option<&'a Dirty>,
}

/// A directory whose subdirectories are looked at: its handle, its entries' paths' prefix, what
/// they are walked with.
struct Place<'a> {
    dir: &'a CapDir,
    prefix: &'a [u8],
    below: &'a Below<'a>,
}
