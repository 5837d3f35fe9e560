//! A loopback emulation of OpenAI's Files and Batch APIs and Anthropic's
//! Message Batches, plus both providers' normal call endpoints, for the
//! batch tests.
//!
//! Each request's input text carries `#n=K`; the emulated model answers
//! `{"value": K}`. Markers in the text choose what happens to an item in a
//! batch: `~bad` (a reply that does not fit), `~expire` (expired),
//! `~fail` (an HTTP 500 for the item), `~missing` (left out of the
//! results), `~alwaysbad` (no reply ever fits, normal calls included), and
//! `~batcherror` (the whole batch fails). Batches go through the
//! providers' status values, one step per poll.
//!
//! A kill point makes the server stop answering at one step and tell the
//! test, which then SIGKILLs the client process; from then on no request
//! made with the killed process's key ([`CHILD_KEY`]) is answered, so
//! nothing it had in flight lands after the kill.
//!
//! Normal calls can be made to take a while ([`Emulator::start_slow`]);
//! the server counts how many are in flight at once.
//!
//! Lists are paged as the providers page them (newest first; OpenAI
//! `limit` and `after`, Anthropic `limit` and `after_id`, both with
//! `has_more` and `last_id`), at most [`State::page_size`] a page. A test
//! can make the next batch creation fail after creating the batch
//! ([`State::lose_next_create`]), make every finished OpenAI batch name
//! another output file ([`State::output_file_id`]), or add batches of
//! other jobs ([`Emulator::add_batch`]).

#![allow(dead_code)]

// The runtime's own RFC 3339 writer (a file without crate items).
#[path = "../../../src/batch/time.rs"]
mod time;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Where the server stops answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillPoint {
    /// Halfway through receiving the upload of the first file.
    Upload,
    /// After creating the first batch, before answering.
    Create,
    /// At the second look at a batch.
    Poll,
    /// While a results file is asked for.
    Download,
    /// At the second normal call (a re-run), after the first was answered.
    Rerun,
}

/// The API key of a client process a kill test SIGKILLs.
pub const CHILD_KEY: &str = "sk-batch-child";

#[derive(Debug, Clone)]
pub struct BatchRec {
    pub id: String,
    pub anthropic: bool,
    /// (custom_id, call body)
    pub requests: Vec<(String, Value)>,
    pub polls: u32,
    pub metadata: Value,
    pub created_at: String,
    pub created_unix: u64,
}

#[derive(Default)]
pub struct State {
    pub files: HashMap<String, (String, Vec<u8>)>,
    pub batches: Vec<BatchRec>,
    pub uploads: usize,
    /// Normal calls by the input's K.
    pub calls: HashMap<u64, usize>,
    /// Every request, as "METHOD path".
    pub log: Vec<String>,
    next_id: u64,
    pub killed: Option<KillPoint>,
    /// Normal calls being answered now, and the most there were at once.
    pub calls_in_flight: usize,
    pub max_calls_in_flight: usize,
    /// The next batch creation makes the batch, then answers HTTP 500.
    pub lose_next_create: bool,
    /// What a finished OpenAI batch gives as its `output_file_id`, if not
    /// its own output file.
    pub output_file_id: Option<String>,
    /// The most items a list page holds (0: as many as asked for).
    pub page_size: usize,
    /// The list pages read, as "path?query".
    pub list_pages: Vec<String>,
    /// Normal calls received, answered or not (a killed process's too):
    /// what the provider would bill.
    pub calls_received: usize,
}

pub struct Emulator {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<State>>,
}

#[derive(Clone)]
struct Shared {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    polls_to_end: u32,
    kill: Option<KillPoint>,
    notify: mpsc::UnboundedSender<KillPoint>,
    /// How long each normal call takes to answer.
    call_delay: std::time::Duration,
}

impl Emulator {
    /// A server whose batches end after `polls_to_end` looks, stopping at
    /// `kill` if given.
    pub async fn start(
        polls_to_end: u32,
        kill: Option<KillPoint>,
    ) -> (Emulator, mpsc::UnboundedReceiver<KillPoint>) {
        Self::start_slow(polls_to_end, kill, std::time::Duration::ZERO).await
    }

