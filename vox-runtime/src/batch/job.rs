//! The job directory: what a batch run has planned, submitted and
//! collected, written as it happens so that a run killed at any point
//! resumes without submitting anything twice or losing an item
//! (docs/runtime.md, "Bulk runs").
//!
//! - `job.json`: the plan (function, schema, provider, model, the chunks
//!   the inputs were split into), written atomically (temporary file,
//!   fsync, rename, fsync of the directory) once every chunk's request
//!   file is complete. Without it the job is not planned yet and the next
//!   run plans it afresh: nothing has been sent.
//! - `chunk-K.requests.jsonl` and `chunk-K.args.jsonl`: the provider
//!   request lines of chunk K (what is uploaded) and each input's
//!   arguments (what a re-run sends).
//! - `journal.jsonl`: one event per line, appended and fsynced before the
//!   step it announces (`uploading`, `creating`) or right after the step it
//!   records (`file`, `batch`, `ended`, `collected`). A torn last line (a
//!   kill mid-write) is ignored. `batch_absent` is written by hand, as an
//!   error about a lost creation says, when no batch was created.
//! - `chunk-K.results.jsonl`: each item of chunk K's batch output, judged;
//!   complete once `collected` is in the journal (re-downloaded otherwise).
//! - `chunk-K.reruns.jsonl`: each item re-run as a normal call: a `sent`
//!   record appended and fsynced before the call is made, its outcome as it
//!   finishes, so a resumed run re-runs only the rest and knows which were
//!   in flight (and paid for) when a run was stopped.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Version of the job directory's format written: 2 (`custom_id`
/// `vox-<job>-<index>`). Format 1 (`vox-<index>`) is still read.
pub(crate) const JOB_FORMAT: u32 = 2;

/// `job.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Plan {
    pub format: u32,
    /// Unique per job: names uploaded files and tags batches.
    pub job: String,
    pub function: String,
    pub schema: String,
    pub provider: String,
    pub model: String,
    pub inputs: u64,
    pub chunks: Vec<ChunkPlan>,
}

impl Plan {
    /// The start of each request's `custom_id`; the input's index follows.
    /// Format 2: `vox-<job>-`, unique to the job (with the index at most
    /// 61 characters, see [`check_job_id`]); format 1: `vox-`, the same in
    /// every job.
    pub fn custom_id_prefix(&self) -> String {
        if self.format >= 2 {
            format!("vox-{}-", self.job)
        } else {
            "vox-".to_owned()
        }
    }
}

/// A job id goes into file names, `custom_id`s and metadata: 1 to 36
/// characters of `[a-zA-Z0-9_]`, so that `vox-<job>-<index>` is at most 61
/// characters of Anthropic's `[a-zA-Z0-9_-]{1,64}`.
fn check_job_id(id: &str) -> bool {
    (1..=36).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One chunk: inputs `first..first + count`, `bytes` of request lines.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct ChunkPlan {
    pub first: u64,
    pub count: u64,
    pub bytes: u64,
}

/// One line of `journal.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum Event {
    /// About to upload chunk `chunk`'s request file (OpenAI).
    Uploading { chunk: usize },
    /// Chunk `chunk`'s file was uploaded as `id`.
    File { chunk: usize, id: String },
    /// About to create chunk `chunk`'s batch; `at` is the Unix time.
    Creating { chunk: usize, at: u64 },
    /// Chunk `chunk`'s batch is `id`.
    Batch { chunk: usize, id: String },
    /// Chunk `chunk` has no batch though `creating` was journaled (written
    /// by hand when the provider cannot tell): the next run creates it.
    BatchAbsent { chunk: usize },
    /// Chunk `chunk`'s batch ended with `status`; its results are at
    /// `output` (a file id or URL), its per-item errors at `errors`;
    /// `failure` says why the whole batch failed, when it did.
    Ended {
        chunk: usize,
        status: String,
        output: Option<String>,
        errors: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
    },
    /// Chunk `chunk`'s results file is complete; `replies` of its lines
    /// carried a response (none: the engine answered no item).
    Collected {
        chunk: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replies: Option<u64>,
    },
}

/// How a chunk's batch ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ended {
    pub status: String,
    pub output: Option<String>,
    pub errors: Option<String>,
    pub failure: Option<String>,
}

/// What the journal says about one chunk.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChunkState {
    pub uploading: bool,
    pub file: Option<String>,
    pub creating: Option<u64>,
    pub batch: Option<String>,
    pub ended: Option<Ended>,
    pub collected: bool,
    /// From `collected`: how many lines carried a response.
    pub replies: Option<u64>,
}

impl ChunkState {
    /// Whether the journal records any step for this chunk.
    pub fn started(&self) -> bool {
        self.uploading || self.file.is_some() || self.creating.is_some() || self.batch.is_some()
    }
}

