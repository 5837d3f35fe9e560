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
    /// Send the runs through the provider's batch engine (half price, resumable): each model's
    /// job is kept in `CASES.eval-batch/` and resumes when run again.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: seconds before the first look at an unfinished batch (each later wait is
    /// longer).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub poll: f64,
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
    /// For a case written in Vox, what its `@test` prints when the
    /// assertion fails (`assert_eq(…) failed at FILE:LINE:COL`): the
    /// start of a failing run's reason.
    assertion: Option<String>,
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
    /// The program's report of the run, as it is recorded.
    event: Value,
}

/// Where the cases come from: the cases file, read again for each pass
/// (never all in memory at once), or the cases written in Vox.
enum Cases {
    File {
        path: PathBuf,
        label: String,
        check: Option<String>,
        count: usize,
    },
    Vox(Vec<Case>),
}

impl Cases {
    fn count(&self) -> usize {
        match self {
            Cases::File { count, .. } => *count,
            Cases::Vox(cases) => cases.len(),
        }
    }

    /// Calls `each` with every case, in order, and its index.
    fn each(
        &self,
        decl: &vox_codegen::AiFunctionDecl,
        each: &mut dyn FnMut(usize, &Case) -> Result<()>,
    ) -> Result<()> {
        match self {
            Cases::File {
                path, label, check, ..
            } => {
                let mut index = 0;
                read_cases(path, label, decl, check.as_deref(), &mut |case| {
                    each(index, &case)?;
                    index += 1;
                    Ok(())
                })
            }
            Cases::Vox(cases) => cases.iter().enumerate().try_for_each(|(i, c)| each(i, c)),
        }
    }
}

/// The key a run is recorded under: its model, case and repeat.
fn run_key(model: &Option<String>, case: &Case, repeat: usize) -> String {
    // A case of the cases file is known by its line (as recordings made
    // before cases could be written in Vox are); one written in Vox by its
    // file and line.
    if case.written_in_vox {
        json!([model, case.source, case.line, case.args, repeat]).to_string()
    } else {
        json!([model, case.line, case.args, repeat]).to_string()
    }
}

/// The version of the recorded runs' file (`eval-runs.jsonl`) this writes.
const RUNS_FORMAT: u64 = 2;

