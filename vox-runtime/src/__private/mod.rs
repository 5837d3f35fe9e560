//! What generated code calls, and nothing a program should name itself.
//!
//! The code vox-build generates refers to these items by path
//! (`::vox_runtime::__private::…`); they are public only so that it can.
//! They are not part of vox-runtime's API: they change together with
//! vox-codegen's emitter, and [`crate::CONTRACT_VERSION`] (checked by the
//! generated `const _: () = ::vox_runtime::__private::assert_contract(N);`)
//! makes a mismatch a compile error with an explanation instead of a wrong
//! program (docs/runtime.md, "Generated code"). The same convention as
//! serde's and prost's `__private`.

use std::future::Future;

pub mod arith;
pub mod builtins;
mod category;
pub mod date;
pub mod decimal;
pub mod script;
pub mod show;

pub use crate::ai_function::{AiFunction, Args, Example, OutputSchema, DEFAULT_MAX_STEPS};
pub use crate::batch::{batch_ai, batch_ai_checked};
pub use crate::run_time_category;
pub use crate::tools::{tool_arguments, tool_value, Tool, ToolError, ToolFuture};
use crate::{default_client, Error, CONTRACT_VERSION};

/// Fails compilation when generated code was made for another contract
/// version. Generated code contains
/// `const _: () = ::vox_runtime::__private::assert_contract(N);`.
///
/// ```
/// const _: () = vox_runtime::__private::assert_contract(vox_runtime::CONTRACT_VERSION);
/// ```
///
/// ```compile_fail
/// const _: () = vox_runtime::__private::assert_contract(vox_runtime::CONTRACT_VERSION + 1);
/// ```
pub const fn assert_contract(version: u32) {
    if version != CONTRACT_VERSION {
        panic!(
            "vox-build and vox-runtime disagree on the generated-code contract version: \
             use versions of vox-build and vox-runtime that belong together \
             (`cargo vox doctor --diag vox.schema_drift` explains)"
        );
    }
}

/// Runs one `@ai` call through the process-wide default client (see
/// [`default_client`]). This is the entry point generated code calls.
///
/// Under the `fixture` provider it returns `fixture.await` (the function's
/// Vox body) and makes no request; otherwise it never polls `fixture`.
pub async fn call_ai<T, F>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Send,
    F: Future<Output = Result<T, Error>>,
{
    call_ai_with(function, &crate::CallOptions::DEFAULT, args, fixture).await
}

/// [`call_ai`] with a check of the value: what `@ai(check = f)` generates
/// (see [`crate::Client::call_ai_checked`]).
pub async fn call_ai_checked<T, F, C>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
    check: C,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Send,
    F: Future<Output = Result<T, Error>>,
    C: Fn(&T) -> Vec<String> + Sync,
{
    call_ai_checked_with(function, &crate::CallOptions::DEFAULT, args, fixture, check).await
}

