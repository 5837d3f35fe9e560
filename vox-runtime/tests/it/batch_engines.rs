//! Bulk runs against loopback emulations of OpenAI's Files and Batch APIs
//! and Anthropic's Message Batches: status transitions, partial failures,
//! expired and missing items, a batch that errors, splitting, re-runs as
//! normal calls, and runs SIGKILLed at each step and resumed without a
//! duplicate submission or a lost item.

use crate::batch_emulator;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use batch_emulator::{Emulator, KillPoint, CHILD_KEY};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{batch_results, BatchOptions, BatchReport, Client, Config, Error, Provider};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
struct Count {
    value: i64,
}

static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "Count",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    false,
);

/// `@ai fn read_count(text: str) to Count`, two attempts.
static READ_COUNT: AiFunction = AiFunction::new(
    "read_count",
    "Read the number after the hash sign.",
    &COUNT_SCHEMA,
)
.with_max_iterations(2);

static OTHER: AiFunction = AiFunction::new("other_function", "Something else.", &COUNT_SCHEMA);

/// Item `i`'s text: `#n=i`, and for some items a marker saying what the
/// emulated engine does with it.
fn input_text(i: u64) -> String {
    let marker = if i == 20 {
        " ~alwaysbad"
    } else if i % 7 == 3 {
        " ~bad"
    } else if i % 11 == 5 {
        " ~expire"
    } else if i % 13 == 6 {
        " ~missing"
    } else if i % 17 == 8 {
        " ~fail"
    } else {
        ""
    };
    format!("item #n={i}{marker}")
}

fn inputs(n: u64) -> impl Iterator<Item = Result<Args, Error>> {
    (0..n).map(|i| Args::new().arg("text", &input_text(i)))
}

/// Items the engine does not answer acceptably: re-run as normal calls.
fn rerun_expected(i: u64) -> bool {
    input_text(i).contains('~')
}

fn client(provider: Provider, base_url: &str) -> Client {
    client_with_key(provider, base_url, "sk-batch-test")
}