/// What the outcome of a replayed run depends on besides its key: the
/// module's sources, the function, the instruction and this tool. While it
/// is unchanged, a recording's runs are re-scored from `eval-runs.jsonl`
/// alone, without running anything.
fn fingerprint(files: &[PathBuf], function: &str, instruction: Option<&str>) -> String {
    // FNV-1a, 64 bits: stable across builds and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut part = |bytes: &[u8]| {
        for b in bytes.iter().chain(&[0xff]) {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    part(env!("CARGO_PKG_VERSION").as_bytes());
    part(function.as_bytes());
    part(instruction.unwrap_or("").as_bytes());
    let mut files: Vec<&PathBuf> = files.iter().collect();
    files.sort();
    for f in files {
        part(&std::fs::read(f).unwrap_or_default());
    }
    format!("{hash:016x}")
}

/// A file removed when dropped (the jobs handed to the eval program).
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The runs' outcomes, in job order: from the eval program as it runs
/// them, or from a recording's `eval-runs.jsonl`.
enum Outcomes {
    Program {
        child: std::process::Child,
        lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    },
    Recorded {
        lines: std::io::Lines<BufReader<std::fs::File>>,
    },
    /// Each model's batch job directory, its results read in turn.
    Batch {
        dirs: Vec<PathBuf>,
        /// Jobs per model.
        per_model: usize,
        current: Option<(usize, Box<vox_runtime::BatchResults<Value>>)>,
        /// The eval program checking the values of the runs with a check,
        /// in job order (`check VALUES`).
        checks: Option<(
            std::process::Child,
            std::io::Lines<BufReader<std::process::ChildStdout>>,
        )>,
    },
}

impl Outcomes {
    /// The outcome of job `job`, whose key is `key` (and whose case has a
    /// check when `checked`).
    fn next(&mut self, job: usize, key: &str, checked: bool, label: &str) -> Result<Run> {
        match self {
            Outcomes::Program { lines, .. } => {
                for line in lines.by_ref() {
                    let Ok(line) = line else { break };
                    let Some(event) = line
                        .strip_prefix(CALL_EVENT_PREFIX)
                        .and_then(|e| serde_json::from_str::<Value>(e).ok())
                    else {
                        // The function's own `print`s: not ours to show on stdout.
                        eprintln!("{line}");
                        continue;
                    };
                    if event["kind"] != "run" {
                        continue;
                    }
                    if event["job"].as_u64() != Some(job as u64) {
                        return Err(Error::failure(
                            label,
                            format!(
                                "the eval program reported run {} for run {job}",
                                event["job"]
                            ),
                        ));
                    }
                    return Ok(read_run(&event));
                }
                Err(Error::failure(
                    label,
                    format!("the eval program ended without the outcome of run {job}"),
                ))
            }
            Outcomes::Recorded { lines } => {
                let line = lines.next().and_then(|l| l.ok()).unwrap_or_default();
                let recorded: Value = serde_json::from_str(&line).unwrap_or_default();
                if recorded["run"].as_str() != Some(key) {
                    return Err(Error::failure(
                        label,
                        format!(
                            "the recording does not hold run {job} where expected; record again"
                        ),
                    ));
                }
                let mut run = read_run(&recorded["outcome"]);
                run.latency_ms = recorded["latency_ms"].as_f64().unwrap_or(0.0);
                run.cost_usd = recorded["cost_usd"].as_f64();
                Ok(run)
            }
            Outcomes::Batch {
                dirs,
                per_model,
                current,
                checks,
            } => {
                let (m, index) = (job / *per_model, job % *per_model);
                if current.as_ref().is_none_or(|(c, _)| *c != m) {
                    let dir = dirs.get(m).ok_or_else(|| {
                        Error::failure(label, format!("no batch job for run {job}"))
                    })?;
                    let results = vox_runtime::batch_results::<Value>(dir)
                        .map_err(|e| Error::failure(label, e.to_string()))?;
                    *current = Some((m, Box::new(results)));
                }
                let item = current
                    .as_mut()
                    .and_then(|(_, results)| results.next())
                    .ok_or_else(|| Error::failure(label, format!("the batch has no run {job}")))?
                    .map_err(|e| Error::failure(label, e.to_string()))?;
                if item.index != index as u64 {
                    return Err(Error::failure(
                        label,
                        format!("the batch gave item {} for run {job}", item.index),
                    ));
                }
                let mut event = match item.result {
                    Ok(value) => json!({"kind": "run", "job": job, "ok": true, "value": value}),
                    Err(message) => {
                        json!({"kind": "run", "job": job, "ok": false, "message": message})
                    }
                };
                if checked && event["ok"] == true {
                    let verdict = checks
                        .as_mut()
                        .and_then(|(_, lines)| {
                            lines.by_ref().map_while(|l| l.ok()).find_map(|line| {
                                let e: Value =
                                    serde_json::from_str(line.strip_prefix(CALL_EVENT_PREFIX)?)
                                        .ok()?;
                                (e["kind"] == "checked").then_some(e)
                            })
                        })
                        .filter(|e| e["job"].as_u64() == Some(job as u64))
                        .ok_or_else(|| {
                            Error::failure(label, format!("the check of run {job} did not report"))
                        })?;
                    event["check"] = verdict["check"].clone();
                }
                Ok(read_run(&event))
            }
        }
    }

    /// Waits for the program, if one ran.
    fn finish(self, label: &str) -> Result<()> {
        let child = match self {
            Outcomes::Program { child, .. } => Some(child),
            Outcomes::Batch {
                checks: Some((child, _)),
                ..
            } => Some(child),
            _ => None,
        };
        if let Some(mut child) = child {
            child
                .wait()
                .map_err(|e| Error::failure(label, format!("the eval program: {e}")))?;
        }
        Ok(())
    }
}

/// Calls its argument with each key of a run, in order; whether every
/// call answered `true`.
type EachKey<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&str) -> bool) -> Result<bool>;

