//! 500 concurrent `call_ai` calls through one client.
//!
//! The loopback server answers each request after 10 ms, so calls pile up;
//! the client's concurrency cap (`max_concurrent_requests`, 64 here) must
//! bound both the requests in flight and the TCP connections accepted.
//! Exits non-zero if either exceeds the cap or a call fails.

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde::Deserialize;
use support::{FakeServer, Reply};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{Client, Config, Provider};

#[derive(Debug, Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct Count {
    value: i64,
}

static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "Count",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    false,
);

static COUNT: AiFunction = AiFunction::new("count", "Count the items.", &COUNT_SCHEMA);

const CALLS: usize = 500;
const MAX_CONCURRENT: usize = 64;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let within_cap = runtime.block_on(run());
    if !within_cap {
        std::process::exit(1);
    }
}

async fn run() -> bool {
    let server = FakeServer::start_with(
        vec![],
        Reply::chat(r#"{"value": 1}"#).delay(Duration::from_millis(10)),
        false,
    )
    .await;
    let config = Config::builder(Provider::Compatible)
        .base_url(server.base_url())
        .max_concurrent_requests(MAX_CONCURRENT)
        .build()
        .expect("config");
    let client = Client::new(config).expect("client");

    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..CALLS {
        let client = client.clone();
        calls.spawn(async move {
            let args = Args::new().arg("i", &i)?;
            client
                .call_ai::<Count, _>(&COUNT, args, async { unreachable!() })
                .await
        });
    }
    let mut ok = 0;
    let mut failed = 0;
    while let Some(result) = calls.join_next().await {
        match result {
            Ok(Ok(count)) if count.value == 1 => ok += 1,
            _ => failed += 1,
        }
    }
    let elapsed = started.elapsed();
    let connections = server.connections();
    let peak = server.peak_in_flight();
    println!(
        "{CALLS} concurrent calls: {ok} ok, {failed} failed in {:.1} ms",
        elapsed.as_secs_f64() * 1e3
    );
    println!(
        "cap {MAX_CONCURRENT}: peak requests in flight at the server {peak}, TCP connections accepted {connections}, requests served {}",
        server.request_count()
    );
    let within_cap = failed == 0 && peak <= MAX_CONCURRENT && connections <= MAX_CONCURRENT;
    println!(
        "{}",
        if within_cap {
            "OK: within the cap"
        } else {
            "FAIL: cap exceeded or calls failed"
        }
    );
    within_cap
}
