//! `cargo vox eval FUNCTION [PATHS…] --cases CASES.jsonl [--models A,B] [--repeat K]
//! [--min-pass X]`: how often an `@ai` function is right on real model output
//! (docs/eval.md).
//!
//! Each case is a line `{"args": {…}, "expected": …}`. Every model runs every
//! case `K` times in a program built from the module in the script cache
//! (vox-codegen's `Checked::eval_program`, like `cargo vox call`'s), at the
//! client's concurrency cap; each run's value is compared with the expected
//! one, field by field for a record. The cases are checked — arguments and
//! expected values against the function's types — before anything is sent.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use clap::Args;
use serde_json::{json, Value};
use vox_runtime::__private::CALL_EVENT_PREFIX;

use crate::context::Context;
use crate::envelope::ENVELOPE_VERSION;
use crate::error::{Error, Result};
use crate::{exit, output};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The `@ai` function to evaluate.
    pub function: String,
    /// `.vox` files or directories holding it (default: the package's sources).
    pub paths: Vec<PathBuf>,
    /// The cases: one JSON object per line, `{"args": {…}, "expected": …}`. Without it, the
    /// cases written in Vox: each `assert_eq(FUNCTION(…), expected)` of an `@test`.
    #[arg(long, value_name = "CASES.jsonl")]
    pub cases: Option<PathBuf>,
    /// The models to compare (a `provider:` prefix allowed), comma-separated; default: the
    /// function's own.
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Runs of each case per model (stability: how many of them pass).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeat: u32,
    /// A function of the module that checks each value: it takes the value (or the value and
    /// the expected one) and returns its problems as `list[str]`; an `@ai` one is a judge. A
    /// case's own `"check"` overrides it.
    #[arg(long, value_name = "FN")]
    pub check: Option<String>,
    /// Exit 1 when a model's pass rate is under this (0 to 1).
    #[arg(long, value_name = "X")]
    pub min_pass: Option<f64>,
    /// A file whose text replaces the function's doc comment for this run (to compare a
    /// rewording without editing the source).
    #[arg(long, value_name = "FILE")]
    pub instruction: Option<PathBuf>,
    /// Ask the models and record their replies (and each run's latency and cost) beside the
    /// cases, in `CASES.cassettes/`; a run without `--record` then re-scores them offline.
    #[arg(long)]
    pub record: bool,
    /// Write a self-contained HTML report to `DIR/index.html`: the models side by side,
    /// per-field accuracy, latency histograms, cost and every failing run.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

/// One case of the file.
struct Case {
    /// The file it is written in: the cases file, or a `.vox` file.
    source: String,
    /// Its line there (1-based).
    line: usize,
    /// Written in Vox (an `assert_eq` of an `@test`), not in the cases file.
    written_in_vox: bool,
    args: Value,
    expected: Option<Value>,
    /// The function that checks its values, if any.
    check: Option<String>,
}

/// What a run's check said.
#[derive(Clone)]
enum Checked {
    /// Its problems (none: it passed).
    Problems(Vec<String>),
    /// The check itself failed (a judge's call).
    Failed(String),
}

/// One run's outcome, as the program reported it.
#[derive(Default, Clone)]
struct Run {
    ok: bool,
    value: Option<Value>,
    message: Option<String>,
    latency_ms: f64,
    usage: [u64; 4],
    cost_usd: Option<f64>,
    checked: Option<Checked>,
    reported: bool,
}