fn client_with_key(provider: Provider, base_url: &str, key: &str) -> Client {
    Client::new(
        Config::builder(provider)
            .base_url(base_url)
            .api_key(key)
            .default_model(if provider == Provider::Anthropic {
                "claude-test"
            } else {
                "gpt-test"
            })
            .request_timeout(Duration::from_secs(20))
            .max_transport_retries(1)
            .backoff(Duration::from_millis(1), Duration::from_millis(5))
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn options(per_batch: u64) -> BatchOptions {
    BatchOptions {
        max_requests_per_batch: per_batch,
        poll_initial: Duration::from_millis(1),
        poll_max: Duration::from_millis(5),
        ..BatchOptions::default()
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vox-batch-{name}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every item in input order with its value, item 20 with its error.
fn check_results(dir: &Path, n: u64) {
    let items: Vec<_> = batch_results::<Count>(dir)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(items.len() as u64, n);
    for (i, item) in (0..n).zip(&items) {
        assert_eq!(item.index, i);
        if i == 20 {
            let error = item.result.as_ref().unwrap_err();
            assert!(error.contains("read_count"), "{error}");
        } else {
            assert_eq!(item.result, Ok(Count { value: i as i64 }), "item {i}");
        }
    }
}

fn check_report(report: &BatchReport, n: u64, batches: usize) {
    let reran = (0..n).filter(|&i| rerun_expected(i)).count() as u64;
    assert_eq!(report.inputs, n);
    assert_eq!(report.batches, batches);
    assert_eq!(report.reran, reran, "{report:?}");
    assert_eq!(report.from_batch, n - reran, "{report:?}");
    assert_eq!(report.failed, u64::from(n > 20), "{report:?}");
}

/// No batch was created twice, and every input was in exactly one batch.
fn check_submitted_once(emulator: &Emulator, n: u64, batches: usize) {
    let created = emulator.batches();
    assert_eq!(created.len(), batches, "batches created: {created:#?}");
    let mut seen: HashMap<String, usize> = HashMap::new();
    for batch in &created {
        for (custom_id, _) in &batch.requests {
            *seen.entry(custom_id.clone()).or_default() += 1;
        }
    }
    assert_eq!(seen.len() as u64, n);
    assert!(seen.values().all(|&c| c == 1), "{seen:?}");
}

/// Items accepted from a batch were never asked again; re-run items were
/// asked as often as their attempts needed, no more.
fn check_calls(emulator: &Emulator, n: u64) {
    let state = emulator.state.lock().unwrap();
    for i in 0..n {
        let calls = state.calls.get(&i).copied().unwrap_or(0);
        let expected = match i {
            20 => 2,
            i if rerun_expected(i) => 1,
            _ => 0,
        };
        assert_eq!(calls, expected, "normal calls for item {i}");
    }
}

async fn full_run(provider: Provider) {
    let (emulator, _) = Emulator::start(3, None).await;
    let dir = temp_dir("full");
    let client = client(provider, &emulator.base_url());
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(40), &options(15))
        .await
        .unwrap();
    check_report(&report, 40, 3);
    assert!(!report.resumed);
    check_results(&dir, 40);
    check_submitted_once(&emulator, 40, 3);
    check_calls(&emulator, 40);
    // Polled through the provider's states, not only once.
    let polls = emulator.batches().iter().map(|b| b.polls).min().unwrap();
    assert!(polls >= 4, "each batch polled until it ended: {polls}");

    // Running again resumes the finished job: nothing is sent but looks.
    let before = emulator.state.lock().unwrap().log.len();
    let again = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(40), &options(15))
        .await
        .unwrap();
    assert!(again.resumed);
    assert_eq!(again.from_batch, report.from_batch);
    assert_eq!(again.reran, report.reran);
    let log = emulator.state.lock().unwrap().log[before..].to_vec();
    assert!(log.is_empty(), "a finished job sends nothing: {log:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn openai_batches_run_split_judged_and_rerun() {
    full_run(Provider::OpenAi).await;
}

#[tokio::test]
async fn anthropic_batches_run_split_judged_and_rerun() {
    full_run(Provider::Anthropic).await;
}

#[tokio::test]
async fn batch_requests_are_the_calls_a_normal_call_sends() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("same-wire");
    let client = client(Provider::OpenAi, &emulator.base_url());
    client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap();
    // Item 3 (~bad) was re-run as a normal call: its first request is the
    // very body the batch carried for it.
    let batch = &emulator.batches()[0];
    let (_, in_batch) = batch
        .requests
        .iter()
        .find(|(id, _)| id.ends_with("-3"))
        .unwrap();
    assert_eq!(in_batch["response_format"]["type"], "json_schema");
    assert_eq!(
        in_batch["response_format"]["json_schema"]["strict"],
        serde_json::Value::Bool(true)
    );
    assert_eq!(in_batch["model"], "gpt-test");
    std::fs::remove_dir_all(&dir).ok();
}

/// A batch the engine failed whole is not re-run at full price unless
/// asked: the run stops, naming it, before any re-run is sent.
async fn a_batch_that_errors(provider: Provider) {
    let (emulator, _) = Emulator::start(1, None).await;
    let dir = temp_dir("errors");
    let client = client(provider, &emulator.base_url());
    let texts = ["#n=0", "#n=1 ~batcherror", "#n=2", "#n=3"];
    let inputs = || texts.iter().map(|t| Args::new().arg("text", t));
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(), &options(2))
        .await
        .unwrap_err();
    let text = error.to_string();
    let first = emulator.batches()[0].id.clone();
    assert!(
        text.contains(&first) && text.contains("2 items") && text.contains("--rerun-failed"),
        "{text}"
    );
    assert_eq!(
        emulator.state.lock().unwrap().calls_received,
        0,
        "no re-run was sent"
    );
    // Stopped, not stuck: the same run stops again, and with the option
    // the failed batch's items are re-run.
    let again = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(), &options(2))
        .await
        .unwrap_err();
    assert_eq!(again.to_string(), text);
    let report = client
        .batch::<Count, _>(
            &READ_COUNT,
            &dir,
            inputs(),
            &BatchOptions {
                rerun_failed_batches: true,
                ..options(2)
            },
        )
        .await
        .unwrap();
    assert_eq!(report.batches, 2);
    // The first batch failed whole: both its items were re-run.
    assert_eq!((report.from_batch, report.reran, report.failed), (2, 2, 0));
    let values: Vec<i64> = batch_results::<Count>(&dir)
        .unwrap()
        .map(|item| item.unwrap().result.unwrap().value)
        .collect();
    assert_eq!(values, [0, 1, 2, 3]);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn an_openai_batch_that_fails_stops_the_run_before_reruns() {
    a_batch_that_errors(Provider::OpenAi).await;
}

#[tokio::test]
async fn an_anthropic_batch_without_a_response_stops_the_run_before_reruns() {
    a_batch_that_errors(Provider::Anthropic).await;
}

#[tokio::test]
async fn batches_are_split_by_bytes_too() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("bytes");
    let client = client(Provider::Anthropic, &emulator.base_url());
    let options = BatchOptions {
        max_bytes_per_batch: 3_000,
        ..options(1_000)
    };
    let texts: Vec<String> = (0..12)
        .map(|i| format!("#n={i} {}", "x".repeat(400)))
        .collect();
    let report = client
        .batch::<Count, _>(
            &READ_COUNT,
            &dir,
            texts.iter().map(|t| Args::new().arg("text", t)),
            &options,
        )
        .await
        .unwrap();
    let created = emulator.batches();
    assert!(created.len() > 1, "{}", created.len());
    assert_eq!(report.batches, created.len());
    for batch in &created {
        let bytes: usize = batch
            .requests
            .iter()
            .map(|(id, params)| {
                serde_json::json!({"custom_id": id, "params": params})
                    .to_string()
                    .len()
                    + 1
            })
            .sum();
        assert!(bytes <= 3_000, "a batch of {bytes} bytes");
    }
    assert_eq!(report.from_batch, 12);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn providers_without_a_batch_api_are_a_clear_error() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("no-api");
    for provider in [Provider::Compatible, Provider::Ollama, Provider::Gemini] {
        let client = client(provider, &emulator.base_url());
        let error = client
            .batch::<Count, _>(&READ_COUNT, &dir, inputs(2), &options(10))
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, Error::Batch(_)) && text.contains("no batch API"),
            "{text}"
        );
    }
    assert!(emulator.state.lock().unwrap().log.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn a_job_directory_belongs_to_one_function() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("owner");
    let client = client(Provider::OpenAi, &emulator.base_url());
    client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(2), &options(10))
        .await
        .unwrap();
    let error = client
        .batch::<Count, _>(&OTHER, &dir, inputs(2), &options(10))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("holds a job of `read_count`"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

const CHILD_ENV: &str = "VOX_BATCH_TEST_CHILD";

/// Not a test on its own: the process a kill test starts and SIGKILLs.
#[test]
fn child_entry() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.split('|');
    let provider: Provider = parts.next().unwrap().parse().unwrap();
    let base_url = parts.next().unwrap().to_owned();
    let dir = PathBuf::from(parts.next().unwrap());
    let n: u64 = parts.next().unwrap().parse().unwrap();
    let max_reruns: Option<u64> = parts.next().map(|m| m.parse().unwrap());
    vox_runtime::block_on(async {
        let client = client_with_key(provider, &base_url, CHILD_KEY);
        match max_reruns {
            None => client
                .batch::<Count, _>(&READ_COUNT, &dir, inputs(n), &options(12))
                .await
                .unwrap(),
            Some(max_reruns) => client
                .batch::<Count, _>(
                    &READ_COUNT,
                    &dir,
                    all_bad(n),
                    &BatchOptions {
                        max_reruns,
                        ..options(100)
                    },
                )
                .await
                .unwrap(),
        };
    });
}

