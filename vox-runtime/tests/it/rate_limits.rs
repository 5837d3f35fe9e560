//! Client-side rate limiting against a loopback server that enforces a
//! limit of requests per window, as the providers do: it announces what is
//! left (`x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`)
//! and answers 429 with `retry-after-ms` beyond it. A loop of concurrent
//! calls waits together for the window instead of drowning in 429s.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{Client, Config, Error, Provider};

#[derive(Debug, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct Count {
    value: i64,
}

static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "Count",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    false,
);

static READ_COUNT: AiFunction =
    AiFunction::new("read_count", "Read the number.", &COUNT_SCHEMA).with_model("gpt-test");

const LIMIT: usize = 5;
const WINDOW: Duration = Duration::from_millis(250);

struct Limiter {
    window_start: Instant,
    used: usize,
}

/// Serves chat completions, at most `LIMIT` per `WINDOW`; counts answers
/// by status.
async fn limited_server() -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let ok = Arc::new(AtomicUsize::new(0));
    let limited = Arc::new(AtomicUsize::new(0));
    let limiter = Arc::new(Mutex::new(Limiter {
        window_start: Instant::now(),
        used: 0,
    }));
    let (ok2, limited2) = (ok.clone(), limited.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (ok, limited, limiter) = (ok2.clone(), limited2.clone(), limiter.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then the announced body.
                let body_start = loop {
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                };
                let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < body_start + length {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let (allowed, left, reset) = {
                    let mut l = limiter.lock().unwrap();
                    if l.window_start.elapsed() >= WINDOW {
                        l.window_start = Instant::now();
                        l.used = 0;
                    }
                    let reset = WINDOW.saturating_sub(l.window_start.elapsed());
                    let allowed = l.used < LIMIT;
                    if allowed {
                        l.used += 1;
                    }
                    (allowed, LIMIT - l.used, reset)
                };
                let reset_ms = reset.as_millis().max(1);
                let (status, body) = if allowed {
                    ok.fetch_add(1, Ordering::SeqCst);
                    (
                        "200 OK",
                        serde_json::json!({"choices": [{"message": {"role": "assistant",
                            "content": "{\"value\": 7}"}, "finish_reason": "stop"}]})
                        .to_string(),
                    )
                } else {
                    limited.fetch_add(1, Ordering::SeqCst);
                    (
                        "429 Too Many Requests",
                        r#"{"error":{"message":"rate limit reached","type":"requests"}}"#
                            .to_owned(),
                    )
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     x-ratelimit-limit-requests: {LIMIT}\r\nx-ratelimit-remaining-requests: {left}\r\n\
                     x-ratelimit-reset-requests: {reset_ms}ms\r\nretry-after-ms: {reset_ms}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, ok, limited)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_of_calls_waits_for_the_window_instead_of_drowning_in_429s() {
    let (url, ok, limited) = limited_server().await;
    let client = Client::new(
        Config::builder(Provider::OpenAi)
            .base_url(url)
            .api_key("sk-rate-test")
            .max_concurrent_requests(8)
            .max_transport_retries(2)
            .backoff(Duration::from_millis(20), Duration::from_millis(40))
            .request_timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    )
    .unwrap();
    let calls = 40;
    let mut tasks = Vec::new();
    for i in 0..calls {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let args = Args::new().arg("text", &format!("call {i}")).unwrap();
            client
                .call_ai::<Count, _>(&READ_COUNT, args, async {
                    Err::<Count, Error>(Error::Config("no fixture".into()))
                })
                .await
        }));
    }
    let mut failed = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(count) => assert_eq!(count.value, 7),
            Err(_) => failed += 1,
        }
    }
    let (ok, limited) = (ok.load(Ordering::SeqCst), limited.load(Ordering::SeqCst));
    eprintln!("{calls} calls: {ok} answered, {limited} limited (429), {failed} failed");
    assert_eq!(
        failed, 0,
        "every call got through ({ok} answered, {limited} limited)"
    );
    assert_eq!(ok, calls);
    // Only requests already on their way when a window ran out meet a 429.
    assert!(
        limited <= calls / 2,
        "{limited} answers were 429s for {calls} calls"
    );
}
