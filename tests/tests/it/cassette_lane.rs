//! `cargo vox test` with cassettes (docs/runtime.md, "Cassettes", "Tests"):
//! the test lane for a single script (exact counts), recording a script's
//! `@ai` replies with `--record` against a loopback server and replaying
//! them with the server gone, the counts of hits, misses and recordings in
//! the envelope and summary, and a new script building offline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use vox_e2e::{cargo_vox, envelopes, run, work_dir, workspace_root, Run, BUILD};
use vox_metadata::Envelope;

/// The `test` envelope of a `--json` run.
/// `cargo vox run` of a script says what its model requests used on
/// stderr, once the program is done, only when a model was asked.
#[test]
fn a_run_that_asked_a_model_prints_its_usage_total() {
    let dir = work_dir("cassette-lane-run-usage");
    let script = GREET_SCRIPT.replace(
        "@test\nfn greets_ada() {",
        "fn main() {\n    print(greet(\"Ada\").text)\n    print(greet(\"Grace\").text)\n}\n\n@test\nfn greets_ada() {",
    );
    std::fs::write(dir.join("greet.vox"), script).unwrap();
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let (url, requests) = loopback(r#"{"text":"Hello!"}"#);
    let mut cmd = cargo_vox(&dir);
    cmd.args(["run", "greet.vox"])
        .env("VOX_SCRIPT_CACHE", cache)
        .env("VOX_LLM_PROVIDER", "compatible")
        .env("VOX_LLM_BASE_URL", &url)
        .env("VOX_LLM_MAX_RETRIES", "0")
        .env("VOX_LLM_PRICES", "test-model=1.0,2.0");
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    assert_eq!(r.stdout, "Hello!\nHello!\n", "{}", r.dump());
    // 20 input tokens at $1 and 10 output at $2 per million.
    assert!(
        r.stderr.contains(
            "vox: 2 model requests, 20 input tokens (0 cached), 10 output tokens (0 reasoning), $0.000040"
        ),
        "{}",
        r.dump()
    );
    // Under the fixture provider no model is asked: nothing is said.
    let mut cmd = cargo_vox(&dir);
    cmd.args(["run", "greet.vox"])
        .env("VOX_SCRIPT_CACHE", cache)
        .env_remove("VOX_LLM_PROVIDER");
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    assert!(!r.stderr.contains("model request"), "{}", r.dump());
}

fn test_envelope(r: &Run) -> Envelope {
    envelopes(r)
        .into_iter()
        .find(|e| e.command == "test")
        .unwrap_or_else(|| panic!("no test envelope\n{}", r.dump()))
}

fn vox_test(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = cargo_vox(dir);
    cmd.arg("--json").arg("test").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run(&mut cmd, BUILD);
    assert!(!r.stderr.contains("panicked at 'cargo"), "{}", r.dump());
    r
}

/// A chat-completions server on 127.0.0.1 answering every request with
/// `content`, counting requests; it stops with the test process.
fn loopback(content: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            counted.fetch_add(1, Ordering::SeqCst);
            let reply = serde_json::json!({
                "id": "chatcmpl-loopback",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, count)
}

const COUNTS_SCRIPT: &str = r#"fn add(a: int, b: int) to int {
    return a + b
}

@test
fn adds() {
    assert_eq(add(1, 2), 3)
}

@test
fn adds_zero() {
    assert_eq(add(0, 5), 5)
}

@test
fn adds_wrong() {
    assert_eq(add(2, 2), 5)
}
"#;

#[test]
fn a_scripts_tests_run_with_exact_counts() {
    let dir = work_dir("cassette-lane-counts");
    std::fs::write(dir.join("counts.vox"), COUNTS_SCRIPT).unwrap();
    let cache = dir.join("cache");
    let r = vox_test(
        &dir,
        &["counts.vox"],
        &[("VOX_SCRIPT_CACHE", cache.to_str().unwrap())],
    );
    let env = test_envelope(&r);
    assert_eq!(
        (env.passed, env.failed, env.ignored),
        (Some(2), Some(1), Some(0)),
        "{}",
        r.dump()
    );
    let failures = env.failures.unwrap_or_default();
    assert_eq!(failures.len(), 1, "{}", r.dump());
    assert_eq!(failures[0].vox_name.as_deref(), Some("adds_wrong"));
    // The failure points at the Vox source, not the generated Rust.
    assert_eq!(
        failures[0].location.as_deref(),
        Some("counts.vox:17:5"),
        "{}",
        r.dump()
    );
    assert!(
        failures[0]
            .message
            .contains("assert_eq(add(2, 2), 5) failed at counts.vox:17:5"),
        "{}",
        r.dump()
    );
    assert_eq!(r.code(), Some(1), "{}", r.dump());
    assert_eq!(env.cassette_hits, Some(0));
}

const GREET_SCRIPT: &str = r#"type Greeting {
    text: str
}