/// The name libtest gives this module's `child_entry` test in this binary
/// (`batch_engines::child_entry`: the module path without the crate).
fn child_entry_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::child_entry"),
        None => "child_entry".to_owned(),
    }
}

/// Runs a batch in a child process, SIGKILLs it when the emulator reaches
/// `point`, then resumes in this process and checks that nothing was
/// submitted twice and nothing lost.
async fn killed_and_resumed(provider: Provider, point: KillPoint) {
    let n = 30;
    let (emulator, mut killed) = Emulator::start(2, Some(point)).await;
    let dir = temp_dir(&format!("kill-{point:?}"));
    let spec = format!(
        "{}|{}|{}|{n}",
        provider.name(),
        emulator.base_url(),
        dir.display()
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &child_entry_name(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, spec)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reached = tokio::time::timeout(Duration::from_secs(120), killed.recv()).await;
    if point == KillPoint::Rerun {
        // Re-runs go concurrently: the one answered before the stall is
        // recorded by the child (nothing else it sends is answered now).
        wait_for_a_rerun_outcome(&dir).await;
    }
    // The child, stalled, still drives the job: a run in this process is
    // refused by its lock, before sending anything.
    let sent = emulator.state.lock().unwrap().log.len();
    let refused = client(provider, &emulator.base_url())
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(n), &options(12))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("another run is using"),
        "{point:?}: {refused}"
    );
    assert_eq!(emulator.state.lock().unwrap().log.len(), sent);
    // SIGKILL on Unix: no destructor, no flush, no signal handler runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(reached.unwrap(), Some(point), "the child reached {point:?}");
    assert!(!status.success());

    let client = client(provider, &emulator.base_url());
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(n), &options(12))
        .await
        .unwrap();
    assert!(report.resumed, "{point:?}");
    check_report(&report, n, 3);
    check_results(&dir, n);
    check_submitted_once(&emulator, n, 3);
    check_calls(&emulator, n);
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_runs_killed_at_each_step_resume_exactly_once() {
    for point in [
        KillPoint::Upload,
        KillPoint::Create,
        KillPoint::Poll,
        KillPoint::Download,
        KillPoint::Rerun,
    ] {
        killed_and_resumed(Provider::OpenAi, point).await;
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_runs_killed_at_each_step_resume_exactly_once() {
    for point in [
        KillPoint::Create,
        KillPoint::Poll,
        KillPoint::Download,
        KillPoint::Rerun,
    ] {
        killed_and_resumed(Provider::Anthropic, point).await;
    }
}

#[tokio::test]
async fn values_of_any_json_type_can_be_held_to_the_schema() {
    let (emulator, _) = Emulator::start(0, None).await;
    let client = client(Provider::Anthropic, &emulator.base_url());
    let texts = ["#n=0", "#n=1 ~bad"];
    let run = |check_schema: bool| {
        let dir = temp_dir(&format!("schema-{check_schema}"));
        let client = client.clone();
        async move {
            let options = BatchOptions {
                check_schema,
                ..options(10)
            };
            let inputs = texts.iter().map(|t| Args::new().arg("text", t));
            let report = client
                .batch::<serde_json::Value, _>(&READ_COUNT, &dir, inputs, &options)
                .await
                .unwrap();
            let values: Vec<_> = batch_results::<serde_json::Value>(&dir)
                .unwrap()
                .map(|item| item.unwrap().result.unwrap())
                .collect();
            std::fs::remove_dir_all(&dir).ok();
            (report, values)
        }
    };
    // Any JSON is a `Value`: the reply that does not fit is taken as is...
    let (report, values) = run(false).await;
    assert_eq!((report.from_batch, report.reran), (2, 0));
    assert_eq!(values[1], serde_json::json!({"value": "not a number"}));
    // ...unless values are held to the schema: then it is re-run.
    let (report, values) = run(true).await;
    assert_eq!((report.from_batch, report.reran), (1, 1));
    assert_eq!(values[1], serde_json::json!({"value": 1}));
}

#[tokio::test]
async fn a_plan_only_run_sends_nothing_and_the_next_run_submits_it() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("plan-only");
    let client = client(Provider::OpenAi, &emulator.base_url());
    let planned = client
        .batch::<Count, _>(
            &READ_COUNT,
            &dir,
            inputs(25),
            &BatchOptions {
                plan_only: true,
                ..options(10)
            },
        )
        .await
        .unwrap();
    assert!(planned.planned_only);
    assert_eq!((planned.inputs, planned.batches), (25, 3));
    assert!(
        planned.request_bytes > 25 * 100,
        "{}",
        planned.request_bytes
    );
    assert!(emulator.state.lock().unwrap().log.is_empty());
    // The inputs are not read again: the plan is the job.
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, std::iter::empty(), &options(10))
        .await
        .unwrap();
    // Only planned before (as `cargo vox batch` plans for its estimate):
    // this first run that sends anything is not a resume.
    assert!(!report.resumed && !report.planned_only, "{report:?}");
    check_report(&report, 25, 3);
    check_results(&dir, 25);
    assert_eq!(report.request_bytes, planned.request_bytes);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn two_runs_never_drive_one_job_at_once() {
    let (emulator, _) = Emulator::start(1_000_000, None).await;
    let dir = temp_dir("locked");
    let client = client(Provider::OpenAi, &emulator.base_url());
    // The first run submits and then polls a batch that does not end.
    let first = {
        let (client, dir) = (client.clone(), dir.clone());
        tokio::spawn(async move {
            client
                .batch::<Count, _>(&READ_COUNT, &dir, inputs(3), &options(10))
                .await
        })
    };
    while emulator.batches().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(3), &options(10))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("another run is using"),
        "{error}"
    );
    // Results can be read meanwhile (nothing collected yet).
    let items: Vec<_> = batch_results::<Count>(&dir).unwrap().collect();
    assert_eq!(items.len(), 3);
    // Once the first run is gone (as if killed), the job can be taken up.
    first.abort();
    let _ = first.await;
    emulator.state.lock().unwrap().batches[0].polls = 1_000_001;
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(3), &options(10))
        .await
        .unwrap();
    assert_eq!(emulator.batches().len(), 1, "submitted once");
    assert!(report.resumed);
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reruns_go_concurrently_up_to_the_clients_cap() {
    // Every batch reply is rejected, and each normal call takes 50 ms: 40
    // re-runs one after another would take 2 s.
    let (emulator, _) = Emulator::start_slow(0, None, Duration::from_millis(50)).await;
    let dir = temp_dir("concurrent");
    let client = Client::new(
        Config::builder(Provider::OpenAi)
            .base_url(emulator.base_url())
            .api_key("sk-batch-test")
            .default_model("gpt-test")
            .max_concurrent_requests(6)
            .build()
            .unwrap(),
    )
    .unwrap();
    let inputs = (0..40).map(|i| Args::new().arg("text", &format!("item #n={i} ~bad")));
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs, &options(25))
        .await
        .unwrap();
    assert_eq!((report.reran, report.failed), (40, 0), "{report:?}");
    let max = emulator.state.lock().unwrap().max_calls_in_flight;
    assert_eq!(
        max, 6,
        "re-runs in flight at once, at most the client's cap"
    );
    check_results_plain(&dir, 40);
    // Each item was asked once, though they finished in any order.
    let state = emulator.state.lock().unwrap();
    assert!(
        (0..40).all(|i| state.calls.get(&i) == Some(&1)),
        "{:?}",
        state.calls
    );
    drop(state);
    std::fs::remove_dir_all(&dir).ok();
}