    /// [`Emulator::start`], each normal call taking `call_delay` to answer.
    pub async fn start_slow(
        polls_to_end: u32,
        kill: Option<KillPoint>,
        call_delay: std::time::Duration,
    ) -> (Emulator, mpsc::UnboundedReceiver<KillPoint>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let (notify, killed) = mpsc::unbounded_channel();
        let shared = Shared {
            addr,
            state: state.clone(),
            polls_to_end,
            kill,
            notify,
            call_delay,
        };
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, shared).await;
                });
            }
        });
        (Emulator { addr, state }, killed)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// How many batches were created for each (job, chunk) tag (OpenAI)
    /// or in all (Anthropic), and the requests of each.
    pub fn batches(&self) -> Vec<BatchRec> {
        self.state.lock().unwrap().batches.clone()
    }

    /// Adds a batch of another job: `requests` (custom_id, input text),
    /// `polls` looks already made (so more than the server's
    /// `polls_to_end` makes it ended).
    pub fn add_batch(&self, anthropic: bool, requests: &[(String, String)], polls: u32) -> String {
        let mut state = self.state.lock().unwrap();
        state.next_id += 1;
        let id = if anthropic {
            format!("msgbatch_{}", state.next_id)
        } else {
            format!("batch_{}", state.next_id)
        };
        let requests = requests
            .iter()
            .map(|(custom_id, text)| {
                let body = json!({
                    "model": "m", "tool_choice": {"type": "tool", "name": "respond"},
                    "messages": [{"role": "user", "content": text}],
                });
                (custom_id.clone(), body)
            })
            .collect();
        let (created_at, created_unix) = now();
        state.batches.push(BatchRec {
            id: id.clone(),
            anthropic,
            requests,
            polls,
            metadata: json!({"vox_job": "someone-else", "vox_chunk": "0"}),
            created_at,
            created_unix,
        });
        if !anthropic {
            let b = state.batches[state.batches.len() - 1].clone();
            let (output, errors) = openai_results(&b);
            state
                .files
                .insert(format!("{id}-out"), ("out".into(), output));
            state
                .files
                .insert(format!("{id}-err"), ("err".into(), errors));
        }
        id
    }
}

/// The K of `#n=K` in `text`: the last one (a re-prompt repeats earlier
/// turns, the newest input is last).
pub fn number_in(text: &str) -> Option<u64> {
    let at = text.rfind("#n=")?;
    let digits: String = text[at + 3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn chat_reply(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    })
}

fn message_reply(tool: &str, input: Value) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 5}
    })
}

/// The model's answer to a call body: a value for `#n=K`, or one that does
/// not fit when `fits` is false.
fn answer(anthropic: bool, body: &Value, fits: bool) -> Value {
    let text = body.to_string();
    let n = number_in(&text).unwrap_or(0);
    if anthropic {
        let tool = body["tool_choice"]["name"].as_str().unwrap_or("tool");
        let input = if fits {
            json!({"value": n})
        } else {
            json!({"value": "not a number"})
        };
        message_reply(tool, input)
    } else if fits {
        chat_reply(&format!("{{\"value\": {n}}}"))
    } else {
        chat_reply("I could not find a number")
    }
}

struct Req {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

async fn serve(mut stream: TcpStream, shared: Shared) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_owned();
    let path = first.next().unwrap_or("").to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    let kill_upload = shared.kill == Some(KillPoint::Upload)
        && method == "POST"
        && path == "/v1/files"
        && shared.state.lock().unwrap().killed.is_none();
    if kill_upload {
        // Take half the file, then stop: the client dies mid-upload.
        while body.len() < length / 2 {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            body.extend_from_slice(&chunk[..n]);
        }
        return stall(&shared, KillPoint::Upload).await;
    }
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let req = Req {
        method,
        path,
        headers,
        body,
    };
    let call =
        req.method == "POST" && (req.path == "/v1/chat/completions" || req.path == "/v1/messages");
    if call {
        shared.state.lock().unwrap().calls_received += 1;
    }
    let from_killed = req.headers.values().any(|v| v.contains(CHILD_KEY))
        && shared.state.lock().unwrap().killed.is_some();
    if from_killed {
        // The process is being killed: what it sends now is never answered.
        std::future::pending::<()>().await;
    }
    if call && !shared.call_delay.is_zero() {
        {
            let mut state = shared.state.lock().unwrap();
            state.calls_in_flight += 1;
            state.max_calls_in_flight = state.max_calls_in_flight.max(state.calls_in_flight);
        }
        tokio::time::sleep(shared.call_delay).await;
        shared.state.lock().unwrap().calls_in_flight -= 1;
    }
    let (status, content_type, answer) = match handle(&shared, &req) {
        Handled::Answer(status, content_type, body) => (status, content_type, body),
        Handled::Stall(point) => return stall(&shared, point).await,
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&answer).await?;
    stream.flush().await
}

