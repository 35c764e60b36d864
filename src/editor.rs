//! [`NvimEditor`]: the core's [`EditorRpc`] for a live Neovim. A request becomes a main-thread
//! job that calls `require("claude_context.rpc").handle(method, params_json, respond, id)`; the
//! Lua handler calls `respond(result_json)` or `respond(nil, message)` — at once, or later (a
//! diff the person has not decided on yet). The tokio side awaits a oneshot; nothing blocks.
//! When the awaiting future is dropped before the answer came (the client cancelled or went
//! away), `require("claude_context.rpc").cancel(id)` runs on the main thread so the handler
//! can undo what it set up (close the diff view).

use crate::main_thread::MainThread;
use claude_context_core::editor::{EditorRpc, RpcFuture};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Request ids for `rpc.cancel`, unique for the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub struct NvimEditor {
    pub main: MainThread,
}

type Reply = Result<Value, String>;

impl EditorRpc for NvimEditor {
    fn call(&self, method: &str, params: Value) -> RpcFuture {
        let (tx, rx) = oneshot::channel::<Reply>();
        let slot = Arc::new(Mutex::new(Some(tx)));
        let method = method.to_string();
        let m2 = method.clone();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let queued = self.main.run(Box::new(move |lua| {
            let reply = |r: Reply| {
                if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = tx.send(r);
                }
            };
            if let Err(e) = dispatch(lua, &m2, &params, id, slot.clone()) {
                reply(Err(format!("the editor failed to handle {m2}: {e}")));
            }
        }));
        let guard = CancelOnDrop {
            main: queued.then(|| self.main.clone()),
            id,
        };
        Box::pin(async move {
            let mut guard = guard; // the whole guard lives as long as this future
            if !queued {
                return Err("the editor is not running".into());
            }
            let r = rx.await.unwrap_or_else(|_| {
                Err(format!(
                    "the editor dropped the request '{method}' without answering"
                ))
            });
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
    if method == "test/panic" {
        panic!("test/panic: deliberate panic on Neovim's main thread");
    }
    let respond = lua.create_function(move |_, (ok, err): (Option<String>, Option<String>)| {
        let r = match (ok, err) {
            (_, Some(e)) => Err(e),
            (Some(j), None) => serde_json::from_str(&j)
                .map_err(|e| format!("the editor answered with invalid JSON: {e}")),
            (None, None) => Ok(Value::Null),
        };
        if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(r);
        }
        Ok(())
    })?;
    let require: mlua::Function = lua.globals().get("require")?;
    let rpc: mlua::Table = require.call("claude_context.rpc")?;
    let handle: mlua::Function = rpc.get("handle")?;
    handle.call::<()>((method, params.to_string(), respond, id))
}
