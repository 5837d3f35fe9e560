//! `cargo vox schema TYPE [PATHS…] [--provider NAME]`: the exact strict
//! `response_format` a model is given for a return type, or, with
//! `--provider`, the request fields that carry the schema to that provider
//! (docs/runtime.md, "Providers"), so users can see what it is told.

use clap::Args;

use vox_codegen::json::Json;
use vox_codegen::schema::CompatibleFormat;

use crate::check::check_error_free;
use crate::context::Context;
use crate::envelope::ENVELOPE_VERSION;
use crate::error::{Error, Result};
use crate::{exit, inputs, output};

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The type, as written in Vox: `Invoice`, `list[LineItem]`, `Option[str]`.
    #[arg(value_name = "TYPE")]
    pub ty: String,
    /// `.vox` files or directories forming the module (default: the package's Vox sources).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<std::path::PathBuf>,
    /// Print the request fields that carry the schema to this provider:
    /// openai, openrouter, compatible, anthropic, gemini or ollama.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// The `@ai` function the request is for (names Anthropic's tool);
    /// default: the first `@ai` function returning TYPE.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// How `--provider compatible` gives the schema: `json_schema` or
    /// `json_object` (as the runtime reads it).
    #[arg(
        long,
        value_name = "FORMAT",
        env = "VOX_LLM_RESPONSE_FORMAT",
        default_value = "json_schema"
    )]
    pub response_format: String,
}

pub fn run(args: &SchemaArgs, ctx: &Context) -> Result<i32> {
    // A failure before the module is read names the type asked for.
    let inputs = inputs::resolve(ctx, &args.paths, &args.ty)?;
    let label = inputs.label;
    let files: Vec<_> = inputs.modules.into_iter().flat_map(|m| m.files).collect();
    let checked = check_error_free(ctx, &label, &files, "the module has errors; no schema")?;
    let schema = checked
        .output_schema(&args.ty)
        .map_err(|msg| Error::usage(&label, msg))?;
    if let Some(provider) = &args.provider {
        print_for_provider(args, ctx, &label, &checked, &schema, provider)?;
        return Ok(exit::SUCCESS);
    }
    print_given(
        args,
        ctx,
        &label,
        schema.wrapped,
        &[],
        &arguments(args, &checked, &schema),
        &functions(args, &checked, &schema),
        ("response_format", &schema.response_format()),
    );
    Ok(exit::SUCCESS)
}

/// The `@ai` functions `schema` is shown for: `--function`, else every
/// one returning the type.
fn functions(
    args: &SchemaArgs,
    checked: &vox_codegen::Checked,
    schema: &vox_codegen::schema::OutputSchema,
) -> Vec<vox_codegen::AiFunctionDecl> {
    checked
        .ai_functions()
        .into_iter()
        .filter(|f| match &args.function {
            Some(name) => f.name == *name,
            None => f.output.name == schema.name,
        })
        .collect()
}

/// The arguments of `--function`, else of every `@ai` function returning
/// the type, each with its function's name and how it is sent
/// (docs/language.md, "Images, documents and audio"): as JSON text, or as
/// image, document or audio parts.
fn arguments(
    args: &SchemaArgs,
    checked: &vox_codegen::Checked,
    schema: &vox_codegen::schema::OutputSchema,
) -> Vec<(String, vox_codegen::AiParam)> {
    functions(args, checked, schema)
        .into_iter()
        .flat_map(|f| {
            let name = f.name;
            f.params.into_iter().map(move |p| (name.clone(), p))
        })
        .collect()
}

