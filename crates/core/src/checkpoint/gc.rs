//! Keeping the store under its size cap: the oldest checkpoints go first, then every object no
//! remaining checkpoint reaches.

use super::*;

impl Inner {
    /// Every object checkpoint tree `id` reaches that `seen` does not hold yet (added to it),
    /// the trees its deltas are against included. `walked`: the trees whose entries were
    /// already followed (a delta's base is needed without its entries being so).
    pub(super) fn reach(
        &self,
        id: &ObjectId,
        seen: &mut HashMap<ObjectId, CheckpointId>,
        walked: &mut HashSet<ObjectId>,
        by: CheckpointId,
    ) -> Result<(), CheckpointError> {
        if !walked.insert(*id) {
            return Ok(());
        }
        seen.entry(*id).or_insert(by);
        let t = tree::read_full(&self.objects, id)?;
        for b in &t.bases {
            seen.entry(*b).or_insert(by);
        }
        for e in t.entries {
            match e.kind {
                Kind::Dir => self.reach(&e.id, seen, walked, by)?,
                Kind::OverCap => {}
                _ => {
                    seen.entry(e.id).or_insert(by);
                }
            }
        }
        Ok(())
    }

    /// Drops the oldest checkpoints (never `keep`, never the newest) until the objects fit the
    /// cap, then deletes what no remaining checkpoint reaches.
    pub(super) fn gc(&mut self, keep: Option<CheckpointId>) -> Result<GcReport, CheckpointError> {
        let ids = self.ids()?;
        // The newest checkpoint reaching each object: walking from the newest, a subtree
        // already seen was reached by a newer one, and so was everything under it.
        let mut newest: HashMap<ObjectId, CheckpointId> = HashMap::new();
        let mut readable = Vec::new();
        let mut walked = HashSet::new();
        for &id in ids.iter().rev() {
            let Ok(info) = self.info(id) else { continue };
            // A damaged tree keeps what it could reach; what it could not is already lost.
            let _ = self.reach(&info.tree, &mut newest, &mut walked, id);
            readable.push(id);
        }
        readable.reverse();
        let all = self.objects.all()?;
        let total: u64 = all.iter().map(|(_, n)| n).sum();
        let cap = self.opts.max_store_bytes;
        // Bytes freed by dropping every checkpoint up to each id.
        let mut by_id: HashMap<CheckpointId, u64> = HashMap::new();
        let mut unreferenced = 0;
        for (oid, n) in &all {
            match newest.get(oid) {
                Some(c) => *by_id.entry(*c).or_default() += n,
                None => unreferenced += n,
            }
        }
        let mut remaining = total - unreferenced;
        let newest_id = readable.last().copied();
        if let Some(k) = keep {
            // What the kept checkpoint needs even with every other one dropped.
            let others: u64 = readable
                .iter()
                .filter(|&&i| i != k && Some(i) != newest_id)
                .map(|i| by_id.get(i).copied().unwrap_or(0))
                .sum();
            let needed = remaining - others;
            if needed > cap {
                return Err(CheckpointError::Full { needed, cap });
            }
        }
        let mut drop_upto = None;
        for &id in &readable {
            if remaining <= cap || Some(id) == keep || Some(id) == newest_id {
                break;
            }
            remaining -= by_id.get(&id).copied().unwrap_or(0);
            drop_upto = Some(id);
        }
        let mut report = GcReport::default();
        if let Some(upto) = drop_upto {
            for &id in ids.iter().filter(|&&i| i <= upto) {
                let _ = std::fs::remove_file(self.record_path(id));
                report.dropped_checkpoints.push(id);
            }
        }
        let live = |oid: &ObjectId| match newest.get(oid) {
            Some(c) => drop_upto.is_none_or(|u| *c > u),
            None => false,
        };
        let mut deleted = HashSet::new();
        for (oid, n) in &all {
            if !live(oid) {
                self.objects.remove(oid);
                self.known.remove(oid);
                deleted.insert(*oid);
                report.deleted_objects += 1;
                report.freed_bytes += n;
            }
        }
        if !deleted.is_empty() {
            let before = self.cache.map.len();
            self.cache.map.retain(|_, c| !deleted.contains(&c.id));
            self.cache_dirty |= self.cache.map.len() != before;
            // The last walk's trees may be among them; its files whose content is are read
            // again.
            if let Some(m) = &mut self.memo {
                m.forget_trees_and(&|id| deleted.contains(id));
                self.cache_dirty = true;
                self.unwatch();
            }
        }
        report.store_bytes = total - report.freed_bytes;
        self.store_bytes = Some(report.store_bytes);
        Ok(report)
    }
}
