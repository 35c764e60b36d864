//! A listing answered as what changed since the caller's last one: the editor keeps the last
//! list it was given with its generation, and asks with it (`since`); the answer is "unchanged"
//! (nothing to build on the main thread), the entries that changed and the ids that went, or,
//! when the caller's generation is not the one kept here, the whole list.
//!
//! Generations are unique across every listing kept ([`Answers`] counts them): a generation
//! names one list exactly, so a caller's generation that is not the last one kept for its
//! listing (another listing's, an older one, a lost answer) gets the whole list.

use super::{config_dir, Conversation, Fingerprint, ListOptions};
use std::collections::HashMap;
use std::path::PathBuf;

/// The listings kept at most (the oldest is forgotten).
const KEPT: usize = 16;
/// More changed entries than this are answered as the whole list (built on the main thread in
/// pieces, where a patch is one piece).
pub const MAX_PATCH: usize = 250;

/// What a listing answers a caller that holds generation `since`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The whole list, newest first.
    Full {
        generation: u64,
        list: Vec<Conversation>,
    },
    /// The caller's list (generation `generation`) is still the answer.
    Unchanged { generation: u64 },
    /// The caller's list (generation `base`) with these entries put in (new or changed, by id)
    /// and these ids taken out, sorted newest first, is the answer (generation `generation`).
    Patch {
        generation: u64,
        base: u64,
        changed: Vec<Conversation>,
        removed: Vec<String>,
    },
}

/// Which listing a list belongs to: the project (or every project) in a configuration folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    root: Option<PathBuf>,
    all: bool,
    config_dir: Option<PathBuf>,
}

impl Key {
    fn of(opts: &ListOptions) -> Key {
        Key {
            root: if opts.all { None } else { opts.root.clone() },
            all: opts.all,
            config_dir: opts.config_dir.clone().or_else(config_dir),
        }
    }
}

/// One listing's last answer: its generation, its entries by id, what it saw, when it was made.
struct Last {
    generation: u64,
    by_id: HashMap<String, Conversation>,
    seen: Fingerprint,
    used: u64,
}

/// The last answer of each listing (a query's are not kept: its matches are its own).
#[derive(Default)]
pub struct Answers {
    counter: u64,
    last: HashMap<Key, Last>,
}

impl Answers {
    /// Whether a caller of listing `opts` that holds generation `since` has what a listing that
    /// saw `seen` would answer (the listing's last answer is that generation, and saw the same).
    pub fn same(&self, opts: &ListOptions, since: u64, seen: &Fingerprint) -> bool {
        since != 0
            && self
                .last
                .get(&Key::of(opts))
                .is_some_and(|l| l.generation == since && l.seen == *seen)
    }

    /// Marks listing `opts` used now (an "unchanged" answer made before any entry was built):
    /// the listings kept are forgotten oldest-used first, and a steady one is the most used.
    pub fn touch(&mut self, opts: &ListOptions) {
        self.counter += 1;
        if let Some(l) = self.last.get_mut(&Key::of(opts)) {
            l.used = self.counter;
        }
    }

    /// What to answer a caller of listing `opts` that holds generation `since` (0: none),
    /// `list` being the listing now (newest first) and `seen` what it saw; remembers `list` as
    /// the listing's last.
    pub fn answer(
        &mut self,
        opts: &ListOptions,
        list: Vec<Conversation>,
        since: u64,
        seen: Fingerprint,
    ) -> Reply {
        self.counter += 1;
        let now = self.counter;
        let key = Key::of(opts);
        let mut by_id: HashMap<String, Conversation> = HashMap::with_capacity(list.len());
        let reply = match self.last.get_mut(&key) {
            Some(last) if since != 0 && last.generation == since => {
                let mut changed = Vec::new();
                for c in list {
                    if last.by_id.remove(&c.id).as_ref() != Some(&c) {
                        changed.push(c.clone());
                    }
                    by_id.insert(c.id.clone(), c);
                }
                let mut removed: Vec<String> = last.by_id.drain().map(|(id, _)| id).collect();
                removed.sort();
                if changed.is_empty() && removed.is_empty() {
                    last.by_id = by_id;
                    last.seen = seen;
                    last.used = now;
                    return Reply::Unchanged { generation: since };
                }
                if changed.len() > MAX_PATCH {
                    let mut list: Vec<Conversation> = by_id.values().cloned().collect();
                    list.sort_by(super::newest_first);
                    Reply::Full {
                        generation: now,
                        list,
                    }
                } else {
                    Reply::Patch {
                        generation: now,
                        base: since,
                        changed,
                        removed,
                    }
                }
            }
            _ => {
                by_id.extend(list.iter().map(|c| (c.id.clone(), c.clone())));
                Reply::Full {
                    generation: now,
                    list,
                }
            }
        };
        self.keep(
            key,
            Last {
                generation: now,
                by_id,
                seen,
                used: now,
            },
        );
        reply
    }

