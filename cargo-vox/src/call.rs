//! `cargo vox call FUNCTION [PATHS…] --args JSON [--stream] [--dry-run]`:
//! one `@ai` function tried from the command line (README, "`cargo vox
//! call`").
//!
//! The call runs in a small program built from the module in the script
//! cache (vox-codegen's `Checked::call_program`): the generated function
//! itself, so its fixture body, `check = f` and return type are exactly
//! the package's. The program prints each event on its standard output
//! behind a marker ([`vox_runtime::__private::CALL_EVENT_PREFIX`]); what
//! the function's own `print`s write goes to stderr here, so under
//! `--json` stdout is JSONL only. `--dry-run` builds nothing: the request
//! is rendered in this process.

use std::io::{BufRead as _, BufReader, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use clap::Args;
use serde_json::{json, Value};
use vox_runtime::__private::CALL_EVENT_PREFIX;
use vox_runtime::{Client, Config};

use crate::check::check_error_free;
use crate::context::Context;
use crate::envelope::ENVELOPE_VERSION;
use crate::error::{Error, Result};
use crate::{exit, inputs, output};

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The `@ai` function to call.
    pub function: String,
    /// `.vox` files or directories holding it (default: the package's sources).
    pub paths: Vec<PathBuf>,
    /// The arguments: one JSON object, `{"name": value, …}` (a line of `batch --input`).
    #[arg(long, value_name = "JSON")]
    pub args: String,
    /// Show the value while the reply arrives (partial values; `partial` and `retry`
    /// envelopes under `--json`).
    #[arg(long)]
    pub stream: bool,
    /// Print the request that would be sent (the key redacted) and send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The model for this call instead of the function's (a `provider:` prefix allowed,
    /// `anthropic:claude-haiku-4-5`).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

/// An `@ai` function of the module in `paths` (or the package's), checked
/// clean and callable from JSON arguments: what `cargo vox call` and
/// `cargo vox eval` start from.
pub(crate) struct Loaded {
    pub label: String,
    pub files: Vec<PathBuf>,
    pub checked: vox_codegen::Checked,
    pub function: vox_runtime::__private::AiFunction,
    pub decl: vox_codegen::AiFunctionDecl,
}

/// Loads `name` for a command that, when the module has errors or the
/// function cannot take JSON arguments, does `nothing` (`"called"`,
/// `"evaluated"`).
pub(crate) fn load(ctx: &Context, paths: &[PathBuf], name: &str, nothing: &str) -> Result<Loaded> {
    let inputs = inputs::resolve(ctx, paths, name)?;
    let label = inputs.label;
    let files: Vec<_> = inputs.modules.into_iter().flat_map(|m| m.files).collect();
    let checked = check_error_free(
        ctx,
        &label,
        &files,
        &format!("the module has errors; nothing {nothing}"),
    )?;
    let function = crate::batch::ai_function(&checked, name).map_err(|m| {
        Error::usage(
            &label,
            m.replace("run in batches", &format!("can be {nothing}")),
        )
    })?;
    let decl = checked
        .ai_functions()
        .into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| Error::usage(&label, format!("no @ai function `{name}`")))?;
    Ok(Loaded {
        label,
        files,
        checked,
        function,
        decl,
    })
}

pub fn run(args: &CallArgs, ctx: &Context) -> Result<i32> {
    let Loaded {
        label,
        files,
        checked,
        function,
        decl,
    } = load(ctx, &args.paths, &args.function, "called")?;
    let given: Value = serde_json::from_str(&args.args)
        .map_err(|e| Error::usage(&label, format!("--args is not JSON: {e}")))?;
    check_arguments(&given, &decl, "--args").map_err(|m| Error::usage(&label, m))?;
    if args.dry_run {
        return dry_run(args, ctx, &label, &function, &given);
    }
    let exe =
        match crate::lane::script::call_program(&label, &files, &checked, &args.function, ctx)? {
            Ok(exe) => exe,
            Err(code) => return Ok(code),
        };
    let mode = if args.stream { "stream" } else { "plain" };
    let mut child = Command::new(&exe)
        .arg(given.to_string())
        .arg(mode)
        .arg(args.model.as_deref().unwrap_or(""))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::failure(&label, format!("cannot run the call program: {e}")))?;
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        return Err(Error::failure(&label, "the call program has no output"));
    };
    let mut view = View::new(ctx.json(), &label, args.stream);
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        match line.strip_prefix(CALL_EVENT_PREFIX) {
            Some(event) => match serde_json::from_str::<Value>(event) {
                Ok(event) => view.event(event),
                Err(_) => view.program_output(&line),
            },
            None => view.program_output(&line),
        }
    }
    let status = child
        .wait()
        .map_err(|e| Error::failure(&label, format!("the call program: {e}")))?;
    if !view.finished {
        // It died without an outcome (a crash): say so, once.
        let message = format!("the call program ended without an outcome ({status})");
        view.event(json!({"kind": "final", "ok": false, "attempts": 0, "message": message}));
        return Ok(exit::FAILURE);
    }
    Ok(match status.code() {
        Some(0) => exit::SUCCESS,
        Some(2) => exit::USAGE,
        _ => exit::FAILURE,
    })
}

