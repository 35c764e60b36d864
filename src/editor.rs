//! [`NvimEditor`]: the core's [`EditorRpc`] for a live Neovim. A request becomes a main-thread
//! job that calls `require("claude_context.rpc").handle(method, params_json, respond)`; the Lua
//! handler calls `respond(result_json)` or `respond(nil, message)` — at once, or later (a diff
//! the person has not decided on yet). The tokio side awaits a oneshot; nothing blocks.

use crate::main_thread::MainThread;
use claude_context_core::editor::{EditorRpc, RpcFuture};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

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
        let queued = self.main.run(Box::new(move |lua| {
            let reply = |r: Reply| {
                if let Some(tx) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = tx.send(r);
                }
            };
            if let Err(e) = dispatch(lua, &m2, &params, slot.clone()) {
                reply(Err(format!("the editor failed to handle {m2}: {e}")));
            }
        }));
        Box::pin(async move {
            if !queued {
                return Err("the editor is not running".into());
            }
            rx.await.unwrap_or_else(|_| {
                Err(format!(
                    "the editor dropped the request '{method}' without answering"
                ))
            })
        })
    }
}

fn dispatch(
    lua: &mlua::Lua,
    method: &str,
    params: &Value,
    slot: Arc<Mutex<Option<oneshot::Sender<Reply>>>>,
) -> mlua::Result<()> {
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
    handle.call::<()>((method, params.to_string(), respond))
}