/// Whether `runs` (an `eval-runs.jsonl`) records, under `fingerprint`,
/// exactly the runs whose keys `keys` gives, in that order. Reads both
/// once, holding neither.
fn recording_fits(runs: &std::path::Path, fingerprint: &str, keys: EachKey<'_>) -> Result<bool> {
    let Ok(file) = std::fs::File::open(runs) else {
        return Ok(false);
    };
    let mut lines = BufReader::new(file).lines();
    let header: Value = lines
        .next()
        .and_then(|l| l.ok())
        .and_then(|l| serde_json::from_str(&l).ok())
        .unwrap_or_default();
    if header["format"].as_u64() != Some(RUNS_FORMAT) || header["fingerprint"] != fingerprint {
        return Ok(false);
    }
    let all = keys(&mut |key| {
        let line = lines.next().and_then(|l| l.ok()).unwrap_or_default();
        serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["run"].as_str().map(str::to_owned))
            == Some(key.to_owned())
    })?;
    Ok(all && lines.next().is_none())
}

/// Runs every model's cases (each `--repeat` times) as a batch job on the
/// provider's batch engine, in `CASES.eval-batch/MODEL/` (resumed when it
/// is there already); the outcomes to score, from the jobs' results.
#[allow(clippy::too_many_arguments)]
fn run_batches(
    args: &EvalArgs,
    checked: &vox_codegen::Checked,
    cases: &Cases,
    decl: &vox_codegen::AiFunctionDecl,
    models: &[Option<String>],
    instruction: Option<&str>,
    tape: &std::path::Path,
    label: &str,
    bar: Option<&indicatif::ProgressBar>,
    exe: &std::path::Path,
    values: &std::path::Path,
) -> Result<Outcomes> {
    let mut checked_case = false;
    cases.each(decl, &mut |_, c| {
        checked_case |= c.check.is_some();
        Ok(())
    })?;
    let config =
        vox_runtime::Config::from_env().map_err(|e| Error::failure(label, e.to_string()))?;
    let client =
        vox_runtime::Client::new(config).map_err(|e| Error::failure(label, e.to_string()))?;
    let poll = std::time::Duration::from_secs_f64(args.poll.clamp(0.001, 3600.0));
    let mut options = vox_runtime::BatchOptions {
        poll_initial: poll,
        poll_max: std::time::Duration::from_secs(300).max(poll),
        check_schema: true,
        ..vox_runtime::BatchOptions::default()
    };
    let root = tape.with_extension("eval-batch");
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let mut dirs = Vec::new();
    for model in models {
        let mut function = crate::batch::ai_function_with(checked, &args.function, instruction)
            .map_err(|m| Error::usage(label, m))?;
        if let Some(model) = model {
            function = function.with_model(leak(model));
        }
        let slug: String = model
            .as_deref()
            .unwrap_or("default")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let dir = root.join(&slug);
        if let Some(bar) = bar {
            let bar = bar.clone();
            let hook: vox_runtime::ProgressHook =
                std::sync::Arc::new(move |p: &vox_runtime::Progress| {
                    bar.set_message(match p {
                        vox_runtime::Progress::Submitted { chunk, id } => {
                            format!("{slug}: batch {} submitted ({id})", chunk + 1)
                        }
                        vox_runtime::Progress::Polled { chunk, status } => {
                            format!("{slug}: batch {}: {status}", chunk + 1)
                        }
                        _ => format!("{slug}: batch"),
                    })
                });
            options.progress = Some(hook);
        }
        let mut inputs = Vec::new();
        cases.each(decl, &mut |_, case| {
            for _ in 0..args.repeat {
                inputs.push(vox_runtime::args_from_json(&case.args.to_string()));
            }
            Ok(())
        })?;
        vox_runtime::block_on(client.batch::<Value, _>(&function, &dir, inputs, &options))
            .map_err(|e| {
                Error::failure(
                    label,
                    format!("{e} (the job in {} resumes when run again)", dir.display()),
                )
            })?;
        dirs.push(dir);
    }
    // The checks run on the values the engine gave, in the eval program
    // (a check is Vox code; a judge an `@ai` call of its own).
    let per_model = cases.count() * args.repeat as usize;
    let checks = if checked_case {
        let fail = |e: std::io::Error| {
            Error::failure(label, format!("cannot write the values to check: {e}"))
        };
        let mut out = std::io::BufWriter::new(std::fs::File::create(values).map_err(fail)?);
        for (m, dir) in dirs.iter().enumerate() {
            let mut results = vox_runtime::batch_results::<Value>(dir)
                .map_err(|e| Error::failure(label, e.to_string()))?;
            let mut job = m * per_model;
            cases.each(decl, &mut |_, case| {
                for _ in 0..args.repeat {
                    let item = results
                        .next()
                        .ok_or_else(|| {
                            Error::failure(label, format!("the batch has no run {job}"))
                        })?
                        .map_err(|e| Error::failure(label, e.to_string()))?;
                    if let (Some(name), Ok(value)) = (&case.check, &item.result) {
                        let line = json!({"job": job, "check": name, "value": value,
                            "expected": case.expected});
                        writeln!(out, "{line}").map_err(fail)?;
                    }
                    job += 1;
                }
                Ok(())
            })?;
        }
        out.flush().map_err(fail)?;
        let mut child = Command::new(exe)
            .arg("check")
            .arg(values)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::failure(label, format!("cannot run the eval program: {e}")))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::failure(label, "the eval program has no output"))?;
        Some((child, BufReader::new(stdout).lines()))
    } else {
        None
    };
    Ok(Outcomes::Batch {
        dirs,
        per_model,
        current: None,
        checks,
    })
}

