//! `cargo vox call` end to end: a script's function under the fixture
//! provider (plain and `--stream`, human and `--json`), a package's
//! function, `--dry-run` (nothing sent, the key redacted), a loopback
//! server, and usage errors. No request leaves 127.0.0.1: the environment
//! is cleared.

use crate::batch_cli::batch_emulator;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-vox");

const SCRIPT: &str = r#"type Line {
    name: str
    qty: int
}

type Order {
    title: str
    lines: list[Line]
    note: Option[str]
}

/// Read the order.
@ai(structured_output = Order, model = "gpt-4o-mini")
@uses(net)
fn read_order(text: str) to Order {
    print("the fixture body runs")
    return Order { title: f"order: {text}", lines: [Line { name: "tea", qty: 2 }, Line { name: "cake", qty: 1 }], note: None }
}

type Count {
    value: int
}

/// Read the number after the hash sign.
@ai(structured_output = Count, model = "gpt-4o-mini")
@uses(net)
fn read_count(text: str) to Count {
    return Count { value: 0 }
}
"#;

fn setup(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vox-call-cli-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("order.vox"), SCRIPT).unwrap();
    dir
}

/// `cargo vox ARGS` in `dir` with only `env` set (and what cargo needs).
pub(crate) fn cargo_vox(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("VOX_SCRIPT_CACHE", dir.join("cache"))
        // The workspace's target directory (this binary's): the call
        // program's dependencies are built once for every test.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(BIN).parent().unwrap().parent().unwrap(),
        )
        .env("CARGO_NET_OFFLINE", "true");
    for var in ["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args).output().unwrap()
}

pub(crate) fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("stdout is JSONL only"))
        .collect()
}

const FIXTURE: &[(&str, &str)] = &[("VOX_LLM_PROVIDER", "fixture")];

