//! A bulk run of 10,000 and 100,000 inputs against a loopback emulation of
//! OpenAI's Files and Batch APIs running in a child process: the client's
//! time from the first input to the last result collected (planning,
//! upload, creation, one poll, download, judging every reply), and the
//! client process's peak memory (VmHWM, Linux) after each run. Batches hold
//! 10,000 requests, so the peak should not grow with the number of inputs.
//!
//! `VOX_BENCH_SIZES=1000,20000` sets the sizes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{BatchOptions, Client, Config, Provider};

#[derive(Debug, serde::Serialize, serde::Deserialize)]
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
    AiFunction::new("read_count", "Read the number in the text.", &COUNT_SCHEMA)
        .with_model("gpt-4o-mini");

const SERVER_ENV: &str = "VOX_BENCH_BATCH_SERVER";

fn main() {
    if std::env::var_os(SERVER_ENV).is_some() {
        serve();
        return;
    }
    let mut server = Command::new(std::env::current_exe().expect("own path"))
        .env(SERVER_ENV, "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the emulator");
    let mut port = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut port)
        .expect("the emulator's port");
    let base_url = format!("http://127.0.0.1:{}/v1", port.trim());
    let sizes: Vec<u64> = std::env::var("VOX_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let client = Client::new(
        Config::builder(Provider::OpenAi)
            .base_url(&base_url)
            .api_key("sk-bench")
            .request_timeout(Duration::from_secs(120))
            .build()
            .expect("config"),
    )
    .expect("client");
    println!("bulk run against a loopback batch emulator (batches of 10,000)");
    println!(
        "{:>8}  {:>10}  {:>12}  {:>14}",
        "inputs", "time", "per input", "peak RSS"
    );
    for n in sizes {
        let dir = std::env::temp_dir().join(format!("vox-bench-batch-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let options = BatchOptions {
            max_requests_per_batch: 10_000,
            poll_initial: Duration::from_millis(1),
            poll_max: Duration::from_millis(5),
            ..BatchOptions::default()
        };
        let inputs = (0..n).map(|i| {
            Args::new().arg(
                "text",
                &format!(
                    "Invoice {i}: 3 widgets at 4.50, shipping 2.00, total {}",
                    i % 97
                ),
            )
        });
        let start = Instant::now();
        let report =
            vox_runtime::block_on(client.batch::<Count, _>(&READ_COUNT, &dir, inputs, &options))
                .expect("the run");
        let elapsed = start.elapsed();
        assert_eq!(report.from_batch, n, "{report:?}");
        println!(
            "{n:>8}  {:>9.2}s  {:>10.1}µs  {:>14}",
            elapsed.as_secs_f64(),
            elapsed.as_secs_f64() * 1e6 / n as f64,
            peak_rss().unwrap_or_else(|| "n/a".into())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// This process's peak resident memory, from /proc (Linux).
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line["VmHWM:".len()..].trim().to_owned())
}

/// The emulator: Files, Batches and file content, every reply `{"value": 1}`.
fn serve() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    println!("{}", listener.local_addr().expect("addr").port());
    let _ = std::io::stdout().flush();
    // file or batch id -> the custom ids of its requests
    let ids: Arc<Mutex<HashMap<String, Arc<Vec<String>>>>> = Arc::default();
    let next = Arc::new(Mutex::new(0u64));
    for stream in listener.incoming().flatten() {
        let (ids, next) = (ids.clone(), next.clone());
        std::thread::spawn(move || {
            let _ = handle(stream, &ids, &next);
        });
    }
}

fn handle(
    mut stream: TcpStream,
    ids: &Mutex<HashMap<String, Arc<Vec<String>>>>,
    next: &Mutex<u64>,
) -> std::io::Result<()> {
    loop {
        let mut reader = BufReader::new(&mut stream);
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let path = parts.next().unwrap_or("").to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            if header == "\r\n" || header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let new_id = |prefix: &str| {
            let mut n = next.lock().expect("lock");
            *n += 1;
            format!("{prefix}{n}")
        };
        let answer: Vec<u8> = match (method.as_str(), path.as_str()) {
            ("POST", "/v1/files") => {
                let text = String::from_utf8_lossy(&body);
                let custom: Vec<String> = text
                    .match_indices("\"custom_id\":\"")
                    .map(|(at, _)| {
                        let rest = &text[at + 13..];
                        rest[..rest.find('"').unwrap_or(0)].to_owned()
                    })
                    .collect();
                let id = new_id("file-");
                ids.lock()
                    .expect("lock")
                    .insert(id.clone(), Arc::new(custom));
                format!(r#"{{"id":"{id}","bytes":{length},"filename":"f"}}"#).into_bytes()
            }
            ("POST", "/v1/batches") => {
                let text = String::from_utf8_lossy(&body);
                let file = text
                    .split("\"input_file_id\":\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .unwrap_or("")
                    .to_owned();
                let id = new_id("batch_");
                let custom = ids
                    .lock()
                    .expect("lock")
                    .get(&file)
                    .cloned()
                    .unwrap_or_default();
                ids.lock()
                    .expect("lock")
                    .insert(format!("{id}-out"), custom);
                format!(r#"{{"id":"{id}","status":"validating"}}"#).into_bytes()
            }
            ("GET", p) if p.starts_with("/v1/batches/") => {
                let id = &p["/v1/batches/".len()..];
                format!(
                    r#"{{"id":"{id}","status":"completed","output_file_id":"{id}-out","error_file_id":null}}"#
                )
                .into_bytes()
            }
            ("GET", p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
                let id = &p["/v1/files/".len()..p.len() - "/content".len()];
                let custom = ids
                    .lock()
                    .expect("lock")
                    .get(id)
                    .cloned()
                    .unwrap_or_default();
                let mut out = Vec::with_capacity(custom.len() * 260);
                for c in custom.iter() {
                    out.extend_from_slice(format!(
                        r#"{{"id":"r","custom_id":"{c}","response":{{"status_code":200,"body":{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"{{\"value\": 1}}"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":40,"completion_tokens":6}}}}}},"error":null}}"#
                    ).as_bytes());
                    out.push(b'\n');
                }
                out
            }
            _ => b"{}".to_vec(),
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(&answer)?;
    }
}
