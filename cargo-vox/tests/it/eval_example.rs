//! The worked `cargo vox eval` example of fixtures/invoice-app: 20 invoice
//! extraction cases (vox/eval/extract_invoice.jsonl) and the cassette of a
//! local 135M-parameter model's replies recorded beside them
//! (vox/eval/extract_invoice.cassettes/). A run re-scores the recording
//! offline, as from a fresh clone: the environment is cleared (no provider,
//! no key); a second run points the provider at a loopback listener that
//! would count a request if one were sent, and reads byte for byte as the
//! first. Nothing is written into the fixture.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::call_cli::{cargo_vox, json_lines};

/// What the recorded model (SmolLM2-135M-Instruct) scored: no case right in
/// every field.
const PASS_RATE: f64 = 0.0;

fn app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join("invoice-app")
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vox-eval-example-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A listener on 127.0.0.1 that counts the connections made to it.
fn sentinel() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, count)
}

/// Every file under `dir` with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_invoice_example_re_scores_its_recording_offline() {
    let app = app();
    let eval_dir = app.join("vox").join("eval");
    let cases = eval_dir.join("extract_invoice.jsonl");
    assert!(eval_dir.join("extract_invoice.cassettes").is_dir());
    let before = snapshot(&eval_dir);
    let dir = scratch();
    let manifest = app.join("Cargo.toml");
    let args = [
        "--json",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "eval",
        "extract_invoice",
        "--cases",
        cases.to_str().unwrap(),
        "--models",
        "smollm2-135m",
    ];
    // As from a fresh clone: no VOX_LLM_* at all.
    let first = cargo_vox(&dir, &[], &args);
    let stderr = String::from_utf8_lossy(&first.stderr);
    // No `--min-pass`: the run succeeds whatever the score.
    assert_eq!(first.status.code(), Some(0), "{stderr}");
    // The cassette answers: no warning that fixture bodies run.
    assert!(!stderr.contains("fixture bodies"), "{stderr}");
    let lines = json_lines(&first);
    let runs: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "case").collect();
    assert_eq!(runs.len(), 20, "{lines:#?}");
    let summary = lines.last().unwrap();
    assert_eq!(summary["kind"], "summary");
    assert_eq!(summary["command"], "eval");
    assert_eq!(summary["function"], "extract_invoice");
    assert_eq!(summary["cases"], 20);
    let model = &summary["models"][0];
    assert_eq!(model["model"], "smollm2-135m", "{summary:#?}");
    assert_eq!(model["cases"], 20);
    assert_eq!(model["pass_rate"].as_f64(), Some(PASS_RATE), "{model:#?}");
    // Per-field accuracy, for each of Invoice's fields: the vendor is most
    // often right, a whole list of lines never.
    assert_eq!(
        model["field_accuracy"],
        json!({"due_date": 0.3, "lines": 0.0, "status": 0.35, "vendor": 0.6}),
        "{model:#?}"
    );
    // No reply is missing from the recording.
    let failures = model["failures"].as_array().unwrap();
    assert!(
        failures
            .iter()
            .all(|f| !f["reason"].to_string().contains("no reply recorded")),
        "{failures:#?}"
    );
    // Re-scoring is deterministic, sends nothing and writes nothing.
    let (url, requests) = sentinel();
    let env = [
        ("VOX_LLM_PROVIDER", "compatible"),
        ("VOX_LLM_BASE_URL", url.as_str()),
        ("VOX_LLM_API_KEY", "sk-not-used"),
        ("VOX_LLM_MAX_RETRIES", "0"),
    ];
    let second = cargo_vox(&dir, &env, &args);
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&first.stdout),
        "a second replay reads as the first"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0);
    // `--min-pass` gates on the recorded score.
    let mut gated = args.to_vec();
    gated.extend(["--min-pass", "0.5"]);
    let out = cargo_vox(&dir, &env, &gated);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(summary["ok"], false);
    assert_eq!(summary["models"][0]["min_pass_met"], false);
    assert_eq!(requests.load(Ordering::SeqCst), 0);
    assert!(snapshot(&eval_dir) == before, "the fixture was written to");
    std::fs::remove_dir_all(&dir).ok();
}
