//! The providers' batch engines: OpenAI's Batch API (a JSONL file uploaded
//! to Files, `POST /batches`, results in an output file) and Anthropic's
//! Message Batches (`POST /messages/batches`, results at a `results_url`),
//! each over the client's sender (its key, concurrency cap, timeout,
//! redaction and transport).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::job::io_error;
use super::time::rfc3339_seconds;
use crate::config::Provider;
use crate::error::Error;
use crate::transport::{Method, Sender, Url};

/// Which batch API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    OpenAi,
    Anthropic,
}

/// A batch's state as last seen.
#[derive(Debug, Clone)]
pub(crate) struct Status {
    /// The provider's own status word (`in_progress`, `completed`, `ended`…).
    pub status: String,
    /// Whether the batch will not change any more.
    pub ended: bool,
    /// Where its results are: an output file id (OpenAI) or URL (Anthropic).
    pub output: Option<String>,
    /// OpenAI's error file id (requests that failed).
    pub errors: Option<String>,
    /// Why the whole batch failed, when it did (OpenAI's `errors`).
    pub failure: Option<String>,
}

/// One line of a batch's results: the item, and the provider's response
/// body (as for a normal call) or why there is none.
pub(crate) enum Outcome {
    Reply(Box<RawValue>),
    Failed(String),
}

/// What one line of a results file is, for a job whose `custom_id`s start
/// with a given prefix.
pub(crate) enum Line {
    /// An item of this job: its index and outcome.
    Ours(u64, Outcome),
    /// A result of another job: its `custom_id` (as sent, at most 64 bytes
    /// of it kept).
    Foreign(String),
    /// Not a result line of the provider's format.
    Unreadable,
}

/// At most this many pages of a provider's list are read when looking for
/// what a stopped run may have created (OpenAI: 100 batches a page, or
/// 10,000 files; Anthropic: 1,000 batches a page).
pub(crate) const MAX_LIST_PAGES: usize = 20;

/// What [`Engine::find_batch`] looks for: chunk `chunk` of job `job`,
/// `count` requests whose `custom_id`s start with `prefix`, created since
/// `since` (Unix seconds), none of the batches in `claimed`.
pub(crate) struct Lost<'a> {
    pub job: &'a str,
    pub prefix: &'a str,
    /// Whether the `custom_id`s tell this job's items from other jobs'
    /// (job format 2, `vox-<job>-<index>`); format 1's `vox-<index>` do not.
    pub ids_are_unique: bool,
    pub chunk: usize,
    pub count: u64,
    pub since: u64,
    pub claimed: &'a [String],
    /// How to wait for candidates to end (first wait, longest wait).
    pub poll: (Duration, Duration),
}

impl Engine {
    /// The batch engine of `provider`, or why it has none.
    pub fn of(provider: Provider) -> Result<Engine, Error> {
        match provider {
            Provider::OpenAi => Ok(Engine::OpenAi),
            Provider::Anthropic => Ok(Engine::Anthropic),
            other => Err(Error::Batch(format!(
                "provider `{other}` has no batch API vox can drive (batches run on `openai` and \
                 `anthropic`); run the inputs as normal calls instead"
            ))),
        }
    }

    /// The provider's per-batch limits: requests, bytes of requests
    /// (OpenAI Batch API: 50,000 requests and 200 MB per input file;
    /// Anthropic Message Batches: 100,000 requests and 256 MB).
    pub fn limits(self) -> (u64, u64) {
        match self {
            Engine::OpenAi => (50_000, 200 * 1000 * 1000),
            Engine::Anthropic => (100_000, 256 * 1000 * 1000),
        }
    }

    /// The line of a request file for input `index` whose call body is
    /// `body` (the same request a normal call sends); its `custom_id` is
    /// `prefix` then the index.
    pub fn request_line(self, prefix: &str, index: u64, body: &[u8]) -> Vec<u8> {
        let mut line = Vec::with_capacity(body.len() + 96);
        line.extend_from_slice(b"{\"custom_id\":\"");
        line.extend_from_slice(prefix.as_bytes());
        line.extend_from_slice(index.to_string().as_bytes());
        match self {
            Engine::OpenAi => line.extend_from_slice(
                b"\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":",
            ),
            Engine::Anthropic => line.extend_from_slice(b"\",\"params\":"),
        }
        line.extend_from_slice(body);
        line.extend_from_slice(b"}\n");
        line
    }

