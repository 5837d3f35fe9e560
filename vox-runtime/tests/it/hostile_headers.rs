//! Every number a server sends in a rate-limit or retry hint is read
//! without panicking and bounded (docs/runtime.md, "Rate limits"): a
//! normal answer with `x-ratelimit-reset-requests: 99999999999999999999s`
//! or a 429 with `retry-after-ms: 1e30` once panicked the runtime ("cannot
//! convert float seconds to Duration") from every `@ai` call.
//!
//! The first tests meet it as a program does, against a loopback server;
//! the property test then sends every rate and retry header each provider
//! documents with generated values of every shape and size (huge, negative,
//! fractional, exponents, infinities, NaN, durations, RFC 3339 times of
//! far years, offsets out of range) through the in-memory transport on
//! tokio's paused clock, and asserts each call answers — and waits no
//! longer than the configured cap.

use crate::support::{self, acme, FakeServer, Reply, ACME, EXTRACT_INVOICE};

use std::time::Duration;

use tokio::time::Instant;
use vox_runtime::__private::{AiFunction, Args};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Provider};

const KEY: &str = "sk-hostile-headers-5d6e7f";
static ONCE: AiFunction =
    AiFunction::new("once", "", &support::INVOICE_SCHEMA).with_model("gpt-hostile");

fn args() -> Args {
    Args::new().arg("text", "ACME, 7").unwrap()
}

async fn call(
    client: &Client,
    function: &AiFunction,
) -> Result<support::Invoice, vox_runtime::Error> {
    client
        .call_ai(function, args(), async {
            panic!("the fixture must not run under a network provider")
        })
        .await
}

