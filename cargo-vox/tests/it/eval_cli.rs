//! `cargo vox eval` end to end (docs/eval.md): two scripted models on a
//! loopback server answering 18 and 14 of 20 cases right give pass rates
//! 0.90 and 0.70 exactly, with per-field accuracy, each failure's reason,
//! stability over repeats, tokens and cost; `--min-pass` gates; bad case
//! files are usage errors naming the line, with nothing sent. No request
//! leaves 127.0.0.1: the environment is cleared.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::call_cli::{cargo_vox, json_lines};

const SCRIPT: &str = r#"type Weight {
    value: int
    unit: str
}

/// Read the weight after the hash sign.
@ai(structured_output = Weight, model = "gpt-4o-mini")
@uses(net)
fn read_weight(text: str) to Weight {
    return Weight { value: 0, unit: "kg" }
}
"#;

fn setup(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vox-eval-cli-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("weight.vox"), SCRIPT).unwrap();
    let cases: String = (1..=20)
        .map(|i| {
            json!({"args": {"text": format!("#n={i}")}, "expected": {"value": i, "unit": "kg"}})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(dir.join("cases.jsonl"), cases).unwrap();
    dir
}

/// A chat-completions server on 127.0.0.1 that answers the weight in the
/// request's `#n=K`, wrongly for some cases depending on the model:
/// `model-a` gets the value of cases 3 and 11 wrong; `model-b` the unit of
/// cases 1 and 2 and the value of 3 to 6, and case 20 right only the first
/// time it is asked. Counts the requests.
fn models_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    let asked: Arc<Mutex<std::collections::HashMap<(String, u64), usize>>> = Arc::default();
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
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            counted.fetch_add(1, Ordering::SeqCst);
            let request: Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut model = request["model"].as_str().unwrap_or("").to_owned();
            // A reworded instruction makes model-b as good as model-a.
            if request.to_string().contains("Weigh it carefully.") {
                model = "model-a".into();
            }
            let text = request.to_string();
            let n: u64 = text
                .rsplit_once("#n=")
                .map(|(_, rest)| {
                    rest.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            let times = {
                let mut asked = asked.lock().unwrap();
                let slot = asked.entry((model.clone(), n)).or_default();
                *slot += 1;
                *slot
            };
            let (value, unit) = match (model.as_str(), n) {
                ("model-a", 3 | 11) => (n + 100, "kg"),
                ("model-b", 1 | 2) => (n, "lb"),
                ("model-b", 3..=6) => (n + 100, "kg"),
                ("model-b", 20) if times > 1 => (0, "kg"),
                _ => (n, "kg"),
            };
            let content = if model == "judge-model" {
                // The judge: what is wrong with the weight it is shown.
                let problems: Vec<&str> = if text.contains("lb") {
                    vec!["the unit is lb"]
                } else {
                    vec![]
                };
                json!({"value": problems}).to_string()
            } else {
                json!({"value": value, "unit": unit}).to_string()
            };
            let reply = json!({
                "id": "chatcmpl-eval", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop"}],
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

fn env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("VOX_LLM_PROVIDER", "compatible".into()),
        ("VOX_LLM_BASE_URL", url.into()),
        ("VOX_LLM_API_KEY", "sk-eval-test".into()),
        ("VOX_LLM_MAX_RETRIES", "0".into()),
        // model-a has a price, model-b none.
        ("VOX_LLM_PRICES", "model-a=1.0,2.0".into()),
    ]
}

fn run(dir: &Path, env: &[(&'static str, String)], args: &[&str]) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cargo_vox(dir, &env, args)
}

#[test]
fn two_models_are_scored_side_by_side_and_gated() {
    let dir = setup("two-models");
    let (url, requests) = models_server();
    let env = env(&url);
    let base = [
        "--json",
        "eval",
        "read_weight",
        "weight.vox",
        "--cases",
        "cases.jsonl",
    ];
    let mut args = base.to_vec();
    args.extend(["--models", "model-a,model-b", "--min-pass", "0.85"]);
    let out = run(&dir, &env, &args);
    let lines = json_lines(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // model-b is under 0.85: the gate fails.
    assert_eq!(out.status.code(), Some(1), "{lines:#?}\n{stderr}");
    assert_eq!(requests.load(Ordering::SeqCst), 40);
    let cases: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "case").collect();
    assert_eq!(cases.len(), 40);
    let summary = lines.last().unwrap();
    assert_eq!(summary["kind"], "summary");
    assert_eq!(summary["command"], "eval");
    assert_eq!(summary["ok"], false);
    let models = summary["models"].as_array().unwrap();
    let (a, b) = (&models[0], &models[1]);
    assert_eq!(a["model"], "model-a");
    assert_eq!(
        (a["pass_rate"].as_f64(), a["passed"].as_u64()),
        (Some(0.9), Some(18))
    );
    assert_eq!(a["cases"], 20);
    assert_eq!(b["model"], "model-b");
    assert_eq!(
        (b["pass_rate"].as_f64(), b["passed"].as_u64()),
        (Some(0.7), Some(14))
    );
    // Per-field accuracy: a misses two values; b four values and two units.
    assert_eq!(a["field_accuracy"], json!({"unit": 1.0, "value": 0.9}));
    assert_eq!(b["field_accuracy"], json!({"unit": 0.9, "value": 0.8}));
    // Each failure's reason, by the case's line.
    let failures = a["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0]["case"], 3);
    assert_eq!(failures[0]["reason"], "`value`: expected 3, got 103");
    assert_eq!(
        b["failures"][0]["reason"], "`unit`: expected \"kg\", got \"lb\"",
        "{b:#?}"
    );
    // Tokens are the server's usage summed; the cost is model-a's price.
    assert_eq!(
        a["usage"],
        json!({"input_tokens": 200, "output_tokens": 100, "cached_tokens": 0, "reasoning_tokens": 0})
    );
    let cost = a["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - 20.0 * (10.0 + 5.0 * 2.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(b["cost_usd"], Value::Null, "model-b has no price");
    assert_eq!(
        (a["min_pass_met"].as_bool(), b["min_pass_met"].as_bool()),
        (Some(true), Some(false))
    );
    // A case envelope says what was wrong.
    let wrong = cases
        .iter()
        .find(|c| c["model"] == "model-a" && c["case"] == 11)
        .unwrap();
    assert_eq!(wrong["ok"], false);
    assert_eq!(wrong["fields"], json!({"unit": true, "value": false}));

    // model-a alone passes the gate.
    let mut args = base.to_vec();
    args.extend(["--models", "model-a", "--min-pass", "0.85"]);
    let out = run(&dir, &env, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_lines(&out).last().unwrap()["ok"], true);

    // Three runs per case: model-b, asked case 20 once already (and right
    // then), gets it wrong every time now; case 7 always right.
    let mut args = base.to_vec();
    args.extend(["--models", "model-b", "--repeat", "3"]);
    let out = run(&dir, &env, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = json_lines(&out);
    let summary = lines.pop().unwrap();
    // Each case's envelopes say how many of its runs passed.
    let of = |line: u64| {
        let runs: Vec<&Value> = lines.iter().filter(|l| l["case"] == line).collect();
        assert_eq!(runs.len(), 3, "{runs:?}");
        let s = &runs[0]["stability"];
        assert!(runs.iter().all(|r| r["stability"] == *s));
        Some((s["passed"].as_u64().unwrap(), s["of"].as_u64().unwrap()))
    };
    assert_eq!(of(20), Some((0, 3)));
    assert_eq!(of(7), Some((3, 3)));
    assert_eq!(of(3), Some((0, 3)));
    // The summary counts the cases by how many of their runs passed:
    // model-b misses 3 to 6 always, 1 and 2 (the unit), and 20 now.
    assert_eq!(
        summary["models"][0]["stability"],
        json!([{"passed": 0, "of": 3, "cases": 7}, {"passed": 1, "of": 3, "cases": 0},
            {"passed": 2, "of": 3, "cases": 0}, {"passed": 3, "of": 3, "cases": 13}])
    );

    // --instruction replaces the doc comment for the run: the server
    // answers model-b's reworded requests as model-a's.
    std::fs::write(dir.join("reworded.txt"), "Weigh it carefully.\n").unwrap();
    let mut args = base.to_vec();
    args.extend(["--models", "model-b", "--instruction", "reworded.txt"]);
    let out = run(&dir, &env, &args);
    let summary = json_lines(&out).pop().unwrap();
    assert_eq!(summary["instruction"], "reworded.txt");
    assert_eq!(
        summary["models"][0]["pass_rate"].as_f64(),
        Some(0.9),
        "{summary:#?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_case_files_name_the_line_and_send_nothing() {
    let dir = setup("bad-cases");
    let (url, requests) = models_server();
    let env = env(&url);
    for (cases, line, says) in [
        ("{\"args\":{\"text\":\"#n=1\"}}\nnot json\n", 2, "not JSON"),
        ("{\"args\":{\"txt\":\"#n=1\"}}\n", 1, "no parameter `txt`"),
        ("{\"args\":{\"text\":\"a\"},\"expected\":{\"value\":1,\"unit\":\"kg\"}}\n{\"args\":{\"text\":5}}\n", 2, "arguments do not fit"),
        ("{\"args\":{\"text\":\"a\"},\"expected\":{\"value\":\"heavy\",\"unit\":\"kg\"}}\n", 1, "expected value is not of the return type"),
    ] {
        std::fs::write(dir.join("bad.jsonl"), cases).unwrap();
        let out = run(
            &dir,
            &env,
            &["--json", "eval", "read_weight", "weight.vox", "--cases", "bad.jsonl"],
        );
        assert_eq!(out.status.code(), Some(2), "{cases}: {}", String::from_utf8_lossy(&out.stderr));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&format!("bad.jsonl:{line}")), "{cases}: {text}");
        assert!(text.contains(says), "{cases}: {text}");
    }
    assert_eq!(requests.load(Ordering::SeqCst), 0, "nothing is sent");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--record` keeps the replies (and each run's latency and cost) beside the
/// cases; a run after it, with no server and no key, re-scores them to the
/// identical envelopes.
#[test]
fn a_recorded_run_re_scores_offline_to_identical_envelopes() {
    let dir = setup("record");
    let (url, requests) = models_server();
    let base = [
        "--json",
        "eval",
        "read_weight",
        "weight.vox",
        "--cases",
        "cases.jsonl",
        "--models",
        "model-a,model-b",
    ];
    let mut args = base.to_vec();
    args.push("--record");
    let recorded = run(&dir, &env(&url), &args);
    assert_eq!(
        recorded.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    assert_eq!(requests.load(Ordering::SeqCst), 40);
    assert!(dir.join("cases.cassettes").is_dir());
    // No server (a port nothing listens on) and no key.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    let offline = [
        ("VOX_LLM_PROVIDER", "compatible".to_owned()),
        ("VOX_LLM_BASE_URL", dead_url),
        ("VOX_LLM_MAX_RETRIES", "0".to_owned()),
        ("VOX_LLM_PRICES", "model-a=1.0,2.0".to_owned()),
    ];
    let replayed = run(&dir, &offline, &base);
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&recorded.stdout),
        "the re-scored run reads as the recorded one"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 40);
    let summary = json_lines(&replayed).pop().unwrap();
    assert_eq!(summary["models"][1]["pass_rate"].as_f64(), Some(0.7));

    // While the module is unchanged the recorded runs alone are re-scored
    // (nothing is run): the same envelopes without the replies.
    let replies = dir.join("cases.cassettes/read_weight.jsonl");
    let kept = std::fs::read(&replies).unwrap();
    std::fs::remove_file(&replies).unwrap();
    let alone = run(&dir, &offline, &base);
    assert_eq!(
        alone.stdout,
        recorded.stdout,
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );
    // A changed module is replayed through its program, from the replies:
    // without them every run misses; with them, the same scores again.
    let source = std::fs::read_to_string(dir.join("weight.vox")).unwrap();
    std::fs::write(dir.join("weight.vox"), format!("{source}\n// changed\n")).unwrap();
    let missing = run(&dir, &offline, &base);
    let summary = json_lines(&missing).pop().unwrap();
    assert_eq!(
        summary["models"][0]["pass_rate"].as_f64(),
        Some(0.0),
        "{summary:#?}"
    );
    std::fs::write(&replies, kept).unwrap();
    let again = run(&dir, &offline, &base);
    assert_eq!(
        json_lines(&again).pop().unwrap()["models"],
        json_lines(&recorded).pop().unwrap()["models"]
    );
    assert_eq!(requests.load(Ordering::SeqCst), 40);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--report DIR` writes one self-contained page; a headless Chromium
/// renders it (a screenshot is taken) with the models' rows, the charts and
/// no script errors. Skipped, with a message, where no Chromium is installed.
#[test]
fn the_report_renders_in_a_headless_browser() {
    let dir = setup("report");
    let (url, _) = models_server();
    let out = run(
        &dir,
        &env(&url),
        &[
            "--json",
            "eval",
            "read_weight",
            "weight.vox",
            "--cases",
            "cases.jsonl",
            "--models",
            "model-a,model-b",
            "--report",
            "rep",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.join("rep/index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<tr class=\"model\">").count(), 2, "{html}");
    assert!(html.contains("class=\"latency\""));
    assert!(!html.contains("<script"), "the page needs no script");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nor the network"
    );
    assert_eq!(
        json_lines(&out).pop().unwrap()["report"],
        Value::String("rep/index.html".into())
    );

    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!(
            "SKIPPED: no headless Chromium (apt-get install chromium); the report was not rendered"
        );
        std::fs::remove_dir_all(&dir).ok();
        return;
    };
    let profile = dir.join("browser-profile");
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--enable-logging=stderr",
    ];
    let file_url = format!("file://{}", page.display());
    let shot = dir.join("report.png");
    let screenshot = std::process::Command::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,900")
        .arg(&file_url)
        .output()
        .unwrap();
    let bytes = std::fs::read(&shot).unwrap_or_default();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "no screenshot ({} bytes): {}",
        bytes.len(),
        String::from_utf8_lossy(&screenshot.stderr)
    );
    let dom = std::process::Command::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&file_url)
        .output()
        .unwrap();
    let rendered = String::from_utf8_lossy(&dom.stdout);
    assert!(
        rendered.contains("model-a") && rendered.contains("model-b"),
        "{rendered}"
    );
    assert_eq!(rendered.matches("class=\"model\"").count(), 2, "{rendered}");
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(!log.contains("Uncaught"), "script errors: {log}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Checks of the module: a plain `list[str]` function and an `@ai` judge
/// (`--check`, and a case's own `"check"`).
const CHECKS: &str = r#"
/// A value over 15 is suspect.
fn at_most_15(w: Weight) to list[str] {
    if w.value > 15 {
        return [str(w.value) + " is over 15"]
    }
    []
}

/// Say what is wrong with the weight, if anything.
@ai(model = "judge-model")
@uses(net)
fn judge_unit(w: Weight) to list[str] {
    []
}
"#;

/// A plain check and an `@ai` judge score the runs with their problems as
/// the failures' reasons; the judge's calls are recorded in a cassette of
/// their own and re-score offline; a check the module does not have, or
/// one of the expected value for a case without one, is a usage error
/// naming the line, with nothing sent.
#[test]
fn checks_and_an_ai_judge_score_runs_and_the_judge_replays_from_its_own_cassette() {
    let dir = setup("checks");
    std::fs::write(dir.join("weight.vox"), format!("{SCRIPT}{CHECKS}")).unwrap();
    // Cases 1 to 10 are judged (`--check`), 11 to 20 checked by `at_most_15`.
    let cases: String = (1..=20)
        .map(|i| {
            let case = if i <= 10 {
                json!({"args": {"text": format!("#n={i}")}})
            } else {
                json!({"args": {"text": format!("#n={i}")}, "check": "at_most_15"})
            };
            case.to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("checked.jsonl"), cases).unwrap();
    let (url, requests) = models_server();
    let base = [
        "--json",
        "eval",
        "read_weight",
        "weight.vox",
        "--cases",
        "checked.jsonl",
        "--models",
        "model-b",
        "--check",
        "judge_unit",
    ];
    let mut args = base.to_vec();
    args.push("--record");
    let recorded = run(&dir, &env(&url), &args);
    let lines = json_lines(&recorded);
    assert_eq!(
        recorded.status.code(),
        Some(0),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    // 20 runs of the function and 10 of the judge.
    assert_eq!(requests.load(Ordering::SeqCst), 30);
    let summary = lines.last().unwrap();
    let b = &summary["models"][0];
    // The judge fails cases 1 and 2 (model-b answers lb), `at_most_15`
    // cases 16 to 20.
    assert_eq!(
        (b["pass_rate"].as_f64(), b["passed"].as_u64()),
        (Some(0.65), Some(13)),
        "{b:#?}"
    );
    let reasons: Vec<(u64, &str)> = b["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["case"].as_u64().unwrap(), f["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(reasons[0], (1, "check `judge_unit`: the unit is lb"));
    assert_eq!(reasons[1], (2, "check `judge_unit`: the unit is lb"));
    assert_eq!(reasons[2], (16, "check `at_most_15`: 16 is over 15"));
    assert_eq!(reasons.len(), 7);
    let case = lines
        .iter()
        .find(|l| l["kind"] == "case" && l["case"] == 1)
        .unwrap();
    assert_eq!(
        case["check"],
        json!({"name": "judge_unit", "problems": ["the unit is lb"]})
    );
    // The judge has a cassette of its own beside the function's.
    let tape = dir.join("checked.cassettes");
    assert!(tape.join("judge_unit.jsonl").is_file(), "{tape:?}");
    assert!(tape.join("read_weight.jsonl").is_file());
    // Offline, no key: the same envelopes, judge included.
    let offline = [
        ("VOX_LLM_PROVIDER", "compatible".to_owned()),
        ("VOX_LLM_BASE_URL", "http://127.0.0.1:9/v1".to_owned()),
        ("VOX_LLM_MAX_RETRIES", "0".to_owned()),
    ];
    let replayed = run(&dir, &offline, &base);
    assert_eq!(
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&recorded.stdout),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert_eq!(requests.load(Ordering::SeqCst), 30);

    // A check the module does not have; one of the expected value for a
    // case without one; `tags` is not a check (its parameter is no Weight).
    std::fs::write(
        dir.join("weight.vox"),
        format!("{SCRIPT}{CHECKS}\nfn near(w: Weight, want: Weight) to list[str] {{\n    []\n}}\n"),
    )
    .unwrap();
    for (cases, line, says) in [
        (
            "{\"args\":{\"text\":\"#n=1\"}}\n{\"args\":{\"text\":\"#n=2\"},\"check\":\"nope\"}\n",
            2,
            "`nope` is not a check of the module",
        ),
        (
            "{\"args\":{\"text\":\"#n=1\"},\"check\":\"near\"}\n",
            1,
            "the check `near` takes the expected value, and the case has none",
        ),
        (
            "{\"args\":{\"text\":\"#n=1\"},\"check\":7}\n",
            1,
            "`check` names a function of the module",
        ),
    ] {
        std::fs::write(dir.join("bad.jsonl"), cases).unwrap();
        let out = run(
            &dir,
            &env(&url),
            &[
                "--json",
                "eval",
                "read_weight",
                "weight.vox",
                "--cases",
                "bad.jsonl",
            ],
        );
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{cases}: {text}");
        assert!(
            text.contains(&format!("bad.jsonl:{line}")),
            "{cases}: {text}"
        );
        assert!(text.contains(says), "{cases}: {text}");
    }
    assert_eq!(requests.load(Ordering::SeqCst), 30, "nothing is sent");
    std::fs::remove_dir_all(&dir).ok();
}

/// Cases written in Vox: each `assert_eq(read_weight(…), expected)` of an
/// `@test` whose arguments and expected value use no local. Without
/// `--cases` they are the run's cases, named by their file and line;
/// `--record` keeps their replies beside the module.
const VOX_CASES: &str = r##"
fn kilos(n: int) to Weight {
    Weight { value: n, unit: "kg" }
}

@test
fn reads_weights() {
    assert_eq(read_weight("#n=3"), Weight { value: 3, unit: "kg" })
    assert_eq(read_weight(text: "#n=11"), kilos(11))
    assert_eq(read_weight("#n=" + str(7)), kilos(7))
    let n = 4
    // Not a case: it uses a local.
    assert_eq(read_weight("#n=4"), kilos(n))
}
"##;

#[test]
fn cases_written_in_vox_are_scored_without_a_cases_file() {
    let dir = setup("vox-cases");
    std::fs::write(dir.join("weight.vox"), format!("{SCRIPT}{VOX_CASES}")).unwrap();
    let (url, requests) = models_server();
    let args = [
        "--json",
        "eval",
        "read_weight",
        "weight.vox",
        "--models",
        "model-a",
        "--record",
    ];
    let out = run(&dir, &env(&url), &args);
    let lines = json_lines(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(requests.load(Ordering::SeqCst), 3, "{lines:#?}");
    let cases: Vec<(String, u64, bool)> = lines
        .iter()
        .filter(|l| l["kind"] == "case")
        .map(|l| {
            (
                l["source"].as_str().unwrap().to_owned(),
                l["case"].as_u64().unwrap(),
                l["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    // The lines of the three `assert_eq`s in the file (SCRIPT comes first);
    // model-a reads 3 and 11 wrong.
    let base = SCRIPT.lines().count() as u64;
    assert_eq!(
        cases,
        [
            ("weight.vox".to_owned(), base + 8, false),
            ("weight.vox".to_owned(), base + 9, false),
            ("weight.vox".to_owned(), base + 10, true),
        ],
        "{lines:#?}"
    );
    let summary = lines.last().unwrap();
    assert_eq!(summary["cases"], 3);
    // The reason starts as the `@test` would print its failure.
    let reason = summary["models"][0]["failures"][1]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("assert_eq(read_weight(") && reason.contains(" failed at weight.vox:"),
        "{reason}"
    );
    assert!(
        reason.ends_with(": `value`: expected 11, got 111"),
        "{reason}"
    );
    assert!(dir.join("read_weight.eval.cassettes").is_dir());
    // No cases at all: a usage error saying how to write them.
    std::fs::write(dir.join("weight.vox"), SCRIPT).unwrap();
    let out = run(
        &dir,
        &env(&url),
        &["--json", "eval", "read_weight", "weight.vox"],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("no cases"), "{text}");
    assert_eq!(requests.load(Ordering::SeqCst), 3);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--batch` sends the runs through the batch engine (a loopback emulation
/// of OpenAI's Files and Batch APIs) and scores them as the direct run
/// does; run again, the job resumes and nothing is submitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_run_scores_as_the_direct_run_and_resumes() {
    use crate::batch_cli::batch_emulator::Emulator;
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = setup("batch");
    std::fs::write(
        dir.join("count.vox"),
        r#"type Count {
    value: int
}

/// Read the number after the hash sign.
@ai(structured_output = Count, max_iterations = 2, model = "gpt-4o-mini")
@uses(net)
fn read_count(text: str) to Count {
    return Count { value: 0 }
}

fn at_most_5(c: Count) to list[str] {
    if c.value > 5 {
        return [str(c.value) + " is over 5"]
    }
    []
}
"#,
    )
    .unwrap();
    // 10 cases; two expect the wrong value; the batch's reply to case 4
    // does not fit (it is re-run as a normal call); 8 and 9 are checked
    // by `at_most_5`, which they fail.
    let cases: String = (0..10)
        .map(|i| {
            let text = if i == 4 {
                format!("#n={i} ~bad")
            } else {
                format!("#n={i}")
            };
            let want = if i == 3 || i == 7 { i + 1 } else { i };
            let mut case = json!({"args": {"text": text}, "expected": {"value": want}});
            if i >= 8 {
                case["check"] = json!("at_most_5");
            }
            case.to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("counts.jsonl"), cases).unwrap();
    let env = [
        ("VOX_LLM_PROVIDER", "openai".to_owned()),
        ("VOX_LLM_BASE_URL", emulator.base_url()),
        ("VOX_LLM_API_KEY", "sk-eval-test".to_owned()),
        ("VOX_LLM_MAX_RETRIES", "0".to_owned()),
    ];
    let base = [
        "--json",
        "eval",
        "read_count",
        "count.vox",
        "--cases",
        "counts.jsonl",
    ];
    let direct = run(&dir, &env, &base);
    assert_eq!(
        direct.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&direct.stderr)
    );
    assert!(emulator.batches().is_empty());
    let mut args = base.to_vec();
    args.extend(["--batch", "--poll", "0.001"]);
    let batched = run(&dir, &env, &args);
    assert_eq!(
        batched.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&batched.stderr)
    );
    assert_eq!(emulator.batches().len(), 1);
    let score = |out: &Output| {
        let summary = json_lines(out).pop().unwrap();
        let m = &summary["models"][0];
        json!([
            m["pass_rate"],
            m["passed"],
            m["field_accuracy"],
            m["failures"],
            m["stability"]
        ])
    };
    assert_eq!(score(&batched), score(&direct));
    assert_eq!(
        json_lines(&direct).pop().unwrap()["models"][0]["pass_rate"].as_f64(),
        Some(0.6)
    );
    assert_eq!(
        json_lines(&batched).pop().unwrap()["models"][0]["failures"][2]["reason"],
        "check `at_most_5`: 8 is over 5"
    );
    // No usage per run from the engine's results: the cost is not known.
    assert_eq!(
        json_lines(&batched).pop().unwrap()["models"][0]["cost_usd"],
        Value::Null
    );
    assert!(dir.join("counts.eval-batch").is_dir());
    // Run again: the job is done, nothing is submitted, the same scores.
    let again = run(&dir, &env, &args);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(emulator.batches().len(), 1);
    assert_eq!(score(&again), score(&direct));
    std::fs::remove_dir_all(&dir).ok();
}

/// On a terminal a progress bar counts the runs (its last state, all runs
/// scored, stays above the table); under `--json` there is none. The
/// terminal is a pseudo-terminal from `script` (util-linux), skipped with
/// a message where there is none.
#[test]
fn a_terminal_shows_a_progress_bar_of_the_runs() {
    let Ok(script) = which_script() else {
        eprintln!("skipped: no `script` to give the run a terminal");
        return;
    };
    let dir = setup("progress");
    let (url, _) = models_server();
    let bin = env!("CARGO_BIN_EXE_cargo-vox");
    let command = format!("{bin} eval read_weight weight.vox --cases cases.jsonl --models model-a");
    let out = Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("TERM", "xterm")
        .env("VOX_SCRIPT_CACHE", dir.join("cache"))
        .env(
            "CARGO_TARGET_DIR",
            Path::new(bin).parent().unwrap().parent().unwrap(),
        )
        .env("CARGO_NET_OFFLINE", "true")
        .envs(env(&url))
        .envs(
            ["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN"]
                .iter()
                .filter_map(|v| std::env::var_os(v).map(|x| (*v, x))),
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(screen.contains("20/20 runs scored"), "{screen}");
    assert!(screen.contains("model-a"), "{screen}");
    // Not on a terminal (or under --json): no bar.
    let plain = run(
        &dir,
        &env(&url),
        &[
            "eval",
            "read_weight",
            "weight.vox",
            "--cases",
            "cases.jsonl",
            "--models",
            "model-a",
        ],
    );
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("runs scored"));
    std::fs::remove_dir_all(&dir).ok();
}

fn which_script() -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("script"))
        .find(|p| p.is_file())
        .ok_or(())
}
