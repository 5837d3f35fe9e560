//! The reply cache (`VOX_LLM_CACHE`): a directory of entries, one file per
//! key, so that re-running an unchanged program asks nothing again. Bounded:
//! when a write takes it over its size, the least recently used entries go
//! until it is under three quarters of it. For development loops, not for
//! tests (a test replays a committed cassette).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crate::error::Error;

use super::entry::{Entry, Recorded, Request};

/// Default bound of the reply cache's size.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug)]
pub(crate) struct ReplyCache {
    dir: PathBuf,
    max_bytes: u64,
}

impl ReplyCache {
    pub fn new(dir: &Path, max_bytes: u64) -> ReplyCache {
        ReplyCache {
            dir: dir.to_owned(),
            max_bytes,
        }
    }

    fn path_of(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The reply stored for `request`, if any (an unreadable entry is a
    /// miss: the cache is only an optimisation).
    pub fn find(&self, request: &Request<'_>) -> Option<Recorded> {
        let key = request.key();
        let path = self.path_of(&key.to_string());
        let text = std::fs::read_to_string(&path).ok()?;
        let entry = Entry::parse(text.trim_end()).ok()?;
        if entry.key != key {
            return None;
        }
        // Recently used: evicted last.
        if let Ok(file) = std::fs::File::options().write(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Some(entry.reply)
    }

    /// Stores `entry`, then evicts what is over the bound.
    pub fn store(&self, entry: &Entry) -> Result<(), Error> {
        let error = |path: &Path, e: std::io::Error| Error::Cassette {
            path: path.display().to_string(),
            line: None,
            message: format!("reply cache: {e}"),
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| error(&self.dir, e))?;
        let key = entry.key.to_string();
        let path = self.path_of(&key);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let temp = self.dir.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut text = entry.to_line();
        text.push('\n');
        let written = std::fs::File::create(&temp)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(error(&path, e));
        }
        self.evict();
        Ok(())
    }

    /// Removes the least recently used entries while the cache is over its
    /// bound, down to three quarters of it.
    fn evict(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = dir
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".json") && !name.starts_with('.')
            })
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                meta.is_file().then(|| {
                    (
                        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        meta.len(),
                        e.path(),
                    )
                })
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.max_bytes {
            return;
        }
        files.sort();
        let target = self.max_bytes / 4 * 3;
        for (_, len, path) in files {
            if total <= target {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }

    /// Total bytes of the entries (for tests).
    #[cfg(test)]
    fn size(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::{schema_id, Finish};
    use super::*;

    fn reply(content: &str) -> Recorded {
        Recorded {
            finish: Finish::Stop,
            content: Some(content.into()),
            detail: None,
            status: None,
            usage: None,
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn stores_finds_and_stays_under_its_bound() {
        let dir = std::env::temp_dir().join(format!(
            "vox-reply-cache-test-{}-{}",
            std::process::id(),
            line!()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = ReplyCache::new(&dir, 4_000);
        let schema = schema_id("T", "{}");
        let args: Vec<String> = (0..40).map(|i| format!(r#"{{"i":{i}}}"#)).collect();
        let request = |i: usize| Request {
            function: "f",
            model: None,
            instruction: "",
            schema: schema.clone(),
            arguments: &args[i],
            conversation: &[],
        };
        for i in 0..40 {
            assert!(cache.find(&request(i)).is_none());
            let entry = Entry::new(&request(i), reply(&format!("{i}"))).unwrap();
            cache.store(&entry).unwrap();
            assert!(cache.size() <= 4_000, "over the bound after {i}");
            assert_eq!(cache.find(&request(i)), Some(reply(&format!("{i}"))));
        }
        // The oldest were evicted, the newest kept.
        assert!(cache.find(&request(0)).is_none());
        assert!(cache.find(&request(39)).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