/// Tells the test where the client was stopped, and never answers.
async fn stall(shared: &Shared, point: KillPoint) -> std::io::Result<()> {
    shared.state.lock().unwrap().killed = Some(point);
    let _ = shared.notify.send(point);
    std::future::pending::<()>().await;
    Ok(())
}

enum Handled {
    Answer(u16, &'static str, Vec<u8>),
    Stall(KillPoint),
}

fn json_answer(status: u16, value: Value) -> Handled {
    Handled::Answer(status, "application/json", value.to_string().into_bytes())
}

fn handle(shared: &Shared, req: &Req) -> Handled {
    let mut state = shared.state.lock().unwrap();
    state.log.push(format!("{} {}", req.method, req.path));
    let armed =
        |point: KillPoint, state: &State| shared.kill == Some(point) && state.killed.is_none();
    let path = req.path.as_str();
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    };
    match (req.method.as_str(), route) {
        ("POST", "/v1/chat/completions") | ("POST", "/v1/messages") => {
            let anthropic = route == "/v1/messages";
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let text = body.to_string();
            let n = number_in(&text).unwrap_or(0);
            let total: usize = state.calls.values().sum();
            if armed(KillPoint::Rerun, &state) && total >= 1 {
                return Handled::Stall(KillPoint::Rerun);
            }
            *state.calls.entry(n).or_default() += 1;
            json_answer(200, answer(anthropic, &body, !text.contains("~alwaysbad")))
        }
        ("POST", "/v1/files") => {
            let boundary = req
                .headers
                .get("content-type")
                .and_then(|c| c.split("boundary=").nth(1))
                .unwrap_or("")
                .to_owned();
            let text = String::from_utf8_lossy(&req.body).into_owned();
            let Some(name_at) = text.find("filename=\"") else {
                return json_answer(400, json!({"error": {"message": "no file part"}}));
            };
            let name: String = text[name_at + 10..]
                .chars()
                .take_while(|&c| c != '"')
                .collect();
            let start = name_at + text[name_at..].find("\r\n\r\n").unwrap() + 4;
            let end = text.rfind(&format!("\r\n--{boundary}--")).unwrap();
            let content = req.body[start..end].to_vec();
            state.next_id += 1;
            let id = format!("file-{}", state.next_id);
            let bytes = content.len();
            state.files.insert(id.clone(), (name.clone(), content));
            state.uploads += 1;
            json_answer(
                200,
                json!({"id": id, "object": "file", "bytes": bytes, "filename": name, "purpose": "batch"}),
            )
        }
        ("GET", "/v1/files") => {
            let data: Vec<Value> = state
                .files
                .iter()
                .map(|(id, (name, content))| {
                    json!({"id": id, "filename": name, "bytes": content.len(), "purpose": "batch"})
                })
                .collect();
            json_answer(200, json!({"object": "list", "data": data}))
        }
        ("POST", "/v1/batches") => {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let file = body["input_file_id"].as_str().unwrap_or("");
            let Some((_, content)) = state.files.get(file) else {
                return json_answer(404, json!({"error": {"message": "no such file"}}));
            };
            let requests = content
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let v: Value = serde_json::from_slice(l).unwrap();
                    (
                        v["custom_id"].as_str().unwrap().to_owned(),
                        v["body"].clone(),
                    )
                })
                .collect();
            state.next_id += 1;
            let id = format!("batch_{}", state.next_id);
            let (created_at, created_unix) = now();
            state.batches.push(BatchRec {
                id: id.clone(),
                anthropic: false,
                requests,
                polls: 0,
                metadata: body["metadata"].clone(),
                created_at,
                created_unix,
            });
            if armed(KillPoint::Create, &state) {
                return Handled::Stall(KillPoint::Create);
            }
            if std::mem::take(&mut state.lose_next_create) {
                return json_answer(500, json!({"error": {"message": "lost"}}));
            }
            json_answer(
                200,
                json!({"id": id, "object": "batch", "status": "validating"}),
            )
        }
        ("POST", "/v1/messages/batches") => {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let requests = body["requests"]
                .as_array()
                .map(|rs| {
                    rs.iter()
                        .map(|r| {
                            (
                                r["custom_id"].as_str().unwrap().to_owned(),
                                r["params"].clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            state.next_id += 1;
            let id = format!("msgbatch_{}", state.next_id);
            let (created_at, created_unix) = now();
            state.batches.push(BatchRec {
                id: id.clone(),
                anthropic: true,
                requests,
                polls: 0,
                metadata: Value::Null,
                created_at,
                created_unix,
            });
            if armed(KillPoint::Create, &state) {
                return Handled::Stall(KillPoint::Create);
            }
            if std::mem::take(&mut state.lose_next_create) {
                return json_answer(
                    500,
                    json!({"error": {"type": "api_error", "message": "lost"}}),
                );
            }
            json_answer(
                200,
                batch_object(&state.batches[state.batches.len() - 1], shared, None),
            )
        }
        ("GET", "/v1/batches") | ("GET", "/v1/messages/batches") => {
            let anthropic = route == "/v1/messages/batches";
            state.list_pages.push(path.to_owned());
            // Newest first, from after the cursor, at most `limit` (and
            // the server's page size).
            let newest_first: Vec<&BatchRec> = state
                .batches
                .iter()
                .rev()
                .filter(|b| b.anthropic == anthropic)
                .collect();
            let cursor = param(if anthropic { "after_id" } else { "after" });
            let start = match cursor {
                Some(c) => match newest_first.iter().position(|b| b.id == c) {
                    Some(at) => at + 1,
                    None => return json_answer(400, json!({"error": {"message": "bad cursor"}})),
                },
                None => 0,
            };
            let mut take: usize = param("limit").and_then(|l| l.parse().ok()).unwrap_or(20);
            if state.page_size > 0 {
                take = take.min(state.page_size);
            }
            let page: Vec<Value> = newest_first
                .iter()
                .skip(start)
                .take(take)
                .map(|b| batch_object(b, shared, state.output_file_id.clone()))
                .collect();
            let has_more = start + page.len() < newest_first.len();
            json_answer(
                200,
                json!({"object": "list", "data": page, "has_more": has_more,
                       "first_id": page.first().map(|b| b["id"].clone()),
                       "last_id": page.last().map(|b| b["id"].clone())}),
            )
        }
        ("GET", r) if r.starts_with("/v1/batches/") || r.starts_with("/v1/messages/batches/") => {
            if let Some(id) = r
                .strip_prefix("/v1/messages/batches/")
                .and_then(|r| r.strip_suffix("/results"))
            {
                if armed(KillPoint::Download, &state) {
                    return Handled::Stall(KillPoint::Download);
                }
                let Some(b) = state.batches.iter().find(|b| b.id == id) else {
                    return json_answer(404, json!({"error": "no such batch"}));
                };
                return Handled::Answer(200, "application/binary", anthropic_results(b));
            }
            let id = r.rsplit('/').next().unwrap_or("").to_owned();
            let polls_total: u32 = state.batches.iter().map(|b| b.polls).sum();
            if armed(KillPoint::Poll, &state) && polls_total >= 1 {
                return Handled::Stall(KillPoint::Poll);
            }
            let Some(b) = state.batches.iter_mut().find(|b| b.id == id) else {
                return json_answer(404, json!({"error": {"message": "no such batch"}}));
            };
            b.polls += 1;
            let b = b.clone();
            let object = batch_object(&b, shared, state.output_file_id.clone());
            if !b.anthropic && object["status"] == "completed" {
                // The output and error files exist from now on.
                let (output, errors) = openai_results(&b);
                state
                    .files
                    .insert(format!("{}-out", b.id), ("out".into(), output));
                state
                    .files
                    .insert(format!("{}-err", b.id), ("err".into(), errors));
            }
            json_answer(200, object)
        }
        ("GET", r) if r.starts_with("/v1/files/") && r.ends_with("/content") => {
            if armed(KillPoint::Download, &state) {
                return Handled::Stall(KillPoint::Download);
            }
            let id = &r["/v1/files/".len()..r.len() - "/content".len()];
            match state.files.get(id) {
                Some((_, content)) => Handled::Answer(200, "application/binary", content.clone()),
                None => json_answer(404, json!({"error": {"message": "no such file"}})),
            }
        }
        _ => json_answer(
            404,
            json!({"error": {"message": format!("no route {route}")}}),
        ),
    }
}

fn fails_whole(b: &BatchRec) -> bool {
    b.requests
        .iter()
        .any(|(_, body)| body.to_string().contains("~batcherror"))
}

/// The batch as its provider describes it after `b.polls` looks.
fn batch_object(b: &BatchRec, shared: &Shared, output_file_id: Option<String>) -> Value {
    let end = shared.polls_to_end;
    if b.anthropic {
        let ended = b.polls > end;
        let n = b.requests.len();
        json!({
            "id": b.id, "type": "message_batch",
            "processing_status": if ended { "ended" } else { "in_progress" },
            "request_counts": {"processing": if ended { 0 } else { n }, "succeeded": if ended { n } else { 0 },
                               "errored": 0, "canceled": 0, "expired": 0},
            "created_at": b.created_at,
            "results_url": if ended { Value::from(format!("http://{}/v1/messages/batches/{}/results", shared.addr, b.id)) } else { Value::Null },
        })
    } else {
        let status = if fails_whole(b) && b.polls >= 1 {
            "failed"
        } else if b.polls == 0 {
            "validating"
        } else if b.polls < end {
            "in_progress"
        } else if b.polls == end {
            "finalizing"
        } else {
            "completed"
        };
        let done = status == "completed";
        let output = output_file_id.unwrap_or_else(|| format!("{}-out", b.id));
        json!({
            "id": b.id, "object": "batch", "status": status,
            "metadata": b.metadata, "created_at": b.created_unix,
            "output_file_id": if done { Value::from(output) } else { Value::Null },
            "error_file_id": if done { Value::from(format!("{}-err", b.id)) } else { Value::Null },
            "errors": if status == "failed" { json!({"data": [{"code": "invalid_request", "message": "a line is invalid"}]}) } else { Value::Null },
        })
    }
}

fn openai_results(b: &BatchRec) -> (Vec<u8>, Vec<u8>) {
    let mut output = Vec::new();
    let mut errors = Vec::new();
    for (custom_id, body) in &b.requests {
        let text = body.to_string();
        let line = if text.contains("~missing") {
            continue;
        } else if text.contains("~expire") {
            let line = json!({"id": "r", "custom_id": custom_id, "response": null,
                "error": {"code": "batch_expired", "message": "not done in time"}});
            errors.extend_from_slice(format!("{line}\n").as_bytes());
            continue;
        } else if text.contains("~fail") {
            json!({"id": "r", "custom_id": custom_id,
                "response": {"status_code": 500, "request_id": "q", "body": {"error": {"message": "server error"}}},
                "error": null})
        } else {
            let fits = !text.contains("~bad") && !text.contains("~alwaysbad");
            json!({"id": "r", "custom_id": custom_id,
                "response": {"status_code": 200, "request_id": "q", "body": answer(false, body, fits)},
                "error": null})
        };
        output.extend_from_slice(format!("{line}\n").as_bytes());
    }
    (output, errors)
}

fn anthropic_results(b: &BatchRec) -> Vec<u8> {
    let mut out = Vec::new();
    // Results come in any order: newest first here.
    for (custom_id, body) in b.requests.iter().rev() {
        let text = body.to_string();
        let result = if text.contains("~missing") {
            continue;
        } else if text.contains("~expire") {
            json!({"type": "expired"})
        } else if text.contains("~fail") || fails_whole(b) {
            json!({"type": "errored", "error": {"type": "api_error", "message": "overloaded"}})
        } else {
            let fits = !text.contains("~bad") && !text.contains("~alwaysbad");
            json!({"type": "succeeded", "message": answer(true, body, fits)})
        };
        let line = json!({"custom_id": custom_id, "result": result});
        out.extend_from_slice(format!("{line}\n").as_bytes());
    }
    out
}

/// Now, as Anthropic writes it and as Unix seconds (OpenAI).
fn now() -> (String, u64) {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (
        format!("{}.123456Z", time::rfc3339_seconds(seconds)),
        seconds,
    )
}
