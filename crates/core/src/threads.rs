//! The bridge's threads run below the editor: their nice value, and the hook that sets it.
//!
//! A leaf: it uses no other module of the crate.

/// How much lower than the editor the bridge's threads run (Linux `nice` increment).
pub const THREAD_NICE: i32 = 10;

/// The calling thread's nice value (Linux; 0 elsewhere).
pub fn thread_nice() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; getpriority only reads.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        }
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// A thread-start hook that sets the new thread's nice value to `base` + [`THREAD_NICE`]
/// (Linux; elsewhere a no-op). `base` is the starting thread's: a thread inherits its creator's
/// nice value, and blocking-pool threads are created by workers, so the hook sets the value
/// rather than adding to it.
///
/// On a busy machine the bridge's threads and Neovim's main thread compete for the CPU. A
/// client flooding the bridge (thousands of pipelined calls, 4 MB messages) then delays
/// whatever Neovim must do next — a keystroke, an RPC — by a scheduler slice or more. At a
/// lower priority the editor wins every such contest; the bridge still gets every cycle the
/// editor does not use (nice only weighs contention). BENCHMARKS.md has what it does to
/// `nvim_eval` during floods and to throughput, with how it was measured.
pub fn yield_to_the_editor(base: i32) -> impl Fn() + Send + Sync + 'static {
    let target = (base + THREAD_NICE).min(19);
    move || {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: gettid has no preconditions; setpriority with PRIO_PROCESS and a thread
            // id changes only that thread's nice value (Linux semantics), errors by value.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                let _ = libc::setpriority(libc::PRIO_PROCESS, tid, target);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = target;
    }
}
