//! The hop to Neovim's main thread: a channel paired with a libuv async handle (the pattern of
//! noib3/nvim-completion). Any thread queues a job and wakes the loop; the callback schedules a
//! drain of the queue with `try_recv` — never blocking — that runs each job with panics
//! contained, at a point where Neovim allows editor changes. Sends
//! coalesce, so one wake-up may run many jobs; to keep the editor responsive under a flood it
//! runs at most [`BATCH`] jobs or [`SLICE`] of time per wake-up and re-arms itself for the rest.

use nvim_oxi::libuv::AsyncHandle;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

pub type Job = Box<dyn FnOnce(&mlua::Lua) + Send + 'static>;

const BATCH: usize = 256;
/// Longest stretch of jobs per turn. Anything else the editor has to do (a keystroke, an RPC
/// request over `--listen`) waits at most this long behind a flood of main-thread jobs, so a
/// turn stays well below what such an RPC may take (BENCHMARKS.md).
const SLICE: Duration = Duration::from_millis(1);

#[derive(Clone)]
pub struct MainThread {
    tx: Sender<Job>,
    handle: AsyncHandle,
}

impl MainThread {
    /// Must be called on the main thread (it registers the handle with Neovim's loop).
    pub fn new() -> Result<MainThread, nvim_oxi::libuv::Error> {
        let (tx, rx): (Sender<Job>, Receiver<Job>) = channel();
        let rx = Rc::new(rx);
        let rearm: Rc<RefCell<Option<AsyncHandle>>> = Default::default();
        let rearm2 = rearm.clone();
        let scheduled = Rc::new(Cell::new(false));
        let handle = AsyncHandle::new(move || {
            // The libuv callback is not a safe point for editor changes (opening a tab there
            // aborts Neovim): hand the drain to the scheduler, which runs it when Neovim is
            // ready, once however many sends coalesced.
            if !scheduled.replace(true) {
                let (rx, rearm, scheduled) = (rx.clone(), rearm2.clone(), scheduled.clone());
                nvim_oxi::schedule(move |_| {
                    scheduled.set(false);
                    drain(&rx, &rearm);
                });
            }
            Ok::<_, std::convert::Infallible>(())
        })?;
        *rearm.borrow_mut() = Some(handle.clone());
        Ok(MainThread { tx, handle })
    }

    /// Queues `job` for the main thread; returns false when Neovim's side is gone.
    pub fn run(&self, job: Job) -> bool {
        if self.tx.send(job).is_err() {
            return false;
        }
        self.handle.send().is_ok()
    }
}

/// Runs queued jobs, panics contained, at most [`BATCH`] or [`SLICE`] per turn; re-arms the
/// handle when more are waiting so Neovim gets its turn in between.
fn drain(rx: &Receiver<Job>, rearm: &RefCell<Option<AsyncHandle>>) {
    // Not nvim_oxi::mlua::lua(): dropping that handle would run a full GC (see crate::lua).
    let lua = crate::lua();
    let start = Instant::now();
    let mut n = 0;
    while let Ok(job) = rx.try_recv() {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| job(&lua))) {
            crate::logging::log_panic("main-thread job", p.as_ref());
        }
        n += 1;
        if n >= BATCH || start.elapsed() >= SLICE {
            if let Some(h) = rearm.borrow().as_ref() {
                let _ = h.send();
            }
            break;
        }
    }
}