/// The runs scored so far, on a terminal (none under `--json` or when
/// stderr is not a terminal); its last state stays above the table.
fn progress_bar(json: bool, runs: u64) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    if json || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(runs),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg} (eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    Some(bar)
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
    if args.batch && args.record {
        return Err(Error::usage(
            &label,
            "--batch keeps its runs in its job directory (run it again to re-score): \
             --record is for direct runs",
        ));
    }
    // The cases file is checked (each line's JSON and arguments) before
    // anything is built or sent.
    let mut cases = match &args.cases {
        Some(path) => {
            let label = path.display().to_string();
            let mut count = 0;
            read_cases(path, &label, &decl, args.check.as_deref(), &mut |_| {
                count += 1;
                Ok(())
            })?;
            if count == 0 {
                return Err(Error::usage(&label, "the file has no cases"));
            }
            Cases::File {
                path: path.clone(),
                label,
                check: args.check.clone(),
                count,
            }
        }
        None => Cases::Vox(Vec::new()),
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
        let written = vox_cases(&exe, &label, args.check.as_deref())?;
        if written.is_empty() {
            return Err(Error::usage(
                &label,
                format!(
                    "no cases: give `--cases FILE`, or write them in Vox as \
                     `assert_eq({}(…), expected)` in an `@test` (the eval guide, \"Cases written in Vox\": \
                     https://github.com/vox-lang/vox-for-cargo/blob/main/docs/eval.md#cases-written-in-vox)",
                    args.function
                ),
            ));
        }
        cases = Cases::Vox(written);
    }
    let count = cases.count();
    let k = args.repeat as usize;
    let bar = progress_bar(ctx.json(), (models.len() * count * k) as u64);

    // The jobs, (model, case, repeat) in that order, a job's number its
    // place: written to a file the program reads twice (to check every
    // case before anything is sent, then to run them).
    let jobs_file = TempFile(std::env::temp_dir().join(format!(
        "vox-eval-jobs-{}-{}.jsonl",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )));
    {
        let file = std::fs::File::create(&jobs_file.0).map_err(|e| {
            Error::failure(&label, format!("cannot write the jobs of the run: {e}"))
        })?;
        let mut out = std::io::BufWriter::new(file);
        let mut job = 0usize;
        for (m, model) in models.iter().enumerate() {
            cases.each(&decl, &mut |c, case| {
                for r in 0..k {
                    let line = json!({"job": job, "case": c, "validate": m == 0 && r == 0,
                        "model": model, "args": case.args, "expected": case.expected,
                        "instruction": instruction, "check": case.check});
                    writeln!(out, "{line}").map_err(|e| {
                        Error::failure(&label, format!("cannot write the jobs of the run: {e}"))
                    })?;
                    job += 1;
                }
                Ok(())
            })?;
        }
        out.flush().map_err(|e| {
            Error::failure(&label, format!("cannot write the jobs of the run: {e}"))
        })?;
    }
    // `--record` records every reply beside the cases; a run without it
    // replays a recording there, asking no model: from its recorded runs
    // alone while the module is unchanged, else through the program.
    let tape = match &args.cases {
        Some(path) => path.with_extension("cassettes"),
        // Beside the module's first file, for cases written in Vox.
        None => files
            .first()
            .and_then(|f| f.parent())
            .unwrap_or(std::path::Path::new("."))
            .join(format!("{}.eval.cassettes", args.function)),
    };
    let replaying = !args.record && tape.is_dir();
    let measures = tape.join("eval-runs.jsonl");
    // The program's cassette: the same for its check of the cases as for
    // the run (a replay answers without a provider configured).
    let cassette: Vec<(&str, std::ffi::OsString)> = if args.record {
        vec![
            ("VOX_LLM_CASSETTE", tape.clone().into_os_string()),
            ("VOX_LLM_CASSETTE_MODE", "record".into()),
        ]
    } else if replaying {
        vec![
            ("VOX_LLM_CASSETTE", tape.clone().into_os_string()),
            ("VOX_LLM_CASSETTE_MODE", "replay".into()),
        ]
    } else {
        Vec::new()
    };
    validate_jobs(&exe, &jobs_file.0, &label, &cases, &decl, &cassette)?;
    // Under --batch, the values the checks are given.
    let values_file = TempFile(jobs_file.0.with_extension("values.jsonl"));
    let print = fingerprint(&files, &args.function, instruction.as_deref());
    let from_recording = replaying
        && recording_fits(&measures, &print, &mut |fits| {
            let mut all = true;
            for model in &models {
                cases.each(&decl, &mut |_, case| {
                    for r in 0..k {
                        all = all && fits(&run_key(model, case, r));
                    }
                    Ok(())
                })?;
            }
            Ok(all)
        })?;
    let mut outcomes = if args.batch {
        run_batches(
            args,
            &checked,
            &cases,
            &decl,
            &models,
            instruction.as_deref(),
            &tape,
            &label,
            bar.as_ref(),
            &exe,
            &values_file.0,
        )?
    } else if from_recording {
        let file = std::fs::File::open(&measures).map_err(|e| {
            Error::failure(&label, format!("cannot read {}: {e}", measures.display()))
        })?;
        let mut lines = BufReader::new(file).lines();
        lines.next(); // the header, read above
        Outcomes::Recorded { lines }
    } else {
        let mut command = Command::new(&exe);
        command
            .arg("run")
            .arg(&jobs_file.0)
            .envs(cassette.iter().cloned());
        if args.record {
            std::fs::create_dir_all(&tape).map_err(|e| {
                Error::failure(&label, format!("cannot make {}: {e}", tape.display()))
            })?;
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::failure(&label, format!("cannot run the eval program: {e}")))?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            return Err(Error::failure(&label, "the eval program has no output"));
        };
        Outcomes::Program {
            child,
            lines: BufReader::new(stdout).lines(),
        }
    };
    // A replay through the program cannot know each run's latency and
    // cost: they are kept with the recording (an older one too).
    let kept: BTreeMap<String, (f64, Option<f64>)> = if replaying && !from_recording && !args.batch
    {
        std::fs::read_to_string(&measures)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| {
                Some((
                    v["run"].as_str()?.to_owned(),
                    (
                        v["latency_ms"].as_f64().unwrap_or(0.0),
                        v["cost_usd"].as_f64(),
                    ),
                ))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    let mut recording = if args.record {
        let file = std::fs::File::create(&measures).map_err(|e| {
            Error::failure(&label, format!("cannot write {}: {e}", measures.display()))
        })?;
        let mut out = std::io::BufWriter::new(file);
        writeln!(
            out,
            "{}",
            json!({"format": RUNS_FORMAT, "fingerprint": print})
        )
        .map_err(|e| Error::failure(&label, format!("cannot write {}: {e}", measures.display())))?;
        Some(out)
    } else {
        None
    };

    let mut summaries = Vec::new();
    let mut pages = Vec::new();
    let mut gate_ok = true;
    let mut job = 0usize;
    for model in &models {
        let name = model
            .clone()
            .unwrap_or_else(|| "(the function's model)".into());
        let mut score = Score::new(k);
        // A batch engine's results carry no usage per run: its cost is not
        // known here (the engine's bill is half the normal price).
        score.unpriced |= args.batch;
        let mut failing = Vec::new();
        cases.each(&decl, &mut |_, case| {
            let mut runs = Vec::with_capacity(k);
            for r in 0..k {
                let key = run_key(model, case, r);
                let mut run = outcomes.next(job, &key, case.check.is_some(), &label)?;
                if let Some((latency, cost)) = kept.get(&key) {
                    run.latency_ms = *latency;
                    run.cost_usd = *cost;
                }
                if let Some(out) = recording.as_mut() {
                    let line = json!({"run": key, "latency_ms": run.latency_ms,
                        "cost_usd": run.cost_usd, "outcome": run.event});
                    writeln!(out, "{line}").map_err(|e| {
                        Error::failure(&label, format!("cannot write {}: {e}", measures.display()))
                    })?;
                }
                runs.push(run);
                job += 1;
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
            }
            let verdicts: Vec<Verdict> = runs
                .iter()
                .map(|run| {
                    let mut verdict = judge(run, case.expected.as_ref(), case.check.as_deref());
                    if let (Some(assertion), Some(reason)) = (&case.assertion, &verdict.reason) {
                        verdict.reason = Some(format!("{assertion}: {reason}"));
                    }
                    verdict
                })
                .collect();
            let passed = verdicts.iter().filter(|v| v.pass).count();
            score.stable(passed);
            for (r, (run, verdict)) in runs.iter().zip(&verdicts).enumerate() {
                score.add(run, verdict);
                if !verdict.pass {
                    score.fail(
                        json!({"source": case.source, "case": case.line, "repeat": r,
                        "reason": verdict.reason}),
                    );
                    if args.report.is_some() && failing.len() < LISTED_FAILURES {
                        let reply = match &run.value {
                            Some(v) if run.ok => v.to_string(),
                            _ => run.message.clone().unwrap_or_default(),
                        };
                        failing.push(json!({"source": case.source, "case": case.line,
                            "repeat": r, "args": case.args, "reply": reply,
                            "reason": verdict.reason}));
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
                        "stability": {"passed": passed, "of": k},
                        "latency_ms": run.latency_ms,
                    });
                    output::emit_line(&line.to_string());
                }
            }
            Ok(())
        })?;
        let latencies = score.latency_bins();
        let summary = score.summary(&name, count, args.min_pass);
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
    outcomes.finish(&label)?;
    if let Some(bar) = &bar {
        bar.finish_with_message("scored");
    }
    if let Some(mut out) = recording {
        out.flush().map_err(|e| {
            Error::failure(&label, format!("cannot write {}: {e}", measures.display()))
        })?;
    }
    drop(jobs_file);

    let report = match &args.report {
        Some(dir) => Some(
            crate::eval_report::write(dir, &args.function, count, k, &pages).map_err(|e| {
                Error::failure(
                    &label,
                    format!("cannot write the report in {}: {e}", dir.display()),
                )
            })?,
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
            "cases": count,
            "repeat": k,
            "min_pass": args.min_pass,
            "instruction": args.instruction.as_ref().map(|p| p.display().to_string()),
            "models": summaries,
        });
        output::emit_line(&line.to_string());
    } else {
        print_table(&args.function, count, k, &summaries);
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

/// Calls `each` with the cases of `path`, read a line at a time: a clear
/// usage error naming the line for one that is not a JSON object with
/// `args` fitting the function's parameters.
fn read_cases(
    path: &std::path::Path,
    label: &str,
    decl: &vox_codegen::AiFunctionDecl,
    check: Option<&str>,
    each: &mut dyn FnMut(Case) -> Result<()>,
) -> Result<()> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::usage(label, format!("cannot read the cases: {e}")))?;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::usage(label, format!("cannot read the cases: {e}")))?;
        let line = line.as_str();
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
        each(Case {
            source: label.to_owned(),
            line: i + 1,
            written_in_vox: false,
            args,
            expected: map.remove("expected").filter(|e| !e.is_null()),
            check: case_check,
            assertion: None,
        })?;
    }
    Ok(())
}