#[test]
fn a_script_function_is_called_plain_and_streamed_under_the_fixture() {
    let dir = setup("fixture");
    let args = [
        "call",
        "read_order",
        "order.vox",
        "--args",
        r##"{"text":"#7"}"##,
    ];
    let plain = cargo_vox(&dir, FIXTURE, &args);
    let stdout = String::from_utf8_lossy(&plain.stdout);
    assert!(
        plain.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    // The value as pretty JSON, after the body's own print.
    let value_at = stdout.find('{').unwrap();
    assert!(
        stdout[..value_at].contains("the fixture body runs"),
        "{stdout}"
    );
    let value: Value = serde_json::from_str(&stdout[value_at..]).unwrap();
    assert_eq!(value["title"], "order: #7");
    assert_eq!(value["lines"][1]["name"], "cake");

    // `--json --stream`: partials, then one final; the body's print is
    // not on stdout.
    let mut streamed = args.to_vec();
    streamed.insert(0, "--json");
    streamed.push("--stream");
    let out = cargo_vox(&dir, FIXTURE, &streamed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("the fixture body runs"));
    let (last, partials) = lines.split_last().unwrap();
    assert!(partials.len() >= 4, "{lines:#?}");
    for p in partials {
        assert_eq!(p["envelope_version"], 1);
        assert_eq!(p["command"], "call");
        assert_eq!(p["kind"], "partial");
        assert_eq!(p["attempt"], 1);
    }
    // A field not seen yet is absent; `note` seen as `null` is `null`.
    assert!(
        partials[0]["value"].get("note").is_none(),
        "{}",
        partials[0]
    );
    assert_eq!(last["kind"], "final");
    assert_eq!(last["ok"], true);
    assert_eq!(last["attempts"], 1);
    assert_eq!(last["value"], value);
    assert!(last["value"].get("note").is_some_and(Value::is_null));
    // Under the fixture nothing was spent.
    assert_eq!(last["usage"]["input_tokens"], 0);
    assert_eq!(last["cost_usd"], 0.0);

    // Without --stream: only the final envelope.
    let mut quiet = args.to_vec();
    quiet.insert(0, "--json");
    let lines = json_lines(&cargo_vox(&dir, FIXTURE, &quiet));
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["value"], value);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn arguments_that_do_not_fit_are_usage_errors() {
    let dir = setup("usage");
    for (args, needle) in [
        (r#"{"txt":"x"}"#, "no parameter `txt`"),
        ("{}", "no `text`"),
        ("[1]", "JSON object"),
        ("{", "not JSON"),
        (r#"{"text": 5}"#, "text"),
    ] {
        let out = cargo_vox(
            &dir,
            FIXTURE,
            &["--json", "call", "read_order", "order.vox", "--args", args],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = json_lines(&out);
        let last = lines.last().unwrap();
        assert_eq!(last["ok"], false, "{args}");
        assert!(last.to_string().contains(needle), "{args}: {last}");
    }
    let out = cargo_vox(
        &dir,
        FIXTURE,
        &["call", "nope", "order.vox", "--args", "{}"],
    );
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dry_run_prints_the_request_and_sends_nothing() {
    let dir = setup("dry-run");
    let key = "sk-call-secret-1234567890";
    let env = [
        ("VOX_LLM_PROVIDER", "openai"),
        ("OPENAI_API_KEY", key),
        // Nothing listens there: a request would fail the command.
        ("VOX_LLM_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let args = [
        "--json",
        "call",
        "read_order",
        "order.vox",
        "--args",
        r##"{"text":"#7"}"##,
        "--dry-run",
        "--stream",
    ];
    let out = cargo_vox(&dir, &env, &args);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    assert!(!all.contains(key), "the key is redacted: {all}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    let request = &lines[0]["request"];
    assert_eq!(lines[0]["kind"], "request");
    assert_eq!(request["url"], "http://127.0.0.1:9/v1/chat/completions");
    assert_eq!(request["body"]["stream"], true);
    assert_eq!(request["body"]["model"], "gpt-4o-mini");
    assert_eq!(request["body"]["messages"][1]["content"], "#7");
    assert!(request["headers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h[0] == "authorization" && h[1] == "[redacted]"));
    // No program was built for a dry run.
    assert!(!dir.join("cache").exists());

    // `--model` with a provider prefix: the request goes there instead.
    let env = [
        ("VOX_LLM_PROVIDER", "openai"),
        ("OPENAI_API_KEY", key),
        ("ANTHROPIC_API_KEY", "sk-ant-call-secret-0987654321"),
    ];
    let out = cargo_vox(
        &dir,
        &env,
        &[
            "--json",
            "call",
            "read_order",
            "order.vox",
            "--args",
            r##"{"text":"#7"}"##,
            "--dry-run",
            "--model",
            "anthropic:claude-haiku-4-5",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert!(!lines[0].to_string().contains("sk-ant-call-secret"));
    assert_eq!(
        lines[0]["request"]["url"],
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(lines[0]["request"]["body"]["model"], "claude-haiku-4-5");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_reaches_the_configured_server() {
    let (emulator, _) = batch_emulator::Emulator::start(0, None).await;
    let dir = setup("server");
    let base = emulator.base_url();
    let env = [
        ("VOX_LLM_PROVIDER", "openai"),
        ("OPENAI_API_KEY", "sk-call-test"),
        ("VOX_LLM_BASE_URL", base.as_str()),
    ];
    // The emulator answers with a whole response though a stream was
    // asked for: read as the server's answer all the same.
    let out = cargo_vox(
        &dir,
        &env,
        &[
            "--json",
            "call",
            "read_count",
            "order.vox",
            "--args",
            r##"{"text":"#n=41"}"##,
            "--stream",
            "--model",
            "gpt-4.1-nano",
        ],
    );
    let lines = json_lines(&out);
    assert!(
        out.status.success(),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = lines.last().unwrap();
    assert_eq!(last["value"], serde_json::json!({"value": 41}));
    // What it used and cost: the server's usage, at gpt-4.1-nano's price.
    assert_eq!(
        last["usage"],
        serde_json::json!({"input_tokens": 20, "output_tokens": 5, "cached_tokens": 0, "reasoning_tokens": 0})
    );
    let cost = last["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - (20.0 * 0.10 + 5.0 * 0.40) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(emulator.state.lock().unwrap().calls_received, 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_package_function_is_called_from_its_manifest() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join("invoice-app");
    let dir = setup("package");
    let manifest = app.join("Cargo.toml");
    let out = cargo_vox(
        &dir,
        FIXTURE,
        &[
            "--json",
            "--manifest-path",
            manifest.to_str().unwrap(),
            "call",
            "extract_invoice",
            "--args",
            r#"{"ocr_text":"ACME"}"#,
        ],
    );
    let lines = json_lines(&out);
    assert!(
        out.status.success(),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines.last().unwrap()["value"]["vendor"], "ACME Corp");
    std::fs::remove_dir_all(&dir).ok();
}
