//! A scripted OpenAI-compatible server on 127.0.0.1, for tests and benches.
//!
//! Hand-rolled HTTP/1.1 with keep-alive over tokio: it records every
//! request (path, headers, body), answers with the scripted replies in
//! order and then with a fallback reply, and counts accepted connections
//! and the peak number of requests in flight.

#![allow(dead_code)] // each test binary uses a different part of it

pub mod keys;
pub mod trace;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A record type as vox-codegen would emit it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
pub struct Invoice {
    pub vendor: String,
    pub total: f64,
}

/// The reply content most tests answer with, and the value it is.
pub const ACME: &str = r#"{"vendor":"ACME","total":7.0}"#;

pub fn acme() -> Invoice {
    Invoice {
        vendor: "ACME".into(),
        total: 7.0,
    }
}

/// `Invoice`'s strict schema, as a generated constant.
pub static INVOICE_SCHEMA: vox_runtime::__private::OutputSchema =
    vox_runtime::__private::OutputSchema::new(
        "Invoice",
        r#"{"type":"object","properties":{"vendor":{"type":"string"},"total":{"type":"number"}},"required":["vendor","total"],"additionalProperties":false}"#,
        false,
    );

/// `@ai(structured_output = Invoice, model = "gpt-4o-mini", temperature = 0.2,
/// max_iterations = 3) fn extract_invoice(ocr_text: str) to Invoice`.
pub static EXTRACT_INVOICE: vox_runtime::__private::AiFunction =
    vox_runtime::__private::AiFunction::new(
        "extract_invoice",
        "Extract the invoice fields from OCR text.",
        &INVOICE_SCHEMA,
    )
    .with_model("gpt-4o-mini")
    .with_temperature(0.2)
    .with_max_iterations(3);

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Duration,
    /// Put the request's `Authorization` header into the body.
    pub echo_authorization: bool,
    /// Put this request header, as `name: value`, into the body.
    pub echo_header: Option<String>,
    /// Answer with this text, `{key}` replaced by the API key the request
    /// carried (`Authorization: Bearer`, `x-api-key` or `x-goog-api-key`)
    /// `{key%}` by it percent-encoded and `{key\/}` with `/` escaped as
    /// some JSON encoders do.
    pub echo_key: Option<String>,
    /// Send no `Content-Length`; end the body by closing the connection.
    pub close_delimited: bool,
    /// Send the head and half the body, then wait this long before the rest.
    pub stall_body: Duration,
}

impl Reply {
    pub fn raw(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
            echo_authorization: false,
            echo_header: None,
            echo_key: None,
            close_delimited: false,
            stall_body: Duration::ZERO,
        }
    }

    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply::raw(status, body.to_string())
    }

    /// A chat completion whose first choice is `choice`.
    pub fn choice(choice: serde_json::Value) -> Reply {
        Reply::json(
            200,
            &serde_json::json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "choices": [choice],
                "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}
            }),
        )
    }

    /// A normal chat completion whose message content is `content`.
    pub fn chat(content: &str) -> Reply {
        Reply::choice(serde_json::json!({
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }))
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    pub fn echo_authorization(mut self) -> Reply {
        self.echo_authorization = true;
        self
    }

    pub fn echo_header(mut self, name: &str) -> Reply {
        self.echo_header = Some(name.to_owned());
        self
    }

    pub fn echo_key(mut self, template: &str) -> Reply {
        self.echo_key = Some(template.to_owned());
        self
    }

    pub fn stall_body(mut self, delay: Duration) -> Reply {
        self.stall_body = delay;
        self
    }

    pub fn close_delimited(mut self) -> Reply {
        self.close_delimited = true;
        self
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    script: Mutex<VecDeque<Reply>>,
    fallback: Reply,
    requests: Mutex<Vec<Recorded>>,
    record_requests: bool,
    request_count: AtomicUsize,
    connections: AtomicUsize,
    in_flight: AtomicUsize,
    peak_in_flight: AtomicUsize,
}

/// The running server; it stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<State>,
    accept_task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

impl FakeServer {
    /// Serves `script` in order, then `fallback` forever.
    pub async fn start(script: Vec<Reply>, fallback: Reply) -> FakeServer {
        FakeServer::start_with(script, fallback, true).await
    }

    /// Like `start`; `record_requests = false` keeps only the count (benches).
    pub async fn start_with(
        script: Vec<Reply>,
        fallback: Reply,
        record_requests: bool,
    ) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            fallback,
            requests: Mutex::new(Vec::new()),
            record_requests,
            request_count: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            peak_in_flight: AtomicUsize::new(0),
        });
        let accept_state = state.clone();
        let accept_task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accept_state.connections.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(stream, accept_state.clone()));
            }
        });
        FakeServer {
            addr,
            state,
            accept_task,
        }
    }

    /// Base URL for `Config::base_url`: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn chat_url(&self) -> String {
        format!("{}/chat/completions", self.base_url())
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.request_count.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    pub fn peak_in_flight(&self) -> usize {
        self.state.peak_in_flight.load(Ordering::SeqCst)
    }
}