/// Runs the eval program's check of every case (`validate JOBS`): a case
/// that does not fit is a usage error naming its file and line, and
/// nothing is sent.
fn validate_jobs(
    exe: &std::path::Path,
    jobs: &std::path::Path,
    label: &str,
    cases: &Cases,
    decl: &vox_codegen::AiFunctionDecl,
    env: &[(&str, std::ffi::OsString)],
) -> Result<()> {
    let out = Command::new(exe)
        .arg("validate")
        .arg(jobs)
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::failure(label, format!("cannot run the eval program: {e}")))?;
    let mut first: Option<(Option<usize>, String)> = None;
    let mut more = 0usize;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(event) = line
            .strip_prefix(CALL_EVENT_PREFIX)
            .and_then(|e| serde_json::from_str::<Value>(e).ok())
        else {
            continue;
        };
        if event["kind"] != "invalid" {
            continue;
        }
        if first.is_none() {
            first = Some((
                event["case"].as_u64().map(|c| c as usize),
                event["message"].as_str().unwrap_or("").to_owned(),
            ));
        } else {
            more += 1;
        }
    }
    let Some((case, message)) = first else {
        return if out.status.success() {
            Ok(())
        } else {
            Err(Error::failure(
                label,
                format!(
                    "the eval program could not check the cases ({})",
                    out.status
                ),
            ))
        };
    };
    let mut at = label.to_owned();
    if let Some(index) = case {
        cases.each(decl, &mut |i, c| {
            if i == index {
                at = format!("{}:{}", c.source, c.line);
            }
            Ok(())
        })?;
    }
    let more = if more > 0 {
        format!(" (and {more} more cases)")
    } else {
        String::new()
    };
    Err(Error::usage(
        at,
        format!(
            "the case does not fit `{}`: {message}{more}; nothing was sent",
            decl.name
        ),
    ))
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
            assertion: case["message"].as_str().map(str::to_owned),
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
        event: event.clone(),
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