    fn keep(&mut self, key: Key, last: Last) {
        if !self.last.contains_key(&key) && self.last.len() >= KEPT {
            if let Some(oldest) = self
                .last
                .iter()
                .min_by_key(|(_, l)| l.used)
                .map(|(k, _)| k.clone())
            {
                self.last.remove(&oldest);
            }
        }
        self.last.insert(key, last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(id: &str, updated_ms: i64, prompts: u64) -> Conversation {
        Conversation {
            id: id.into(),
            title: id.into(),
            cwd: None,
            branch: None,
            worktree: None,
            started_ms: None,
            updated_ms,
            prompts,
            first_prompt: None,
            last_prompt: None,
            cost_usd: None,
            running: false,
            bytes: 1,
            folder: "f".into(),
            partial: false,
            matches: None,
        }
    }

    fn opts(root: &str) -> ListOptions {
        ListOptions {
            root: Some(root.into()),
            config_dir: Some("/cfg".into()),
            ..ListOptions::default()
        }
    }

    fn fp(n: u64) -> Fingerprint {
        Fingerprint {
            serials: vec![n],
            live: Vec::new(),
        }
    }

    fn generation(r: &Reply) -> u64 {
        match r {
            Reply::Full { generation, .. }
            | Reply::Unchanged { generation }
            | Reply::Patch { generation, .. } => *generation,
        }
    }

    #[test]
    fn unchanged_patch_and_whole() {
        let mut a = Answers::default();
        let o = opts("/p");
        let l1 = vec![conv("a", 3, 1), conv("b", 2, 1), conv("c", 1, 1)];
        let r = a.answer(&o, l1.clone(), 0, fp(1));
        assert!(matches!(&r, Reply::Full { list, .. } if *list == l1));
        let g = generation(&r);
        assert_eq!(
            a.answer(&o, l1.clone(), g, fp(2)),
            Reply::Unchanged { generation: g }
        );
        // What the listing saw is what the last one saw: unchanged before any entry is made.
        assert!(a.same(&o, g, &fp(2)));
        assert!(!a.same(&o, g, &fp(3)));
        assert!(!a.same(&o, 0, &fp(2)));
        assert!(!a.same(&opts("/q"), g, &fp(2)));
        // b grew, c went, d came.
        let l2 = vec![conv("b", 5, 2), conv("d", 4, 1), conv("a", 3, 1)];
        let r = a.answer(&o, l2.clone(), g, fp(3));
        let Reply::Patch {
            generation: g2,
            base,
            changed,
            removed,
        } = r
        else {
            panic!("a patch: {r:?}")
        };
        assert_eq!(base, g);
        assert!(g2 > g);
        assert_eq!(changed, vec![conv("b", 5, 2), conv("d", 4, 1)]);
        assert_eq!(removed, vec!["c".to_string()]);
        // The old generation is not the one kept any more: the whole list.
        assert!(matches!(
            a.answer(&o, l2.clone(), g, fp(3)),
            Reply::Full { .. }
        ));
    }

    #[test]
    fn many_changes_are_the_whole_list() {
        let mut a = Answers::default();
        let o = opts("/p");
        let n = MAX_PATCH as i64 + 10;
        let g = generation(&a.answer(
            &o,
            (0..n).map(|i| conv(&format!("{i}"), i, 1)).collect(),
            0,
            fp(1),
        ));
        let l2: Vec<Conversation> = (0..n).rev().map(|i| conv(&format!("{i}"), i, 2)).collect();
        assert_eq!(
            a.answer(&o, l2.clone(), g, fp(2)),
            Reply::Full {
                generation: g + 1,
                list: l2
            }
        );
    }

    #[test]
    fn a_generation_names_one_listing() {
        let mut a = Answers::default();
        let gp = generation(&a.answer(&opts("/p"), vec![conv("a", 1, 1)], 0, fp(1)));
        let gq = generation(&a.answer(&opts("/q"), vec![conv("a", 1, 1)], 0, fp(1)));
        assert_ne!(gp, gq);
        // /p's generation given for /q (the same entries): the whole list, not "unchanged".
        assert!(matches!(
            a.answer(&opts("/q"), vec![conv("a", 1, 1)], gp, fp(1)),
            Reply::Full { .. }
        ));
        assert!(matches!(
            a.answer(&opts("/p"), vec![conv("a", 1, 1)], gp, fp(1)),
            Reply::Unchanged { .. }
        ));
    }

    #[test]
    fn listings_kept_are_bounded() {
        let mut a = Answers::default();
        for i in 0..(KEPT + 5) {
            a.answer(&opts(&format!("/p{i}")), vec![conv("a", 1, 1)], 0, fp(1));
        }
        assert_eq!(a.last.len(), KEPT);
    }

    #[test]
    fn a_listing_answered_unchanged_early_is_kept_as_used() {
        let mut a = Answers::default();
        let steady = opts("/steady");
        let g = generation(&a.answer(&steady, vec![conv("a", 1, 1)], 0, fp(1)));
        for i in 0..(KEPT + 5) {
            a.answer(&opts(&format!("/p{i}")), vec![conv("a", 1, 1)], 0, fp(1));
            // The steady listing is asked again and answered before any entry is made.
            assert!(a.same(&steady, g, &fp(1)));
            a.touch(&steady);
        }
        assert!(
            a.same(&steady, g, &fp(1)),
            "the most used listing was forgotten"
        );
    }
}