pub fn run(args: &EvalArgs, ctx: &Context) -> Result<i32> {
    let crate::call::Loaded {
        label,
        files,
        checked,
        decl,
        ..
    } = crate::call::load(ctx, &args.paths, &args.function, "evaluated")?;
    if args.repeat == 0 {
        return Err(Error::usage(&label, "--repeat must be at least 1"));
    }
    if let Some(x) = args.min_pass.filter(|x| !(0.0..=1.0).contains(x)) {
        return Err(Error::usage(
            &label,
            format!("--min-pass {x}: a pass rate is between 0 and 1"),
        ));
    }
    let instruction = match &args.instruction {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| {
                    Error::usage(
                        path.display().to_string(),
                        format!("cannot read the instruction: {e}"),
                    )
                })?
                .trim()
                .to_owned(),
        ),
        None => None,
    };
    let cases_label = args
        .cases
        .as_ref()
        .map(|c| c.display().to_string())
        .unwrap_or_else(|| label.clone());
    let mut cases = match &args.cases {
        Some(path) => read_cases(path, &cases_label, &decl, args.check.as_deref())?,
        None => Vec::new(),
    };
    let models: Vec<Option<String>> = if args.models.is_empty() {
        vec![None]
    } else {
        args.models
            .iter()
            .map(|m| Some(m.trim().to_owned()))
            .collect()
    };
    if models.iter().flatten().any(String::is_empty) {
        return Err(Error::usage(&label, "--models has an empty name"));
    }

    let exe =
        match crate::lane::script::eval_program(&label, &files, &checked, &args.function, ctx)? {
            Ok(exe) => exe,
            Err(code) => return Ok(code),
        };
    if args.cases.is_none() {
        cases = vox_cases(&exe, &label, args.check.as_deref())?;
        if cases.is_empty() {
            return Err(Error::usage(
                &label,
                format!(
                    "no cases: give `--cases FILE`, or write them in Vox as \
                     `assert_eq({}(…), expected)` in an `@test` (docs/eval.md, \"Cases written in Vox\")",
                    args.function
                ),
            ));
        }
    }
    // Jobs: (model, case, repeat) in that order; a job's number is its
    // place here and in `runs`.
    let k = args.repeat as usize;
    let slots: Vec<(usize, usize, usize)> = (0..models.len())
        .flat_map(|m| (0..cases.len()).flat_map(move |c| (0..k).map(move |r| (m, c, r))))
        .collect();
    let mut jobs = String::new();
    for (job, &(m, c, _)) in slots.iter().enumerate() {
        let line = json!({"job": job, "case": c, "model": models[m], "args": cases[c].args,
            "expected": cases[c].expected, "instruction": instruction, "check": cases[c].check});
        jobs.push_str(&line.to_string());
        jobs.push('\n');
    }
    // `--record` records every reply beside the cases; a run without it
    // replays a recording there, asking no model.
    // Beside the cases file, or for cases written in Vox beside the module's
    // first file.
    let tape = match &args.cases {
        Some(path) => path.with_extension("cassettes"),
        None => files
            .first()
            .and_then(|f| f.parent())
            .unwrap_or(std::path::Path::new("."))
            .join(format!("{}.eval.cassettes", args.function)),
    };
    let replaying = !args.record && tape.is_dir();
    let mut command = Command::new(&exe);
    if args.record {
        std::fs::create_dir_all(&tape)
            .map_err(|e| Error::failure(&label, format!("cannot make {}: {e}", tape.display())))?;
        command
            .env("VOX_LLM_CASSETTE", &tape)
            .env("VOX_LLM_CASSETTE_MODE", "record");
    } else if replaying {
        command
            .env("VOX_LLM_CASSETTE", &tape)
            .env("VOX_LLM_CASSETTE_MODE", "replay");
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::failure(&label, format!("cannot run the eval program: {e}")))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err(Error::failure(
            &label,
            "the eval program has no input or output",
        ));
    };
    // Written from a thread: the program answers while it reads.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(jobs.as_bytes());
    });
    let mut runs = vec![Run::default(); slots.len()];
    let mut invalid: Vec<(Option<usize>, String)> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Some(event) = line
            .strip_prefix(CALL_EVENT_PREFIX)
            .and_then(|e| serde_json::from_str::<Value>(e).ok())
        else {
            // The function's own `print`s: not ours to show on stdout.
            eprintln!("{line}");
            continue;
        };
        match event["kind"].as_str() {
            Some("invalid") => invalid.push((
                event["case"].as_u64().map(|c| c as usize),
                event["message"].as_str().unwrap_or("").to_owned(),
            )),
            Some("run") => {
                let Some(run) = event["job"].as_u64().and_then(|j| runs.get_mut(j as usize)) else {
                    continue;
                };
                *run = read_run(&event);
            }
            _ => {}
        }
    }
    let _ = writer.join();
    let status = child
        .wait()
        .map_err(|e| Error::failure(&label, format!("the eval program: {e}")))?;
    if let Some((case, message)) = invalid.first() {
        let at = match case.and_then(|c| cases.get(c)) {
            Some(case) => format!("{}:{}", case.source, case.line),
            None => cases_label.clone(),
        };
        let more = if invalid.len() > 1 {
            format!(" (and {} more cases)", invalid.len() - 1)
        } else {
            String::new()
        };
        return Err(Error::usage(
            at,
            format!(
                "the case does not fit `{}`: {message}{more}; nothing was sent",
                decl.name
            ),
        ));
    }
    if let Some(missing) = runs.iter().position(|r| !r.reported) {
        return Err(Error::failure(
            &label,
            format!("the eval program ended ({status}) without the outcome of run {missing}"),
        ));
    }
    // What a replay cannot know — each run's latency and what it cost —
    // is kept with the recording, so a re-scored run reads as it was.
    let measures = tape.join("eval-runs.jsonl");
    let key = |&(m, c, r): &(usize, usize, usize)| {
        // A case of the cases file is known by its line (as recordings made
        // before cases could be written in Vox are); one written in Vox by
        // its file and line.
        match cases[c].written_in_vox {
            false => json!([models[m], cases[c].line, cases[c].args, r]),
            true => json!([models[m], cases[c].source, cases[c].line, cases[c].args, r]),
        }
        .to_string()
    };
    if args.record {
        let mut text = String::new();
        for (slot, run) in slots.iter().zip(&runs) {
            text.push_str(
                &json!({"run": key(slot), "latency_ms": run.latency_ms, "cost_usd": run.cost_usd})
                    .to_string(),
            );
            text.push('\n');
        }
        std::fs::write(&measures, text).map_err(|e| {
            Error::failure(&label, format!("cannot write {}: {e}", measures.display()))
        })?;
    } else if replaying {
        let kept: BTreeMap<String, Value> = std::fs::read_to_string(&measures)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| Some((v["run"].as_str()?.to_owned(), v)))
            .collect();
        for (slot, run) in slots.iter().zip(runs.iter_mut()) {
            if let Some(v) = kept.get(&key(slot)) {
                run.latency_ms = v["latency_ms"].as_f64().unwrap_or(0.0);
                run.cost_usd = v["cost_usd"].as_f64();
            }
        }
    }

    let mut summaries = Vec::new();
    let mut pages = Vec::new();
    let mut gate_ok = true;
    for (m, model) in models.iter().enumerate() {
        let mut failing = Vec::new();
        let name = model
            .clone()
            .unwrap_or_else(|| "(the function's model)".into());
        let mut score = Score::default();
        for (c, case) in cases.iter().enumerate() {
            let mut passed = 0;
            for r in 0..k {
                // The slots are in (model, case, repeat) order.
                let run = &runs[(m * cases.len() + c) * k + r];
                let verdict = judge(run, case.expected.as_ref(), case.check.as_deref());
                score.add(run, &verdict);
                if verdict.pass {
                    passed += 1;
                } else {
                    score.failures.push(
                        json!({"source": case.source, "case": case.line, "repeat": r,
                            "reason": verdict.reason}),
                    );
                    if args.report.is_some() {
                        let reply = match &run.value {
                            Some(v) if run.ok => v.to_string(),
                            _ => run.message.clone().unwrap_or_default(),
                        };
                        failing.push(json!({"source": case.source, "case": case.line,
                            "repeat": r, "args": case.args,
                            "reply": reply, "reason": verdict.reason}));
                    }
                }
                if ctx.json() {
                    let line = json!({
                        "envelope_version": ENVELOPE_VERSION,
                        "command": "eval",
                        "kind": "case",
                        "model": name,
                        "source": case.source,
                        "case": case.line,
                        "repeat": r,
                        "ok": verdict.pass,
                        "value": run.value,
                        "reason": verdict.reason,
                        "fields": verdict.fields,
                        "check": case.check.as_ref().map(|name| match &run.checked {
                            Some(Checked::Problems(p)) => json!({"name": name, "problems": p}),
                            Some(Checked::Failed(e)) => json!({"name": name, "error": e}),
                            None => json!({"name": name}),
                        }),
                        "latency_ms": run.latency_ms,
                    });
                    output::emit_line(&line.to_string());
                }
            }
            score
                .stability
                .push(json!({"source": case.source, "case": case.line, "passed": passed, "of": k}));
        }
        let latencies = score.latencies.clone();
        let summary = score.summary(&name, cases.len(), args.min_pass);
        if args.report.is_some() {
            pages.push(crate::eval_report::ModelRuns {
                summary: summary.clone(),
                latencies,
                failing,
            });
        }
        if summary["min_pass_met"] == Value::Bool(false) {
            gate_ok = false;
        }
        summaries.push(summary);
    }
    let report = match &args.report {
        Some(dir) => Some(
            crate::eval_report::write(dir, &args.function, cases.len(), k, &pages).map_err(
                |e| {
                    Error::failure(
                        &label,
                        format!("cannot write the report in {}: {e}", dir.display()),
                    )
                },
            )?,
        ),
        None => None,
    };
    if ctx.json() {
        let line = json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "eval",
            "kind": "summary",
            "report": report.as_ref().map(|p| p.display().to_string()),
            "file_path": label,
            "ok": gate_ok,
            "function": args.function,
            "cases": cases.len(),
            "repeat": k,
            "min_pass": args.min_pass,
            "instruction": args.instruction.as_ref().map(|p| p.display().to_string()),
            "models": summaries,
        });
        output::emit_line(&line.to_string());
    } else {
        print_table(&args.function, cases.len(), k, &summaries);
        if let Some(path) = &report {
            println!("report: {}", path.display());
        }
    }
    Ok(if gate_ok {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The cases of `path`: a clear usage error naming the line for one that
/// is not a JSON object with `args` fitting the function's parameters.
fn read_cases(
    path: &std::path::Path,
    label: &str,
    decl: &vox_codegen::AiFunctionDecl,
    check: Option<&str>,
) -> Result<Vec<Case>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(label, format!("cannot read the cases: {e}")))?;
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{label}:{}", i + 1);
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line)
            .map_err(|e| Error::usage(at(), format!("the case is not JSON: {e}")))?;
        let Value::Object(mut map) = value else {
            return Err(Error::usage(
                at(),
                "a case is a JSON object, `{\"args\": {…}, \"expected\": …}`",
            ));
        };
        if let Some(unknown) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "args" | "expected" | "check"))
        {
            return Err(Error::usage(
                at(),
                format!("a case has `args`, `expected` and `check`, not `{unknown}`"),
            ));
        }
        let case_check = match map.remove("check") {
            None | Some(Value::Null) => check.map(str::to_owned),
            Some(Value::String(name)) if !name.trim().is_empty() => Some(name.trim().to_owned()),
            Some(other) => {
                return Err(Error::usage(
                    at(),
                    format!("`check` names a function of the module, not {other}"),
                ))
            }
        };
        let args = map.remove("args").unwrap_or_else(|| json!({}));
        crate::call::check_arguments(&args, decl, "`args`").map_err(|m| Error::usage(at(), m))?;
        cases.push(Case {
            source: label.to_owned(),
            line: i + 1,
            written_in_vox: false,
            args,
            expected: map.remove("expected").filter(|e| !e.is_null()),
            check: case_check,
        });
    }
    if cases.is_empty() {
        return Err(Error::usage(label, "the file has no cases"));
    }
    Ok(cases)
}