/// `f_with`: [`call_ai`] with per-call options (see
/// [`crate::Client::call_ai_with`]).
pub async fn call_ai_with<T, F>(
    function: &'static AiFunction,
    options: &crate::CallOptions,
    args: Args,
    fixture: F,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Send,
    F: Future<Output = Result<T, Error>>,
{
    // Unlike `Client::call_ai_with`, the fixture body's value is held to
    // the schema's constrained strings (run-time categories, `Decimal`).
    default_client()?
        .call_with(
            function,
            options,
            args,
            fixture,
            &crate::validator::FixtureFits(crate::validator::NoCheck),
            None,
            |_: &T| {},
        )
        .await
}

/// `f_with` of a function with `check = f`.
pub async fn call_ai_checked_with<T, F, C>(
    function: &'static AiFunction,
    options: &crate::CallOptions,
    args: Args,
    fixture: F,
    check: C,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Send,
    F: Future<Output = Result<T, Error>>,
    C: Fn(&T) -> Vec<String> + Sync,
{
    default_client()?
        .call_ai_checked_with(function, options, args, fixture, check)
        .await
}

/// `f_stream_with`: a streamed call with per-call options (see
/// [`crate::Client::call_ai_stream_with`]).
pub fn call_ai_stream_with<P, T, F>(
    function: &'static AiFunction,
    options: &crate::CallOptions,
    args: Args,
    fixture: F,
) -> crate::AiStream<P, T>
where
    P: serde::de::DeserializeOwned,
    T: serde::de::DeserializeOwned + serde::Serialize + Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
{
    match default_client() {
        Ok(client) => client.call_ai_stream_with(function, options, args, fixture),
        Err(e) => crate::AiStream::failed(e),
    }
}

/// `f_stream_with` of a function with `check = f`.
pub fn call_ai_stream_checked_with<P, T, F, C>(
    function: &'static AiFunction,
    options: &crate::CallOptions,
    args: Args,
    fixture: F,
    check: C,
) -> crate::AiStream<P, T>
where
    P: serde::de::DeserializeOwned,
    T: serde::de::DeserializeOwned + serde::Serialize + Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
    C: Fn(&T) -> Vec<String> + Send + Sync + 'static,
{
    match default_client() {
        Ok(client) => client.call_ai_stream_checked_with(function, options, args, fixture, check),
        Err(e) => crate::AiStream::failed(e),
    }
}

/// The loop of the program `cargo vox eval` builds for an `@ai` function
/// (docs/eval.md): `validate JOBS` or `run JOBS`, where the file JOBS holds
/// one JSON job per line,
/// `{"job": N, "case": C, "validate": …, "model": "…" or null, "args": {…},
/// "expected": …, "instruction": "…" or null}` (an instruction replaces the
/// doc comment; N is the line's place among the jobs). First every job
/// marked `validate` (one per case) is checked — its arguments fit the
/// parameters and its `expected` value (if any) is of the return type —
/// and a case that does not is one `{"kind": "invalid", "case": C,
/// "message": …}` line; then the program exits 2 having sent nothing.
/// `validate` stops there. `run` then runs every job (at most
/// `VOX_LLM_EVAL_CONCURRENCY`, default 16, at once; the client's own cap
/// holds beneath), each answered by one `{"kind": "run", "job": N, "ok": …,
/// "value" | "message": …, "attempts", "latency_ms", "usage",
/// "cost_usd"}` line, in job order, all behind [`CALL_EVENT_PREFIX`]; the
/// file is read as the jobs start, and what waits to be reported is
/// bounded, so memory does not grow with the number of jobs. Scoring is
/// `cargo vox eval`'s.
///
/// A job may name a `"check"`: one of `checks` (a function of the module
/// taking the value, or the value and the expected value, and returning
/// its problems as `list[str]`; an `@ai` one is a judge), run by `check`
/// on the value of a call that succeeded; the run's line then holds
/// `"check": {"name", "problems": […]}` (or `"error"` when the check, a
/// judge's call, failed). A name that is not one of `checks`, or a check
/// of the expected value for a case without one, makes the case invalid.
///
/// Run with the argument `cases`, the program only writes the cases
/// written in Vox (`cases`: each a `{"kind": "case", "label", "message",
/// "args", "expected"}` line) and exits.
pub fn eval_main<P, T, C>(
    start: impl Fn(&serde_json::Value, &crate::CallOptions) -> Result<crate::AiStream<P, T>, Error>,
    cases: Vec<EvalCase>,
    checks: &[(&str, usize)],
    check: C,
) where
    P: serde::de::DeserializeOwned + Send + 'static,
    T: serde::de::DeserializeOwned + serde::Serialize + Send + 'static,
    C: Fn(&str, serde_json::Value, serde_json::Value) -> CheckFuture + Send + Sync + 'static,
{
    use std::io::{BufRead as _, Write as _};
    let emit = |event: serde_json::Value| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{CALL_EVENT_PREFIX}{event}");
        let _ = out.flush();
    };
    if std::env::args().nth(1).as_deref() == Some("cases") {
        for case in cases {
            emit(serde_json::json!({"kind": "case", "label": case.label,
                "message": case.message, "args": case.args, "expected": case.expected}));
        }
        return;
    }
    let (mode, path) = (std::env::args().nth(1), std::env::args().nth(2));
    let (Some(mode @ ("validate" | "run" | "check")), Some(path)) = (mode.as_deref(), path) else {
        emit(serde_json::json!({"kind": "invalid", "case": null,
            "message": "usage: PROGRAM cases | validate JOBS | run JOBS | check VALUES"}));
        std::process::exit(2);
    };
    if mode == "check" {
        eval_checks(&path, checks, check, emit);
        return;
    }
    let open = || match std::fs::File::open(&path) {
        Ok(file) => std::io::BufReader::new(file).lines(),
        Err(e) => {
            emit(serde_json::json!({"kind": "invalid", "case": null,
                "message": format!("cannot read the jobs: {e}")}));
            std::process::exit(2);
        }
    };
    // Every case checked before anything is sent (streams do nothing until
    // polled): the jobs marked `validate`, one per case.
    let mut invalid = false;
    for line in open() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let job = match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(job) => job,
            Err(e) => {
                emit(serde_json::json!({"kind": "invalid", "case": null,
                    "message": format!("a job line is not JSON: {e}")}));
                std::process::exit(2);
            }
        };
        if job["validate"] != serde_json::Value::Bool(true) {
            continue;
        }
        let case = job["case"].as_u64().unwrap_or(0);
        let expected = job.get("expected").filter(|e| !e.is_null());
        let problem = match start(&job["args"], &crate::CallOptions::new()) {
            Err(e) => Some(format!("its arguments do not fit: {e}")),
            Ok(_) => match expected {
                Some(expected) => serde_json::from_value::<T>(expected.clone())
                    .err()
                    .map(|e| format!("its expected value is not of the return type: {e}")),
                None => None,
            },
        }
        .or_else(|| check_problem(checks, job["check"].as_str(), expected.is_some()));
        if let Some(message) = problem {
            invalid = true;
            emit(serde_json::json!({"kind": "invalid", "case": case, "message": message}));
        }
    }
    if invalid {
        std::process::exit(2);
    }
    if mode == "validate" {
        return;
    }
    let concurrency = std::env::var("VOX_LLM_EVAL_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(16);
    let check = std::sync::Arc::new(check);
    let mut jobs = open();
    let mut number = 0usize;
    // Runs are reported in job order (a job's number is its place).
    let next = || loop {
        let line = jobs.next()?.ok()?;
        let Ok(job) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let this = number;
        number += 1;
        let report = crate::ReportHandle::new();
        let mut options = match job["model"].as_str().filter(|m| !m.trim().is_empty()) {
            Some(model) => crate::CallOptions::new().model(model.trim()),
            None => crate::CallOptions::new(),
        }
        .report(&report);
        if let Some(instruction) = job["instruction"].as_str() {
            options = options.instruction(instruction);
        }
        let stream = match start(&job["args"], &options) {
            Ok(stream) => stream,
            Err(e) => {
                return Some(Step::Done(
                    serde_json::json!({"kind": "run", "job": this, "ok": false,
                        "message": e.to_string(), "attempts": 0}),
                ))
            }
        };
        let checked_by = job["check"].as_str().map(str::to_owned);
        let expected = job["expected"].clone();
        let check = std::sync::Arc::clone(&check);
        let run = async move {
            let started = std::time::Instant::now();
            let outcome = stream.finish().await;
            let latency = started.elapsed().as_secs_f64() * 1000.0;
            let spent = report.get();
            let mut event = match outcome {
                Ok(value) => {
                    let value = serde_json::to_value(&value).unwrap_or_default();
                    let mut event = serde_json::json!({"kind": "run", "job": this,
                        "ok": true, "value": value});
                    if let Some(name) = checked_by {
                        // A judge's own call is not the evaluated model's:
                        // its time and tokens are not the run's.
                        event["check"] = verdict(&*check, name, value, expected).await;
                    }
                    event
                }
                Err(e) => serde_json::json!({"kind": "run", "job": this, "ok": false,
                    "message": e.to_string()}),
            };
            event["attempts"] = serde_json::json!(spent.attempts.len());
            event["latency_ms"] = serde_json::json!(latency);
            event["usage"] = serde_json::to_value(spent.totals()).unwrap_or_default();
            event["cost_usd"] = spent
                .cost_usd()
                .map_or(serde_json::Value::Null, |c| serde_json::json!(c));
            event
        };
        // A run that panicked still has its line, so that the ones after it
        // are reported.
        let panicked = serde_json::json!({"kind": "run", "job": this, "ok": false,
            "message": "the run panicked", "attempts": 0});
        return Some(Step::Run(Box::pin(run), panicked));
    };
    crate::block_on(in_order(concurrency, next, &emit));
}