/// Greet someone by name.
@ai(structured_output = Greeting, model = "test-model")
@uses(net)
fn greet(name: str) to Greeting {
    return Greeting { text: "fixture " + name }
}

@test
fn greets_ada() {
    assert_eq(greet("Ada").text, "Hello, Ada!")
}
"#;

#[test]
fn record_then_replay_a_scripts_replies_with_the_server_gone() {
    let dir = work_dir("cassette-lane-record");
    std::fs::write(dir.join("greet.vox"), GREET_SCRIPT).unwrap();
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let cassette = dir.join("vox/cassettes/greet.jsonl");

    // No cassette: the fixture body runs (and the test fails on it), even
    // with a provider configured: no request is sent.
    let (url, requests) = loopback(r#"{"text":"Hello, Ada!"}"#);
    let live = [
        ("VOX_SCRIPT_CACHE", cache),
        ("VOX_LLM_PROVIDER", "compatible"),
        ("VOX_LLM_BASE_URL", url.as_str()),
        ("VOX_LLM_MAX_RETRIES", "0"),
    ];
    let r = vox_test(&dir, &["greet.vox"], &live);
    let env = test_envelope(&r);
    assert_eq!((env.passed, env.failed), (Some(0), Some(1)), "{}", r.dump());
    assert_eq!(requests.load(Ordering::SeqCst), 0, "{}", r.dump());

    // --record asks the server and writes the script's cassette.
    let r = vox_test(&dir, &["greet.vox", "--record"], &live);
    let env = test_envelope(&r);
    assert_eq!((env.passed, env.failed), (Some(1), Some(0)), "{}", r.dump());
    assert_eq!(env.cassette_recorded, Some(1), "{}", r.dump());
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    // What the model requests used, in one line on stderr.
    assert!(
        r.stderr.contains(
            "vox: 1 model request, 10 input tokens (0 cached), 5 output tokens (0 reasoning), cost unknown"
        ),
        "{}",
        r.dump()
    );
    let recorded = std::fs::read_to_string(&cassette).unwrap();
    assert!(
        recorded.contains(r#""arguments":{"name":"Ada"}"#),
        "{recorded}"
    );

    // Replayed with no provider at all (and a dead one named would not be
    // reached): one hit, and the summary says so.
    let mut cmd = cargo_vox(&dir);
    cmd.args(["test", "greet.vox"])
        .env("VOX_SCRIPT_CACHE", cache);
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    assert!(
        r.stderr
            .contains("1 passed, 0 failed, 0 ignored; cassettes: 1 replayed, 0 missed, 0 recorded"),
        "{}",
        r.dump()
    );
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    assert_eq!(std::fs::read_to_string(&cassette).unwrap(), recorded);
    assert!(
        !r.stderr.contains("model request"),
        "a replay asks no model\n{}",
        r.dump()
    );

    // A changed argument is a miss, counted.
    std::fs::write(
        dir.join("greet.vox"),
        GREET_SCRIPT.replace("greet(\"Ada\")", "greet(\"Grace\")"),
    )
    .unwrap();
    let r = vox_test(&dir, &["greet.vox"], &[("VOX_SCRIPT_CACHE", cache)]);
    let env = test_envelope(&r);
    assert_eq!(
        (env.failed, env.cassette_misses),
        (Some(1), Some(1)),
        "{}",
        r.dump()
    );
    let message = &env.failures.unwrap_or_default()[0].message;
    assert!(message.contains("arguments `name`"), "{message}");
}

#[test]
fn the_invoice_example_reports_its_cassette_hits() {
    let app = workspace_root().join("fixtures/invoice-app");
    let r = vox_test(&app, &[], &[]);
    let env = test_envelope(&r);
    assert_eq!((env.passed, env.failed), (Some(4), Some(0)), "{}", r.dump());
    // extract_invoice: "ACME" (one attempt) and the Globex invoice (two);
    // extract_invoice_image has no cassette and runs its fixture body.
    assert_eq!(
        (
            env.cassette_hits,
            env.cassette_misses,
            env.cassette_recorded
        ),
        (Some(3), Some(0), Some(0)),
        "{}",
        r.dump()
    );
}

#[test]
fn a_new_script_builds_without_the_network() {
    let dir = work_dir("cassette-lane-offline");
    // A script path never built before: a new crate, with no lockfile.
    std::fs::write(
        dir.join("offline.vox"),
        COUNTS_SCRIPT
            .replace("adds_wrong", "adds_more")
            .replace("add(2, 2), 5", "add(2, 2), 4"),
    )
    .unwrap();
    let cache = dir.join("cache");
    // Every registry request goes to a port nothing listens on.
    let dead = "http://127.0.0.1:9";
    let r = vox_test(
        &dir,
        &["offline.vox"],
        &[
            ("VOX_SCRIPT_CACHE", cache.to_str().unwrap()),
            ("CARGO_HTTP_PROXY", dead),
            ("HTTPS_PROXY", dead),
            ("https_proxy", dead),
            ("HTTP_PROXY", dead),
            ("http_proxy", dead),
            ("CARGO_NET_RETRY", "0"),
            ("CARGO_HTTP_TIMEOUT", "5"),
        ],
    );
    let env = test_envelope(&r);
    assert_eq!((env.passed, env.failed), (Some(3), Some(0)), "{}", r.dump());
}

/// A test never calls a model by accident, also with `VOX_LLM_CASSETTE`
/// set: a developer's shell with a cassette directory, a provider, a key
/// and no `CI` (the `auto` mode's default outside tests) once sent a test's
/// call live and recorded it. Replay is the default in a test; recording or
/// asking needs `VOX_LLM_CASSETTE_MODE=auto|record`, `VOX_LLM_LIVE=1` or
/// `--record`.
#[test]
fn a_test_with_a_cassette_set_calls_no_model_without_an_opt_in() {
    let dir = work_dir("cassette-lane-no-accidents");
    std::fs::write(dir.join("greet.vox"), GREET_SCRIPT).unwrap();
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let tape = dir.join("tape");
    let tape = tape.to_str().unwrap();
    let (url, requests) = loopback(r#"{"text":"Hello, Ada!"}"#);
    let developer = |extra: &[(&str, &str)]| {
        let mut cmd = cargo_vox(&dir);
        cmd.args(["--json", "test", "greet.vox"])
            .env_remove("CI")
            .env("VOX_SCRIPT_CACHE", cache)
            .env("VOX_LLM_PROVIDER", "compatible")
            .env("VOX_LLM_BASE_URL", &url)
            .env("VOX_LLM_API_KEY", "sk-developer-0123456789")
            .env("VOX_LLM_MAX_RETRIES", "0")
            .env("VOX_LLM_CASSETTE", tape);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        run(&mut cmd, BUILD)
    };

    // The cassette has nothing: a miss, and nothing sent or written.
    let r = developer(&[]);
    let env = test_envelope(&r);
    assert_eq!(env.failed, Some(1), "{}", r.dump());
    assert_eq!(requests.load(Ordering::SeqCst), 0, "{}", r.dump());
    assert!(!Path::new(tape).join("greet.jsonl").exists());
    let message = &env.failures.unwrap_or_default()[0].message;
    assert!(message.contains("no reply recorded"), "{message}");

    // The same with the package's own cassette file present but missing
    // this call (the mode of `vox/cassettes` is `replay` too).
    let r = {
        let mut cmd = cargo_vox(&dir);
        cmd.args(["--json", "test", "greet.vox"])
            .env_remove("CI")
            .env("VOX_SCRIPT_CACHE", cache)
            .env("VOX_LLM_PROVIDER", "compatible")
            .env("VOX_LLM_BASE_URL", &url)
            .env("VOX_LLM_API_KEY", "sk-developer-0123456789")
            .env("VOX_LLM_MAX_RETRIES", "0");
        std::fs::create_dir_all(dir.join("vox/cassettes")).unwrap();
        std::fs::write(dir.join("vox/cassettes/greet.jsonl"), "").unwrap();
        run(&mut cmd, BUILD)
    };
    assert_eq!(test_envelope(&r).failed, Some(1), "{}", r.dump());
    assert_eq!(requests.load(Ordering::SeqCst), 0, "{}", r.dump());
    std::fs::remove_dir_all(dir.join("vox")).unwrap();

    // Asking for it is an opt-in: the mode said, or VOX_LLM_LIVE.
    for (n, opt_in) in [("VOX_LLM_CASSETTE_MODE", "auto"), ("VOX_LLM_LIVE", "1")]
        .into_iter()
        .enumerate()
    {
        let _ = std::fs::remove_dir_all(tape);
        let r = developer(&[opt_in]);
        let env = test_envelope(&r);
        assert_eq!((env.passed, env.failed), (Some(1), Some(0)), "{}", r.dump());
        assert_eq!(requests.load(Ordering::SeqCst), n + 1, "{}", r.dump());
        assert!(Path::new(tape).join("greet.jsonl").exists());
    }
}
