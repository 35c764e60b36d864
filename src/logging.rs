//! The panic hook: a panic anywhere (main thread, tokio workers) is written to the plugin's log
//! instead of to stderr, where it would garble Neovim's screen. Logging itself lives in
//! `claude_context_core::logging`.

use claude_context_core::logging::append_line;

pub fn log_panic(what: &str, payload: &(dyn std::any::Any + Send)) {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into());
    append_line(&format!("ERROR panic contained in {what}: {msg}"));
}

/// Replaces the default hook (which prints to stderr) with one that logs.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("unnamed").to_string();
            append_line(&format!("ERROR panic on thread '{name}': {info}"));
        }));
    });
}