/// What `check` says of `value` (and `expected`) as a run's `"check"`:
/// `{"name", "problems"}`, or `{"name", "error"}` when it could not run.
async fn verdict<C>(
    check: &C,
    name: String,
    value: serde_json::Value,
    expected: serde_json::Value,
) -> serde_json::Value
where
    C: Fn(&str, serde_json::Value, serde_json::Value) -> CheckFuture,
{
    match check(&name, value, expected).await {
        Ok(problems) => serde_json::json!({"name": name, "problems": problems}),
        Err(e) => serde_json::json!({"name": name, "error": e.to_string()}),
    }
}

/// One item of [`in_order`]: its line already, or a task giving it and the
/// line that stands for it if the task panics.
enum Step {
    Done(serde_json::Value),
    Run(
        std::pin::Pin<Box<dyn Future<Output = serde_json::Value> + Send>>,
        serde_json::Value,
    ),
}

/// Runs the items `next` gives, at most `concurrency` at once, and hands
/// their lines to `emit` in the order `next` gave them. One that finished
/// before those ahead of it waits, and no item starts more than four times
/// `concurrency` ahead of the first not yet reported, so what waits is
/// bounded whatever the number of items.
async fn in_order(
    concurrency: usize,
    mut next: impl FnMut() -> Option<Step>,
    emit: &impl Fn(serde_json::Value),
) {
    let mut running = tokio::task::JoinSet::new();
    let mut if_panicked = std::collections::HashMap::new();
    let mut done = std::collections::BTreeMap::new();
    let (mut started, mut reported, mut exhausted) = (0usize, 0usize, false);
    loop {
        while let Some(line) = done.remove(&reported) {
            emit(line);
            reported += 1;
        }
        if !exhausted && running.len() < concurrency && started < reported + concurrency * 4 {
            match next() {
                None => exhausted = true,
                Some(Step::Done(line)) => {
                    done.insert(started, line);
                    started += 1;
                }
                Some(Step::Run(task, panicked)) => {
                    let place = started;
                    started += 1;
                    let id = running.spawn(async move { (place, task.await) }).id();
                    if_panicked.insert(id, (place, panicked));
                }
            }
            continue;
        }
        match running.join_next_with_id().await {
            Some(Ok((id, (place, line)))) => {
                if_panicked.remove(&id);
                done.insert(place, line);
            }
            Some(Err(e)) => {
                if let Some((place, line)) = if_panicked.remove(&e.id()) {
                    done.insert(place, line);
                }
            }
            None if exhausted => break,
            None => {}
        }
    }
    while let Some(line) = done.remove(&reported) {
        emit(line);
        reported += 1;
    }
}