async fn serve_connection(stream: TcpStream, state: Arc<State>) {
    let (read_half, mut write_half) = stream.into_split();
    let mut reader = BufReader::new(read_half);
    loop {
        let Some(request) = read_request(&mut reader).await else {
            return;
        };
        state.request_count.fetch_add(1, Ordering::SeqCst);
        let authorization = request.header("authorization").unwrap_or("").to_owned();
        let reply = state
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| state.fallback.clone());
        let echoed = reply
            .echo_header
            .as_ref()
            .map(|name| format!("{name}: {}", request.header(name).unwrap_or_default()));
        let key = request
            .header("x-api-key")
            .or_else(|| request.header("x-goog-api-key"))
            .or_else(|| {
                request
                    .header("authorization")
                    .and_then(|v| v.strip_prefix("Bearer "))
            })
            .unwrap_or_default()
            .to_owned();
        if state.record_requests {
            state.requests.lock().unwrap().push(request);
        }

        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        let mut body = reply.body.clone();
        if reply.echo_authorization {
            body = format!(r#"{{"error":{{"message":"invalid credentials: {authorization}"}}}}"#)
                .into_bytes();
        }
        if let Some(echoed) = echoed {
            body = format!(r#"{{"error":{{"message":"invalid credentials: {echoed}"}}}}"#)
                .into_bytes();
        }
        if let Some(template) = &reply.echo_key {
            body = template
                .replace("{key}", &key)
                .replace("{key%}", &percent_encode(&key))
                .replace("{key\\/}", &key.replace('/', "\\/"))
                .into_bytes();
        }
        let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
        if reply.close_delimited {
            head.push_str("Connection: close\r\n");
        } else {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("Content-Type: application/json\r\n");
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut response = head.into_bytes();
        response.extend_from_slice(&body);
        let written = if reply.stall_body.is_zero() {
            write_half.write_all(&response).await
        } else {
            let half = response.len() - body.len() / 2;
            let first = write_half.write_all(&response[..half]).await;
            let _ = write_half.flush().await;
            tokio::time::sleep(reply.stall_body).await;
            first.and(write_half.write_all(&response[half..]).await)
        };
        state.in_flight.fetch_sub(1, Ordering::SeqCst);
        if written.is_err() || reply.close_delimited {
            let _ = write_half.shutdown().await;
            return;
        }
    }
}

/// `text` with every byte but RFC 3986's unreserved ones as `%XX`.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Reads one request; `None` at end of stream or on anything malformed.
async fn read_request(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut headers = Vec::new();
    let mut content_length = 0usize;
    for _ in 0..100 {
        line.clear();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            let mut body = vec![0; content_length];
            reader.read_exact(&mut body).await.ok()?;
            return Some(Recorded {
                path,
                headers,
                body,
            });
        }
        let (name, value) = header.split_once(':')?;
        let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
        if name.eq_ignore_ascii_case("content-length") {
            content_length = value.parse().ok()?;
        }
        headers.push((name, value));
    }
    None
}

/// What a test needs of a scripted server, on a socket or not.
pub trait Server {
    /// Base URL for `Config::base_url`.
    fn base_url(&self) -> String;
}

impl Server for FakeServer {
    fn base_url(&self) -> String {
        FakeServer::base_url(self)
    }
}

impl Server for MemoryServer {
    fn base_url(&self) -> String {
        MemoryServer::base_url(self)
    }
}

/// Scripted servers without sockets: one
/// [`vox_runtime::transport::MemoryTransport`] that sends each request to
/// the [`MemoryServer`] at its URL's port (each replays a [`Reply`] script,
/// then its fallback reply); a URL with no server there fails to connect.
/// Clients must come from [`MemoryHub::client`].
#[derive(Clone)]
pub struct MemoryHub {
    transport: vox_runtime::transport::MemoryTransport,
    servers: Arc<Mutex<Vec<Option<Arc<ServerState>>>>>,
}

/// One scripted server of a hub.
pub struct MemoryServer {
    hub: MemoryHub,
    port: u16,
    state: Arc<ServerState>,
}

struct ServerState {
    script: Mutex<VecDeque<Reply>>,
    fallback: Reply,
    requests: Mutex<Vec<Recorded>>,
}

/// The first port of a hub's servers (TEST-NET-1 addresses, RFC 5737:
/// nothing is ever reached there).
const FIRST_PORT: u16 = 9000;

impl Default for MemoryHub {
    fn default() -> Self {
        MemoryHub::new()
    }
}

impl MemoryHub {
    pub fn new() -> MemoryHub {
        use vox_runtime::transport::{MemoryTransport, ScriptedReply, TransportError};
        use vox_runtime::TransportErrorKind;
        let servers: Arc<Mutex<Vec<Option<Arc<ServerState>>>>> = Arc::default();
        let routes = servers.clone();
        let transport = MemoryTransport::new().otherwise(move |request| {
            let port = request.url.port().unwrap_or(0);
            let state = port
                .checked_sub(FIRST_PORT)
                .and_then(|i| routes.lock().unwrap().get(usize::from(i)).cloned())
                .flatten();
            match state {
                Some(state) => state.answer(request),
                None => ScriptedReply::fail(TransportError::new(
                    TransportErrorKind::Connect,
                    format!("connection refused: no server at {}", request.url),
                )),
            }
        });
        MemoryHub { transport, servers }
    }

    fn add(&self, state: Option<Arc<ServerState>>) -> u16 {
        let mut servers = self.servers.lock().unwrap();
        servers.push(state);
        FIRST_PORT + u16::try_from(servers.len() - 1).expect("fewer than 55,000 servers")
    }

    /// A server that serves `script` in order, then `fallback` forever.
    pub async fn start(&self, script: Vec<Reply>, fallback: Reply) -> MemoryServer {
        let state = Arc::new(ServerState {
            script: Mutex::new(VecDeque::from(script)),
            fallback,
            requests: Mutex::new(Vec::new()),
        });
        let port = self.add(Some(state.clone()));
        MemoryServer {
            hub: self.clone(),
            port,
            state,
        }
    }

    /// A base URL where no server listens: requests to it fail to connect.
    pub async fn closed_url(&self) -> String {
        format!("http://192.0.2.1:{}/v1", self.add(None))
    }

    /// A client for `config` whose requests this hub answers.
    pub fn client(
        &self,
        config: vox_runtime::Config,
    ) -> Result<vox_runtime::Client, vox_runtime::Error> {
        vox_runtime::Client::builder(config)
            .transport(self.transport.clone())
            .build()
    }
}

impl ServerState {
    fn answer(
        &self,
        request: &vox_runtime::transport::RecordedRequest,
    ) -> vox_runtime::transport::ScriptedReply {
        use vox_runtime::transport::ScriptedReply;
        let reply = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| self.fallback.clone());
        assert!(
            !reply.close_delimited && reply.stall_body.is_zero(),
            "connection-level replies need a FakeServer"
        );
        self.requests.lock().unwrap().push(Recorded {
            path: request.path().to_owned(),
            headers: request
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_owned(), value)
                })
                .collect(),
            body: request.body.to_vec(),
        });
        let header = |name: &str| request.header(name).unwrap_or_default().to_owned();
        let mut body = reply.body.clone();
        if reply.echo_authorization {
            body = format!(
                r#"{{"error":{{"message":"invalid credentials: {}"}}}}"#,
                header("authorization")
            )
            .into_bytes();
        }
        if let Some(name) = &reply.echo_header {
            body = format!(
                r#"{{"error":{{"message":"invalid credentials: {name}: {}"}}}}"#,
                header(name)
            )
            .into_bytes();
        }
        let mut scripted = ScriptedReply::new(reply.status, body)
            .header("content-type", "application/json")
            .delay(reply.delay);
        for (name, value) in &reply.headers {
            scripted = scripted.header(name, value);
        }
        scripted
    }
}

impl MemoryServer {
    /// A server of its own hub that serves `script` in order, then
    /// `fallback` forever.
    pub async fn start(script: Vec<Reply>, fallback: Reply) -> MemoryServer {
        MemoryHub::new().start(script, fallback).await
    }

    /// Its base URL (TEST-NET-1, RFC 5737: no request ever reaches it).
    pub fn base_url(&self) -> String {
        format!("http://192.0.2.1:{}/v1", self.port)
    }

    /// A client for `config` whose requests this server's hub answers.
    pub fn client(&self, config: vox_runtime::Config) -> vox_runtime::Client {
        self.hub.client(config).expect("client")
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }
}

/// xorshift64*: a reproducible stream of generated cases, so a failure
/// names the seed that found it.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