/// Prints what the model is given: under `--json` one line, the schema
/// envelope's fields, `extra` and the `arguments`, then `given` exactly as
/// sent (vox-codegen's key order, not a re-serialization); else `given`
/// pretty-printed on stdout, and on stderr a note when the type is sent
/// wrapped and how each function's arguments are sent.
#[allow(clippy::too_many_arguments)]
fn print_given(
    args: &SchemaArgs,
    ctx: &Context,
    label: &str,
    wrapped: bool,
    extra: &[(&str, &str)],
    arguments: &[(String, vox_codegen::AiParam)],
    shown_for: &[vox_codegen::AiFunctionDecl],
    (key, given): (&str, &Json),
) {
    if ctx.json() {
        let mut head = serde_json::json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "schema",
            "file_path": label,
            "ok": true,
            "type": args.ty,
            "wrapped": wrapped,
        });
        for (k, v) in extra {
            head[*k] = (*v).into();
        }
        if !arguments.is_empty() {
            head["arguments"] = arguments
                .iter()
                .map(|(function, p)| {
                    serde_json::json!({
                        "function": function,
                        "name": p.name,
                        "type": p.ty,
                        "parts": p.parts,
                        "sent_as": p.sent_as,
                    })
                })
                .collect();
        }
        let examples: Vec<serde_json::Value> = shown_for
            .iter()
            .flat_map(|f| {
                f.examples.iter().map(move |(arguments, output)| {
                    let json = |t: &str| serde_json::from_str(t).unwrap_or(serde_json::Value::Null);
                    serde_json::json!({"function": f.name, "arguments": json(arguments), "output": json(output)})
                })
            })
            .collect();
        if !examples.is_empty() {
            head["examples"] = examples.into();
        }
        let tools: Vec<serde_json::Value> = shown_for
            .iter()
            .flat_map(|f| {
                f.tools.iter().map(move |t| {
                    serde_json::json!({"function": f.name, "name": t.name,
                        "description": t.description, "rust": t.rust,
                        "parameters": serde_json::from_str::<serde_json::Value>(&t.parameters)
                            .unwrap_or(serde_json::Value::Null)})
                })
            })
            .collect();
        if !tools.is_empty() {
            head["tools"] = tools.into();
        }
        let head = head.to_string();
        // Append the field to the object without re-ordering its keys.
        let head = head.strip_suffix('}').unwrap_or(&head);
        output::emit_line(&format!("{head},\"{key}\":{}}}", given.to_compact()));
    } else {
        output::emit_line(&given.to_pretty());
        if wrapped {
            eprintln!(
                "note: `{}` is not an object, so it is sent wrapped as {{\"value\": …}} and unwrapped from the reply",
                args.ty
            );
        }
        let mut shown: Option<&str> = None;
        for (function, p) in arguments {
            if shown != Some(function.as_str()) {
                eprintln!("note: `{function}` sends its arguments as:");
                shown = Some(function);
            }
            eprintln!("  {}: {} → {}", p.name, p.ty, p.sent_as);
        }
        for f in shown_for {
            if !f.examples.is_empty() {
                eprintln!(
                    "note: `{}` shows the model {} worked example(s), as turns before the call's:",
                    f.name,
                    f.examples.len()
                );
                for (arguments, output) in &f.examples {
                    eprintln!("  {arguments} => {output}");
                }
            }
            if !f.tools.is_empty() {
                eprintln!("note: `{}` lets the model call these tools:", f.name);
                for t in &f.tools {
                    let rust = if t.rust { " (Rust)" } else { "" };
                    eprintln!("  {}{rust}: {}", t.name, t.parameters);
                }
            }
        }
    }
}

/// `--provider NAME`: the request fields that carry `schema` to `provider`.
fn print_for_provider(
    args: &SchemaArgs,
    ctx: &Context,
    label: &str,
    checked: &vox_codegen::Checked,
    schema: &vox_codegen::schema::OutputSchema,
    provider: &str,
) -> Result<()> {
    let provider = provider.trim().to_ascii_lowercase();
    let compatible = match args.response_format.trim().replace('-', "_").as_str() {
        "json_schema" => CompatibleFormat::JsonSchema,
        "json_object" => CompatibleFormat::JsonObject,
        other => {
            return Err(Error::usage(
                label,
                format!("--response-format must be `json_schema` or `json_object`, got `{other}`"),
            ))
        }
    };
    // Anthropic's tool is named after the function: the one asked for, else
    // the first `@ai` function whose return type has this schema.
    let function = args.function.clone().unwrap_or_else(|| {
        checked
            .ai_functions()
            .into_iter()
            .find(|f| f.output.name == schema.name)
            .map_or_else(|| schema.name.clone(), |f| f.name)
    });
    let request = schema
        .for_provider(&provider, &function, compatible)
        .map_err(|msg| Error::usage(label, msg))?;
    print_given(
        args,
        ctx,
        label,
        schema.wrapped,
        &[("provider", &provider), ("function", &function)],
        &arguments(args, checked, schema),
        &functions(args, checked, schema),
        ("request", &request),
    );
    Ok(())
}
