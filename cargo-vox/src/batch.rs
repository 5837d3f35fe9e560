//! `cargo vox batch FUNCTION [PATHS…] --input ARGS.jsonl`: runs an `@ai`
//! function of a script or package over a JSONL file of arguments on the
//! provider's batch engine (README, "Bulk runs"; docs/runtime.md, "Bulk
//! runs"), with a cost estimate before anything is submitted, a progress
//! bar on a terminal, the results in input order and a summary.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use vox_runtime::__private::{AiFunction, OutputSchema};
use vox_runtime::{
    args_from_json, batch_results, BatchOptions, BatchReport, Client, Config, Progress, Provider,
};

use crate::check::check_error_free;
use crate::context::Context;
use crate::envelope::ENVELOPE_VERSION;
use crate::error::{Error, Result};
use crate::{exit, inputs, output};

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The `@ai` function to run.
    pub function: String,
    /// `.vox` files or directories holding it (default: the package's sources).
    pub paths: Vec<PathBuf>,
    /// A JSONL file of arguments: one JSON object per line, `{"name": value, …}`.
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// The job directory, which records every step; running again with it
    /// resumes the job (default: the input file's name with `.vox-batch`).
    #[arg(long, value_name = "DIR")]
    pub job: Option<PathBuf>,
    /// Write the results (JSONL, in input order) to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// At most this many requests per batch (the provider's limit otherwise).
    #[arg(long, value_name = "N")]
    pub max_per_batch: Option<u64>,
    /// Print the cost estimate and stop before submitting anything (needs no API key).
    #[arg(long)]
    pub estimate: bool,
    /// At most this many items re-run as normal calls, at full price, over the job's life
    /// (default: a tenth of the inputs, at least 10).
    #[arg(long, value_name = "N")]
    pub max_reruns: Option<u64>,
    /// Re-run the items of a batch the engine failed as a whole (at full price, within
    /// --max-reruns) instead of stopping.
    #[arg(long)]
    pub rerun_failed: bool,
    /// Prices in USD per million tokens, `INPUT,OUTPUT`, instead of the built-in table.
    #[arg(long, value_name = "IN,OUT")]
    pub price: Option<String>,
    /// Seconds before the first look at an unfinished batch (each later wait is longer).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub poll: f64,
}

/// Batch prices in USD per million tokens (input, output) for models whose
/// names start with the key: the providers' published batch prices
/// (half the normal ones) when this table was written. `--price` overrides.
const PRICES: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.075, 0.30),
    ("gpt-4o", 1.25, 5.00),
    ("gpt-4.1-mini", 0.20, 0.80),
    ("gpt-4.1-nano", 0.05, 0.20),
    ("gpt-4.1", 1.00, 4.00),
    ("claude-3-5-haiku", 0.40, 2.00),
    ("claude-haiku-4-5", 0.50, 2.50),
    ("claude-sonnet-4", 1.50, 7.50),
    ("claude-3-7-sonnet", 1.50, 7.50),
    ("claude-opus-4", 7.50, 37.50),
];

/// The price of `model` per million tokens: `--price`, else the table's
/// longest matching prefix.
pub fn price_for(model: &str, over: Option<&str>) -> Result<Option<(f64, f64)>, String> {
    if let Some(text) = over {
        let (input, output) = text.split_once(',').ok_or_else(|| {
            format!("--price `{text}`: expected INPUT,OUTPUT (USD per million tokens)")
        })?;
        let parse = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| format!("--price `{text}`: `{s}` is not a price"))
        };
        return Ok(Some((parse(input)?, parse(output)?)));
    }
    let bare = model.rsplit(':').next().unwrap_or(model);
    Ok(PRICES
        .iter()
        .filter(|(prefix, _, _)| bare.starts_with(prefix))
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, input, output)| (input, output)))
}

