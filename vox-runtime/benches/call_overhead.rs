//! Per-call overhead of `call_ai` over a raw reqwest POST.
//!
//! A loopback server answers instantly (keep-alive). We time 1,000
//! sequential `call_ai` calls and 1,000 raw POSTs of the identical request
//! body to the same server, interleaved call by call to cancel drift, and print
//! the medians and their ratio (goal: ≤ 1.05), on a current-thread and on a
//! multi-thread runtime. A third series, raw POSTs that also parse the reply
//! and deserialize its content (what any hand-written typed client does),
//! shows how much of the difference is reading the answer at all.
//!
//! `VOX_BENCH_PROVIDER` (`compatible` by default, `anthropic`, `gemini`,
//! `ollama`) picks the API shape both sides speak: the request call_ai
//! renders, the server's reply, and the key header.
//!
//! `VOX_BENCH_ONLY=call_ai` (or `raw`) runs only that series, for counting
//! instructions per call on a loaded machine, where times are noise:
//! `valgrind --tool=callgrind` at 1 and at 2 trials, and the difference of
//! the totals divided by 1,000 is one call of that series, the in-process
//! server's share included (docs/runtime.md, "Rate limits").

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde::Deserialize;
use support::{FakeServer, Invoice, Reply, EXTRACT_INVOICE};
use vox_runtime::__private::Args;
use vox_runtime::{Client, Config, Provider};

/// The parts of a chat completion a hand-written client reads.
#[derive(Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct RawReply {
    choices: Vec<RawChoice>,
}

#[derive(Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct RawChoice {
    message: RawMessage,
}

#[derive(Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct RawMessage {
    content: String,
}

const CALLS: usize = 1_000;
/// Trials by default; `VOX_BENCH_TRIALS` overrides it (more trials, a
/// steadier median when comparing two versions).
const TRIALS: usize = 5;
const KEY: &str = "sk-bench";

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    samples[((samples.len() - 1) as f64 * p) as usize]
}

fn main() {
    let trials = std::env::var("VOX_BENCH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TRIALS)
        .max(1);
    // `VOX_BENCH_RUNTIME=current` (or `multi`) runs one runtime only.
    let only = std::env::var("VOX_BENCH_RUNTIME").unwrap_or_default();
    if only != "multi" {
        println!("== current-thread runtime (what vox_runtime::block_on uses)");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        runtime.block_on(run(trials));
    }
    if only != "current" {
        println!("== multi-thread runtime, 2 workers");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        runtime.block_on(run(trials));
    }
}

/// The provider under test and what differs with it.
#[derive(Clone, Copy)]
struct Shape {
    provider: Provider,
}

impl Shape {
    fn from_env() -> Shape {
        let provider = match std::env::var("VOX_BENCH_PROVIDER").as_deref() {
            Ok("anthropic") => Provider::Anthropic,
            Ok("gemini") => Provider::Gemini,
            Ok("ollama") => Provider::Ollama,
            _ => Provider::Compatible,
        };
        Shape { provider }
    }

    /// A successful reply holding `ACME`.
    fn reply(self) -> Reply {
        let acme = r#"{"vendor":"ACME","total":7.0}"#;
        match self.provider {
            Provider::Anthropic => Reply::json(
                200,
                &serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "extract_invoice",
                        "input": {"vendor": "ACME", "total": 7.0}}],
                    "stop_reason": "tool_use", "usage": {"input_tokens": 21, "output_tokens": 7}}),
            ),
            Provider::Gemini => Reply::json(
                200,
                &serde_json::json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"text": acme}]}, "finishReason": "STOP"}],
                    "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 7}}),
            ),
            Provider::Ollama => Reply::json(
                200,
                &serde_json::json!({"model": "m", "message": {"role": "assistant", "content": acme},
                    "done": true, "done_reason": "stop", "prompt_eval_count": 21, "eval_count": 7}),
            ),
            _ => Reply::chat(acme),
        }
    }

    fn config(self, server: &FakeServer) -> Config {
        Config::builder(self.provider)
            .base_url(server.base_url())
            .api_key(KEY)
            .build()
            .expect("config")
    }

    /// The URL call_ai posts to.
    fn url(self, server: &FakeServer) -> String {
        let base = server.base_url();
        match self.provider {
            Provider::Anthropic => format!("{base}/messages"),
            Provider::Gemini => format!("{base}/models/gpt-4o-mini:generateContent"),
            Provider::Ollama => format!("{base}/api/chat"),
            _ => server.chat_url(),
        }
    }

    /// The headers besides `content-type` a hand-written client sends.
    fn headers(self) -> Vec<(&'static str, String)> {
        match self.provider {
            Provider::Anthropic => vec![
                ("x-api-key", KEY.to_owned()),
                ("anthropic-version", "2023-06-01".to_owned()),
            ],
            Provider::Gemini => vec![("x-goog-api-key", KEY.to_owned())],
            _ => vec![("authorization", format!("Bearer {KEY}"))],
        }
    }

    /// What a hand-written client does with the reply: find the value and
    /// deserialize it.
    fn parse(self, bytes: &[u8]) -> Invoice {
        match self.provider {
            Provider::Compatible => {
                let reply: RawReply = serde_json::from_slice(bytes).expect("reply");
                serde_json::from_str(&reply.choices[0].message.content).expect("content")
            }
            _ => {
                let reply: serde_json::Value = serde_json::from_slice(bytes).expect("reply");
                let value = match self.provider {
                    Provider::Anthropic => reply["content"][0]["input"].clone(),
                    Provider::Gemini => serde_json::from_str(
                        reply["candidates"][0]["content"]["parts"][0]["text"]
                            .as_str()
                            .expect("text"),
                    )
                    .expect("content"),
                    _ => {
                        serde_json::from_str(reply["message"]["content"].as_str().expect("content"))
                            .expect("content")
                    }
                };
                serde_json::from_value(value).expect("invoice")
            }
        }
    }
}