/// At most this many failing runs per model are listed in the summary and
/// the report; every run is in its own envelope.
const LISTED_FAILURES: usize = 100;

/// Up to this many latencies per model are kept as they are (exact
/// quantiles); past it they go into buckets 1% wide, so that memory does
/// not grow with the number of runs.
const EXACT_LATENCIES: usize = 10_000;

/// The runs' latencies: the values while few, else buckets.
#[derive(Default)]
struct Latencies {
    exact: Vec<f64>,
    /// Bucket `i` holds latencies in `[LO·1.01^i, LO·1.01^(i+1))` ms.
    buckets: Vec<u64>,
    n: usize,
}

/// The lower bound of the first bucket, in ms.
const LATENCY_LO: f64 = 0.001;
const LATENCY_BUCKETS: usize = 3000;

impl Latencies {
    fn bucket(x: f64) -> usize {
        if x <= LATENCY_LO {
            return 0;
        }
        ((x / LATENCY_LO).ln() / 1.01f64.ln())
            .floor()
            .clamp(0.0, (LATENCY_BUCKETS - 1) as f64) as usize
    }

    fn middle(i: usize) -> f64 {
        LATENCY_LO * 1.01f64.powf(i as f64 + 0.5)
    }

    fn add(&mut self, x: f64) {
        self.n += 1;
        if self.buckets.is_empty() && self.exact.len() < EXACT_LATENCIES {
            self.exact.push(x);
            return;
        }
        if self.buckets.is_empty() {
            self.buckets = vec![0; LATENCY_BUCKETS];
            for v in std::mem::take(&mut self.exact) {
                self.buckets[Self::bucket(v)] += 1;
            }
        }
        self.buckets[Self::bucket(x)] += 1;
    }