    /// The uploaded file's name for chunk `chunk` of job `job`.
    pub fn file_name(job: &str, chunk: usize) -> String {
        format!("vox-{job}-{chunk}.jsonl")
    }

    /// An already uploaded file of this name and size (OpenAI), if any:
    /// what a run killed during the upload may have left. Reads the
    /// account's batch files a page at a time (newest first), at most
    /// [`MAX_LIST_PAGES`] pages.
    pub async fn find_file(
        self,
        sender: &Sender,
        name: &str,
        bytes: u64,
        limit: usize,
    ) -> Result<Option<String>, Error> {
        if self != Engine::OpenAi {
            return Ok(None);
        }
        #[derive(Deserialize)]
        struct Files {
            data: Vec<FileObject>,
            #[serde(default)]
            has_more: bool,
        }
        #[derive(Deserialize)]
        struct FileObject {
            id: String,
            #[serde(default)]
            filename: String,
            #[serde(default)]
            bytes: u64,
        }
        let mut after: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut path = "/files?purpose=batch&limit=10000&order=desc".to_owned();
            if let Some(after) = &after {
                check_id(after)?;
                path.push_str(&format!("&after={after}"));
            }
            let url = sender.url_at(&path)?;
            let files: Files = parse(&get(sender, &url, limit).await?, "file list")?;
            let last = files.data.last().map(|f| f.id.clone());
            if let Some(found) = files
                .data
                .into_iter()
                .find(|f| f.filename == name && f.bytes == bytes)
            {
                return Ok(Some(found.id));
            }
            match (files.has_more, last) {
                (true, Some(last)) => after = Some(last),
                _ => return Ok(None),
            }
        }
        // Not found in the pages read: uploading again costs nothing but
        // the upload (files are not billed as batches are).
        Ok(None)
    }

    /// Uploads the request file at `path` (OpenAI Files, `purpose=batch`);
    /// its id. The file is read once, straight into the multipart body.
    pub async fn upload(
        self,
        sender: &Sender,
        name: &str,
        path: &Path,
        limit: usize,
    ) -> Result<String, Error> {
        // Request lines are JSON, so the boundary could only occur inside a
        // string of an input; it is unpredictable (time, process, size).
        let len = std::fs::metadata(path)
            .map_err(|e| io_error("read", path, e))?
            .len();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let seed = format!("{name}/{len}/{nanos}/{}", std::process::id());
        let boundary = format!("vox-boundary-{:016x}", fnv(seed.as_bytes()));
        let head = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: application/jsonl\r\n\r\n"
        );
        let tail = format!("\r\n--{boundary}--\r\n");
        let mut body = Vec::with_capacity(head.len() + len as usize + tail.len());
        body.extend_from_slice(head.as_bytes());
        std::fs::File::open(path)
            .and_then(|mut file| file.read_to_end(&mut body))
            .map_err(|e| io_error("read", path, e))?;
        body.extend_from_slice(tail.as_bytes());
        let url = sender.url_at("/files")?;
        let answer = sender
            .exchange(
                Method::POST,
                &url,
                Some(&format!("multipart/form-data; boundary={boundary}")),
                Bytes::from(body),
                limit,
                true,
            )
            .await?;
        #[derive(Deserialize)]
        struct Created {
            id: String,
        }
        Ok(parse::<Created>(&answer, "uploaded file")?.id)
    }

    /// The batch already created for `lost.chunk`, if any: what a run
    /// killed between asking for it and recording its id, or whose
    /// creation failed, may have left (docs/runtime.md, "The job
    /// directory"). Lists the account's batches a page at a time, newest
    /// first, until the batches are older than `lost.since` less a minute
    /// (at most [`MAX_LIST_PAGES`] pages).
    ///
    /// OpenAI: the batch whose metadata names the job and chunk. Anthropic
    /// (no metadata): a batch proves to be this job's only by its results,
    /// whose `custom_id`s carry the job id; each candidate (this chunk's
    /// number of requests, created since, not another chunk's) is waited
    /// for until it has ended and then read. `None` when no batch is this
    /// chunk's; an error, naming the candidates and what to do, when it
    /// cannot be told.
    pub async fn find_batch(
        self,
        sender: &Sender,
        lost: &Lost<'_>,
        limit: usize,
    ) -> Result<Option<String>, Error> {
        let after = lost.since.saturating_sub(60);
        match self {
            Engine::OpenAi => {
                #[derive(Deserialize)]
                struct Batches {
                    data: Vec<BatchObject>,
                    #[serde(default)]
                    has_more: bool,
                }
                #[derive(Deserialize)]
                struct BatchObject {
                    id: String,
                    #[serde(default)]
                    created_at: Option<u64>,
                    #[serde(default)]
                    metadata: Option<serde_json::Map<String, serde_json::Value>>,
                }
                let chunk_text = lost.chunk.to_string();
                let mut cursor: Option<String> = None;
                for _ in 0..MAX_LIST_PAGES {
                    let mut path = "/batches?limit=100".to_owned();
                    if let Some(cursor) = &cursor {
                        check_id(cursor)?;
                        path.push_str(&format!("&after={cursor}"));
                    }
                    let url = sender.url_at(&path)?;
                    let page: Batches = parse(&get(sender, &url, limit).await?, "batch list")?;
                    let older = page
                        .data
                        .last()
                        .and_then(|b| b.created_at)
                        .is_some_and(|at| at < after);
                    let last = page.data.last().map(|b| b.id.clone());
                    let found = page.data.into_iter().find_map(|b| {
                        let meta = b.metadata?;
                        (meta.get("vox_job")?.as_str()? == lost.job
                            && meta.get("vox_chunk")?.as_str()? == chunk_text)
                            .then_some(b.id)
                    });
                    if found.is_some() {
                        return Ok(found);
                    }
                    match (page.has_more && !older, last) {
                        (true, Some(last)) => cursor = Some(last),
                        _ => return Ok(None),
                    }
                }
                Err(Error::Batch(format!(
                    "a run was stopped while creating the batch of chunk {chunk} (or its \
                     creation failed), and the {MAX_LIST_PAGES} pages of batches read reach no \
                     further back than batches created since; to tell whether it was created, \
                     find the batch whose metadata has vox_job={job} and vox_chunk={chunk}: if \
                     there is one, append {{\"event\":\"batch\",\"chunk\":{chunk},\"id\":\"<its \
                     id>\"}} to journal.jsonl in the job directory and run again; if there is \
                     none, append {{\"event\":\"batch_absent\",\"chunk\":{chunk}}} and run again \
                     to create it",
                    chunk = lost.chunk,
                    job = lost.job,
                )))
            }
            Engine::Anthropic => {
                let candidates = self
                    .anthropic_candidates(sender, lost, after, limit)
                    .await?;
                if candidates.is_empty() {
                    return Ok(None);
                }
                if !lost.ids_are_unique {
                    return Err(Error::Batch(format!(
                        "a run was stopped while creating the batch of chunk {chunk} (or its \
                         creation failed), and batches {list} could each be it; this job was \
                         planned by an older vox whose custom_ids (vox-<index>) do not tell its \
                         results from another job's, so none is taken. If one of them is this \
                         job's, append {{\"event\":\"batch\",\"chunk\":{chunk},\"id\":\"<its \
                         id>\"}} to journal.jsonl in the job directory and run again; if none \
                         is, append {{\"event\":\"batch_absent\",\"chunk\":{chunk}}} and run \
                         again to create it (or start the job afresh in a new directory)",
                        chunk = lost.chunk,
                        list = candidates.join(", "),
                    )));
                }
                self.prove_ours(sender, lost, candidates, limit).await
            }
        }
    }

    /// Anthropic's batches that could be `lost`'s: its number of requests,
    /// created since `after`, not another chunk's.
    async fn anthropic_candidates(
        self,
        sender: &Sender,
        lost: &Lost<'_>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<String>, Error> {
        #[derive(Deserialize)]
        struct Batches {
            data: Vec<BatchObject>,
            #[serde(default)]
            has_more: bool,
            #[serde(default)]
            last_id: Option<String>,
        }
        #[derive(Deserialize)]
        struct BatchObject {
            id: String,
            #[serde(default)]
            created_at: String,
            #[serde(default)]
            request_counts: Option<serde_json::Map<String, serde_json::Value>>,
        }
        let after = rfc3339_seconds(after);
        let recent = |created_at: &str| created_at.get(..19).unwrap_or("") >= after.as_str();
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut path = "/messages/batches?limit=1000".to_owned();
            if let Some(cursor) = &cursor {
                check_id(cursor)?;
                path.push_str(&format!("&after_id={cursor}"));
            }
            let url = sender.url_at(&path)?;
            let page: Batches = parse(&get(sender, &url, limit).await?, "batch list")?;
            let older = page.data.last().is_some_and(|b| !recent(&b.created_at));
            let last = page
                .last_id
                .clone()
                .or_else(|| page.data.last().map(|b| b.id.clone()));
            for b in page.data {
                let total: u64 = b
                    .request_counts
                    .iter()
                    .flat_map(|counts| counts.values())
                    .filter_map(serde_json::Value::as_u64)
                    .sum();
                if total == lost.count && recent(&b.created_at) && !lost.claimed.contains(&b.id) {
                    found.push(b.id);
                }
            }
            match (page.has_more && !older, last) {
                (true, Some(last)) => cursor = Some(last),
                _ => return Ok(found),
            }
        }
        Err(Error::Batch(format!(
            "a run was stopped while creating the batch of chunk {chunk} (or its creation \
             failed), and the {MAX_LIST_PAGES} pages of batches read reach no further back than \
             batches created since; to tell whether it was created, look for a batch of {count} \
             requests whose results' custom_ids start with {prefix}: if there is one, append \
             {{\"event\":\"batch\",\"chunk\":{chunk},\"id\":\"<its id>\"}} to journal.jsonl in \
             the job directory and run again; if there is none, append \
             {{\"event\":\"batch_absent\",\"chunk\":{chunk}}} and run again to create it",
            chunk = lost.chunk,
            count = lost.count,
            prefix = lost.prefix,
        )))
    }

    /// Which of `candidates` is `lost`'s, by the `custom_id`s of its
    /// results: each is looked at (with backoff) until it has ended, then
    /// its results are read. The first whose results are this job's is
    /// taken; `None` once every candidate proved to be another job's.
    async fn prove_ours(
        self,
        sender: &Sender,
        lost: &Lost<'_>,
        mut candidates: Vec<String>,
        limit: usize,
    ) -> Result<Option<String>, Error> {
        let (mut delay, longest) = lost.poll;
        tracing::info!(
            chunk = lost.chunk,
            candidates = %candidates.join(","),
            "vox.batch_lookup"
        );
        loop {
            let mut waiting = Vec::new();
            for id in candidates {
                let status = self.status(sender, &id, limit).await?;
                if !status.ended {
                    waiting.push(id);
                    continue;
                }
                let Some(location) = status.output else {
                    // Ended without results: nothing proves it is ours,
                    // and nothing in it could be taken anyway.
                    continue;
                };
                let body = self.download(sender, &location, limit).await?;
                let mut ours = false;
                for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    match self.parse_line(lost.prefix, line) {
                        Line::Ours(..) => ours = true,
                        Line::Foreign(_) => {
                            ours = false;
                            break;
                        }
                        Line::Unreadable => {}
                    }
                }
                if ours {
                    return Ok(Some(id));
                }
            }
            if waiting.is_empty() {
                return Ok(None);
            }
            candidates = waiting;
            tokio::time::sleep(delay).await;
            delay = delay.mul_f64(1.5).min(longest);
        }
    }

    /// Creates the batch of chunk `chunk`: from the uploaded file `file`
    /// (OpenAI) or the request lines `requests` (Anthropic). Sent once,
    /// without transport retries: a failed creation may still have made
    /// a batch, which the next run finds with [`Engine::find_batch`].
    pub async fn create(
        self,
        sender: &Sender,
        job: &str,
        chunk: usize,
        file: Option<&str>,
        requests: &Path,
        limit: usize,
    ) -> Result<String, Error> {
        let (url, body) = match self {
            Engine::OpenAi => {
                let file =
                    file.ok_or_else(|| Error::Batch("internal: a batch without its file".into()))?;
                let body = serde_json::json!({
                    "input_file_id": file,
                    "endpoint": "/v1/chat/completions",
                    "completion_window": "24h",
                    "metadata": {"vox_job": job, "vox_chunk": chunk.to_string()},
                });
                (sender.url_at("/batches")?, Bytes::from(body.to_string()))
            }
            Engine::Anthropic => {
                // The request file read once, into the body: its lines
                // (one JSON object each, ending in a newline) become the
                // array's items, each newline a comma in place.
                let mut body = b"{\"requests\":[".to_vec();
                let start = body.len();
                std::fs::File::open(requests)
                    .and_then(|mut file| file.read_to_end(&mut body))
                    .map_err(|e| io_error("read", requests, e))?;
                while body.len() > start && body.last() == Some(&b'\n') {
                    body.pop();
                }
                for byte in &mut body[start..] {
                    if *byte == b'\n' {
                        *byte = b',';
                    }
                }
                body.extend_from_slice(b"]}");
                (sender.url_at("/messages/batches")?, Bytes::from(body))
            }
        };
        let answer = sender
            .exchange(Method::POST, &url, None, body, limit, false)
            .await?;
        #[derive(Deserialize)]
        struct Created {
            id: String,
        }
        Ok(parse::<Created>(&answer, "created batch")?.id)
    }

    /// The batch's state. Where an ended batch says its results are is
    /// checked here, before anything records it: an output or error file
    /// id that is not one, or a results URL off the provider's origin, is
    /// an error, and the batch is asked about again by the next run.
    pub async fn status(self, sender: &Sender, id: &str, limit: usize) -> Result<Status, Error> {
        check_id(id)?;
        let status = match self {
            Engine::OpenAi => {
                #[derive(Deserialize)]
                struct BatchObject {
                    status: String,
                    #[serde(default)]
                    output_file_id: Option<String>,
                    #[serde(default)]
                    error_file_id: Option<String>,
                    #[serde(default)]
                    errors: Option<serde_json::Value>,
                }
                let url = sender.url_at(&format!("/batches/{id}"))?;
                let b: BatchObject = parse(&get(sender, &url, limit).await?, "batch")?;
                // OpenAI Batch API, "Batch object": validating, failed,
                // in_progress, finalizing, completed, expired, cancelling,
                // cancelled.
                let ended = matches!(
                    b.status.as_str(),
                    "completed" | "failed" | "expired" | "cancelled"
                );
                Status {
                    failure: (b.status == "failed").then(|| {
                        sender
                            .redactor()
                            .shown(&b.errors.map(|e| e.to_string()).unwrap_or_default(), 512)
                    }),
                    status: b.status,
                    ended,
                    output: b.output_file_id,
                    errors: b.error_file_id,
                }
            }
            Engine::Anthropic => {
                #[derive(Deserialize)]
                struct BatchObject {
                    processing_status: String,
                    #[serde(default)]
                    results_url: Option<String>,
                }
                let url = sender.url_at(&format!("/messages/batches/{id}"))?;
                let b: BatchObject = parse(&get(sender, &url, limit).await?, "batch")?;
                // Message Batches: in_progress, canceling, ended.
                Status {
                    ended: b.processing_status == "ended",
                    status: b.processing_status,
                    output: b.results_url,
                    errors: None,
                    failure: None,
                }
            }
        };
        if status.ended {
            for location in [&status.output, &status.errors].into_iter().flatten() {
                self.results_url(sender, location).map_err(|e| {
                    Error::Batch(format!(
                        "batch {id} has ended, but {e}; nothing was fetched or recorded, and the \
                         next run asks the batch engine again"
                    ))
                })?;
            }
        }
        Ok(status)
    }

    /// The URL of the results at `location` (an output or error file id,
    /// or a results URL, which must be on the provider's own origin: the
    /// key goes with the request), or why it is not one.
    pub fn results_url(self, sender: &Sender, location: &str) -> Result<Url, Error> {
        match self {
            Engine::OpenAi => {
                check_id(location).map_err(|_| {
                    Error::Batch(format!(
                        "the batch engine gives its results as {:?}, which is not a file id",
                        sender
                            .redactor()
                            .shown(&location.chars().take(80).collect::<String>(), 80)
                    ))
                })?;
                sender.url_at(&format!("/files/{location}/content"))
            }
            Engine::Anthropic => {
                let url = Url::parse(location).map_err(|e| {
                    Error::Batch(format!("the batch's results URL does not parse: {e}"))
                })?;
                let base = sender.url_at("")?;
                if url.scheme() != base.scheme()
                    || url.host_str() != base.host_str()
                    || url.port_or_known_default() != base.port_or_known_default()
                {
                    return Err(Error::Batch(format!(
                        "the batch's results URL is not on the provider's own origin ({}); \
                         not sending the API key there",
                        sender.redactor().shown(location, 200)
                    )));
                }
                Ok(url)
            }
        }
    }

    /// The results file at `location` (see [`Engine::results_url`]).
    pub async fn download(
        self,
        sender: &Sender,
        location: &str,
        limit: usize,
    ) -> Result<Bytes, Error> {
        let url = self.results_url(sender, location)?;
        get(sender, &url, limit).await
    }

    /// One line of a results file, for the job whose `custom_id`s start
    /// with `prefix`: its item and outcome, or whose it is.
    pub fn parse_line(self, prefix: &str, line: &[u8]) -> Line {
        match self {
            Engine::OpenAi => {
                #[derive(Deserialize)]
                struct Row {
                    custom_id: String,
                    #[serde(default)]
                    response: Option<Resp>,
                    #[serde(default)]
                    error: Option<serde_json::Value>,
                }
                #[derive(Deserialize)]
                struct Resp {
                    status_code: u16,
                    body: Box<RawValue>,
                }
                let Ok(row) = serde_json::from_slice::<Row>(line) else {
                    return Line::Unreadable;
                };
                let Some(index) = index_of(prefix, &row.custom_id) else {
                    return Line::Foreign(cut(&row.custom_id));
                };
                let outcome = match (row.response, row.error) {
                    (Some(r), _) if (200..300).contains(&r.status_code) => Outcome::Reply(r.body),
                    (Some(r), _) => Outcome::Failed(format!(
                        "the batch answered HTTP {}: {}",
                        r.status_code,
                        r.body.get()
                    )),
                    (None, Some(error)) => Outcome::Failed(format!("the batch failed it: {error}")),
                    (None, None) => Outcome::Failed("the batch gave no response".into()),
                };
                Line::Ours(index, outcome)
            }
            Engine::Anthropic => {
                #[derive(Deserialize)]
                struct Row {
                    custom_id: String,
                    result: Res,
                }
                #[derive(Deserialize)]
                struct Res {
                    #[serde(rename = "type")]
                    kind: String,
                    #[serde(default)]
                    message: Option<Box<RawValue>>,
                    #[serde(default)]
                    error: Option<serde_json::Value>,
                }
                let Ok(row) = serde_json::from_slice::<Row>(line) else {
                    return Line::Unreadable;
                };
                let Some(index) = index_of(prefix, &row.custom_id) else {
                    return Line::Foreign(cut(&row.custom_id));
                };
                let outcome = match (row.result.kind.as_str(), row.result.message) {
                    ("succeeded", Some(message)) => Outcome::Reply(message),
                    (kind, _) => Outcome::Failed(match row.result.error {
                        Some(error) => format!("the batch's result is `{kind}`: {error}"),
                        None => format!("the batch's result is `{kind}`"),
                    }),
                };
                Line::Ours(index, outcome)
            }
        }
    }
}

