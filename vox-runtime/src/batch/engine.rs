//! The providers' batch engines: OpenAI's Batch API (a JSONL file uploaded
//! to Files, `POST /batches`, results in an output file) and Anthropic's
//! Message Batches (`POST /messages/batches`, results at a `results_url`),
//! each over the client's sender (its key, concurrency cap, timeout,
//! redaction and transport).

use std::io::Read;
use std::path::Path;

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

/// Prefix of each request's `custom_id`; the input's index follows.
const CUSTOM_ID_PREFIX: &str = "vox-";

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
    /// `body` (the same request a normal call sends).
    pub fn request_line(self, index: u64, body: &[u8]) -> Vec<u8> {
        let mut line = Vec::with_capacity(body.len() + 96);
        match self {
            Engine::OpenAi => {
                line.extend_from_slice(b"{\"custom_id\":\"");
                line.extend_from_slice(format!("{CUSTOM_ID_PREFIX}{index}").as_bytes());
                line.extend_from_slice(
                    b"\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":",
                );
            }
            Engine::Anthropic => {
                line.extend_from_slice(b"{\"custom_id\":\"");
                line.extend_from_slice(format!("{CUSTOM_ID_PREFIX}{index}").as_bytes());
                line.extend_from_slice(b"\",\"params\":");
            }
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
    /// what a run killed during the upload may have left.
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
        }
        #[derive(Deserialize)]
        struct FileObject {
            id: String,
            #[serde(default)]
            filename: String,
            #[serde(default)]
            bytes: u64,
        }
        let url = sender.url_at("/files?purpose=batch")?;
        let body = get(sender, &url, limit).await?;
        let files: Files = parse(&body, "file list")?;
        Ok(files
            .data
            .into_iter()
            .find(|f| f.filename == name && f.bytes == bytes)
            .map(|f| f.id))
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

    /// The batch already created for chunk `chunk` of job `job`, if any:
    /// what a run killed between asking for it and recording its id may
    /// have left. OpenAI: the batch whose metadata names the job and
    /// chunk. Anthropic (no metadata): the one batch of `count` requests
    /// created since `since` (Unix seconds, less a minute for clock skew)
    /// and not already another chunk's; several such batches are an error
    /// naming them, not a guess.
    #[allow(clippy::too_many_arguments)]
    pub async fn find_batch(
        self,
        sender: &Sender,
        job: &str,
        chunk: usize,
        count: u64,
        since: u64,
        claimed: &[String],
        limit: usize,
    ) -> Result<Option<String>, Error> {
        match self {
            Engine::OpenAi => {
                #[derive(Deserialize)]
                struct Batches {
                    data: Vec<BatchObject>,
                }
                #[derive(Deserialize)]
                struct BatchObject {
                    id: String,
                    #[serde(default)]
                    metadata: Option<serde_json::Map<String, serde_json::Value>>,
                }
                let url = sender.url_at("/batches?limit=100")?;
                let body = get(sender, &url, limit).await?;
                let batches: Batches = parse(&body, "batch list")?;
                let chunk_text = chunk.to_string();
                Ok(batches.data.into_iter().find_map(|b| {
                    let meta = b.metadata?;
                    (meta.get("vox_job")?.as_str()? == job
                        && meta.get("vox_chunk")?.as_str()? == chunk_text)
                        .then_some(b.id)
                }))
            }
            Engine::Anthropic => {
                #[derive(Deserialize)]
                struct Batches {
                    data: Vec<BatchObject>,
                }
                #[derive(Deserialize)]
                struct BatchObject {
                    id: String,
                    #[serde(default)]
                    created_at: String,
                    #[serde(default)]
                    request_counts: Option<serde_json::Map<String, serde_json::Value>>,
                }
                let url = sender.url_at("/messages/batches?limit=100")?;
                let body = get(sender, &url, limit).await?;
                let batches: Batches = parse(&body, "batch list")?;
                let after = rfc3339_seconds(since.saturating_sub(60));
                let found: Vec<String> = batches
                    .data
                    .into_iter()
                    .filter(|b| {
                        let total: u64 = b
                            .request_counts
                            .iter()
                            .flat_map(|counts| counts.values())
                            .filter_map(serde_json::Value::as_u64)
                            .sum();
                        total == count
                            && b.created_at.get(..19).unwrap_or("") >= after.as_str()
                            && !claimed.contains(&b.id)
                    })
                    .map(|b| b.id)
                    .collect();
                match found.len() {
                    0 => Ok(None),
                    1 => Ok(found.into_iter().next()),
                    _ => Err(Error::Batch(format!(
                        "a run was stopped while creating the batch of chunk {chunk}, and \
                         batches {} could each be it; cancel the ones that are not this job's \
                         and run again",
                        found.join(", ")
                    ))),
                }
            }
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

    /// The batch's state.
    pub async fn status(self, sender: &Sender, id: &str, limit: usize) -> Result<Status, Error> {
        check_id(id)?;
        match self {
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
                Ok(Status {
                    failure: (b.status == "failed")
                        .then(|| b.errors.map(|e| e.to_string()).unwrap_or_default()),
                    status: b.status,
                    ended,
                    output: b.output_file_id,
                    errors: b.error_file_id,
                })
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
                Ok(Status {
                    ended: b.processing_status == "ended",
                    status: b.processing_status,
                    output: b.results_url,
                    errors: None,
                    failure: None,
                })
            }
        }
    }

    /// The results file at `location` (an output or error file id, or a
    /// results URL, which must be on the provider's own origin: the key
    /// goes with the request).
    pub async fn download(
        self,
        sender: &Sender,
        location: &str,
        limit: usize,
    ) -> Result<Bytes, Error> {
        let url = match self {
            Engine::OpenAi => {
                check_id(location)?;
                sender.url_at(&format!("/files/{location}/content"))?
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
                url
            }
        };
        get(sender, &url, limit).await
    }

    /// One line of a results file: the input's index and its outcome.
    /// `None` for a line that names no input of this job.
    pub fn parse_line(self, line: &[u8]) -> Option<(u64, Outcome)> {
        match self {
            Engine::OpenAi => {
                #[derive(Deserialize)]
                struct Line {
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
                let line: Line = serde_json::from_slice(line).ok()?;
                let index = index_of(&line.custom_id)?;
                let outcome = match (line.response, line.error) {
                    (Some(r), _) if (200..300).contains(&r.status_code) => Outcome::Reply(r.body),
                    (Some(r), _) => Outcome::Failed(format!(
                        "the batch answered HTTP {}: {}",
                        r.status_code,
                        r.body.get()
                    )),
                    (None, Some(error)) => Outcome::Failed(format!("the batch failed it: {error}")),
                    (None, None) => Outcome::Failed("the batch gave no response".into()),
                };
                Some((index, outcome))
            }
            Engine::Anthropic => {
                #[derive(Deserialize)]
                struct Line {
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
                let line: Line = serde_json::from_slice(line).ok()?;
                let index = index_of(&line.custom_id)?;
                let outcome = match (line.result.kind.as_str(), line.result.message) {
                    ("succeeded", Some(message)) => Outcome::Reply(message),
                    (kind, _) => Outcome::Failed(match line.result.error {
                        Some(error) => format!("the batch's result is `{kind}`: {error}"),
                        None => format!("the batch's result is `{kind}`"),
                    }),
                };
                Some((index, outcome))
            }
        }
    }
}

fn index_of(custom_id: &str) -> Option<u64> {
    custom_id.strip_prefix(CUSTOM_ID_PREFIX)?.parse().ok()
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
        let line = Engine::OpenAi.request_line(7, br#"{"model":"m"}"#);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["custom_id"], "vox-7");
        assert_eq!(v["url"], "/v1/chat/completions");
        assert_eq!(v["body"]["model"], "m");
        let line = Engine::Anthropic.request_line(3, br#"{"model":"c"}"#);
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
        let ok =
            br#"{"custom_id":"vox-4","response":{"status_code":200,"body":{"x":1}},"error":null}"#;
        assert!(matches!(
            Engine::OpenAi.parse_line(ok),
            Some((4, Outcome::Reply(_)))
        ));
        let failed = br#"{"custom_id":"vox-5","response":null,"error":{"code":"batch_expired"}}"#;
        assert!(matches!(
            Engine::OpenAi.parse_line(failed),
            Some((5, Outcome::Failed(_)))
        ));
        let expired = br#"{"custom_id":"vox-9","result":{"type":"expired"}}"#;
        assert!(matches!(
            Engine::Anthropic.parse_line(expired),
            Some((9, Outcome::Failed(_)))
        ));
        assert!(Engine::Anthropic
            .parse_line(br#"{"custom_id":"other-1","result":{"type":"expired"}}"#)
            .is_none());
    }
}