    /// The `q` quantile (nearest rank): exact while the values are kept,
    /// else the middle of its bucket (within 1%).
    fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as usize).clamp(1, self.n);
        if self.buckets.is_empty() {
            let mut sorted = self.exact.clone();
            sorted.sort_by(f64::total_cmp);
            return sorted[rank - 1];
        }
        let mut seen = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            seen += *c as usize;
            if seen >= rank {
                return Self::middle(i);
            }
        }
        0.0
    }

    /// Each latency (or bucket middle) with how many runs had it.
    fn weighted(&self) -> Vec<(f64, u64)> {
        if self.buckets.is_empty() {
            return self.exact.iter().map(|x| (*x, 1)).collect();
        }
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (Self::middle(i), *c))
            .collect()
    }
}

/// One model's totals, in memory independent of the number of runs.
struct Score {
    runs: usize,
    passed: usize,
    fields: BTreeMap<String, (usize, usize)>,
    latencies: Latencies,
    usage: [u64; 4],
    cost: Option<f64>,
    unpriced: bool,
    failed: usize,
    /// The first [`LISTED_FAILURES`] failing runs.
    failures: Vec<Value>,
    /// How many cases passed `k` of their runs, by `k`.
    stability: Vec<usize>,
}

impl Score {
    fn new(repeat: usize) -> Score {
        Score {
            runs: 0,
            passed: 0,
            fields: BTreeMap::new(),
            latencies: Latencies::default(),
            usage: [0; 4],
            cost: None,
            unpriced: false,
            failed: 0,
            failures: Vec::new(),
            stability: vec![0; repeat + 1],
        }
    }