/// One judged item of a batch's output, or one re-run's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ItemRecord {
    /// The input's index.
    pub i: u64,
    /// The accepted value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<serde_json::Value>,
    /// Why the batch's reply was not accepted: the item is re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
    /// Why the item failed for good (a re-run's error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<String>,
    /// Repairs made to the accepted reply, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repairs: Option<String>,
    /// A re-run about to be sent (re-run log only): written before the
    /// call, so a run stopped with it in flight is known to have paid.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sent: bool,
}

/// An open job directory, locked against other runs while open.
pub(crate) struct JobDir {
    dir: PathBuf,
    journal: Option<File>,
    /// Holds the directory's lock (released when dropped, or when the
    /// process ends however it ends).
    _lock: Option<File>,
}

pub(crate) fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Batch(format!("could not {what} {}: {e}", path.display()))
}

impl JobDir {
    /// The job directory at `dir`, created if missing, locked so that
    /// two runs never drive one job at once (one would submit what the
    /// other is submitting). The lock is the operating system's, so a
    /// killed run leaves none behind.
    pub fn open(dir: &Path) -> Result<JobDir, Error> {
        fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
        let path = dir.join("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_error("open", &path, e))?;
        // The operating system's advisory lock (`flock` on Unix,
        // `LockFileEx` on Windows): held by this open file, released when
        // it is closed or the process ends, however it ends.
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Batch(format!(
                    "another run is using the job in {}; wait for it to end (a stopped run \
                     leaves no lock behind)",
                    dir.display()
                )))
            }
            Err(TryLockError::Error(e)) => return Err(io_error("lock", &path, e)),
        }
        Ok(JobDir {
            dir: dir.to_owned(),
            journal: None,
            _lock: Some(lock),
        })
    }

    /// The job directory at `dir` for reading its results, without the lock.
    pub fn read_only(dir: &Path) -> JobDir {
        JobDir {
            dir: dir.to_owned(),
            journal: None,
            _lock: None,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn requests_path(&self, chunk: usize) -> PathBuf {
        self.path(&format!("chunk-{chunk}.requests.jsonl"))
    }

    pub fn args_path(&self, chunk: usize) -> PathBuf {
        self.path(&format!("chunk-{chunk}.args.jsonl"))
    }

    pub fn results_path(&self, chunk: usize) -> PathBuf {
        self.path(&format!("chunk-{chunk}.results.jsonl"))
    }

    pub fn reruns_path(&self, chunk: usize) -> PathBuf {
        self.path(&format!("chunk-{chunk}.reruns.jsonl"))
    }

    /// The plan, if the job was planned.
    pub fn plan(&self) -> Result<Option<Plan>, Error> {
        let path = self.path("job.json");
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("read", &path, e)),
        };
        let plan: Plan = serde_json::from_str(&text)
            .map_err(|e| Error::Batch(format!("{} is not a job file: {e}", path.display())))?;
        if !(1..=JOB_FORMAT).contains(&plan.format) {
            return Err(Error::Batch(format!(
                "{} has job format {}, this runtime reads formats 1 to {JOB_FORMAT}",
                path.display(),
                plan.format
            )));
        }
        if !check_job_id(&plan.job) {
            return Err(Error::Batch(format!(
                "{} has a job id that is not one ({:?}): 1 to 36 letters, digits or `_`",
                path.display(),
                plan.job.chars().take(40).collect::<String>()
            )));
        }
        Ok(Some(plan))
    }

    /// Writes the plan atomically: after this the job is planned.
    pub fn write_plan(&self, plan: &Plan) -> Result<(), Error> {
        let text = serde_json::to_vec_pretty(plan)
            .map_err(|e| Error::Batch(format!("could not write the plan: {e}")))?;
        write_atomic(&self.path("job.json"), &text)?;
        sync_dir(&self.dir)
    }

    /// Every event in the journal, by chunk. A last line without its
    /// newline (a write cut short) is ignored and cut off, so that the
    /// next event starts on a line of its own.
    pub fn replay(&mut self, chunks: usize) -> Result<Vec<ChunkState>, Error> {
        let path = self.path("journal.jsonl");
        let mut states = vec![ChunkState::default(); chunks];
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_error("read", &path, e)),
        };
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if complete < bytes.len() {
            cut_torn_line(&path)?;
        }
        for line in bytes[..complete].split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let event: Event = serde_json::from_slice(line).map_err(|e| {
                Error::Batch(format!(
                    "{} has a line that is not an event: {e}",
                    path.display()
                ))
            })?;
            let chunk = match &event {
                Event::Uploading { chunk }
                | Event::File { chunk, .. }
                | Event::Creating { chunk, .. }
                | Event::Batch { chunk, .. }
                | Event::BatchAbsent { chunk }
                | Event::Ended { chunk, .. }
                | Event::Collected { chunk, .. } => *chunk,
            };
            let Some(state) = states.get_mut(chunk) else {
                return Err(Error::Batch(format!(
                    "{} names chunk {chunk}, the plan has {chunks}",
                    path.display()
                )));
            };
            match event {
                Event::Uploading { .. } => state.uploading = true,
                Event::File { id, .. } => state.file = Some(id),
                Event::Creating { at, .. } => state.creating = Some(at),
                Event::Batch { id, .. } => state.batch = Some(id),
                Event::BatchAbsent { .. } => {
                    if state.batch.is_none() {
                        state.creating = None;
                    }
                }
                Event::Ended {
                    status,
                    output,
                    errors,
                    failure,
                    ..
                } => {
                    state.ended = Some(Ended {
                        status,
                        output,
                        errors,
                        failure,
                    })
                }
                Event::Collected { replies, .. } => {
                    state.collected = true;
                    state.replies = replies;
                }
            }
        }
        Ok(states)
    }

    /// Appends `event` to the journal and waits until it is on disk.
    pub fn record(&mut self, event: &Event) -> Result<(), Error> {
        let path = self.path("journal.jsonl");
        if self.journal.is_none() {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| io_error("open", &path, e))?;
            self.journal = Some(file);
        }
        let mut line = serde_json::to_vec(event)
            .map_err(|e| Error::Batch(format!("could not write an event: {e}")))?;
        line.push(b'\n');
        // Just opened above when it was missing.
        let Some(file) = self.journal.as_mut() else {
            return Err(Error::Batch("the journal is not open".into()));
        };
        file.write_all(&line)
            .and_then(|()| file.sync_data())
            .map_err(|e| io_error("append to", &path, e))
    }
}

