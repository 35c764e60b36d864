//! The plugin's log: `tracing` events written to a file (under `stdpath("log")`, chosen by Lua),
//! rotated by size (`<file>` → `<file>.1` when it passes [`MAX_BYTES`]). The level can be changed
//! at any time. Nothing secret is logged: the auth token never reaches a log call.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use tracing::level_filters::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;

/// A log file larger than this is rotated to `<file>.1` (one generation kept).
pub const MAX_BYTES: u64 = 2 << 20;

static FILE: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
static LEVEL: AtomicU8 = AtomicU8::new(3); // 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace

fn file_slot() -> &'static Mutex<Option<PathBuf>> {
    FILE.get_or_init(|| Mutex::new(None))
}

/// RFC 3339 UTC timestamp with milliseconds.
pub fn timestamp() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Why the log cannot be set up as asked.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("invalid log level '{0}': use one of off, error, warn, info, debug, trace")]
    Level(String),
    #[error("cannot create the log directory {}: {err}", dir.display())]
    Dir { dir: PathBuf, err: std::io::Error },
}

/// Parses a level name as `setup{log_level=…}` takes it.
pub fn parse_level(s: &str) -> Result<u8, LogError> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "off" => 0,
        "error" => 1,
        "warn" | "warning" => 2,
        "info" => 3,
        "debug" => 4,
        "trace" => 5,
        other => return Err(LogError::Level(other.to_string())),
    })
}

/// Points the log at `file` with `level`; installs the global subscriber on first use.
pub fn init(file: Option<PathBuf>, level: &str) -> Result<(), LogError> {
    let lvl = parse_level(level)?;
    if let Some(f) = &file {
        if let Some(dir) = f.parent() {
            std::fs::create_dir_all(dir).map_err(|err| LogError::Dir {
                dir: dir.to_path_buf(),
                err,
            })?;
        }
    }
    *file_slot().lock().unwrap_or_else(|p| p.into_inner()) = file;
    LEVEL.store(lvl, Ordering::Relaxed);
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_target(false)
            .with_thread_names(true)
            .with_writer(|| LogWriter);
        let sub = tracing_subscriber::registry()
            .with(tracing_subscriber::Layer::with_filter(layer, Gate));
        let _ = tracing::subscriber::set_global_default(sub);
    });
    // The macros' global maximum follows the level (see `Gate`).
    tracing::callsite::rebuild_interest_cache();
    Ok(())
}

/// The level set last.
fn current() -> LevelFilter {
    match LEVEL.load(Ordering::Relaxed) {
        0 => LevelFilter::OFF,
        1 => LevelFilter::ERROR,
        2 => LevelFilter::WARN,
        3 => LevelFilter::INFO,
        4 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    }
}

/// The log's filter: the level set last. It is also the global maximum `tracing`'s macros
/// check first (`max_level_hint`, recomputed when the level changes), so a `debug!`, `trace!`
/// or `enabled!` below the level costs an atomic load where it is written: no call into the
/// subscriber, and nothing the call would compute first (a request's trace line looks its tool
/// up in the catalog and reads the clock).
struct Gate;

impl<S> tracing_subscriber::layer::Filter<S> for Gate {
    fn enabled(
        &self,
        meta: &tracing::Metadata<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        *meta.level() <= current()
    }

    fn callsite_enabled(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        // Decided per event: the level can change at any time.
        tracing::subscriber::Interest::sometimes()
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(current())
    }
}

pub fn current_file() -> Option<PathBuf> {
    file_slot()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Appends a raw line (used by the panic hook, which must not depend on `tracing`).
pub fn append_line(line: &str) {
    let mut w = LogWriter;
    let _ = w.write_all(format!("{} {line}\n", timestamp()).as_bytes());
}

struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(path) = current_file() else {
            return Ok(buf.len());
        };
        if std::fs::metadata(&path)
            .map(|m| m.len() > MAX_BYTES)
            .unwrap_or(false)
        {
            let mut rotated = path.clone().into_os_string();
            rotated.push(".1");
            let _ = std::fs::rename(&path, rotated);
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        f.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_reject_nonsense() {
        assert_eq!(parse_level("WARN").unwrap(), 2);
        assert!(parse_level("loud")
            .unwrap_err()
            .to_string()
            .contains("off, error"));
    }

    #[test]
    fn writes_filters_and_rotates() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("logs/claude-context.log");
        init(Some(f.clone()), "info").unwrap();
        tracing::info!("hello-info");
        tracing::debug!("hidden-debug");
        let s = std::fs::read_to_string(&f).unwrap();
        assert!(s.contains("hello-info"));
        assert!(!s.contains("hidden-debug"));
        // Rotation: grow past the limit, then one more line moves the old file to .1.
        std::fs::write(&f, vec![b'x'; (MAX_BYTES + 1) as usize]).unwrap();
        tracing::warn!("after-rotation");
        let rotated = d.path().join("logs/claude-context.log.1");
        assert!(rotated.exists());
        assert!(std::fs::read_to_string(&f)
            .unwrap()
            .contains("after-rotation"));
        // One generation only: a second rotation replaces .1, nothing piles up.
        std::fs::write(&f, vec![b'y'; (MAX_BYTES + 1) as usize]).unwrap();
        tracing::warn!("after-second-rotation");
        let old = std::fs::read(&rotated).unwrap();
        assert!(
            old.iter().all(|b| *b == b'y'),
            "the .1 file is the second generation"
        );
        let names: Vec<_> = std::fs::read_dir(d.path().join("logs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // The level changes at run time; `off` writes nothing, even errors.
        init(Some(f.clone()), "error").unwrap();
        tracing::warn!("hidden-warn");
        tracing::error!("shown-error");
        init(Some(f.clone()), "off").unwrap();
        tracing::error!("hidden-error");
        let s = std::fs::read_to_string(&f).unwrap();
        assert!(
            s.contains("shown-error") && !s.contains("hidden-warn"),
            "{s}"
        );
        assert!(!s.contains("hidden-error"), "{s}");
        // The macros' global maximum is the level: below it a call site never reaches the
        // subscriber (nor computes what it would log); above it again after a change.
        init(Some(f.clone()), "info").unwrap();
        assert_eq!(LevelFilter::current(), LevelFilter::INFO);
        assert!(!tracing::enabled!(tracing::Level::TRACE));
        assert!(!tracing::enabled!(tracing::Level::DEBUG));
        init(Some(f.clone()), "trace").unwrap();
        assert_eq!(LevelFilter::current(), LevelFilter::TRACE);
        assert!(tracing::enabled!(tracing::Level::TRACE));
        tracing::trace!("shown-trace");
        assert!(std::fs::read_to_string(&f).unwrap().contains("shown-trace"));
        // The panic hook's raw lines go to the same file, with a timestamp.
        init(Some(f.clone()), "info").unwrap();
        append_line("ERROR raw-line");
        let s = std::fs::read_to_string(&f).unwrap();
        let line = s.lines().find(|l| l.contains("raw-line")).unwrap();
        assert!(
            humantime::parse_rfc3339(line.split(' ').next().unwrap()).is_ok(),
            "{line}"
        );
        init(None, "info").unwrap();
    }
}
