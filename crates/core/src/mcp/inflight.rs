//! Cancellation of in-flight `tools/call` requests, per connection.
//!
//! A tool may wait a long time (`openDiff` waits for the person). When its client sends
//! `notifications/cancelled {requestId}` or goes away, the request's future is dropped: nothing
//! is answered (MCP: a cancelled request gets no response), and whatever the future was
//! awaiting learns it through the drop — the editor hop, for one, then tells the Lua handler
//! (`require("claude_context.rpc").cancel`), which closes the diff view.

use futures_util::future::{AbortHandle, Abortable};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::Poll;

/// The cancellable requests of one connection, and the surface it connected to.
#[derive(Default)]
pub struct Inflight {
    surface: super::Surface,
    /// The connection's client id (`:ClaudeContext status`), for the trace log; 0 when none.
    client: u64,
    next: AtomicU64,
    /// seq -> (JSON text of the request id, abort handle). Keyed by a sequence number so two
    /// in-flight requests that reuse an id are both cancelled.
    running: Mutex<HashMap<u64, (String, AbortHandle)>>,
    /// [`Inflight::cancel_all`] ran (the client went away): a request that would register
    /// after it is dropped instead. (Set and read under `running`'s lock.)
    closed: AtomicBool,
    /// The connection's own project root (`fs-set-project-root`).
    root: crate::project::ConnectionRoot,
    /// Requests to the connection's client and its declared capabilities.
    link: std::sync::Arc<super::client::ClientLink>,
}

/// Removes a request's entry when its future finishes or is dropped.
struct Entry<'a> {
    owner: &'a Inflight,
    seq: u64,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.owner.lock().remove(&self.seq);
    }
}

impl Inflight {
    /// The state of a connection made to `surface`.
    pub fn new(surface: super::Surface) -> Inflight {
        Inflight {
            surface,
            ..Inflight::default()
        }
    }

    /// The same, for the connection of client `id` (named in the trace log).
    pub fn with_client(mut self, id: u64) -> Inflight {
        self.client = id;
        self
    }

    /// The connection's client id (0 when none).
    pub fn client(&self) -> u64 {
        self.client
    }

    /// What the connection may see and call.
    pub fn surface(&self) -> super::Surface {
        self.surface
    }

    /// The connection's project-root slot (see [`crate::project::CONNECTION_ROOT`]).
    pub fn root(&self) -> crate::project::ConnectionRoot {
        self.root.clone()
    }

