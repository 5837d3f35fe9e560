//! Peak memory of a call sending a 20 MB image (docs/runtime.md, "Media
//! arguments"): the file is read when the call is made and base64-encoded
//! straight into the request body, so the call should hold about the
//! file's bytes plus its base64, at most about twice the base64.
//!
//! A counting allocator measures the heap: the peak of bytes allocated
//! during the call above what was allocated before it. The request goes
//! to an in-memory transport (which keeps the body it was handed, without
//! copying it); VmHWM (Linux) is printed too.
//!
//! `VOX_BENCH_MB=50` sets the image's size in MiB (within Gemini's limit
//! of 100 MB); `VOX_BENCH_TRIALS=3` the number of calls.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Image, Provider};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let now = IN_USE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; only counters are
// updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
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
                grew(new_size - layout.size());
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static OUT: OutputSchema = OutputSchema::new(
    "Scan",
    r#"{"type":"object","properties":{"vendor":{"type":"string"}},"required":["vendor"],"additionalProperties":false}"#,
    false,
);
static READ: AiFunction = AiFunction::new("read_scan", "Read the scan.", &OUT);

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Scan {
    vendor: String,
}

fn vm_hwm() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line["VmHWM:".len()..].trim().to_owned())
}

fn main() {
    let mib: usize = std::env::var("VOX_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let trials: usize = std::env::var("VOX_BENCH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let size = mib * 1024 * 1024;
    let dir = std::env::temp_dir().join(format!("vox-media-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("big.png");
    {
        // A PNG signature, then noise (the content is not decoded).
        let mut bytes = Vec::with_capacity(size);
        bytes.extend_from_slice(b"\x89PNG\r\n\x1a\n");
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while bytes.len() < size {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.push(x as u8);
        }
        std::fs::write(&path, &bytes).expect("write the image");
    }
    let base64 = size.div_ceil(3) * 4;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let reply = serde_json::json!({"candidates": [{"content": {"parts":
        [{"text": "{\"vendor\":\"ACME\"}"}]}, "finishReason": "STOP"}]});
    println!(
        "media_memory: one call with a {mib} MiB image ({size} bytes; base64 {base64} bytes), gemini wire, in-memory transport"
    );
    for trial in 1..=trials {
        let reply = reply.clone();
        let transport = MemoryTransport::new().otherwise(move |_| ScriptedReply::json(200, &reply));
        let config = Config::builder(Provider::Gemini)
            .api_key("bench-key")
            .base_url("http://127.0.0.1:9/v1beta")
            .build()
            .expect("config");
        let client = Client::builder(config)
            .transport(transport.clone())
            .build()
            .expect("client");
        let args = Args::new()
            .arg("scan", &Image::from_path(&path))
            .expect("args");
        let before = IN_USE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let started = Instant::now();
        let scan: Scan = runtime
            .block_on(client.call_ai(&READ, args, async { unreachable!("no fixture") }))
            .expect("the call succeeds");
        let elapsed = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed) - before;
        let sent = transport.requests()[0].body.len();
        drop(scan);
        println!(
            "  trial {trial}: peak heap during the call {:.1} MB = {:.2}x the base64 ({:.2}x the file); body sent {:.1} MB; {:.0} ms",
            peak as f64 / 1e6,
            peak as f64 / base64 as f64,
            peak as f64 / size as f64,
            sent as f64 / 1e6,
            elapsed.as_secs_f64() * 1000.0
        );
    }
    if let Some(hwm) = vm_hwm() {
        println!("  VmHWM of the process (the image was written by it too): {hwm}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