/// Tokens and dollars a planned job may cost: input tokens from the text
/// of the planned requests ([`request_tokens`]), output tokens at most
/// `max_tokens` an item; and the worst case of the re-runs, normal calls
/// at the full price (twice the batch price).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub requests: u64,
    pub batches: usize,
    pub input_tokens: u64,
    pub max_output_tokens: u64,
    /// USD, `None` without a price.
    pub input_cost: Option<f64>,
    pub max_output_cost: Option<f64>,
    /// At most this many items are re-run (`--max-reruns`).
    pub max_reruns: u64,
    /// Tokens the re-runs may send and receive at most: each of
    /// `max_reruns` items with all its attempts, every attempt carrying
    /// the earlier ones' replies.
    pub rerun_input_tokens: u64,
    pub rerun_output_tokens: u64,
    /// USD at full price, `None` without a price.
    pub max_rerun_cost: Option<f64>,
    /// How the input tokens were counted.
    pub token_count: &'static str,
}

/// The factor between the full price and the batch price (OpenAI's and
/// Anthropic's batch discount is 50%).
const FULL_PRICE_FACTOR: f64 = 2.0;

pub fn estimate(
    report: &BatchReport,
    input_tokens: u64,
    max_tokens: u32,
    attempts: u32,
    max_reruns: u64,
    price: Option<(f64, f64)>,
) -> Estimate {
    let max_output_tokens = report.inputs.saturating_mul(u64::from(max_tokens));
    let reruns = max_reruns.min(report.inputs);
    let per_item = input_tokens.checked_div(report.inputs).unwrap_or(0);
    let attempts = u64::from(attempts.max(1));
    // Attempt k (from 0) carries the k replies before it and a correction
    // of each (counted as long as a reply).
    let rerun_input = (0..attempts)
        .map(|k| per_item + 2 * k * u64::from(max_tokens))
        .sum::<u64>();
    let rerun_input_tokens = reruns.saturating_mul(rerun_input);
    let rerun_output_tokens = reruns.saturating_mul(attempts * u64::from(max_tokens));
    Estimate {
        requests: report.inputs,
        batches: report.batches,
        input_tokens,
        max_output_tokens,
        input_cost: price.map(|(p, _)| input_tokens as f64 / 1e6 * p),
        max_output_cost: price.map(|(_, p)| max_output_tokens as f64 / 1e6 * p),
        max_reruns: reruns,
        rerun_input_tokens,
        rerun_output_tokens,
        max_rerun_cost: price.map(|(i, o)| {
            FULL_PRICE_FACTOR
                * (rerun_input_tokens as f64 / 1e6 * i + rerun_output_tokens as f64 / 1e6 * o)
        }),
        token_count: TOKEN_COUNT,
    }
}

/// How [`request_tokens`] counts, as the estimate says it.
const TOKEN_COUNT: &str = "about 4 characters a token over the requests' text and schema";

/// The input tokens of one planned request line: its text (messages and
/// system prompt) and its schema (the response format or tools, as compact
/// JSON) at about four characters a token, plus four a message; not the
/// JSON around them, which is not billed. Measured against tiktoken's
/// o200k_base (docs/runtime.md, "Bulk runs"): within 15% of the exact
/// count on English text and JSON schemas.
pub fn request_tokens(line: &[u8]) -> u64 {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return (line.len() as u64).div_ceil(4);
    };
    let body = value
        .get("body")
        .or_else(|| value.get("params"))
        .unwrap_or(&value);
    let mut chars = 0u64;
    let mut messages = 0u64;
    for key in ["system", "messages"] {
        if let Some(part) = body.get(key) {
            chars += text_chars(part);
            messages += part.as_array().map_or(1, |m| m.len() as u64);
        }
    }
    for key in ["response_format", "tools", "tool_choice"] {
        if let Some(part) = body.get(key) {
            chars += part.to_string().chars().count() as u64;
        }
    }
    chars.div_ceil(4) + 4 * messages
}

/// The characters of every string in `value` but its keys and the roles
/// and types of messages.
fn text_chars(value: &serde_json::Value) -> u64 {
    match value {
        serde_json::Value::String(s) => s.chars().count() as u64,
        serde_json::Value::Array(items) => items.iter().map(text_chars).sum(),
        serde_json::Value::Object(fields) => fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "role" | "type" | "cache_control"))
            .map(|(_, v)| text_chars(v))
            .sum(),
        _ => 0,
    }
}