/// Every item in input order with its value.
fn check_results_plain(dir: &Path, n: u64) {
    let values: Vec<_> = batch_results::<Count>(dir)
        .unwrap()
        .map(|item| item.unwrap().result.unwrap().value)
        .collect();
    assert_eq!(values, (0..n as i64).collect::<Vec<_>>());
}

/// `n` inputs whose batch replies are all rejected (each re-run's one
/// call is accepted).
fn all_bad(n: u64) -> impl Iterator<Item = Result<Args, Error>> {
    (0..n).map(|i| Args::new().arg("text", &format!("item #n={i} ~bad")))
}

/// Starts the child process of a kill test with `spec`'s tail.
fn spawn_child(
    provider: Provider,
    emulator: &Emulator,
    dir: &Path,
    tail: &str,
) -> std::process::Child {
    let spec = format!(
        "{}|{}|{}|{tail}",
        provider.name(),
        emulator.base_url(),
        dir.display()
    );
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &child_entry_name(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, spec)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// A run killed with re-runs in flight paid for them: the resumed run
/// counts them against `max_reruns`, so the calls the provider bills over
/// the job's life never exceed it.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reruns_in_flight_at_a_kill_count_against_max_reruns() {
    let (emulator, mut killed) = Emulator::start(0, Some(KillPoint::Rerun)).await;
    let dir = temp_dir("kill-budget");
    let max_reruns = 6;
    let mut child = spawn_child(
        Provider::OpenAi,
        &emulator,
        &dir,
        &format!("30|{max_reruns}"),
    );
    let reached = tokio::time::timeout(Duration::from_secs(120), killed.recv()).await;
    wait_for_a_rerun_outcome(&dir).await;
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(reached.unwrap(), Some(KillPoint::Rerun));
    let client = client(Provider::OpenAi, &emulator.base_url());
    let report = client
        .batch::<Count, _>(
            &READ_COUNT,
            &dir,
            all_bad(30),
            &BatchOptions {
                max_reruns,
                ..options(100)
            },
        )
        .await
        .unwrap();
    let billed = emulator.state.lock().unwrap().calls_received;
    assert!(
        billed <= max_reruns as usize,
        "{billed} normal calls sent over the job's life, max_reruns {max_reruns}: {report:?}"
    );
    assert_eq!(report.inputs, 30);
    assert_eq!(report.from_batch, 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// Waits until a re-run log in `dir` holds an outcome (not only `sent`).
async fn wait_for_a_rerun_outcome(dir: &Path) {
    for _ in 0..2000 {
        let recorded = std::fs::read_dir(dir).unwrap().flatten().any(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.ends_with(".reruns.jsonl")
                && std::fs::read_to_string(entry.path())
                    .is_ok_and(|t| t.lines().any(|l| l.contains("\"ok\"")))
        });
        if recorded {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the child never recorded its answered re-run");
}

/// Appends `line` to the job's journal, as a stopped run (or a hand) leaves it.
fn append_journal(dir: &Path, line: &str) {
    use std::io::Write as _;
    let mut journal = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("journal.jsonl"))
        .unwrap();
    writeln!(journal, "{line}").unwrap();
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn plan_only(provider: Provider, emulator: &Emulator, dir: &Path, texts: &[String]) {
    let client = client(provider, &emulator.base_url());
    vox_runtime::block_on(async {
        client
            .batch::<Count, _>(
                &READ_COUNT,
                dir,
                texts.iter().map(|t| Args::new().arg("text", t)),
                &BatchOptions {
                    plan_only: true,
                    ..options(100)
                },
            )
            .await
            .unwrap()
    });
}

fn values(dir: &Path) -> Vec<i64> {
    batch_results::<Count>(dir)
        .unwrap()
        .map(|item| item.unwrap().result.unwrap().value)
        .collect()
}

/// A creation lost on Anthropic (a kill, or a failed answer) is looked for
/// among the account's batches; another job's batch of the same size,
/// created since, is not taken for it: its results' custom_ids are not
/// this job's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_jobs_anthropic_batch_is_never_taken_for_a_lost_creation() {
    let (emulator, _) = Emulator::start(1, None).await;
    let (ours, theirs) = (temp_dir("ours"), temp_dir("theirs"));
    let texts: Vec<String> = (0..5).map(|i| format!("#n={i}")).collect();
    std::thread::scope(|s| {
        s.spawn(|| plan_only(Provider::Anthropic, &emulator, &ours, &texts));
    });
    // Our run was stopped while creating its batch, before the engine had it.
    append_journal(
        &ours,
        &format!(r#"{{"event":"creating","chunk":0,"at":{}}}"#, unix_now()),
    );
    // Meanwhile another job of the account ran a batch of five.
    let client = client(Provider::Anthropic, &emulator.base_url());
    let other: Vec<String> = (0..5).map(|i| format!("#n={}", 100 + i)).collect();
    client
        .batch::<Count, _>(
            &READ_COUNT,
            &theirs,
            other.iter().map(|t| Args::new().arg("text", t)),
            &options(100),
        )
        .await
        .unwrap();
    assert_eq!(values(&theirs), [100, 101, 102, 103, 104]);
    let report = client
        .batch::<Count, _>(&READ_COUNT, &ours, std::iter::empty(), &options(100))
        .await
        .unwrap();
    assert_eq!(values(&ours), [0, 1, 2, 3, 4], "{report:?}");
    assert_eq!(emulator.batches().len(), 2, "ours was created");
    std::fs::remove_dir_all(&ours).ok();
    std::fs::remove_dir_all(&theirs).ok();
}

/// A creation whose answer was lost made the batch: the resumed run finds
/// it (on Anthropic by waiting until its results show it is this job's)
/// and creates none, even with more batches on the account than one list
/// page holds.
async fn a_lost_creation_is_found_past_the_first_page(provider: Provider) {
    let (emulator, _) = Emulator::start(1, None).await;
    let dir = temp_dir("paged");
    let client = client(provider, &emulator.base_url());
    emulator.state.lock().unwrap().lose_next_create = true;
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("500"), "{error}");
    // 150 batches of other jobs created since, newest first in the lists;
    // Anthropic's pages are made small enough to need paging.
    let anthropic = provider == Provider::Anthropic;
    for k in 0..150 {
        emulator.add_batch(anthropic, &[(format!("other-{k}"), format!("#n={k}"))], 9);
    }
    if anthropic {
        emulator.state.lock().unwrap().page_size = 40;
    }
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap();
    assert!(report.resumed);
    let ours = emulator
        .batches()
        .iter()
        .filter(|b| b.requests.iter().any(|(id, _)| !id.starts_with("other-")))
        .count();
    assert_eq!(ours, 1, "the lost batch was found, not created again");
    assert_eq!(values(&dir), [0, 1, 2, 3]);
    let pages = emulator.state.lock().unwrap().list_pages.len();
    assert!(pages >= 2, "{pages} pages read");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_openai_creation_is_found_past_the_first_page() {
    a_lost_creation_is_found_past_the_first_page(Provider::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_anthropic_creation_is_found_past_the_first_page() {
    a_lost_creation_is_found_past_the_first_page(Provider::Anthropic).await;
}

/// The pages read are bounded: with more recent batches than they hold,
/// the run says what to do rather than guess or create a second batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lookup_of_a_lost_creation_reads_a_bounded_number_of_pages() {
    let (emulator, _) = Emulator::start(1, None).await;
    let dir = temp_dir("bounded");
    let client = client(Provider::OpenAi, &emulator.base_url());
    std::thread::scope(|s| {
        s.spawn(|| {
            plan_only(
                Provider::OpenAi,
                &emulator,
                &dir,
                &["#n=0".to_owned(), "#n=1".to_owned()],
            )
        });
    });
    append_journal(&dir, r#"{"event":"file","chunk":0,"id":"file-x"}"#);
    append_journal(
        &dir,
        &format!(r#"{{"event":"creating","chunk":0,"at":{}}}"#, unix_now()),
    );
    for k in 0..30 {
        emulator.add_batch(false, &[(format!("other-{k}"), format!("#n={k}"))], 9);
    }
    emulator.state.lock().unwrap().page_size = 1;
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, std::iter::empty(), &options(100))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("20 pages") && text.contains("batch_absent") && text.contains("vox_job="),
        "{text}"
    );
    assert_eq!(emulator.state.lock().unwrap().list_pages.len(), 20);
    assert_eq!(emulator.batches().len(), 30, "nothing created");
    // Told there is none, the run creates it.
    append_journal(&dir, r#"{"event":"batch_absent","chunk":0}"#);
    emulator.state.lock().unwrap().files.insert(
        "file-x".into(),
        (
            "x".into(),
            std::fs::read(dir.join("chunk-0.requests.jsonl")).unwrap(),
        ),
    );
    client
        .batch::<Count, _>(&READ_COUNT, &dir, std::iter::empty(), &options(100))
        .await
        .unwrap();
    assert_eq!(values(&dir), [0, 1]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A batch whose engine names an output file that is not a file id is not
/// fetched, and the job stays resumable: nothing wrong is recorded, and a
/// journal holding such a place (an older vox, a hand) is corrected from
/// the engine.
#[tokio::test]
async fn a_bad_output_file_id_is_refused_and_the_job_resumes() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("bad-output");
    let client = client(Provider::OpenAi, &emulator.base_url());
    emulator.state.lock().unwrap().output_file_id = Some("../../../etc/passwd".into());
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not a file id") && error.to_string().contains("next run"),
        "{error}"
    );
    let fetched = emulator.state.lock().unwrap().log.clone();
    assert!(!fetched.iter().any(|l| l.contains("passwd")), "{fetched:?}");
    emulator.state.lock().unwrap().output_file_id = None;
    let report = client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap();
    assert!(report.resumed);
    assert_eq!(values(&dir), [0, 1, 2, 3]);

    // A journal that says the results are at a bad place, not collected.
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let tampered: String = journal
        .lines()
        .filter(|l| !l.contains("\"collected\""))
        .map(|l| {
            if l.contains("\"ended\"") {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["output"] = "../../../etc/passwd".into();
                format!("{v}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(dir.join("journal.jsonl"), tampered).unwrap();
    std::fs::remove_file(dir.join("chunk-0.results.jsonl")).unwrap();
    client
        .batch::<Count, _>(&READ_COUNT, &dir, inputs(4), &options(100))
        .await
        .unwrap();
    assert_eq!(values(&dir), [0, 1, 2, 3]);
    let fetched = emulator.state.lock().unwrap().log.clone();
    assert!(!fetched.iter().any(|l| l.contains("passwd")), "{fetched:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A result line of another job in this job's batch is not taken.
#[tokio::test]
async fn a_foreign_result_line_is_an_error_not_a_value() {
    let (emulator, _) = Emulator::start(0, None).await;
    let dir = temp_dir("foreign-line");
    let client = client(Provider::OpenAi, &emulator.base_url());
    std::thread::scope(|s| {
        s.spawn(|| {
            plan_only(
                Provider::OpenAi,
                &emulator,
                &dir,
                &["#n=0".to_owned(), "#n=1".to_owned()],
            )
        });
    });
    // The engine's batch for this job answers with another job's ids.
    let foreign = emulator.add_batch(
        false,
        &[
            ("vox-0".into(), "#n=50".into()),
            ("vox-1".into(), "#n=51".into()),
        ],
        9,
    );
    append_journal(
        &dir,
        &format!(r#"{{"event":"batch","chunk":0,"id":"{foreign}"}}"#),
    );
    let error = client
        .batch::<Count, _>(&READ_COUNT, &dir, std::iter::empty(), &options(100))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("\"vox-0\"") && error.to_string().contains("not this job's"),
        "{error}"
    );
    let items: Vec<_> = batch_results::<Count>(&dir)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(items.iter().all(|i| i.result.is_err()), "{items:?}");
    std::fs::remove_dir_all(&dir).ok();
}

static LABEL_SCHEMA: OutputSchema = OutputSchema::new(
    "Label",
    r#"{"type":"object","properties":{"value":{"type":"string","x-vox-categories":"Queue"}},"required":["value"],"additionalProperties":false}"#,
    false,
);

/// `@ai fn read_label(text: str) to Label` with `type Queue = dynamic`.
static READ_LABEL: AiFunction = AiFunction::new("read_label", "Label it.", &LABEL_SCHEMA);

/// `BatchOptions::call` (docs/runtime.md, "Bulk runs"): the model,
/// temperature, completion limit and run-time categories of every request
/// of the batch; a function with categories and no values sends nothing.
#[tokio::test]
async fn a_batch_s_call_options_shape_every_request() {
    let (emulator, _) = Emulator::start(0, None).await;
    let client = client(Provider::OpenAi, &emulator.base_url());
    let call = vox_runtime::CallOptions::new()
        .model("gpt-other")
        .temperature(0.7)
        .max_tokens(300)
        .categories("Queue", ["billing", "shipping"]);
    let dir = temp_dir("call-options");
    client
        .batch::<Count, _>(
            &READ_COUNT,
            &dir,
            inputs(4),
            &BatchOptions {
                call: call.clone(),
                ..options(100)
            },
        )
        .await
        .unwrap();
    let batch = &emulator.batches()[0];
    assert_eq!(batch.requests.len(), 4);
    for (_, body) in &batch.requests {
        assert_eq!(body["model"], "gpt-other", "{body}");
        assert_eq!(body["temperature"], 0.7, "{body}");
        let limit = body
            .get("max_completion_tokens")
            .or_else(|| body.get("max_tokens"));
        assert_eq!(limit, Some(&serde_json::json!(300)), "{body}");
    }
    std::fs::remove_dir_all(&dir).ok();

    // The categories fill the schema every request carries.
    let dir = temp_dir("call-categories");
    let _ = client
        .batch::<serde_json::Value, _>(
            &READ_LABEL,
            &dir,
            inputs(2),
            &BatchOptions {
                call,
                max_reruns: 0,
                ..options(100)
            },
        )
        .await;
    let batch = &emulator.batches()[1];
    for (_, body) in &batch.requests {
        let schema = &body["response_format"]["json_schema"]["schema"];
        assert_eq!(
            schema["properties"]["value"],
            serde_json::json!({"type": "string", "enum": ["billing", "shipping"]}),
            "{body}"
        );
        assert!(!body.to_string().contains("x-vox-categories"));
    }
    std::fs::remove_dir_all(&dir).ok();

    // Without values: an error, and no third batch.
    let dir = temp_dir("call-no-categories");
    let err = client
        .batch::<serde_json::Value, _>(&READ_LABEL, &dir, inputs(2), &options(100))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Categories { type_name, .. } if type_name == "Queue"),
        "{err}"
    );
    assert_eq!(emulator.batches().len(), 2);
    std::fs::remove_dir_all(&dir).ok();
}
