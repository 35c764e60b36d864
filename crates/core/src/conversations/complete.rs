//! Files a listing read in part ([`read::lite`]), read whole later on a thread of their own
//! below the editor's priority, then the index written ([`index::save`]): after both
//! [`read`] and [`index`], which do not know of it. It waits while a listing is under way.

use super::{index, read};
use crate::capfs::CapDir;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// A file read in part by [`read::lite`], to be read whole: its folder and name.
pub struct Pending {
    pub dir: Arc<CapDir>,
    pub name: std::path::PathBuf,
}

/// Reads the files of `pending` whole ([`read::read`]) on a thread of their own below the editor's
/// priority, one after another (one such thread at a time: a later call's files join its
/// queue), and caches what they hold (a listing compares the `stat` with the file's: one that
/// changed meanwhile is read again then). A listing made meanwhile shows the part read. Then,
/// with `save_to`, writes the cache as the index in that folder ([`index::save`]).
pub fn complete_later(pending: Vec<Pending>, save_to: Option<PathBuf>) {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    if pending.is_empty() && save_to.is_none() {
        return;
    }
    let q = QUEUE.get_or_init(Default::default);
    let mut g = q.lock().unwrap_or_else(|p| p.into_inner());
    g.pending.extend(pending);
    g.save_to = save_to.or(g.save_to.take());
    if g.running {
        return;
    }
    g.running = true;
    drop(g);
    let work = move || {
        // Below the editor and the listings (it only makes later listings exact).
        crate::threads::yield_to_the_editor(crate::threads::thread_nice())();
        complete_queue(q);
    };
    if std::thread::Builder::new()
        .name("cc-conversations-complete".into())
        .spawn(work)
        .is_err()
    {
        q.lock().unwrap_or_else(|p| p.into_inner()).running = false;
    }
}

/// The files to read whole, the index to write, whether a thread is at it.
#[derive(Default)]
struct Queue0 {
    pending: Vec<Pending>,
    save_to: Option<PathBuf>,
    running: bool,
}

type Queue = Mutex<Queue0>;

/// Waits while a listing is under way (it answers the person; this only makes later listings
/// exact): a listing waits for at most the one file being read.
fn wait_for_listings() {
    while super::listing_under_way() {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Reads the files of queue `q` whole and writes the index until there is nothing left to do.
fn complete_queue(q: &Queue) {
    loop {
        let (batch, save_to) = {
            let mut g = q.lock().unwrap_or_else(|p| p.into_inner());
            if g.pending.is_empty() && g.save_to.is_none() {
                g.running = false;
                return;
            }
            (std::mem::take(&mut g.pending), g.save_to.take())
        };
        for p in batch {
            wait_for_listings();
            let path = p.dir.display(&p.name);
            if let Ok(r) = read::read(&p.dir, &p.name) {
                read::remember(path, r);
            }
        }
        if let Some(dir) = save_to {
            if let Err(e) = index::save(&dir) {
                tracing::debug!("conversations: the index was not written: {e}");
            }
        }
    }
}