fn loopback_client(base_url: &str) -> Client {
    Client::new(
        Config::builder(Provider::OpenAi)
            .base_url(base_url)
            .api_key(KEY)
            .max_transport_retries(1)
            .max_retry_after(Duration::from_millis(50))
            .build()
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_reset_of_twenty_digits_on_a_normal_answer_is_read_without_panicking() {
    let ok = Reply::chat(ACME)
        .header("x-ratelimit-remaining-requests", "5")
        .header("x-ratelimit-reset-requests", "99999999999999999999s");
    let server = FakeServer::start(vec![], ok).await;
    let client = loopback_client(&server.base_url());
    // The answer that carries the header, then calls that pass the gate it
    // set up.
    for _ in 0..3 {
        assert_eq!(call(&client, &EXTRACT_INVOICE).await.unwrap(), acme());
    }
}

#[tokio::test]
async fn a_429_asking_for_1e30_milliseconds_waits_the_cap_and_retries() {
    let server = FakeServer::start(
        vec![Reply::raw(429, "slow down").header("retry-after-ms", "1e30")],
        Reply::chat(ACME),
    )
    .await;
    let client = loopback_client(&server.base_url());
    let started = std::time::Instant::now();
    assert_eq!(call(&client, &EXTRACT_INVOICE).await.unwrap(), acme());
    assert_eq!(server.request_count(), 2);
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A client whose waits are capped at `cap`, on `transport`.
fn memory_client(provider: Provider, transport: &MemoryTransport, cap: Duration) -> Client {
    let config = Config::builder(provider)
        .base_url("http://192.0.2.1/v1")
        .api_key(KEY)
        .max_transport_retries(1)
        .max_retry_after(cap)
        .build()
        .unwrap();
    Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap()
}

fn ok_answer(provider: Provider) -> ScriptedReply {
    match provider {
        Provider::Anthropic => ScriptedReply::json(
            200,
            &serde_json::json!({"type": "message", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "once",
                 "input": {"vendor": "ACME", "total": 7.0}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}),
        ),
        Provider::Gemini => ScriptedReply::json(
            200,
            &serde_json::json!({"candidates": [{"content": {"parts": [{"text": ACME}]},
                "finishReason": "STOP"}]}),
        ),
        _ => ScriptedReply::json(
            200,
            &serde_json::json!({"choices": [{"index": 0,
                "message": {"role": "assistant", "content": ACME}, "finish_reason": "stop"}]}),
        ),
    }
}

/// Every rate and retry header the providers document (OpenAI's and
/// Anthropic's "Rate limits", RFC 9110's `Retry-After`, the
/// `retry-after-ms` the OpenAI SDKs read).
const HEADERS: &[&str] = &[
    "retry-after",
    "retry-after-ms",
    "x-ratelimit-limit-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-requests-limit",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-limit",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-limit",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-limit",
    "anthropic-ratelimit-output-tokens-remaining",
    "anthropic-ratelimit-output-tokens-reset",
];

/// Header values of every shape, from the shared generator.
struct Gen(support::Rng);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    fn digits(&mut self, max_len: u64) -> String {
        let len = 1 + self.below(max_len);
        (0..len)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }

    /// A number as a server might write one, of any size.
    fn number(&mut self) -> String {
        let sign = ["", "", "-", "+"][self.below(4) as usize];
        let body = match self.below(8) {
            0 => self.digits(3),
            1 => self.digits(40),
            2 => format!("{}.{}", self.digits(25), self.digits(6)),
            3 => format!("{}e{}", self.digits(2), self.digits(3)),
            4 => format!("{}E-{}", self.digits(2), self.digits(3)),
            5 => [
                "inf", "infinity", "NaN", "nan", "1e309", "0", "-0", ".5", "5.",
            ][self.below(9) as usize]
                .to_owned(),
            6 => u64::MAX.to_string(),
            _ => format!("{}", f64::MAX),
        };
        format!("{sign}{body}")
    }

    /// A reset or delay: a number, a Go-style duration, or a time.
    fn value(&mut self) -> String {
        match self.below(5) {
            0 | 1 => self.number(),
            2 => {
                let parts = 1 + self.below(3);
                (0..parts)
                    .map(|_| {
                        let unit = ["h", "m", "s", "ms", "us", "µs", "ns"][self.below(7) as usize];
                        let n = match self.below(3) {
                            0 => self.digits(3),
                            1 => self.digits(30),
                            _ => format!("{}.{}", self.digits(20), self.digits(3)),
                        };
                        format!("{n}{unit}")
                    })
                    .collect()
            }
            3 => {
                let year = ["0000", "0001", "1970", "2026", "9999"][self.below(5) as usize];
                let offset = ["Z", "+00:00", "-23:59", "+99:99", "+14:00"][self.below(5) as usize];
                format!("{year}-12-31T23:59:60.{}{offset}", self.digits(12))
            }
            _ => format!("{}s", self.number()),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn every_documented_rate_and_retry_header_with_any_number_is_read_and_bounded() {
    let cap = Duration::from_secs(3);
    let mut cases = 0;
    for seed in 1..=300u64 {
        let mut gen = Gen(support::Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
        let provider = [Provider::OpenAi, Provider::Anthropic][gen.below(2) as usize];
        let status = [200u16, 429, 503][gen.below(3) as usize];
        let mut first = if status == 200 {
            ok_answer(provider)
        } else {
            ScriptedReply::new(status, "slow down")
        };
        let mut sent = Vec::new();
        for _ in 0..1 + gen.below(4) {
            let name = HEADERS[gen.below(HEADERS.len() as u64) as usize];
            let value = if name.contains("remaining") && gen.below(2) == 0 {
                // A window with nothing (or less than nothing) left, so the
                // reset is what decides the wait.
                ["0", "-1", "0.5", "-99999999999999999999"][gen.below(4) as usize].to_owned()
            } else {
                gen.value()
            };
            sent.push(format!("{name}: {value}"));
            first = first.header(name, &value);
        }
        let transport = MemoryTransport::new()
            .reply(first)
            .otherwise(move |_| ok_answer(provider));
        let client = memory_client(provider, &transport, cap);
        let started = Instant::now();
        for _ in 0..3 {
            let result = call(&client, &ONCE).await;
            assert!(result.is_ok(), "seed {seed}, {sent:?}: {result:?}");
        }
        // Each of the three calls (and the one retry) waits at most the cap.
        assert!(
            started.elapsed() <= cap * 4,
            "seed {seed}, {sent:?}: waited {:?}",
            started.elapsed()
        );
        cases += 1;
    }
    assert_eq!(cases, 300);
}

#[tokio::test(start_paused = true)]
async fn gemini_retry_delay_of_any_size_is_read_and_bounded() {
    let cap = Duration::from_secs(3);
    for seed in 1..=100u64 {
        let mut gen = Gen(support::Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
        let delay = format!("{}s", gen.number());
        let transport = MemoryTransport::new()
            .reply(ScriptedReply::json(
                429,
                &serde_json::json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": delay}]}}),
            ))
            .otherwise(|_| ok_answer(Provider::Gemini));
        let client = memory_client(Provider::Gemini, &transport, cap);
        let started = Instant::now();
        let result = call(&client, &ONCE).await;
        assert!(
            result.is_ok(),
            "seed {seed}, retryDelay {delay}: {result:?}"
        );
        assert!(started.elapsed() <= cap, "seed {seed}, retryDelay {delay}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_cap_of_any_size_is_accepted() {
    // A program that sets the cap to "forever" still gets bounded waits on
    // tokio's clock, not an overflow when the deadline is computed.
    for cap in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
        let transport = MemoryTransport::new()
            .reply(
                ok_answer(Provider::OpenAi)
                    .header("x-ratelimit-remaining-requests", "0")
                    .header("x-ratelimit-reset-requests", "2s"),
            )
            .otherwise(|_| ok_answer(Provider::OpenAi));
        let client = memory_client(Provider::OpenAi, &transport, cap);
        let started = Instant::now();
        call(&client, &ONCE).await.unwrap();
        call(&client, &ONCE).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(2));

        // A hint of "forever" under a cap of "forever": a day.
        let transport = MemoryTransport::new()
            .reply(ScriptedReply::new(429, "slow down").header("retry-after-ms", "inf"))
            .otherwise(|_| ok_answer(Provider::OpenAi));
        let client = memory_client(Provider::OpenAi, &transport, cap);
        let started = Instant::now();
        call(&client, &ONCE).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(24 * 60 * 60));
    }
}