/// The input tokens of every request planned in the job directory `job`
/// (its `chunk-K.requests.jsonl` files), read a line at a time.
fn planned_tokens(job: &Path, batches: usize) -> anyhow::Result<u64> {
    let mut tokens = 0;
    for chunk in 0..batches {
        let path = job.join(format!("chunk-{chunk}.requests.jsonl"));
        let file = File::open(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        for line in BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            if !line.is_empty() {
                tokens += request_tokens(&line);
            }
        }
    }
    Ok(tokens)
}

/// The provider an estimate plans for when the environment names none or
/// has no key: the function's `provider:` prefix, else `anthropic` for a
/// `claude` model, else `openai`.
fn estimate_provider(model: &str) -> Provider {
    match Provider::split_model(model) {
        (Some(provider), _) => provider,
        (None, name) if name.trim_start().starts_with("claude") => Provider::Anthropic,
        _ => Provider::OpenAi,
    }
}

pub fn run(args: &BatchArgs, ctx: &Context) -> Result<i32> {
    // A failure before the module is read names the function asked for.
    let inputs = inputs::resolve(ctx, &args.paths, &args.function)?;
    let label = inputs.label;
    let files: Vec<_> = inputs.modules.into_iter().flat_map(|m| m.files).collect();
    let checked = check_error_free(
        ctx,
        &label,
        &files,
        "the module has errors; nothing submitted",
    )?;
    let function = ai_function(&checked, &args.function).map_err(|m| Error::usage(&label, m))?;
    if !function.tools().is_empty() {
        // A batch has one request per input: no turn for a tool's result.
        return Err(Error::usage(
            &label,
            format!(
                "`{}` calls tools, which run between the model's turns; a batch sends one \
                 request per input: call it one input at a time (`cargo vox call`)",
                args.function
            ),
        ));
    }
    // An input that cannot be read is a usage error, whatever else is
    // missing (checked before the provider, which it does not depend on).
    if let Err(e) = File::open(&args.input) {
        return Err(Error::usage(
            &label,
            format!("cannot read {}: {e}", args.input.display()),
        ));
    }
    let config = Config::from_env().map_err(|e| Error::failure(&label, e.to_string()))?;
    // Sending needs a provider and its key; an estimate sends nothing and
    // needs neither: it plans for the provider named (or the model's),
    // with a key that is never used.
    let ready = config.provider() != Provider::Fixture && config.has_api_key();
    let (config, guessed) = if ready {
        (config, false)
    } else if args.estimate {
        let named = config.provider() != Provider::Fixture;
        let provider = if named {
            config.provider()
        } else {
            estimate_provider(function.model().unwrap_or(""))
        };
        let mut builder = Config::builder(provider)
            .api_key("unused: an estimate sends nothing")
            .max_tokens(config.max_tokens());
        if let Ok(model) = std::env::var("VOX_LLM_MODEL") {
            if !model.trim().is_empty() {
                builder = builder.default_model(model.trim());
            }
        }
        let config = builder
            .build()
            .map_err(|e| Error::failure(&label, e.to_string()))?;
        (config, !named)
    } else if config.provider() == Provider::Fixture {
        return Err(Error::failure(
            &label,
            "no provider to send the batch to: set VOX_LLM_PROVIDER (`openai` or `anthropic`) \
             and its API key (`--estimate` needs neither)",
        ));
    } else {
        (config, false)
    };
    let max_tokens = function.max_tokens().unwrap_or(config.max_tokens());
    let model = function
        .model()
        .map(str::to_owned)
        .unwrap_or_else(|| config.default_model().to_owned());
    let price = price_for(&model, args.price.as_deref()).map_err(|m| Error::usage(&label, m))?;
    let provider_name = config.provider().name();
    let client = Client::new(config).map_err(|e| Error::failure(&label, e.to_string()))?;
    let job = args.job.clone().unwrap_or_else(|| {
        let mut name = args.input.clone().into_os_string();
        name.push(".vox-batch");
        PathBuf::from(name)
    });
    // A guessed provider's plan is not the job's: it is made in a
    // directory of its own, removed afterwards.
    let plan_dir = if guessed {
        std::env::temp_dir().join(format!(
            "vox-estimate-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ))
    } else {
        job.clone()
    };
    let bar = progress_bar(ctx.json());
    let options = BatchOptions {
        max_requests_per_batch: args.max_per_batch.unwrap_or(u64::MAX),
        poll_initial: Duration::from_secs_f64(args.poll.clamp(0.001, 3600.0)),
        poll_max: Duration::from_secs(300)
            .max(Duration::from_secs_f64(args.poll.clamp(0.001, 3600.0))),
        check_schema: true,
        progress: bar.clone().map(|bar| {
            let hook: vox_runtime::ProgressHook = Arc::new(move |p: &Progress| bar.step(p));
            hook
        }),
        rerun_failed_batches: args.rerun_failed,
        ..BatchOptions::default()
    };
    let input = args.input.clone();
    let lines = || -> anyhow::Result<_> {
        let file = File::open(&input)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", input.display()))?;
        let input = input.clone();
        Ok(BufReader::new(file)
            .lines()
            .enumerate()
            .map(move |(n, line)| {
                let line = line.map_err(|e| {
                    vox_runtime::Error::Batch(format!("cannot read {}: {e}", input.display()))
                })?;
                args_from_json(&line).map_err(|e| {
                    vox_runtime::Error::Batch(format!("{} line {}: {e}", input.display(), n + 1))
                })
            }))
    };
    // Plan first (nothing is sent), to estimate the cost.
    let planned = vox_runtime::block_on(client.batch::<serde_json::Value, _>(
        &function,
        &plan_dir,
        lines().map_err(|e| Error::usage(&label, format!("{e:#}")))?,
        &BatchOptions {
            plan_only: true,
            ..options.clone()
        },
    ));
    let tokens = planned
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|p| planned_tokens(&plan_dir, p.batches).map_err(|e| format!("{e:#}")));
    if guessed {
        let _ = std::fs::remove_dir_all(&plan_dir);
    }
    let planned = planned.map_err(|e| Error::failure(&label, e.to_string()))?;
    let input_tokens = tokens.map_err(|e| Error::failure(&label, e))?;
    // A tenth of the inputs, at least 10: re-runs cost the full price.
    let max_reruns = args
        .max_reruns
        .unwrap_or_else(|| planned.inputs.div_ceil(10).max(10));
    let estimate = estimate(
        &planned,
        input_tokens,
        max_tokens,
        function.max_iterations(),
        max_reruns,
        price,
    );
    let shown_job = if guessed {
        format!("none written: no provider or key set, planned for `{provider_name}` (the model's)")
    } else {
        job.display().to_string()
    };
    report_estimate(ctx.json(), &label, &model, &estimate, &shown_job);
    if args.estimate {
        return Ok(exit::SUCCESS);
    }
    let options = BatchOptions {
        max_reruns,
        ..options
    };
    if let Some(bar) = &bar {
        bar.start(planned.inputs);
    }
    // `check = f` is Vox code: a program built from the module runs it on
    // each value, as the generated `f_batch` would (docs/runtime.md,
    // "Bulk runs").
    let checker = match checked
        .ai_functions()
        .into_iter()
        .find(|f| f.name == args.function)
        .and_then(|f| f.check)
    {
        Some(_) => {
            match crate::lane::script::check_program(&label, &files, &checked, &args.function, ctx)?
            {
                Ok(exe) => Some(Checker::start(&exe).map_err(|e| {
                    Error::failure(&label, format!("cannot start the check program: {e}"))
                })?),
                Err(code) => return Ok(code),
            }
        }
        None => None,
    };
    let report = match &checker {
        Some(checker) => vox_runtime::block_on(client.batch_checked::<serde_json::Value, _, _>(
            &function,
            &job,
            std::iter::empty(),
            &options,
            |value: &serde_json::Value| checker.check(value),
        )),
        None => vox_runtime::block_on(client.batch::<serde_json::Value, _>(
            &function,
            &job,
            std::iter::empty(),
            &options,
        )),
    };
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = report.map_err(|e| {
        Error::failure(
            &label,
            format!("{e} (the job in {} resumes when run again)", job.display()),
        )
    })?;
    write_results(args, ctx.json(), &job).map_err(|e| Error::failure(&label, format!("{e:#}")))?;
    report_summary(ctx.json(), &label, &report, &job);
    Ok(if report.failed == 0 {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// The `@ai` function `name` of the module, as generated code declares it.
pub(crate) fn ai_function(
    checked: &vox_codegen::Checked,
    name: &str,
) -> std::result::Result<AiFunction, String> {
    ai_function_with(checked, name, None)
}

/// [`ai_function`], its doc comment replaced by `instruction` when given
/// (`cargo vox eval --instruction`).
pub(crate) fn ai_function_with(
    checked: &vox_codegen::Checked,
    name: &str,
    instruction: Option<&str>,
) -> std::result::Result<AiFunction, String> {
    let Some(f) = checked.ai_functions().into_iter().find(|f| f.name == name) else {
        return Err(if checked.has_function(name) {
            format!("`{name}` is not an @ai function: only @ai functions run in batches")
        } else {
            format!("no function `{name}` in the module")
        });
    };
    // Arguments come from JSON, which holds no media: a path would reach
    // the model as text, not as the file (docs/language.md, "Images,
    // documents and audio").
    if let Some(p) = f.params.iter().find(|p| !p.parts.is_empty()) {
        return Err(format!(
            "`{name}` takes media (`{}: {}`), which arguments read from JSON cannot \
             hold; call it from Vox or Rust with `image_file(…)` or `Image::from_path`",
            p.name, p.ty
        ));
    }
    // One function per process: leaked once, as a generated static would be.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let output: &'static OutputSchema = Box::leak(Box::new(OutputSchema::new(
        leak(f.output.name.clone()),
        leak(f.output.schema.to_compact()),
        f.output.wrapped,
    )));
    let instruction = instruction.map_or(f.instruction, str::to_owned);
    let mut function = AiFunction::new(leak(f.name), leak(instruction), output)
        .with_max_iterations(f.max_iterations);
    if let Some(model) = f.model {
        function = function.with_model(leak(model));
    }
    if let Some(t) = f.temperature {
        function = function.with_temperature(t);
    }
    if let Some(tokens) = f.max_tokens {
        function = function.with_max_tokens(tokens);
    }
    if let Some(fallback) = f.fallback {
        let list: Vec<&'static str> = fallback.into_iter().map(leak).collect();
        function = function.with_fallback(Box::leak(list.into_boxed_slice()));
    }
    if let Some(history) = f.history {
        function = function.with_history(leak(history));
    }
    if !f.examples.is_empty() {
        let examples: Vec<vox_runtime::__private::Example> = f
            .examples
            .into_iter()
            .map(|(arguments, output)| vox_runtime::__private::Example {
                arguments: leak(arguments),
                output: leak(output),
            })
            .collect();
        function = function.with_examples(Box::leak(examples.into_boxed_slice()));
    }
    if !f.tools.is_empty() {
        // Declared to the model as the program declares them; this
        // process never runs one (`cargo vox call` runs the program).
        let tools: Vec<vox_runtime::Tool> = f
            .tools
            .into_iter()
            .map(|t| {
                vox_runtime::Tool::new(
                    leak(t.name),
                    leak(t.description),
                    leak(t.parameters),
                    not_run_here,
                )
            })
            .collect();
        function = function.with_tools(Box::leak(tools.into_boxed_slice()));
    }
    if let Some(steps) = f.max_steps {
        function = function.with_max_steps(steps);
    }
    Ok(function)
}

/// A tool as this process declares it: only the program built from the
/// module runs tools.
fn not_run_here(_: String) -> vox_runtime::ToolFuture {
    Box::pin(async {
        Err(vox_runtime::ToolError::Failed(
            "tools run in the program built from the module, not here".into(),
        ))
    })
}

fn report_estimate(json: bool, label: &str, model: &str, estimate: &Estimate, job: &str) {
    if json {
        let line = serde_json::json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "batch",
            "kind": "estimate",
            "file_path": label,
            "ok": true,
            "model": model,
            "job": job,
            "estimate": estimate,
        });
        output::emit_line(&line.to_string());
        return;
    }
    let cost = match (estimate.input_cost, estimate.max_output_cost) {
        (Some(i), Some(o)) => format!(
            "about ${i:.2} of input + at most ${o:.2} of output (batch prices; --price to set them)"
        ),
        _ => format!("no price known for `{model}` (--price INPUT,OUTPUT per million tokens)"),
    };
    let reruns = match estimate.max_rerun_cost {
        Some(cost) => format!("at most ${cost:.2} more"),
        None => format!(
            "at most {} input and {} output tokens more",
            estimate.rerun_input_tokens, estimate.rerun_output_tokens
        ),
    };
    eprintln!(
        "estimate: {} requests in {} batch(es) to `{model}`: ~{} input tokens ({}, within about \
         15%), at most {} output tokens; {cost}",
        estimate.requests,
        estimate.batches,
        estimate.input_tokens,
        estimate.token_count,
        estimate.max_output_tokens
    );
    eprintln!(
        "worst case: up to {} item(s) re-run as normal calls at full price (--max-reruns), \
         {reruns}; job: {job}",
        estimate.max_reruns
    );
}