/// The `check VALUES` mode of [`eval_main`]: each line of the file
/// `{"job": N, "check": name, "value": …, "expected": …}` (values a batch
/// engine gave) checked by `check`, answered in order by one `{"kind":
/// "checked", "job": N, "check": {"name", "problems" | "error"}}` line; at
/// most `VOX_LLM_EVAL_CONCURRENCY` (default 16) checks (a judge's calls)
/// at once, and a bounded number waiting to be reported.
fn eval_checks<C>(path: &str, checks: &[(&str, usize)], check: C, emit: impl Fn(serde_json::Value))
where
    C: Fn(&str, serde_json::Value, serde_json::Value) -> CheckFuture + Send + Sync + 'static,
{
    use std::io::BufRead as _;
    let lines = match std::fs::File::open(path) {
        Ok(file) => std::io::BufReader::new(file).lines(),
        Err(e) => {
            emit(serde_json::json!({"kind": "invalid", "case": null,
                "message": format!("cannot read the values: {e}")}));
            std::process::exit(2);
        }
    };
    let concurrency = std::env::var("VOX_LLM_EVAL_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(16);
    let check = std::sync::Arc::new(check);
    let known: Vec<String> = checks.iter().map(|(n, _)| (*n).to_owned()).collect();
    let mut lines = lines;
    let next = || loop {
        let line = lines.next()?.ok()?;
        let Ok(item) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let job = item["job"].as_u64().unwrap_or(0);
        let name = item["check"].as_str().unwrap_or("").to_owned();
        if !known.contains(&name) {
            return Some(Step::Done(
                serde_json::json!({"kind": "checked", "job": job,
                "check": {"name": name, "error": "no such check"}}),
            ));
        }
        let check = std::sync::Arc::clone(&check);
        let run = async move {
            let verdict = verdict(
                &*check,
                name,
                item["value"].clone(),
                item["expected"].clone(),
            );
            serde_json::json!({"kind": "checked", "job": job, "check": verdict.await})
        };
        // A check that panicked is a check that failed.
        let panicked = serde_json::json!({"kind": "checked", "job": job,
            "check": {"error": "the check panicked"}});
        return Some(Step::Run(Box::pin(run), panicked));
    };
    crate::block_on(in_order(concurrency, next, &emit));
}

/// A case of an `@ai` function written in Vox (an `assert_eq(f(…),
/// expected)` of an `@test`), as a `cargo vox eval` program's `cases` mode
/// writes it: where it is written, the arguments by parameter name, and
/// the expected value.
#[derive(Debug, Clone)]
pub struct EvalCase {
    pub label: &'static str,
    /// What the `@test` prints when the assertion fails.
    pub message: &'static str,
    pub args: serde_json::Value,
    pub expected: serde_json::Value,
}

impl EvalCase {
    pub fn new(
        label: &'static str,
        message: &'static str,
        args: &[(&str, serde_json::Value)],
        expected: serde_json::Value,
    ) -> EvalCase {
        let args = args
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect();
        EvalCase {
            label,
            message,
            args: serde_json::Value::Object(args),
            expected,
        }
    }
}

/// A value of a case written in Vox, as JSON (`null` for one that does not
/// serialize, which the case's check then reports).
pub fn eval_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// What a check of a `cargo vox eval` program gives: the problems of one
/// value (empty: it passes), or why the check could not run.
pub type CheckFuture =
    std::pin::Pin<Box<dyn Future<Output = Result<Vec<String>, Error>> + Send + 'static>>;

/// Why a job's check `name` cannot run, if it cannot: it is none of
/// `checks` (name, parameters), or it takes the expected value and the
/// case has none.
fn check_problem(checks: &[(&str, usize)], name: Option<&str>, expected: bool) -> Option<String> {
    let name = name?;
    match checks.iter().find(|(n, _)| *n == name) {
        None => {
            let known: Vec<String> = checks.iter().map(|(n, _)| format!("`{n}`")).collect();
            Some(format!(
                "`{name}` is not a check of the module: a check takes the value (and the \
                 expected value) of the function's return type and returns `list[str]`{}",
                if known.is_empty() {
                    " (the module has none)".to_owned()
                } else {
                    format!("; the module's are {}", known.join(", "))
                }
            ))
        }
        Some((_, 2)) if !expected => Some(format!(
            "the check `{name}` takes the expected value, and the case has none"
        )),
        Some(_) => None,
    }
}

/// A value a `cargo vox eval` program's check is given, as the check's
/// parameter type.
pub fn eval_value<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, Error> {
    serde_json::from_value(value).map_err(|e| {
        Error::MalformedResponse(format!("the value does not fit the check's parameter: {e}"))
    })
}

/// The error of a check name the program does not have (never reached:
/// names are checked before anything runs).
pub fn no_check(name: &str) -> Error {
    Error::MalformedResponse(format!("no check named `{name}`"))
}

/// The argument `name` of a `cargo vox call` program's JSON arguments, as
/// the parameter's type (a missing one is read as `null`, so an `Option`
/// may be left out).
pub fn call_arg<T: serde::de::DeserializeOwned>(
    args: &serde_json::Value,
    name: &str,
) -> Result<T, Error> {
    let value = args.get(name).cloned().unwrap_or(serde_json::Value::Null);
    serde_json::from_value(value).map_err(|e| Error::Serialize {
        argument: name.to_owned(),
        message: format!("the argument does not fit the parameter's type: {e}"),
    })
}

/// The line prefix of the events a `cargo vox call` program writes on
/// standard output (what the program's own `print`s write has none).
pub const CALL_EVENT_PREFIX: &str = "\u{1e}vox-call ";

/// The `main` of the program `cargo vox call` builds (docs/runtime.md,
/// "Streaming"): the first argument is the call's arguments as a JSON
/// object, the second `stream` or `plain`; `start` makes the function's
/// stream from them. Writes one [`CALL_EVENT_PREFIX`]ed JSON line per event
/// (`partial`s and `retry`s only when streaming; one `final`) and exits 0
/// when the call succeeded, 1 when it failed, 2 when the arguments did not
/// fit. A third argument, when not empty, is the call's model
/// (`CallOptions::model`, from `--model`).
pub fn call_main<P, T>(
    start: impl FnOnce(&serde_json::Value, &crate::CallOptions) -> Result<crate::AiStream<P, T>, Error>,
) where
    P: serde::de::DeserializeOwned + serde::Serialize,
    T: serde::Serialize,
{
    use std::io::Write as _;
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let stream = argv.get(1).is_some_and(|m| m == "stream");
    let emit = |event: serde_json::Value| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{CALL_EVENT_PREFIX}{event}");
        let _ = out.flush();
    };
    let failed = |message: String,
                  attempts: u32,
                  code: i32,
                  event: &dyn Fn(serde_json::Value) -> serde_json::Value|
     -> ! {
        emit(event(
            serde_json::json!({"kind": "final", "ok": false, "attempts": attempts, "message": message}),
        ));
        std::process::exit(code)
    };
    let plain = |event: serde_json::Value| event;
    let args: serde_json::Value = match argv.first().map(|a| serde_json::from_str(a)) {
        Some(Ok(v @ serde_json::Value::Object(_))) => v,
        Some(Ok(_)) => failed("--args must be a JSON object".into(), 0, 2, &plain),
        Some(Err(e)) => failed(format!("--args is not JSON: {e}"), 0, 2, &plain),
        None => failed("no arguments given".into(), 0, 2, &plain),
    };
    let report = crate::ReportHandle::new();
    let options = match argv.get(2).filter(|m| !m.trim().is_empty()) {
        Some(model) => crate::CallOptions::new().model(model.trim()),
        None => crate::CallOptions::new(),
    }
    .report(&report);
    // What the call used and cost, in its final event.
    let spent = |mut event: serde_json::Value| {
        let report = report.get();
        event["usage"] = serde_json::to_value(report.totals()).unwrap_or_default();
        event["cost_usd"] = report
            .cost_usd()
            .map_or(serde_json::Value::Null, |c| serde_json::json!(c));
        event
    };
    let mut calls = match start(&args, &options) {
        Ok(stream) => stream,
        Err(e) => failed(e.to_string(), 0, 2, &plain),
    };
    let outcome = crate::block_on(async {
        let mut attempts = 1;
        while let Some(event) = calls.next().await {
            match event {
                crate::StreamEvent::Partial { attempt, value } => {
                    attempts = attempts.max(attempt);
                    if stream {
                        emit(serde_json::json!({"kind": "partial", "attempt": attempt,
                            "value": serde_json::to_value(&value).unwrap_or_default()}));
                    }
                }
                crate::StreamEvent::Retry { attempt, reason } => {
                    attempts = attempts.max(attempt + 1);
                    if stream {
                        emit(
                            serde_json::json!({"kind": "retry", "attempt": attempt, "reason": reason}),
                        );
                    }
                }
                crate::StreamEvent::Done(result) => return (result, attempts),
            }
        }
        (
            Err(Error::MalformedResponse(
                "the call ended without an outcome".into(),
            )),
            attempts,
        )
    });
    match outcome {
        (Ok(value), attempts) => {
            match serde_json::to_value(&value) {
                Ok(value) => emit(spent(
                    serde_json::json!({"kind": "final", "ok": true, "attempts": attempts, "value": value}),
                )),
                Err(e) => failed(
                    format!("the value does not serialize: {e}"),
                    attempts,
                    1,
                    &spent,
                ),
            }
            std::process::exit(0)
        }
        (Err(error), attempts) => {
            let attempts = match &error {
                Error::InvalidOutput { attempts, .. } => *attempts,
                _ => attempts,
            };
            failed(error.to_string(), attempts, 1, &spent)
        }
    }
}

