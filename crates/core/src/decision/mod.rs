//! The WRAP decision store: the issue being decided, the options registered for it, and the
//! issues it replaced. One JSON file per project under the plugin's state directory.
//!
//! * Writes are atomic (temp file + rename) and happen under an exclusive file lock
//!   (`<store>.lock`, `flock`/`LockFileEx` through `fd-lock`), so two editors on one project never
//!   lose or corrupt each other's update. Readers need no lock: they see the old file or the new.
//! * A store that cannot be parsed is reported as corrupt, with its path, and is never written
//!   over: only `reset` moves it aside (into a backup), and only when asked to.

mod store;

pub use store::{
    store_path, workflow, DecisionOption, HistoryEntry, Issue, OptionInput, Store, StoreData,
    StoreError, UnknownStep, WidenOptionsStep, Workflow, BACKUPS_KEPT, HISTORY_LIMIT, NO_ISSUE,
    WIDEN_OPTIONS_STEPS,
};