fn report_summary(json: bool, label: &str, report: &BatchReport, job: &Path) {
    if json {
        let line = serde_json::json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "batch",
            "kind": "summary",
            "file_path": label,
            "ok": report.failed == 0,
            "job": job.display().to_string(),
            "report": report,
        });
        output::emit_line(&line.to_string());
        return;
    }
    eprintln!(
        "{}: {} item(s): {} from {} batch(es), {} re-run as normal calls, {} failed{} (job {})",
        if report.failed == 0 { "ok" } else { "error" },
        report.inputs,
        report.from_batch,
        report.batches,
        report.reran,
        report.failed,
        if report.resumed { "; resumed" } else { "" },
        job.display()
    );
}

/// The results in input order: to `--output`, else stdout (under `--json`
/// as `item` envelopes).
fn write_results(args: &BatchArgs, json: bool, job: &Path) -> anyhow::Result<()> {
    let mut file = match &args.output {
        Some(path) => {
            Some(BufWriter::new(File::create(path).map_err(|e| {
                anyhow::anyhow!("cannot write {}: {e}", path.display())
            })?))
        }
        None => None,
    };
    for item in batch_results::<serde_json::Value>(job)? {
        let item = item?;
        let mut line = match &item.result {
            Ok(value) => serde_json::json!({"index": item.index, "ok": true, "value": value}),
            Err(error) => serde_json::json!({"index": item.index, "ok": false, "error": error}),
        };
        match &mut file {
            Some(file) => writeln!(file, "{line}")?,
            None => {
                if let (true, Some(object)) = (json, line.as_object_mut()) {
                    object.insert("envelope_version".into(), ENVELOPE_VERSION.into());
                    object.insert("command".into(), "batch".into());
                    object.insert("kind".into(), "item".into());
                }
                output::emit_line(&line.to_string());
            }
        }
    }
    if let Some(mut file) = file {
        file.flush()?;
    }
    Ok(())
}