/// A partial type's `Option` field: absent is `None` (not seen yet),
/// `null` is `Some(None)`, a value `Some(Some(v))` (docs/runtime.md,
/// "Streaming").
pub fn seen<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// `options` with the values of the run-time category `type_name` taken
/// from an argument of the function (`queues: list[Queue]` for
/// `type Queue = dynamic`; docs/language.md, "Categories known at run
/// time"), unless the options already give that type's values.
pub fn argument_categories<'a, V: AsRef<str>>(
    options: &'a crate::CallOptions,
    type_name: &str,
    values: &[V],
) -> std::borrow::Cow<'a, crate::CallOptions> {
    if options.categories_given().has(type_name) {
        return std::borrow::Cow::Borrowed(options);
    }
    std::borrow::Cow::Owned(
        options
            .clone()
            .categories(type_name, values.iter().map(|v| v.as_ref().to_owned())),
    )
}

/// Judges one reply's content as a call does — parse, repair (when
/// `repair`), correction — for the `correction` bench.
pub fn judge_reply<T: serde::de::DeserializeOwned>(
    content: &str,
    output: &OutputSchema,
    repair: bool,
) -> Result<T, String> {
    crate::repair::parse_reply::<T>(content, output, repair).map(|(value, _)| value)
}

/// The loop of the check program `cargo vox batch` builds for an `@ai`
/// function with `check = f` (docs/runtime.md, "Bulk runs"): each line of
/// standard input is one value of the function's return type as JSON, and
/// each gets one line of standard output, `{"problems":[…]}` — the check's
/// problems (none: accepted), a value that is not of the type, or a panic
/// in the check, each as a problem. Returns when standard input ends.
pub fn serve_checks<T, C>(check: C)
where
    T: serde::de::DeserializeOwned,
    C: Fn(T) -> Vec<String>,
{
    use std::io::{BufRead as _, Write as _};
    // A panic in the check is reported as a problem, not printed.
    std::panic::set_hook(Box::new(|_| {}));
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let problems = match serde_json::from_str::<T>(&line) {
            Ok(value) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(value)))
                .unwrap_or_else(|panic| {
                    let text = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "it panicked".to_owned());
                    vec![format!("the check failed: {text}")]
                }),
            Err(e) => vec![format!("the value is not of the function's type: {e}")],
        };
        let reply = serde_json::json!({ "problems": problems });
        if writeln!(stdout, "{reply}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn contract_check_accepts_current_version() {
        const _: () = super::assert_contract(crate::CONTRACT_VERSION);
    }
}
