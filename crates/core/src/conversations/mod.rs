//! Claude Code's conversations on disk, listed and searched: `<config dir>/projects/<folder>/
//! <session id>.jsonl` (`$CLAUDE_CONFIG_DIR`, default `~/.claude`), the folder named after the
//! session's working directory ([`folders`]).
//!
//! * [`list`]: a project's conversations (its root's and its worktrees'), or every project's,
//!   newest first, each with its title, prompts, times, cost and size ([`parse::Meta`]); with a
//!   query, only those whose messages contain it, with the matching messages ([`search`]).
//! * [`owns`]: whether a session id is one of a project's conversations (the sub-agent resumes
//!   only those).
//!
//! Everything is read through `capfs` (no link followed, a FIFO or device never opened, every
//! read capped: a 2 GB file is read by its head and tail); a damaged line is skipped. Files are
//! read in parallel and cached by their `stat` ([`read`]). This runs on whatever thread calls
//! it: the binding calls it off the editor's main thread.

pub mod complete;
pub mod folders;
pub mod index;
pub mod parse;
pub mod read;
pub mod search;
pub mod since;

use crate::capfs::{CapDir, CapError, EntryType};
use folders::{Fit, Project};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Why conversations cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    #[error("claude-context: conversations: bad options: {0}")]
    Options(String),
    #[error("claude-context: conversations: {0}")]
    Files(#[from] CapError),
    #[error("claude-context: conversations: no threads to read them: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
}

impl crate::error::Fault for ConversationError {
    fn is_callers(&self) -> bool {
        matches!(self, ConversationError::Options(_))
    }
}

/// What [`list`] is asked.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ListOptions {
    /// The project (its conversations and its worktrees'); required unless `all`.
    pub root: Option<PathBuf>,
    /// Every project's conversations.
    pub all: bool,
    /// Only conversations whose messages contain this text (case-insensitive unless it has a
    /// capital letter).
    pub query: Option<String>,
    /// Claude Code's configuration folder (default: `$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// The plugin's cache folder: the listing's cache is kept there between editor sessions
    /// ([`index`]); none: in memory only.
    pub cache_dir: Option<PathBuf>,
    /// The generation of the last list the caller holds of this listing (0: none): the binding
    /// then answers what changed since ([`since`]). Absent: the whole list, as a plain array.
    pub since: Option<u64>,
}

/// One conversation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    /// The background session's worktree it ran in (`.claude/worktrees/NAME`).
    pub worktree: Option<String>,
    pub started_ms: Option<i64>,
    pub updated_ms: i64,
    pub prompts: u64,
    pub first_prompt: Option<String>,
    pub last_prompt: Option<String>,
    pub cost_usd: Option<f64>,
    /// A live Claude Code process has this session open.
    pub running: bool,
    pub bytes: u64,
    /// The folder under `projects/` it is in.
    pub folder: String,
    /// Only part of the file was read (a file larger than a listing reads).
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<search::Match>>,
}

/// Threads that read the files of a listing in parallel. At the editor's own priority: a listing
/// is something the person waits for (a lower one made it ten times slower on a busy machine);
/// the editor's main thread only waits for the answer meanwhile.
pub struct Pool(rayon::ThreadPool);

impl Pool {
    /// At most four threads, as many as there are cores.
    pub fn new() -> Result<Pool, ConversationError> {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("cc-conversations-{i}"))
            .build()?;
        Ok(Pool(pool))
    }

    /// [`list`], the files it reads (new or changed ones) read by this pool's threads; the
    /// `stat` of each file on the calling thread.
    pub fn list(&self, opts: &ListOptions) -> Result<Vec<Conversation>, ConversationError> {
        Ok(list_in(opts, Some(&self.0), |_| false)?
            .unwrap_or_default()
            .0)
    }
}

/// Claude Code's configuration folder for an environment: `CLAUDE_CONFIG_DIR`, else
/// `HOME/.claude` (bytes kept: a folder name need not be UTF-8).
pub fn config_dir_from(config_env: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    match config_env.filter(|s| !s.is_empty()) {
        Some(c) => Some(PathBuf::from(c)),
        None => home
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(h).join(".claude")),
    }
}

