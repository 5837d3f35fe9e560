//! `cargo vox batch` end to end against a loopback emulation of OpenAI's
//! Files and Batch APIs: the estimate before submitting, results in input
//! order, re-runs, `--json` envelopes, and the error for a provider without
//! a batch API. No request leaves 127.0.0.1: the environment is cleared.

#[path = "../../../vox-runtime/tests/it/batch_emulator/mod.rs"]
pub(crate) mod batch_emulator;

use std::path::Path;
use std::process::{Command, Output};

use batch_emulator::Emulator;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-vox");

const SCRIPT: &str = r#"type Count {
    value: int
}

/// Read the number after the hash sign.
@ai(structured_output = Count, max_iterations = 2, model = "gpt-4o-mini")
@uses(net)
fn read_count(text: str) to Count {
    return Count { value: 0 }
}

fn not_ai(x: int) to int {
    return x
}

/// Read the number after the hash sign; it must be even.
@ai(structured_output = Count, max_iterations = 2, model = "gpt-4o-mini", check = even)
@uses(net)
fn read_even(text: str) to Count {
    return Count { value: 0 }
}

fn even(c: Count) to list[str] {
    if c.value % 2 == 1 {
        return [f"{c.value} is odd: the even count is #n={c.value + 1}"]
    }
    return []
}

/// Read the count on the scan.
@ai(structured_output = Count, model = "gpt-4o-mini")
@uses(net)
fn read_scan(scan: Image) to Count {
    return Count { value: 0 }
}
"#;

fn setup(name: &str, lines: u64) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vox-batch-cli-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("count.vox"), SCRIPT).unwrap();
    let mut input = String::new();
    for i in 0..lines {
        let marker = match i {
            3 => " ~bad",
            5 => " ~expire",
            _ => "",
        };
        input.push_str(&serde_json::json!({"text": format!("item #n={i}{marker}")}).to_string());
        input.push('\n');
    }
    std::fs::write(dir.join("in.jsonl"), input).unwrap();
    dir
}

/// `cargo vox batch …` in `dir` with only the given provider settings.
fn cargo_vox(dir: &Path, provider: &str, base_url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("VOX_LLM_PROVIDER", provider)
        .env("VOX_LLM_BASE_URL", base_url)
        .env("VOX_LLM_API_KEY", "sk-cli-test")
        .env("OPENAI_API_KEY", "sk-cli-test")
        .args([
            "batch",
            "read_count",
            "count.vox",
            "--input",
            "in.jsonl",
            "--poll",
            "0.001",
        ])
        .args(args)
        .output()
        .unwrap()
}

fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("stdout is JSONL only"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_function_runs_over_a_jsonl_file() {
    let (emulator, _) = Emulator::start(2, None).await;
    let dir = setup("run", 12);
    let output = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--json", "--max-per-batch", "5", "--job", "job"],
    );
    let lines = json_lines(&output);
    assert!(
        output.status.success(),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(lines[0]["kind"], "estimate");
    assert_eq!(lines[0]["estimate"]["requests"], 12);
    assert_eq!(lines[0]["estimate"]["batches"], 3);
    assert!(lines[0]["estimate"]["input_cost"].as_f64().unwrap() > 0.0);
    let items = &lines[1..lines.len() - 1];
    assert_eq!(items.len(), 12);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["kind"], "item");
        assert_eq!(item["index"], i);
        assert_eq!(item["value"], serde_json::json!({"value": i}), "{item}");
    }
    let summary = &lines[lines.len() - 1];
    assert_eq!(summary["kind"], "summary");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["report"]["reran"], 2);
    assert_eq!(summary["report"]["from_batch"], 10);
    // The command's own planning pass wrote job.json: still not a resume.
    assert_eq!(summary["report"]["resumed"], false, "{summary}");
    assert_eq!(emulator.batches().len(), 3);

    // Run again: the job is done, nothing is submitted, the same results.
    let again = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--json", "--job", "job", "--output", "out.jsonl"],
    );
    assert!(again.status.success());
    assert_eq!(emulator.batches().len(), 3);
    let written = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    assert_eq!(written.lines().count(), 12);
    let lines = json_lines(&again);
    assert_eq!(lines.len(), 2, "estimate and summary only: {lines:#?}");
    assert_eq!(lines[1]["report"]["resumed"], true);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_submits_nothing_and_prices_can_be_given() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("estimate", 40);
    let output = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--estimate", "--price", "1000,0"],
    );
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("estimate: 40 requests in 1 batch(es)"),
        "{stderr}"
    );
    assert!(stderr.contains("$0.00 of output"), "{stderr}");
    assert!(emulator.state.lock().unwrap().log.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_without_batches_and_non_ai_functions_are_refused() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("refused", 2);
    let output = cargo_vox(&dir, "compatible", &emulator.base_url(), &["--json"]);
    assert!(!output.status.success());
    let lines = json_lines(&output);
    assert_eq!(lines[0]["ok"], false);
    assert!(lines[0].to_string().contains("no batch API"), "{lines:#?}");

    let output = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .args([
            "batch",
            "not_ai",
            "count.vox",
            "--input",
            "in.jsonl",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(json_lines(&output)[0]
        .to_string()
        .contains("not an @ai function"));

    // Media cannot come from JSON: refused before anything is sent.
    let output = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .args([
            "batch",
            "read_scan",
            "count.vox",
            "--input",
            "in.jsonl",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        json_lines(&output)[0]
            .to_string()
            .contains("`read_scan` takes media (`scan: Image`)"),
        "{:?}",
        json_lines(&output)
    );
    assert!(emulator.state.lock().unwrap().log.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

/// Results that cannot be written end the command with one failure
/// envelope under `--json` (once only an `error:` line on stderr).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_that_cannot_be_written_end_with_a_failure_envelope() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("unwritable", 3);
    let output = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--json", "--job", "job", "--output", "missing/out.jsonl"],
    );
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&output);
    let last = lines.last().expect("an envelope");
    assert_eq!(last["command"], "batch", "{lines:#?}");
    assert_eq!(last["ok"], false, "{lines:#?}");
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot write") && m.contains("out.jsonl")),
        "{lines:#?}"
    );
    // Reported once: no other line is a failure.
    assert_eq!(
        lines.iter().filter(|l| l["ok"] == false).count(),
        1,
        "{lines:#?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--estimate` sends nothing, so it needs neither a provider nor a key;
/// it plans for the model's provider and writes no job directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_needs_no_provider_and_no_key() {
    let dir = setup("keyless", 30);
    let output = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args([
            "batch",
            "read_count",
            "count.vox",
            "--input",
            "in.jsonl",
            "--estimate",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("estimate: 30 requests in 1 batch(es) to `gpt-4o-mini`"),
        "{stderr}"
    );
    assert!(stderr.contains("4 characters a token"), "{stderr}");
    assert!(
        stderr.contains("worst case: up to 10 item(s) re-run"),
        "{stderr}"
    );
    assert!(stderr.contains("none written"), "{stderr}");
    assert!(!dir.join("in.jsonl.vox-batch").exists());
    // Under --json too, with the worst case in the envelope.
    let output = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args([
            "batch",
            "read_count",
            "count.vox",
            "--input",
            "in.jsonl",
            "--estimate",
            "--json",
            "--max-reruns",
            "3",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let lines = json_lines(&output);
    let e = &lines[0]["estimate"];
    assert_eq!(e["max_reruns"], 3, "{e}");
    assert!(e["max_rerun_cost"].as_f64().unwrap() > 0.0, "{e}");
    // The text and schema, not the JSON around them: well under a token
    // for every four bytes of request lines.
    let tokens = e["input_tokens"].as_u64().unwrap();
    assert!(tokens > 30 * 50 && tokens < 30 * 200, "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--max-reruns` bounds the full-price re-runs; a fresh run's summary
/// does not say it resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_reruns_bounds_the_reruns_and_a_fresh_run_is_not_resumed() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("max-reruns", 8);
    let output = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--job", "job", "--max-reruns", "1", "--output", "out.jsonl"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("8 item(s): 6 from 1 batch(es), 1 re-run as normal calls, 1 failed (job"),
        "{stderr}"
    );
    assert!(!stderr.contains("resumed"), "{stderr}");
    assert_eq!(emulator.state.lock().unwrap().calls_received, 1);
    // Run again: a real resume, and the budget is the job's, not the run's.
    let again = cargo_vox(
        &dir,
        "openai",
        &emulator.base_url(),
        &["--job", "job", "--max-reruns", "1", "--output", "out.jsonl"],
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("; resumed"));
    assert_eq!(emulator.state.lock().unwrap().calls_received, 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// `check = f` is Vox code: `cargo vox batch` builds a program from the
/// module that runs it on every batch value, as the generated `f_batch`
/// does. A rejected value is re-run as a normal call whose correction
/// carries the check's problem (here it names the right number, which the
/// emulated model then answers), and an accepted one is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_with_a_check_has_each_batch_value_checked() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("check", 6);
    // Items 3 (~bad) and 5 (~expire) are re-run anyway; 1 is odd.
    let output = Command::new(BIN)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("VOX_SCRIPT_CACHE", dir.join("cache"))
        // The workspace's target directory (this binary's): the check
        // program's dependencies are built once for every test.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(BIN).parent().unwrap().parent().unwrap(),
        )
        .env("CARGO_NET_OFFLINE", "true")
        .env("VOX_LLM_PROVIDER", "openai")
        .env("VOX_LLM_BASE_URL", emulator.base_url())
        .env("OPENAI_API_KEY", "sk-cli-test")
        .envs(std::env::var_os("CARGO_HOME").map(|d| ("CARGO_HOME", d)))
        .envs(std::env::var_os("RUSTUP_HOME").map(|d| ("RUSTUP_HOME", d)))
        .args([
            "--json",
            "batch",
            "read_even",
            "count.vox",
            "--input",
            "in.jsonl",
        ])
        .args(["--poll", "0.001", "--job", "job"])
        .output()
        .unwrap();
    let lines = json_lines(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{lines:#?}\n{stderr}");
    let values: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["kind"] == "item")
        .map(|l| &l["value"]["value"])
        .collect();
    // 0, 2 and 4 as read; 1, 3 and 5 corrected to the next even number
    // (3 and 5 were re-run as normal calls, whose replies the check
    // rejected too).
    assert_eq!(values, [0, 2, 2, 4, 4, 6], "{lines:#?}");
    let summary = lines.last().unwrap();
    assert_eq!(summary["report"]["reran"], 3, "{summary}");
    assert_eq!(summary["report"]["from_batch"], 3, "{summary}");
    std::fs::remove_dir_all(&dir).ok();
}
