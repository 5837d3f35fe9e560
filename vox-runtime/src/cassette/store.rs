//! A directory of cassettes: one JSONL file per `@ai` function, read once,
//! rewritten whole (sorted by key, one entry per key) through a temporary
//! file and a rename each time an entry is recorded.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::error::Error;

use super::entry::{Entry, Key, Request};

/// The cassettes of one directory. One per directory per process (see
/// [`Store::open`]), so that every client recording into it shares the
/// locks.
#[derive(Debug)]
pub(crate) struct Store {
    dir: PathBuf,
    files: Mutex<HashMap<String, Arc<Mutex<Cassette>>>>,
}

/// One function's cassette, as read.
#[derive(Debug)]
struct Cassette {
    path: PathBuf,
    loaded: bool,
    /// The file's modification time and length when read: a file changed
    /// since (edited, or written by another process) is read again.
    stamp: Option<(std::time::SystemTime, u64)>,
    entries: BTreeMap<Key, Entry>,
    /// Lines that are not entries: (line number, why).
    corrupt: Vec<(usize, String)>,
}

/// What a lookup found.
pub(crate) enum Found {
    Hit(Entry),
    /// No entry has the request's key: the nearest one of the function, if
    /// any, and the first corrupt line, if any.
    Miss {
        nearest: Option<Entry>,
        corrupt: Option<(usize, String)>,
    },
}

impl Store {
    /// The store of `dir`, shared by the whole process.
    pub fn open(dir: &Path) -> Arc<Store> {
        static STORES: OnceLock<Mutex<HashMap<PathBuf, Arc<Store>>>> = OnceLock::new();
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        let mut stores = STORES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        stores
            .entry(dir.clone())
            .or_insert_with(|| {
                Arc::new(Store {
                    dir,
                    files: Mutex::new(HashMap::new()),
                })
            })
            .clone()
    }

    /// The file of `function`'s cassette.
    pub fn path_of(&self, function: &str) -> PathBuf {
        self.dir.join(format!("{}.jsonl", file_stem(function)))
    }

    fn cassette(&self, function: &str) -> Arc<Mutex<Cassette>> {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files
            .entry(function.to_owned())
            .or_insert_with(|| {
                Arc::new(Mutex::new(Cassette {
                    path: self.path_of(function),
                    loaded: false,
                    stamp: None,
                    entries: BTreeMap::new(),
                    corrupt: Vec::new(),
                }))
            })
            .clone()
    }

    /// Whether `function` has a cassette file.
    pub fn exists(&self, function: &str) -> bool {
        self.path_of(function).is_file()
    }

    /// The entry recorded for `request`, or what is nearest.
    pub fn find(&self, request: &Request<'_>) -> Result<Found, Error> {
        let cassette = self.cassette(request.function);
        let mut cassette = cassette.lock().unwrap_or_else(PoisonError::into_inner);
        cassette.load()?;
        let key = request.key();
        if let Some(entry) = cassette.entries.get(&key) {
            return Ok(Found::Hit(entry.clone()));
        }
        let nearest = cassette
            .entries
            .values()
            .filter(|e| e.function == request.function)
            // Fewest fields differing; among those, the longest run of
            // arguments alike from the start (the entry that was most
            // likely this call before an edit).
            .min_by_key(|e| {
                let recorded = e.request();
                let alike = recorded
                    .arguments
                    .bytes()
                    .zip(request.arguments.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                (
                    request.differences(&recorded).len(),
                    std::cmp::Reverse(alike),
                )
            })
            .cloned();
        Ok(Found::Miss {
            nearest,
            corrupt: cassette.corrupt.first().cloned(),
        })
    }

    /// Records `entry` (replacing one with its key) and rewrites the file.
    pub fn record(&self, entry: Entry) -> Result<(), Error> {
        let cassette = self.cassette(&entry.function);
        let mut cassette = cassette.lock().unwrap_or_else(PoisonError::into_inner);
        // Other processes may record into the same file: read, merge and
        // rename under a lock they take too, reading the file again
        // whatever its stamp says (a write within the clock's resolution
        // keeps the same stamp).
        let _lock = DirLock::take(&self.dir)?;
        cassette.loaded = false;
        cassette.load()?;
        if let Some((line, message)) = cassette.corrupt.first() {
            return Err(Error::Cassette {
                path: cassette.path.display().to_string(),
                line: Some(*line),
                message: format!(
                    "{message}; not recording into a cassette with a corrupted line \
                     (fix or delete the line)"
                ),
            });
        }
        if cassette
            .entries
            .get(&entry.key)
            .is_some_and(|old| old.to_line() == entry.to_line())
        {
            return Ok(());
        }
        cassette.entries.insert(entry.key, entry);
        cassette.write()
    }
}

impl Cassette {
    fn load(&mut self) -> Result<(), Error> {
        let stamp = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(std::time::UNIX_EPOCH), m.len()));
        if self.loaded && stamp == self.stamp {
            return Ok(());
        }
        self.entries.clear();
        self.corrupt.clear();
        self.stamp = stamp;
        let text = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_error(&self.path, "could not be read", &e)),
        };
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = std::str::from_utf8(line)
                .map_err(|e| format!("not UTF-8 ({e})"))
                .and_then(Entry::parse);
            match parsed {
                Ok(entry) => {
                    self.entries.insert(entry.key, entry);
                }
                Err(message) => self.corrupt.push((i + 1, message)),
            }
        }
        self.loaded = true;
        Ok(())
    }

    /// Writes every entry, sorted by key, to a temporary file in the same
    /// directory, then renames it over the cassette: a reader sees the old
    /// file or the new one, never half of one.
    fn write(&mut self) -> Result<(), Error> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "could not be created", &e))?;
        let mut text = String::new();
        for entry in self.entries.values() {
            text.push_str(&entry.to_line());
            text.push('\n');
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::File::create(&temp).and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &self.path)) {
            let _ = std::fs::remove_file(&temp);
            return Err(io_error(&self.path, "could not be written", &e));
        }
        self.stamp = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.modified().unwrap_or(std::time::UNIX_EPOCH), m.len()));
        Ok(())
    }
}

/// A lock on a cassette directory held across processes while one of its
/// files is read, merged and renamed over; released when dropped. On Unix
/// the directory itself is locked (`flock`), so nothing is added to a
/// committed directory; elsewhere a `.vox-cassette.lock` file in it.
struct DirLock {
    _file: std::fs::File,
}

impl DirLock {
    fn take(dir: &Path) -> Result<DirLock, Error> {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "could not be created", &e))?;
        #[cfg(unix)]
        let opened = std::fs::File::open(dir);
        #[cfg(not(unix))]
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".vox-cassette.lock"));
        let file = opened.map_err(|e| io_error(dir, "could not be opened to lock it", &e))?;
        file.lock()
            .map_err(|e| io_error(dir, "could not be locked", &e))?;
        Ok(DirLock { _file: file })
    }
}

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Error {
    Error::Cassette {
        path: path.display().to_string(),
        line: None,
        message: format!("{what}: {e}"),
    }
}

/// A function's name as a file name: Vox names are identifiers already;
/// anything else is replaced, so a name can never leave the directory.
fn file_stem(function: &str) -> String {
    let stem: String = function
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "_".to_owned()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_in_the_directory() {
        assert_eq!(file_stem("extract_invoice"), "extract_invoice");
        assert_eq!(file_stem("../../etc/passwd"), "______etc_passwd");
        assert_eq!(file_stem(""), "_");
    }
}