/// Claude Code's configuration folder for this process's environment.
pub fn config_dir() -> Option<PathBuf> {
    config_dir_from(
        std::env::var_os("CLAUDE_CONFIG_DIR").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// A session id as Claude Code makes them (a UUID): letters, digits, `-` and `_`, not starting
/// with `-`, at most 200 characters. Other names in the folders are not conversations.
pub fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A folder of `projects/` opened: its handle, its name, how it fits the project.
pub(crate) type Folder = (Arc<CapDir>, String, Fit);

/// One conversation file found: its folder (a handle and the folder's fit), its name.
struct Found {
    folder: usize,
    name: PathBuf,
    id: String,
}

/// The folders of `projects/` that may hold the conversations asked for, opened.
fn folders(projects: &CapDir, project: Option<&Project>) -> Result<Vec<Folder>, CapError> {
    let mut out = Vec::new();
    for e in projects.list_nofollow()? {
        if e.kind != EntryType::Dir {
            continue;
        }
        let name = e.name.to_string_lossy().into_owned();
        let fit = match project {
            None => Fit::Exact,
            Some(p) => match p.fit(&name) {
                Some(f) => f,
                None => continue,
            },
        };
        if let Ok(d) = projects.open_subdir_nofollow(Path::new(&e.name)) {
            out.push((Arc::new(d), name, fit));
        }
    }
    Ok(out)
}

/// The `.jsonl` files of each folder (regular files only: a link, FIFO or device is left out
/// without being opened).
fn files(dirs: &[Folder]) -> Vec<Found> {
    let mut out = Vec::new();
    for (i, (d, _, _)) in dirs.iter().enumerate() {
        let Ok(entries) = d.list_nofollow() else {
            continue;
        };
        for e in entries {
            let Some(id) = e
                .name
                .to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .filter(|id| valid_id(id))
            else {
                continue;
            };
            if e.kind == EntryType::File {
                out.push(Found {
                    folder: i,
                    id: id.to_string(),
                    name: PathBuf::from(&e.name),
                });
            }
        }
    }
    out
}

/// The projects folder of `opts`, opened; `None` when there is none (no conversation yet).
fn projects_dir(opts: &ListOptions) -> Result<Option<CapDir>, ConversationError> {
    let Some(cfg) = opts.config_dir.clone().or_else(config_dir) else {
        return Ok(None);
    };
    let dir = cfg.join("projects");
    if !dir.is_dir() {
        return Ok(None);
    }
    Ok(Some(CapDir::open_root(&dir)?))
}

/// Listings under way: the thread that reads files whole ([`complete`]) waits while there is
/// one (a listing is what the person waits for).
static LISTING: AtomicUsize = AtomicUsize::new(0);

/// Whether a listing is under way.
pub(crate) fn listing_under_way() -> bool {
    LISTING.load(Ordering::Relaxed) > 0
}

/// A listing under way, while it lives.
struct Listing;

impl Listing {
    fn start() -> Listing {
        LISTING.fetch_add(1, Ordering::Relaxed);
        Listing
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        LISTING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The sweep: one `stat` of each file found, on this thread, the cache consulted once per
/// folder. Returns what the cache still knows (by index into `found`) and the indices of the
/// files to read (new or changed).
fn sweep(dirs: &[Folder], found: &[Found]) -> (Vec<(usize, read::Read1)>, Vec<usize>) {
    let mut known = Vec::with_capacity(found.len());
    let mut stale = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let folder = found[i].folder;
        let end = i + found[i..].iter().take_while(|f| f.folder == folder).count();
        let d = &dirs[folder].0;
        read::with_folder(d.path(), |cached| {
            for (j, f) in found[i..end].iter().enumerate() {
                // Gone since the folder was listed: not listed.
                let Ok((_, stat)) = d.stat_nofollow(&f.name) else {
                    continue;
                };
                let hit = cached
                    .and_then(|c| c.get(f.name.as_os_str()))
                    .filter(|r| read::fresh(r, &stat));
                match hit {
                    Some(r) => known.push((i + j, r.clone())),
                    None => stale.push(i + j),
                }
            }
        });
        i = end;
    }
    (known, stale)
}

/// Reads file `f` of folder `dir` by its ends ([`read::lite`]) and caches it; a file read in part
/// is queued in `pending`, to be read whole later.
fn read_new(
    dir: &Arc<CapDir>,
    f: &Found,
    pending: &Mutex<Vec<complete::Pending>>,
) -> Option<read::Read1> {
    let r = read::remember(dir.display(&f.name), read::lite(dir, &f.name).ok()?);
    if r.lite {
        let p = complete::Pending {
            dir: dir.clone(),
            name: f.name.clone(),
        };
        pending.lock().unwrap_or_else(|p| p.into_inner()).push(p);
    }
    Some(r)
}

/// File `f`'s entry in the listing (`r`: what it holds), or None when it is not the project's.
fn conversation(
    f: &Found,
    r: &read::Read1,
    dirs: &[Folder],
    project: Option<&Project>,
    live: &HashSet<String>,
) -> Option<Conversation> {
    let (_, folder, fit) = &dirs[f.folder];
    let m = &r.meta;
    if *fit == Fit::Maybe && !project?.confirms(m.cwd.as_deref()) {
        return None;
    }
    let worktree = m.cwd.as_deref().and_then(|c| match project {
        Some(p) => p.worktree_of(c),
        None => folders::any_worktree(c),
    });
    Some(Conversation {
        title: m.title().unwrap_or(&f.id).to_string(),
        id: f.id.clone(),
        cwd: m.cwd.clone(),
        branch: m.branch.clone(),
        worktree,
        started_ms: m.started_ms,
        updated_ms: m.updated_ms.unwrap_or(r.stat.mtime_ns / 1_000_000),
        prompts: m.prompts,
        first_prompt: m.first_prompt.clone(),
        last_prompt: m.last_prompt.clone().or(m.last_prompt_record.clone()),
        cost_usd: m.cost_usd,
        running: live.contains(&f.id),
        bytes: r.stat.size,
        folder: folder.clone(),
        partial: m.partial,
        matches: None,
    })
}

/// The conversations `opts` asks for, newest first.
pub fn list(opts: &ListOptions) -> Result<Vec<Conversation>, ConversationError> {
    Ok(list_in(opts, None, |_| false)?.unwrap_or_default().0)
}

/// What a listing saw, in short: the [`read::Read1::serial`] of each file (in the folders'
/// order) and the live sessions. Two listings of the same options that saw the same are the same
/// list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fingerprint {
    serials: Vec<u64>,
    live: Vec<String>,
}

/// What to answer a caller of listing `opts` that holds generation `since` ([`since`]); the
/// files read by `pool`'s threads when there is one. A listing whose files and live sessions
/// are those of the caller's generation is answered unchanged before any entry is made.
pub fn list_since(
    opts: &ListOptions,
    pool: Option<&Pool>,
    answers: &mut since::Answers,
    since: u64,
) -> Result<since::Reply, ConversationError> {
    let seen = list_in(opts, pool.map(|p| &p.0), |fp| answers.same(opts, since, fp))?;
    Ok(match seen {
        None => {
            answers.touch(opts);
            since::Reply::Unchanged { generation: since }
        }
        Some((list, fp)) => answers.answer(opts, list, since, fp),
    })
}

/// [`list`] and what it saw; the files to read (new or changed ones) and a query's read by
/// `pool`'s threads. None when `same` says the listing saw what an earlier one saw.
fn list_in(
    opts: &ListOptions,
    pool: Option<&rayon::ThreadPool>,
    same: impl Fn(&Fingerprint) -> bool,
) -> Result<Option<(Vec<Conversation>, Fingerprint)>, ConversationError> {
    let project = match (&opts.root, opts.all) {
        (_, true) => None,
        (Some(r), false) => Some(Project::new(r)),
        (None, false) => {
            return Err(ConversationError::Options(
                "a project root (root) or all = true is needed".into(),
            ))
        }
    };
    let _listing = Listing::start();
    let Some(projects) = projects_dir(opts)? else {
        return Ok(Some(Default::default()));
    };
    let dirs = folders(&projects, project.as_ref())?;
    let found = files(&dirs);
    let live = running_sessions(&projects);
    if let Some(c) = &opts.cache_dir {
        index::load(c);
    }
    let (mut known, stale) = sweep(&dirs, &found);
    let pending = Mutex::new(Vec::new());
    let read = |i: &usize| {
        let f = &found[*i];
        read_new(&dirs[f.folder].0, f, &pending).map(|r| (*i, r))
    };
    known.extend(match pool {
        Some(p) if stale.len() > 1 => p.install(|| stale.par_iter().filter_map(read).collect()),
        _ => stale.iter().filter_map(read).collect::<Vec<_>>(),
    });
    let mut live_ids: Vec<String> = live.iter().cloned().collect();
    live_ids.sort();
    let fp = Fingerprint {
        serials: known.iter().map(|(_, r)| r.serial).collect(),
        live: live_ids,
    };
    if stale.is_empty() && same(&fp) {
        return Ok(None);
    }
    let mut out: Vec<Conversation> = known
        .iter()
        .filter_map(|(i, r)| conversation(&found[*i], r, &dirs, project.as_ref(), &live))
        .collect();
    let save_to = opts.cache_dir.clone().filter(|_| !stale.is_empty());
    complete::complete_later(
        pending.into_inner().unwrap_or_else(|p| p.into_inner()),
        save_to,
    );
    for (k, (d, _, _)) in dirs.iter().enumerate() {
        let keep: HashSet<&OsStr> = found
            .iter()
            .filter(|f| f.folder == k)
            .map(|f| f.name.as_os_str())
            .collect();
        read::prune(d.path(), &keep);
    }
    if let Some(q) = opts.query.as_deref().filter(|q| !q.is_empty()) {
        out = match pool {
            Some(p) => p.install(|| search::filter(out, &dirs, q)),
            None => search::filter(out, &dirs, q),
        };
    }
    out.sort_by(newest_first);
    Ok(Some((out, fp)))
}

/// A listing's order: newest first, then by id.
pub(crate) fn newest_first(a: &Conversation, b: &Conversation) -> std::cmp::Ordering {
    b.updated_ms.cmp(&a.updated_ms).then(a.id.cmp(&b.id))
}

/// Whether session `id` is one of the conversations of the project at `root` (its own or its
/// worktrees'), in Claude Code's configuration folder `config_dir`.
pub fn owns(config_dir: &Path, root: &Path, id: &str) -> bool {
    let opts = ListOptions {
        root: Some(root.to_path_buf()),
        config_dir: Some(config_dir.to_path_buf()),
        ..ListOptions::default()
    };
    let Ok(Some(projects)) = projects_dir(&opts) else {
        return false;
    };
    let project = Project::new(root);
    let Ok(dirs) = folders(&projects, Some(&project)) else {
        return false;
    };
    let name = PathBuf::from(format!("{id}.jsonl"));
    dirs.iter().any(|(d, _, fit)| {
        matches!(d.stat_nofollow(&name), Ok((EntryType::File, _)))
            && (*fit == Fit::Exact
                || read::read(d, &name).is_ok_and(|r| project.confirms(r.meta.cwd.as_deref())))
    })
}

/// The session ids a live Claude Code process has open: `<config dir>/sessions/<pid>.json`
/// (`{pid, sessionId, …}`, written by the interactive CLI while it runs), each whose process is
/// alive. Small files, read without following a link or waiting on a FIFO.
fn running_sessions(projects: &CapDir) -> HashSet<String> {
    let mut out = HashSet::new();
    let Some(sessions) = projects.path().parent().map(|c| c.join("sessions")) else {
        return out;
    };
    let Ok(dir) = CapDir::open_root(&sessions) else {
        return out;
    };
    let Ok(entries) = dir.list_nofollow() else {
        return out;
    };
    #[derive(Deserialize)]
    struct Live {
        pid: Option<i64>,
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    for e in entries
        .iter()
        .filter(|e| e.kind == EntryType::File)
        .take(512)
    {
        let Ok((bytes, _)) =
            crate::capfs::read_untrusted_file(&dir.display(Path::new(&e.name)), 64 << 10)
        else {
            continue;
        };
        let Ok(live) = serde_json::from_slice::<Live>(&bytes) else {
            continue;
        };
        if let (Some(pid), Some(id)) = (live.pid, live.session_id) {
            if alive(pid) {
                out.insert(id);
            }
        }
    }
    out
}

/// Whether process `pid` exists (signal 0: nothing is sent).
fn alive(pid: i64) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: kill with signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

#[cfg(test)]
mod tests;