async fn run(trials: usize) {
    let shape = Shape::from_env();
    println!("provider: {}", shape.provider);
    let server = FakeServer::start_with(vec![], shape.reply(), false).await;
    let config = shape.config(&server);
    let client = Client::new(config).expect("client");
    let args = || {
        Args::new()
            .arg("ocr_text", "ACME Corp, 2 widgets at 3.50")
            .expect("args")
    };

    // Capture the exact body call_ai sends, from a recording server.
    let body = {
        let recorder = FakeServer::start(vec![], shape.reply()).await;
        let recording = Client::new(shape.config(&recorder)).expect("client");
        let _: Invoice = recording
            .call_ai(&EXTRACT_INVOICE, args(), async { unreachable!() })
            .await
            .expect("recorded call");
        recorder.requests()[0].body.clone()
    };
    let raw = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("reqwest client");
    let url = shape.url(&server);
    let headers = shape.headers();

    let ai_call = || async {
        let started = Instant::now();
        let _: Invoice = client
            .call_ai(&EXTRACT_INVOICE, args(), async { unreachable!() })
            .await
            .expect("call_ai");
        started.elapsed()
    };
    // The raw POST is timed from building the request (URL, headers, body),
    // as a hand-written client would do per call; call_ai's timing likewise
    // covers building its request.
    // With `typed`, it also does what any hand-written client must: parse
    // the reply and deserialize the message content into the return type.
    let raw_post = |raw: &reqwest::Client, typed: bool| {
        let raw = raw.clone();
        let url = url.clone();
        let body = body.clone();
        let headers = headers.clone();
        async move {
            let started = Instant::now();
            let mut request = raw.post(&url).header("content-type", "application/json");
            for (name, value) in headers {
                request = request.header(name, value);
            }
            let request = request.body(body);
            let response = request.send().await.expect("raw post");
            let bytes = response.bytes().await.expect("raw body");
            assert!(!bytes.is_empty());
            if typed {
                let _: Invoice = shape.parse(&bytes);
            }
            started.elapsed()
        }
    };

    let only = std::env::var("VOX_BENCH_ONLY").unwrap_or_default();
    let (run_ai, run_raw) = match only.as_str() {
        "call_ai" => (true, false),
        "raw" => (false, true),
        _ => (true, true),
    };
    for _ in 0..200 {
        if run_ai {
            ai_call().await;
        }
        if run_raw {
            raw_post(&raw, false).await;
            raw_post(&raw, true).await;
        }
    }
    println!("request body: {} bytes", body.len());
    // The machine's noise (a shared VM) moves single runs by ±10%, so the
    // measurement is repeated: TRIALS runs of CALLS sequential calls each,
    // and the verdict is on the median of the runs' ratios.
    let mut ratios = Vec::with_capacity(trials);
    let mut typed_ratios = Vec::with_capacity(trials);
    for trial in 1..=trials {
        let mut ai_samples = Vec::with_capacity(CALLS);
        let mut raw_samples = Vec::with_capacity(CALLS);
        let mut typed_samples = Vec::with_capacity(CALLS);
        // One call of each kind in turn, the order rotating, so that drift
        // and whatever the previous call left in the caches fall on all
        // series alike.
        for i in 0..CALLS {
            for kind in 0..3 {
                match (i + kind) % 3 {
                    0 if run_ai => ai_samples.push(ai_call().await),
                    1 if run_raw => raw_samples.push(raw_post(&raw, false).await),
                    2 if run_raw => typed_samples.push(raw_post(&raw, true).await),
                    _ => {}
                }
            }
        }
        if !(run_ai && run_raw) {
            println!("trial {trial}: {only} only");
            continue;
        }
        let ai_median = median(&mut ai_samples);
        let raw_median = median(&mut raw_samples);
        let typed_median = median(&mut typed_samples);
        let ratio = ai_median.as_secs_f64() / raw_median.as_secs_f64();
        let typed_ratio = ai_median.as_secs_f64() / typed_median.as_secs_f64();
        println!(
            "trial {trial}: call_ai median {:>6.1} us (p90 {:>6.1}) | raw POST {:>6.1} us (p90 {:>6.1}) | raw POST + parse {:>6.1} us | ratio {ratio:.3} (vs raw + parse {typed_ratio:.3})",
            ai_median.as_secs_f64() * 1e6,
            percentile(&ai_samples, 0.9).as_secs_f64() * 1e6,
            raw_median.as_secs_f64() * 1e6,
            percentile(&raw_samples, 0.9).as_secs_f64() * 1e6,
            typed_median.as_secs_f64() * 1e6,
        );
        typed_ratios.push(typed_ratio);
        ratios.push(ratio);
    }
    if ratios.is_empty() {
        return;
    }
    ratios.sort_by(f64::total_cmp);
    typed_ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    println!(
        "median ratio over {trials} trials vs raw POST + parse of the reply: {:.3}",
        typed_ratios[typed_ratios.len() / 2]
    );
    println!(
        "median ratio over {trials} trials (call_ai / raw): {ratio:.3} (goal <= 1.05) {}",
        if ratio <= 1.05 { "OK" } else { "OVER GOAL" }
    );
    println!("server connections accepted: {}", server.connections());
}