/// Writes `bytes` to `path` so that `path` holds either its old content or
/// all of `bytes`, never a part.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let mut file = File::create(&tmp).map_err(|e| io_error("create", &tmp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error("write", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io_error("rename", &tmp, e))
}

/// Makes a rename in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error("sync", dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// An append-only file of [`ItemRecord`]s, each line fsynced as written.
pub(crate) struct ItemLog {
    path: PathBuf,
    file: File,
}

impl ItemLog {
    /// Opens `path` for appending (`truncate`: starting empty).
    pub fn open(path: &Path, truncate: bool) -> Result<ItemLog, Error> {
        if !truncate {
            cut_torn_line(path)?;
        }
        let file = if truncate {
            File::create(path)
        } else {
            OpenOptions::new().create(true).append(true).open(path)
        }
        .map_err(|e| io_error("open", path, e))?;
        Ok(ItemLog {
            path: path.to_owned(),
            file,
        })
    }

    /// Appends `record` (on disk once `sync` runs or, with `sync_now`, at once).
    pub fn push(&mut self, record: &ItemRecord, sync_now: bool) -> Result<(), Error> {
        let mut line = serde_json::to_vec(record)
            .map_err(|e| Error::Batch(format!("could not write a result: {e}")))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|e| io_error("write", &self.path, e))?;
        if sync_now {
            self.sync()?;
        }
        Ok(())
    }

    pub fn sync(&mut self) -> Result<(), Error> {
        self.file
            .sync_data()
            .map_err(|e| io_error("sync", &self.path, e))
    }
}

/// Cuts a last line without its newline (a write a kill cut short) off
/// `path`, so that what is appended next starts a line of its own.
fn cut_torn_line(path: &Path) -> Result<(), Error> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("read", path, e)),
    };
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_error("open", path, e))?;
        file.set_len(complete as u64)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error("repair", path, e))?;
    }
    Ok(())
}

/// The records of an item log by index (later lines win), `sent` records
/// left out; a torn last line is ignored. Missing file: none.
pub(crate) fn read_items(path: &Path) -> Result<HashMap<u64, ItemRecord>, Error> {
    let mut items = HashMap::new();
    for_each_item(path, |record| {
        if !record.sent {
            items.insert(record.i, record);
        }
    })?;
    Ok(items)
}

/// Each record of an item log, in file order, one line in memory at a
/// time; a torn last line is ignored. Missing file: none.
pub(crate) fn for_each_item(path: &Path, mut each: impl FnMut(ItemRecord)) -> Result<(), Error> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("read", path, e)),
    };
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| io_error("read", path, e))?;
        // A line cut short by a kill does not parse: the item is redone.
        if let Ok(record) = serde_json::from_slice::<ItemRecord>(&line) {
            each(record);
        }
    }
    Ok(())
}