    /// The connection's link to its client (see [`super::client::CLIENT`]).
    pub fn link(&self) -> std::sync::Arc<super::client::ClientLink> {
        self.link.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (String, AbortHandle)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `fut` as the request `id`; `None` when it was cancelled before it finished.
    ///
    /// Most requests finish in their first poll (answered from the editor's snapshot): they
    /// never enter the registry. One that waits is registered before that first poll returns,
    /// so before its connection reads anything after it (a `notifications/cancelled` for it
    /// included).
    pub async fn run<F: Future>(&self, id: &Value, fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        if let Poll::Ready(out) = first {
            return Some(out);
        }
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        let (handle, reg) = AbortHandle::new_pair();
        {
            let mut running = self.lock();
            // (A request handed to a task whose first poll ran while its client left.)
            if self.closed.load(Ordering::Relaxed) {
                return None;
            }
            running.insert(seq, (id.to_string(), handle));
        }
        let _entry = Entry { owner: self, seq };
        Abortable::new(fut, reg).await.ok()
    }

    /// Cancels the in-flight requests with this id; returns how many there were.
    pub fn cancel(&self, id: &Value) -> usize {
        let key = id.to_string();
        let map = self.lock();
        let hits: Vec<_> = map.values().filter(|(k, _)| *k == key).collect();
        hits.iter().for_each(|(_, h)| h.abort());
        hits.len()
    }

    /// Cancels every in-flight request (the client went away), and every one that would
    /// register later; returns how many there were.
    pub fn cancel_all(&self) -> usize {
        let map = self.lock();
        self.closed.store(true, Ordering::Relaxed);
        map.values().for_each(|(_, h)| h.abort());
        map.len()
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// A future that records whether it was dropped before finishing.
    struct Tracked(
        Arc<std::sync::atomic::AtomicBool>,
        tokio::sync::oneshot::Receiver<u8>,
    );
    impl Future for Tracked {
        type Output = u8;
        fn poll(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<u8> {
            std::pin::Pin::new(&mut self.1)
                .poll(cx)
                .map(|r| r.unwrap_or(0))
        }
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn finished_requests_answer_and_leave_the_registry() {
        let f = Inflight::default();
        let (tx, rx) = tokio::sync::oneshot::channel();
        tx.send(7).unwrap();
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let out = rt().block_on(f.run(&json!(1), Tracked(dropped, rx)));
        assert_eq!(out, Some(7));
        assert!(f.is_empty());
        assert_eq!(f.cancel(&json!(1)), 0, "nothing left to cancel");
    }

    #[test]
    fn cancel_by_id_drops_only_that_request() {
        rt().block_on(async {
            let f = Arc::new(Inflight::default());
            let (d1, d2) = (
                Arc::new(std::sync::atomic::AtomicBool::new(false)),
                Arc::new(std::sync::atomic::AtomicBool::new(false)),
            );
            let (_tx1, rx1) = tokio::sync::oneshot::channel::<u8>();
            let (tx2, rx2) = tokio::sync::oneshot::channel::<u8>();
            let (fa, fb) = (f.clone(), f.clone());
            let a = tokio::spawn({
                let d1 = d1.clone();
                async move { fa.run(&json!("a"), Tracked(d1, rx1)).await }
            });
            let b = tokio::spawn({
                let d2 = d2.clone();
                async move { fb.run(&json!(2), Tracked(d2, rx2)).await }
            });
            while f.len() < 2 {
                tokio::task::yield_now().await;
            }
            // The string "2" is not the number 2: ids are compared as JSON.
            assert_eq!(f.cancel(&json!("2")), 0);
            assert_eq!(f.cancel(&json!("a")), 1);
            assert_eq!(a.await.unwrap(), None, "cancelled: no answer");
            assert!(
                d1.load(Ordering::SeqCst),
                "the cancelled future was dropped"
            );
            assert!(!d2.load(Ordering::SeqCst), "the other one runs on");
            tx2.send(3).unwrap();
            assert_eq!(b.await.unwrap(), Some(3));
            assert!(f.is_empty());
        });
    }

    #[test]
    fn cancel_all_covers_reused_ids() {
        rt().block_on(async {
            let f = Arc::new(Inflight::default());
            let mut tasks = Vec::new();
            let mut keep = Vec::new();
            let mut flags = Vec::new();
            for _ in 0..3 {
                let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
                keep.push(tx);
                let d = Arc::new(std::sync::atomic::AtomicBool::new(false));
                flags.push(d.clone());
                let f2 = f.clone();
                tasks.push(tokio::spawn(async move {
                    f2.run(&json!(1), Tracked(d, rx)).await
                }));
            }
            while f.len() < 3 {
                tokio::task::yield_now().await;
            }
            assert_eq!(f.cancel_all(), 3);
            for t in tasks {
                assert_eq!(t.await.unwrap(), None);
            }
            assert!(flags.iter().all(|d| d.load(Ordering::SeqCst)));
            assert!(f.is_empty());
        });
    }

    /// A request whose first poll was still running when its client left (a task on another
    /// worker) registers after `cancel_all`: it is dropped then, not left running for no one.
    #[test]
    fn a_request_that_waits_after_its_client_left_is_dropped() {
        let f = Inflight::default();
        assert_eq!(f.cancel_all(), 0);
        let (_tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let out = rt().block_on(f.run(&json!(1), Tracked(dropped.clone(), rx)));
        assert_eq!(out, None, "cancelled: no answer");
        assert!(dropped.load(Ordering::SeqCst));
        assert!(f.is_empty());
        // One that finishes in its first poll still answers.
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        tx.send(4).unwrap();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        assert_eq!(rt().block_on(f.run(&json!(2), Tracked(done, rx))), Some(4));
    }
}