/// The cases written in Vox, as the eval program `exe` lists them (its
/// `cases` mode); each checked by `check` when given.
fn vox_cases(exe: &std::path::Path, label: &str, check: Option<&str>) -> Result<Vec<Case>> {
    let out = Command::new(exe)
        .arg("cases")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::failure(label, format!("cannot run the eval program: {e}")))?;
    if !out.status.success() {
        return Err(Error::failure(
            label,
            format!("the eval program could not list its cases ({})", out.status),
        ));
    }
    let mut cases = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(case) = line
            .strip_prefix(CALL_EVENT_PREFIX)
            .and_then(|e| serde_json::from_str::<Value>(e).ok())
        else {
            continue;
        };
        let written = case["label"].as_str().unwrap_or("");
        let (source, at) = written.rsplit_once(':').unwrap_or((written, "0"));
        cases.push(Case {
            source: source.to_owned(),
            line: at.parse().unwrap_or(0),
            written_in_vox: true,
            args: case["args"].clone(),
            expected: Some(case["expected"].clone()).filter(|e| !e.is_null()),
            check: check.map(str::to_owned),
        });
    }
    Ok(cases)
}

fn read_run(event: &Value) -> Run {
    let usage = &event["usage"];
    let count = |k: &str| usage[k].as_u64().unwrap_or(0);
    Run {
        ok: event["ok"] == Value::Bool(true),
        value: event.get("value").cloned(),
        message: event["message"].as_str().map(str::to_owned),
        latency_ms: event["latency_ms"].as_f64().unwrap_or(0.0),
        usage: [
            count("input_tokens"),
            count("output_tokens"),
            count("cached_tokens"),
            count("reasoning_tokens"),
        ],
        cost_usd: event["cost_usd"].as_f64(),
        checked: event.get("check").map(|c| match c["error"].as_str() {
            Some(e) => Checked::Failed(e.to_owned()),
            None => Checked::Problems(
                c["problems"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                    .collect(),
            ),
        }),
        reported: true,
    }
}

/// How one run scored.
struct Verdict {
    pass: bool,
    reason: Option<String>,
    /// Per field of an expected record: whether the value's is equal.
    fields: Option<BTreeMap<String, bool>>,
}

/// A run passes when the call succeeded, its value equals the expected
/// one (numbers by value: `7` is `7.0`) and its check, if any, found no
/// problem; a record is also scored field by field.
fn judge(run: &Run, expected: Option<&Value>, check: Option<&str>) -> Verdict {
    if !run.ok {
        return Verdict {
            pass: false,
            reason: Some(format!(
                "the call failed: {}",
                run.message.as_deref().unwrap_or("(no message)")
            )),
            fields: expected
                .and_then(Value::as_object)
                .map(|e| e.keys().map(|k| (k.clone(), false)).collect()),
        };
    }
    let value = run.value.clone().unwrap_or(Value::Null);
    let (fields, mut wrong) = match expected {
        None => (None, Vec::new()),
        Some(expected) => compare(expected, &value),
    };
    if let Some(name) = check {
        match &run.checked {
            Some(Checked::Problems(p)) if p.is_empty() => {}
            Some(Checked::Problems(p)) => wrong.push(format!("check `{name}`: {}", p.join("; "))),
            Some(Checked::Failed(e)) => wrong.push(format!("the check `{name}` failed: {e}")),
            None => wrong.push(format!("the check `{name}` did not report")),
        }
    }
    Verdict {
        pass: wrong.is_empty(),
        reason: (!wrong.is_empty()).then(|| wrong.join("; ")),
        fields,
    }
}

/// `value` against `expected`: per field of a record, whether it is
/// right, and what is wrong.
fn compare(expected: &Value, value: &Value) -> (Option<BTreeMap<String, bool>>, Vec<String>) {
    match (expected.as_object(), value.as_object()) {
        (Some(e), Some(v)) => {
            let mut fields = BTreeMap::new();
            let mut wrong = Vec::new();
            for (key, want) in e {
                let got = v.get(key).unwrap_or(&Value::Null);
                let same = equal(want, got);
                if !same {
                    wrong.push(format!("`{key}`: expected {want}, got {got}"));
                }
                fields.insert(key.clone(), same);
            }
            (Some(fields), wrong)
        }
        _ if equal(expected, value) => (None, Vec::new()),
        _ => (None, vec![format!("expected {expected}, got {value}")]),
    }
}

/// JSON equality with numbers compared by value.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// One model's totals.
#[derive(Default)]
struct Score {
    runs: usize,
    passed: usize,
    fields: BTreeMap<String, (usize, usize)>,
    latencies: Vec<f64>,
    usage: [u64; 4],
    cost: Option<f64>,
    unpriced: bool,
    failures: Vec<Value>,
    stability: Vec<Value>,
}

impl Score {
    fn add(&mut self, run: &Run, verdict: &Verdict) {
        self.runs += 1;
        self.passed += usize::from(verdict.pass);
        for (field, right) in verdict.fields.iter().flatten() {
            let slot = self.fields.entry(field.clone()).or_default();
            slot.0 += usize::from(*right);
            slot.1 += 1;
        }
        self.latencies.push(run.latency_ms);
        for (total, n) in self.usage.iter_mut().zip(run.usage) {
            *total += n;
        }
        match run.cost_usd {
            Some(c) => self.cost = Some(self.cost.unwrap_or(0.0) + c),
            None if run.usage[0] + run.usage[1] > 0 => self.unpriced = true,
            None => {}
        }
    }

    fn summary(mut self, model: &str, cases: usize, min_pass: Option<f64>) -> Value {
        self.latencies.sort_by(f64::total_cmp);
        let pass_rate = self.passed as f64 / self.runs.max(1) as f64;
        let field_accuracy: BTreeMap<&String, f64> = self
            .fields
            .iter()
            .map(|(k, (right, of))| (k, *right as f64 / (*of).max(1) as f64))
            .collect();
        json!({
            "model": model,
            "pass_rate": pass_rate,
            "passed": self.passed,
            "runs": self.runs,
            "cases": cases,
            "field_accuracy": field_accuracy,
            "stability": self.stability,
            "failures": self.failures,
            "latency_ms": {"p50": percentile(&self.latencies, 0.50), "p95": percentile(&self.latencies, 0.95)},
            "usage": {"input_tokens": self.usage[0], "output_tokens": self.usage[1],
                "cached_tokens": self.usage[2], "reasoning_tokens": self.usage[3]},
            "cost_usd": if self.unpriced { None } else { Some(self.cost.unwrap_or(0.0)) },
            "min_pass_met": min_pass.map(|x| pass_rate >= x),
        })
    }
}

/// The `q` quantile of sorted `xs` (nearest rank); 0 for none.
fn percentile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

fn print_table(function: &str, cases: usize, k: usize, summaries: &[Value]) {
    println!(
        "eval {function}: {cases} cases × {k} run{} per model",
        if k == 1 { "" } else { "s" }
    );
    println!(
        "{:<28} {:>9} {:>7} {:>9} {:>9} {:>17} {:>11}",
        "model", "passed", "rate", "p50 ms", "p95 ms", "tokens in/out", "cost"
    );
    for s in summaries {
        let cost = s["cost_usd"]
            .as_f64()
            .map_or("unknown".to_owned(), |c| format!("${c:.6}"));
        println!(
            "{:<28} {:>9} {:>7.3} {:>9.1} {:>9.1} {:>17} {:>11}",
            s["model"].as_str().unwrap_or(""),
            format!("{}/{}", s["passed"], s["runs"]),
            s["pass_rate"].as_f64().unwrap_or(0.0),
            s["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
            s["latency_ms"]["p95"].as_f64().unwrap_or(0.0),
            format!(
                "{}/{}",
                s["usage"]["input_tokens"], s["usage"]["output_tokens"]
            ),
            cost
        );
        if let Some(fields) = s["field_accuracy"].as_object().filter(|f| !f.is_empty()) {
            let shown: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k} {:.0}%", v.as_f64().unwrap_or(0.0) * 100.0))
                .collect();
            println!("    fields: {}", shown.join(", "));
        }
        for f in s["failures"].as_array().into_iter().flatten() {
            println!(
                "    case at line {} (run {}): {}",
                f["case"],
                f["repeat"].as_u64().unwrap_or(0) + 1,
                f["reason"].as_str().unwrap_or("")
            );
        }
        if s["min_pass_met"] == Value::Bool(false) {
            println!("    under --min-pass");
        }
    }
}