/// That `value` (the arguments as `what` gives them: `--args`, a case's
/// `args`) is a JSON object naming only the function's parameters, each
/// present unless it is an `Option`.
pub(crate) fn check_arguments(
    value: &Value,
    decl: &vox_codegen::AiFunctionDecl,
    what: &str,
) -> std::result::Result<(), String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{what} must be a JSON object of arguments, `{{\"name\": value, …}}`"
        ));
    };
    let names: Vec<&str> = decl.params.iter().map(|p| p.name.as_str()).collect();
    if let Some(unknown) = map.keys().find(|k| !names.contains(&k.as_str())) {
        return Err(format!(
            "`{}` has no parameter `{unknown}` (its parameters: {})",
            decl.name,
            list(&names)
        ));
    }
    if let Some(missing) = decl
        .params
        .iter()
        .find(|p| !map.contains_key(&p.name) && !p.ty.starts_with("Option["))
    {
        return Err(format!(
            "{what} has no `{}` (`{}: {}`)",
            missing.name, missing.name, missing.ty
        ));
    }
    Ok(())
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `--dry-run`: the first request, rendered here and not sent.
fn dry_run(
    args: &CallArgs,
    ctx: &Context,
    label: &str,
    function: &vox_runtime::__private::AiFunction,
    given: &Value,
) -> Result<i32> {
    let call_args = vox_runtime::args_from_json(&given.to_string())
        .map_err(|e| Error::usage(label, e.to_string()))?;
    let preview = Config::from_env()
        .and_then(Client::new)
        .and_then(|client| {
            let options = match &args.model {
                Some(model) => vox_runtime::CallOptions::new().model(model.as_str()),
                None => vox_runtime::CallOptions::new(),
            };
            client.preview_request(function, &options, &call_args, args.stream)
        })
        .map_err(|e| Error::failure(label, e.to_string()))?;
    if ctx.json() {
        let line = json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "call",
            "kind": "request",
            "file_path": label,
            "ok": true,
            "function": args.function,
            "request": preview,
        });
        output::emit_line(&line.to_string());
    } else {
        let mut text = format!("{} {}\n", preview.method, preview.url);
        for (name, value) in &preview.headers {
            text.push_str(&format!("{name}: {value}\n"));
        }
        text.push('\n');
        text.push_str(&serde_json::to_string_pretty(&preview.body).unwrap_or_default());
        println!("{text}");
        eprintln!("(dry run: nothing was sent)");
    }
    Ok(exit::SUCCESS)
}

/// What the person or agent sees of the call's events.
struct View<'a> {
    json: bool,
    label: &'a str,
    stream: bool,
    /// Human output on a terminal: partials are redrawn in place there.
    redraw: bool,
    drawn: bool,
    finished: bool,
}

impl<'a> View<'a> {
    fn new(json: bool, label: &'a str, stream: bool) -> View<'a> {
        View {
            json,
            label,
            stream,
            redraw: !json && std::io::stdout().is_terminal(),
            drawn: false,
            finished: false,
        }
    }

    /// A line the function's own code printed.
    fn program_output(&self, line: &str) {
        if self.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }

    fn event(&mut self, mut event: Value) {
        let kind = event["kind"].as_str().unwrap_or_default().to_owned();
        if kind == "final" {
            self.finished = true;
        }
        if self.json {
            if let Value::Object(map) = &mut event {
                let mut line = serde_json::Map::new();
                line.insert("envelope_version".into(), json!(ENVELOPE_VERSION));
                line.insert("command".into(), json!("call"));
                line.insert("kind".into(), json!(kind));
                line.insert("file_path".into(), json!(self.label));
                for (k, v) in std::mem::take(map) {
                    line.entry(k).or_insert(v);
                }
                output::emit_line(&Value::Object(line).to_string());
            }
            return;
        }
        match kind.as_str() {
            "partial" if self.stream && self.redraw => {
                let text = event["value"].to_string();
                let width = terminal_width();
                let shown: String = text.chars().take(width.saturating_sub(1)).collect();
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\r\x1b[K{shown}");
                let _ = out.flush();
                self.drawn = true;
            }
            "retry" => {
                self.clear();
                eprintln!(
                    "attempt {} rejected: {}",
                    event["attempt"],
                    event["reason"].as_str().unwrap_or_default()
                );
            }
            "final" => {
                self.clear();
                if event["ok"] == true {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&event["value"]).unwrap_or_default()
                    );
                } else {
                    eprintln!(
                        "error: {}",
                        event["message"].as_str().unwrap_or("the call failed")
                    );
                }
            }
            _ => {}
        }
    }

    fn clear(&mut self) {
        if self.drawn {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[K");
            let _ = out.flush();
            self.drawn = false;
        }
    }
}

/// The terminal's width: `COLUMNS`, else 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|w| *w > 10)
        .unwrap_or(80)
}
