//! [`NvimEditor`]: the core's [`EditorRpc`] for a live Neovim. A request becomes a main-thread
//! job that calls `require("claude_context.rpc").handle(method, params_json, respond, id)`; the
//! Lua handler calls `respond(result_json)` or `respond(nil, message)` — at once, or later (a
//! diff the person has not decided on yet). The tokio side awaits a oneshot; nothing blocks.
//! When the awaiting future is dropped before the answer came (the client cancelled or went
//! away), `require("claude_context.rpc").cancel(id)` runs on the main thread so the handler
//! can undo what it set up (close the diff view).
//!
//! The wait for the main thread to *start* a request is bounded ([`NvimEditor::wait`]): while
//! Neovim cannot run it (a hit-enter prompt, the `-- More --` pager, a long `:!make`), the
//! request answers with an error saying so, is logged, and is dropped from the queue unrun —
//! a later retry works. Once started, a handler may take as long as it needs (`openDiff`
//! waits for the person).

use crate::main_thread::MainThread;
use claude_context_core::editor::{EditorError, EditorRpc, RpcFuture};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Request ids for `rpc.cancel`, unique for the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub struct NvimEditor {
    pub main: MainThread,
    /// How long a request may wait for the main thread to start it (`setup{editor_wait_ms}`).
    pub wait: Duration,
}

/// A request's progress: queued, started on the main thread, or abandoned unrun.
const QUEUED: u8 = 0;
const STARTED: u8 = 1;
const ABANDONED: u8 = 2;

type Reply = Result<Value, EditorError>;

impl EditorRpc for NvimEditor {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        let (tx, rx) = oneshot::channel::<Reply>();
        let slot = Arc::new(Mutex::new(Some(tx)));
        let method = method.to_string();
        let m2 = method.clone();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let progress = Arc::new(AtomicU8::new(QUEUED));
        let p2 = progress.clone();
        let queued = self.main.run(Box::new(move |lua| {
            if p2
                .compare_exchange(QUEUED, STARTED, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                // Its caller gave up waiting (and said so): running it now would surprise.
                return;
            }
            let reply = |r: Reply| {
                if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = tx.send(r);
                }
            };
            if let Err(e) = dispatch(lua, &m2, &params, id, slot.clone()) {
                reply(Err(EditorError::Dispatch {
                    method: m2,
                    lua: e.to_string(),
                }));
            }
        }));
        let guard = CancelOnDrop {
            main: queued.then(|| self.main.clone()),
            id,
        };
        let wait = self.wait;
        Box::pin(async move {
            let mut guard = guard; // the whole guard lives as long as this future
            if !queued {
                return Err(EditorError::NotRunning);
            }
            let asked = Instant::now();
            let mut rx = rx;
            let r = match tokio::time::timeout(wait, &mut rx).await {
                Ok(r) => r,
                Err(_) => {
                    if progress
                        .compare_exchange(QUEUED, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        guard.disarm(); // it will never run: nothing to undo
                        let waited = asked.elapsed().as_millis() as u64;
                        tracing::warn!(
                            method = %method,
                            waited_ms = waited,
                            "the editor could not start a request in time (a prompt is up, or a \
                             long command runs); answered with an error, nothing was done"
                        );
                        return Err(EditorError::Busy {
                            method,
                            waited_ms: waited,
                        });
                    }
                    rx.await // it started meanwhile: its answer comes
                }
            };
            let r = r.unwrap_or_else(|_| Err(EditorError::Dropped { method }));
            guard.disarm(); // answered: nothing to cancel
            r
        })
    }
}

/// Tells the Lua side that nobody waits for request `id` any more, unless disarmed.
struct CancelOnDrop {
    main: Option<MainThread>,
    id: u64,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.main = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(main) = self.main.take() else {
            return;
        };
        let id = self.id;
        main.run(Box::new(move |lua| {
            let r = (|| -> mlua::Result<()> {
                let require: mlua::Function = lua.globals().get("require")?;
                let rpc: mlua::Table = require.call("claude_context.rpc")?;
                let cancel: mlua::Function = rpc.get("cancel")?;
                cancel.call::<()>(id)
            })();
            if let Err(e) = r {
                claude_context_core::logging::append_line(&format!(
                    "ERROR cancelling editor request {id}: {e}"
                ));
            }
        }));
    }
}

fn dispatch(
    lua: &mlua::Lua,
    method: &str,
    params: &Value,
    id: u64,
    slot: Arc<Mutex<Option<oneshot::Sender<Reply>>>>,
) -> mlua::Result<()> {
    // Test builds only: prove that a panic on Neovim's main thread is contained.
    #[cfg(feature = "test-tools")]
    if method == claude_context_core::editor::methods::TEST_PANIC {
        panic!("test/panic: deliberate panic on Neovim's main thread");
    }
    let respond = crate::binding::function(
        lua,
        "respond",
        move |_, (ok, err): (Option<String>, Option<String>)| {
            let r = match (ok, err) {
                (_, Some(e)) => Err(EditorError::Handler(e)),
                (Some(j), None) => {
                    serde_json::from_str(&j).map_err(|e| EditorError::InvalidJson(Arc::new(e)))
                }
                (None, None) => Ok(Value::Null),
            };
            if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                let _ = tx.send(r);
            }
            Ok(())
        },
    )?;
    let require: mlua::Function = lua.globals().get("require")?;
    let rpc: mlua::Table = require.call("claude_context.rpc")?;
    let handle: mlua::Function = rpc.get("handle")?;
    handle.call::<()>((method, params.to_string(), respond, id))
}