/// The index in `custom_id`, if it is `prefix` then a number written as
/// the runtime writes it (no sign, no leading zero).
fn index_of(prefix: &str, custom_id: &str) -> Option<u64> {
    let digits = custom_id.strip_prefix(prefix)?;
    let index: u64 = digits.parse().ok()?;
    (index.to_string() == digits).then_some(index)
}

/// At most 64 characters of `text`, for a message.
fn cut(text: &str) -> String {
    text.chars().take(64).collect()
}

/// An id from the server goes into a URL path: only the characters ids are
/// made of.
fn check_id(id: &str) -> Result<(), Error> {
    if !id.is_empty()
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(())
    } else {
        Err(Error::Batch(format!(
            "the batch engine gave an id that is not one: {:?}",
            id.chars().take(80).collect::<String>()
        )))
    }
}

async fn get(sender: &Sender, url: &Url, limit: usize) -> Result<Bytes, Error> {
    sender
        .exchange(Method::GET, url, None, Bytes::new(), limit, true)
        .await
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| {
        Error::Batch(format!(
            "the batch engine's {what} is not what its API describes: {e}"
        ))
    })
}

/// FNV-1a of `bytes`: a multipart boundary that the content is unlikely
/// to contain (request lines are JSON, which never holds `--vox-boundary`
/// outside a string anyway).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_instants() {
        assert_eq!(rfc3339_seconds(0), "1970-01-01T00:00:00");
        assert_eq!(rfc3339_seconds(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(rfc3339_seconds(1_724_179_044), "2024-08-20T18:37:24");
    }

    #[test]
    fn request_lines_carry_the_call_body_and_the_index() {
        let line = Engine::OpenAi.request_line("vox-j1-", 7, br#"{"model":"m"}"#);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["custom_id"], "vox-j1-7");
        assert_eq!(v["url"], "/v1/chat/completions");
        assert_eq!(v["body"]["model"], "m");
        let line = Engine::Anthropic.request_line("vox-j1-", 3, br#"{"model":"c"}"#);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["params"]["model"], "c");
        assert!(line.ends_with(b"\n"));
    }

    #[test]
    fn ids_that_would_change_the_url_are_refused() {
        for bad in ["", "../files", "a/b", "a?b", "a#b", "a b", "a%2f"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
        assert!(check_id("batch_abc-123").is_ok());
    }

    #[test]
    fn result_lines_of_both_engines() {
        let p = "vox-j1-";
        let ok = br#"{"custom_id":"vox-j1-4","response":{"status_code":200,"body":{"x":1}},"error":null}"#;
        assert!(matches!(
            Engine::OpenAi.parse_line(p, ok),
            Line::Ours(4, Outcome::Reply(_))
        ));
        let failed =
            br#"{"custom_id":"vox-j1-5","response":null,"error":{"code":"batch_expired"}}"#;
        assert!(matches!(
            Engine::OpenAi.parse_line(p, failed),
            Line::Ours(5, Outcome::Failed(_))
        ));
        let expired = br#"{"custom_id":"vox-j1-9","result":{"type":"expired"}}"#;
        assert!(matches!(
            Engine::Anthropic.parse_line(p, expired),
            Line::Ours(9, Outcome::Failed(_))
        ));
        // Another job's items, the old unprefixed ids among them, are not
        // this job's; nor are numbers written otherwise than as sent.
        for other in [
            "other-1",
            "vox-1",
            "vox-j2-1",
            "vox-j1-01",
            "vox-j1-+1",
            "vox-j1-",
        ] {
            let line = format!(r#"{{"custom_id":"{other}","result":{{"type":"expired"}}}}"#);
            assert!(
                matches!(
                    Engine::Anthropic.parse_line(p, line.as_bytes()),
                    Line::Foreign(_)
                ),
                "{other}"
            );
        }
        assert!(matches!(
            Engine::Anthropic.parse_line(p, b"not json"),
            Line::Unreadable
        ));
    }
}
