//! Checkpoint records: one small text file per checkpoint (`checkpoints/<id, 20 digits>`), with
//! a checksum, so a truncated or damaged record is refused rather than misread.

use super::*;

const RECORD_HEADER: &str = "claude-context checkpoint v1";

impl Inner {
    pub(super) fn records_dir(&self) -> PathBuf {
        self.dir.join("checkpoints")
    }

    pub(super) fn record_path(&self, id: CheckpointId) -> PathBuf {
        self.records_dir().join(format!("{id:020}"))
    }

    /// The ids of the records present, ascending.
    pub(super) fn ids(&self) -> Result<Vec<CheckpointId>, CheckpointError> {
        let d = self.records_dir();
        let rd = std::fs::read_dir(&d).map_err(io_err("list", &d))?;
        let mut ids: Vec<CheckpointId> = rd
            .flatten()
            .filter_map(|e| {
                let n = e.file_name();
                let n = n.to_str()?;
                (n.len() == 20 && n.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| n.parse().ok())
                    .flatten()
            })
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    pub(super) fn info(&self, id: CheckpointId) -> Result<CheckpointInfo, CheckpointError> {
        let path = self.record_path(id);
        let text = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(CheckpointError::Unknown {
                    id,
                    store: self.dir.clone(),
                })
            }
            Err(e) => return Err(io_err("read", &path)(e)),
        };
        parse_record(&text)
            .filter(|i| i.id == id)
            .ok_or_else(|| CheckpointError::Corrupt {
                path,
                what: "the checkpoint record is truncated or malformed".into(),
            })
    }

    pub(super) fn record(
        &mut self,
        origin: Origin,
        label: &str,
        tree: ObjectId,
    ) -> Result<CheckpointId, CheckpointError> {
        let id = self.ids()?.last().copied().unwrap_or(0) + 1;
        let info = CheckpointInfo {
            id,
            time_ms: now_ms(),
            origin,
            label: label.to_string(),
            tree,
        };
        let path = self.record_path(id);
        crate::fsutil::write_atomic_volatile(&path, &encode_record(&info), 0o600)
            .map_err(io_err("write the checkpoint record", &path))?;
        // Over the cap: older checkpoints go; if this one alone does not fit, it goes.
        let cap = self.opts.max_store_bytes;
        if self.store_bytes()? > cap {
            if let Err(e) = self.gc(Some(id)) {
                // Not recorded; what only it needed is deleted again.
                let _ = std::fs::remove_file(&path);
                self.gc(None)?;
                return Err(e);
            }
        }
        Ok(id)
    }
}

pub(super) fn encode_record(i: &CheckpointInfo) -> Vec<u8> {
    let label: String = i
        .label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let body = format!(
        "{RECORD_HEADER}\nid {}\ntime {}\norigin {}\ntree {}\nlabel {}\n",
        i.id,
        i.time_ms,
        i.origin.as_str(),
        i.tree.hex(),
        label
    );
    let sum = blake3::hash(body.as_bytes()).to_hex();
    format!("{body}sum {sum}\n").into_bytes()
}

pub(super) fn parse_record(b: &[u8]) -> Option<CheckpointInfo> {
    let text = std::str::from_utf8(b).ok()?;
    let at = text.rfind("sum ")?;
    let (body, sum) = text.split_at(at);
    if blake3::hash(body.as_bytes()).to_hex().as_str() != sum.strip_prefix("sum ")?.trim_end() {
        return None;
    }
    let mut lines = body.lines();
    if lines.next()? != RECORD_HEADER {
        return None;
    }
    let mut field = |k: &str| -> Option<String> {
        let l = lines.next()?;
        l.strip_prefix(k)?.strip_prefix(' ').map(str::to_string)
    };
    Some(CheckpointInfo {
        id: field("id")?.parse().ok()?,
        time_ms: field("time")?.parse().ok()?,
        origin: Origin::parse(&field("origin")?)?,
        tree: ObjectId::from_hex(&field("tree")?)?,
        label: field("label")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_any_damage_is_refused() {
        let i = CheckpointInfo {
            id: 7,
            time_ms: 1,
            origin: Origin::Capture,
            label: "src/a b.rs".into(),
            tree: ObjectId::of_tree(b""),
        };
        let b = encode_record(&i);
        assert_eq!(parse_record(&b), Some(i));
        for n in 0..b.len() - 1 {
            assert_eq!(parse_record(&b[..n]), None, "{n}");
        }
        let mut flipped = b.clone();
        flipped[40] ^= 1;
        assert_eq!(parse_record(&flipped), None);
    }
}