/// The progress bar on a terminal (none under `--json` or when stderr is
/// not a terminal).
#[derive(Clone)]
struct Bar(indicatif::ProgressBar);

fn progress_bar(json: bool) -> Option<Bar> {
    if json || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::hidden();
    Some(Bar(bar))
}

impl Bar {
    fn start(&self, items: u64) {
        self.0
            .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        self.0.set_length(items);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} items {msg} (eta {eta})",
        ) {
            self.0.set_style(style);
        }
        self.0.enable_steady_tick(Duration::from_millis(250));
    }

    fn step(&self, progress: &Progress) {
        match progress {
            Progress::Submitted { chunk, id } => {
                self.0
                    .set_message(format!("batch {} submitted ({id})", chunk + 1));
            }
            Progress::Polled { chunk, status } => {
                self.0.set_message(format!("batch {}: {status}", chunk + 1));
            }
            Progress::Collected { accepted, .. } => self.0.inc(*accepted),
            Progress::Rerun { .. } => {
                self.0
                    .set_message("re-running rejected items as normal calls".to_owned());
                self.0.inc(1);
            }
            _ => {}
        }
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_by_longest_prefix_or_the_flag() {
        assert_eq!(price_for("gpt-4o-mini-2024", None), Ok(Some((0.075, 0.30))));
        assert_eq!(price_for("openai:gpt-4o", None), Ok(Some((1.25, 5.00))));
        assert_eq!(price_for("my-local-model", None), Ok(None));
        assert_eq!(price_for("gpt-4o", Some("1,2.5")), Ok(Some((1.0, 2.5))));
        for bad in ["1", "a,b", "-1,2", "1,inf"] {
            assert!(price_for("gpt-4o", Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn estimates_from_the_planned_tokens_with_the_reruns_worst_case() {
        let report = BatchReport {
            inputs: 1000,
            batches: 1,
            request_bytes: 4_000_000,
            ..BatchReport::default()
        };
        let e = estimate(&report, 1_000_000, 100, 2, 10, Some((1.0, 2.0)));
        assert_eq!(e.input_tokens, 1_000_000);
        assert_eq!(e.max_output_tokens, 100_000);
        assert_eq!(e.input_cost, Some(1.0));
        assert_eq!(e.max_output_cost, Some(0.2));
        // 10 items, 2 attempts each: 1000 + (1000 + 200) input tokens and
        // 200 output tokens an item, at twice the batch price.
        assert_eq!(
            (e.rerun_input_tokens, e.rerun_output_tokens),
            (22_000, 2_000)
        );
        let cost = e.max_rerun_cost.unwrap();
        assert!((cost - 2.0 * (0.022 + 0.004)).abs() < 1e-9, "{cost}");
        assert_eq!(estimate(&report, 1, 100, 1, 10, None).input_cost, None);
        // Never more re-runs than inputs.
        assert_eq!(estimate(&report, 1, 1, 1, u64::MAX, None).max_reruns, 1000);
    }

    #[test]
    fn request_tokens_count_text_and_schema_not_the_json_around_them() {
        let text = "x".repeat(400);
        let line = serde_json::json!({"custom_id": "vox-j-0", "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "max_tokens": 100,
                     "messages": [{"role": "system", "content": "abcd"},
                                  {"role": "user", "content": text}]}});
        // 404 characters of text, two messages.
        assert_eq!(request_tokens(line.to_string().as_bytes()), 101 + 8);
        // Escapes in the JSON (a quote is two bytes there) are not text.
        let quoted = serde_json::json!({"params": {"messages": [
            {"role": "user", "content": "\"\"\"\""}]}});
        assert_eq!(request_tokens(quoted.to_string().as_bytes()), 1 + 4);
    }
}

/// The check program of a function with `check = f`
/// (`lane::script::check_program`), running for the length of a batch:
/// one JSON value per line in, one `{"problems":[…]}` line out.
struct Checker {
    pipes: std::sync::Mutex<CheckerPipes>,
}

struct CheckerPipes {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Checker {
    fn start(exe: &std::path::Path) -> std::io::Result<Checker> {
        use std::process::{Command, Stdio};
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(std::io::Error::other("the check program has no pipes"));
        };
        Ok(Checker {
            pipes: std::sync::Mutex::new(CheckerPipes {
                child,
                stdin: Some(stdin),
                stdout: BufReader::new(stdout),
            }),
        })
    }

    /// The check's problems with `value`. A check program that stopped
    /// answering is a problem of each value, so nothing is accepted
    /// unchecked (each such item is re-run as a normal call, and fails).
    fn check(&self, value: &serde_json::Value) -> Vec<String> {
        use std::io::Write as _;
        let mut pipes = match self.pipes.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        let pipes = &mut *pipes;
        let mut line = String::new();
        let Some(stdin) = pipes.stdin.as_mut() else {
            return vec!["the check program did not answer: it stopped".to_owned()];
        };
        let asked = writeln!(stdin, "{value}")
            .and_then(|()| stdin.flush())
            .and_then(|()| pipes.stdout.read_line(&mut line));
        let answer = match asked {
            Ok(0) => Err("it stopped".to_owned()),
            Ok(_) => serde_json::from_str::<CheckAnswer>(&line)
                .map_err(|e| format!("its answer is not understood: {e}")),
            Err(e) => Err(e.to_string()),
        };
        match answer {
            Ok(answer) => answer.problems,
            Err(why) => vec![format!("the check program did not answer: {why}")],
        }
    }
}

#[derive(serde::Deserialize)]
struct CheckAnswer {
    problems: Vec<String>,
}

impl Drop for Checker {
    fn drop(&mut self) {
        let pipes = match self.pipes.get_mut() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Closing its input ends the program; wait, so no zombie is left.
        drop(pipes.stdin.take());
        let _ = pipes.child.wait();
    }
}