    fn add(&mut self, run: &Run, verdict: &Verdict) {
        self.runs += 1;
        self.passed += usize::from(verdict.pass);
        for (field, right) in verdict.fields.iter().flatten() {
            let slot = self.fields.entry(field.clone()).or_default();
            slot.0 += usize::from(*right);
            slot.1 += 1;
        }
        self.latencies.add(run.latency_ms);
        for (total, n) in self.usage.iter_mut().zip(run.usage) {
            *total += n;
        }
        match run.cost_usd {
            Some(c) => self.cost = Some(self.cost.unwrap_or(0.0) + c),
            None if run.usage[0] + run.usage[1] > 0 => self.unpriced = true,
            None => {}
        }
    }

    fn fail(&mut self, failure: Value) {
        self.failed += 1;
        if self.failures.len() < LISTED_FAILURES {
            self.failures.push(failure);
        }
    }

    /// A case passed `passed` of its runs.
    fn stable(&mut self, passed: usize) {
        if let Some(slot) = self.stability.get_mut(passed) {
            *slot += 1;
        }
    }

    fn latency_bins(&self) -> Vec<(f64, u64)> {
        self.latencies.weighted()
    }

    fn summary(self, model: &str, cases: usize, min_pass: Option<f64>) -> Value {
        let pass_rate = self.passed as f64 / self.runs.max(1) as f64;
        let field_accuracy: BTreeMap<&String, f64> = self
            .fields
            .iter()
            .map(|(k, (right, of))| (k, *right as f64 / (*of).max(1) as f64))
            .collect();
        let of = self.stability.len() - 1;
        let stability: Vec<Value> = self
            .stability
            .iter()
            .enumerate()
            .map(|(passed, n)| json!({"passed": passed, "of": of, "cases": n}))
            .collect();
        json!({
            "model": model,
            "pass_rate": pass_rate,
            "passed": self.passed,
            "runs": self.runs,
            "cases": cases,
            "field_accuracy": field_accuracy,
            "stability": stability,
            "failed": self.failed,
            "failures": self.failures,
            "latency_ms": {"p50": self.latencies.quantile(0.50), "p95": self.latencies.quantile(0.95)},
            "usage": {"input_tokens": self.usage[0], "output_tokens": self.usage[1],
                "cached_tokens": self.usage[2], "reasoning_tokens": self.usage[3]},
            "cost_usd": if self.unpriced { None } else { Some(self.cost.unwrap_or(0.0)) },
            "min_pass_met": min_pass.map(|x| pass_rate >= x),
        })
    }
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
        let listed = s["failures"].as_array().map_or(0, Vec::len);
        for f in s["failures"].as_array().into_iter().flatten() {
            println!(
                "    {}:{} (run {}): {}",
                f["source"].as_str().unwrap_or(""),
                f["case"],
                f["repeat"].as_u64().unwrap_or(0) + 1,
                f["reason"].as_str().unwrap_or("")
            );
        }
        let failed = s["failed"].as_u64().unwrap_or(0) as usize;
        if failed > listed {
            println!("    … and {} more failing runs", failed - listed);
        }
        if s["min_pass_met"] == Value::Bool(false) {
            println!("    under --min-pass");
        }
    }
}
