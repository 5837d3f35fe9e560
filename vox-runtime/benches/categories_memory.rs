//! Memory of calls with run-time categories (docs/runtime.md, "Categories
//! at run time"): each call fills its own copy of the function's schema
//! and request parts with its values and keeps nothing afterwards, so
//! 10,000 calls with 10,000 distinct category sets hold no more than 10
//! calls do (the goal: within 10 MB).
//!
//! A counting allocator measures the heap in use after 10 calls and after
//! 10,000, each call with three values of its own (one in three answered
//! outside them first, and corrected). The transport answers from a
//! closure and keeps no request. It prints both, and exits 1 when the
//! difference is 10 MB or more.
//!
//! `VOX_BENCH_CALLS=100000` sets the number of calls of the long run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{Request, Response, SendFuture, Transport};
use vox_runtime::{CallOptions, Client, Config, Provider};

/// The system allocator, counting the bytes in use.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
/// Replies answered outside the call's values (each then corrected).
static OUTSIDE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to `System` unchanged; only a counter is
// updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                IN_USE.fetch_add(new_size - layout.size(), Ordering::Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static TICKET: OutputSchema = OutputSchema::new(
    "Ticket",
    r#"{"type":"object","properties":{"queue":{"type":"string","x-vox-categories":"Queue"},"also":{"type":"array","items":{"type":"string","x-vox-categories":"Queue"}}},"required":["queue","also"],"additionalProperties":false}"#,
    false,
);
static ROUTE: AiFunction = AiFunction::new("route", "Route the ticket.", &TICKET)
    .with_model("gpt-4o-mini")
    .with_max_iterations(2);

#[derive(Debug, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
#[allow(dead_code)]
struct Ticket {
    queue: String,
    also: Vec<String>,
}

/// Answers each request with the first value its schema lists — after a
/// value outside them for every third first attempt — and keeps nothing.
struct Answering;

impl Transport for Answering {
    fn send<'a>(&'a self, request: Request<'a>) -> SendFuture<'a> {
        let body: serde_json::Value =
            serde_json::from_slice(request.body()).unwrap_or(serde_json::Value::Null);
        let schema = &body["response_format"]["json_schema"]["schema"];
        let first = schema["properties"]["queue"]["enum"][0]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        let corrected = body["messages"].as_array().map_or(0, Vec::len) > 2;
        let outside = first.ends_with("-0") && !corrected;
        if outside {
            OUTSIDE.fetch_add(1, Ordering::Relaxed);
        }
        let queue = if outside { "nowhere".to_owned() } else { first };
        let content = format!(r#"{{"queue":"{queue}","also":[]}}"#);
        let reply = serde_json::json!({"choices": [{"index": 0,
            "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
        Box::pin(async move { Ok(Response::new(200, Bytes::from(reply.to_string()))) })
    }
}

fn main() {
    let calls: usize = std::env::var("VOX_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-bench")
        .build()
        .expect("config");
    let client = Client::builder(config)
        .transport(Answering)
        .build()
        .expect("client");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut done = 0usize;
    let mut run = |n: usize| {
        runtime.block_on(async {
            for _ in 0..n {
                let i = done;
                done += 1;
                // Three values of this call's own; every third set's first
                // value ends in `-0`, answered outside the set first.
                let set = [
                    format!("queue-{i}-{}", i % 3),
                    format!("other-{i}"),
                    format!("third-{i}"),
                ];
                let options = CallOptions::new().categories("Queue", set.clone());
                let ticket: Ticket = client
                    .call_ai_with(
                        &ROUTE,
                        &options,
                        Args::new().arg("text", "refund").expect("args"),
                        async { unreachable!("a provider is configured") },
                    )
                    .await
                    .expect("the call succeeds");
                assert_eq!(ticket.queue, set[0]);
            }
        })
    };
    run(10);
    let after_ten = IN_USE.load(Ordering::Relaxed);
    run(calls);
    let after_many = IN_USE.load(Ordering::Relaxed);
    let grown = after_many.saturating_sub(after_ten);
    println!(
        "heap in use after 10 calls: {:.2} MB; after {} more, each with its own 3 categories: {:.2} MB (+{:.3} MB; goal < 10 MB)",
        after_ten as f64 / 1e6,
        calls,
        after_many as f64 / 1e6,
        grown as f64 / 1e6
    );
    let outside = OUTSIDE.load(Ordering::Relaxed);
    println!("{outside} replies outside their call's values, each corrected");
    if outside < calls / 3 {
        eprintln!("categories_memory: the corrections were not exercised");
        std::process::exit(1);
    }
    if grown >= 10_000_000 {
        eprintln!("categories_memory: {grown} bytes kept over {calls} calls");
        std::process::exit(1);
    }
}
