//! `cargo vox schema TYPE [PATHS…] [--provider NAME]`: the exact strict
//! `response_format` a model is given for a return type, or, with
//! `--provider`, the request fields that carry the schema to that provider
//! (docs/runtime.md, "Providers"), so users can see what it is told.

use clap::Args;

use vox_codegen::json::Json;
use vox_codegen::schema::{output_schema, CompatibleFormat};

use crate::check::{check_error_free, inputs_or_report, CheckArgs};
use crate::cli::GlobalArgs;
use crate::envelope::ENVELOPE_VERSION;
use crate::{exit, output};

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

pub fn run(args: &SchemaArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let out = output::Reporter::new(global.json);
    let check_args = CheckArgs {
        paths: args.paths.clone(),
    };
    let (label, modules) = match inputs_or_report("schema", &check_args, &args.ty, global, &out) {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    let files: Vec<_> = modules.into_iter().flat_map(|m| m.files).collect();
    let checked = match check_error_free(
        &out,
        "schema",
        &label,
        &files,
        "the module has errors; no schema",
    ) {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let schema = match checked.output_schema(&args.ty) {
        Ok(s) => s,
        Err(msg) => {
            out.failure("schema", &label, &msg);
            return Ok(exit::USAGE);
        }
    };
    if let Some(provider) = &args.provider {
        return Ok(print_for_provider(
            args, global, &out, &label, &checked, &schema, provider,
        ));
    }
    print_given(
        args,
        global,
        &label,
        schema.wrapped,
        &[],
        ("response_format", &schema.response_format()),
    );
    Ok(exit::SUCCESS)
}

/// Prints what the model is given: under `--json` one line, the schema
/// envelope's fields and `extra`, then `given` exactly as sent
/// (vox-codegen's key order, not a re-serialization); else `given`
/// pretty-printed, and a note when the type is sent wrapped.
fn print_given(
    args: &SchemaArgs,
    global: &GlobalArgs,
    label: &str,
    wrapped: bool,
    extra: &[(&str, &str)],
    (key, given): (&str, &Json),
) {
    if global.json {
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
    }
}

/// `--provider NAME`: the request fields that carry `schema` to `provider`.
fn print_for_provider(
    args: &SchemaArgs,
    global: &GlobalArgs,
    out: &output::Reporter,
    label: &str,
    checked: &vox_codegen::Checked,
    schema: &vox_codegen::schema::OutputSchema,
    provider: &str,
) -> i32 {
    let provider = provider.trim().to_ascii_lowercase();
    let compatible = match args.response_format.trim().replace('-', "_").as_str() {
        "json_schema" => CompatibleFormat::JsonSchema,
        "json_object" => CompatibleFormat::JsonObject,
        other => {
            out.failure(
                "schema",
                label,
                &format!("--response-format must be `json_schema` or `json_object`, got `{other}`"),
            );
            return exit::USAGE;
        }
    };
    // Anthropic's tool is named after the function: the one asked for, else
    // the first `@ai` function whose return type has this schema.
    let function = args.function.clone().unwrap_or_else(|| {
        checked
            .info
            .fns
            .iter()
            .filter(|f| f.ai.is_some())
            .find(|f| output_schema(&f.ret, &checked.info.types).name == schema.name)
            .map_or_else(|| schema.name.clone(), |f| f.name.clone())
    });
    let request = match schema.for_provider(&provider, &function, compatible) {
        Ok(request) => request,
        Err(msg) => {
            out.failure("schema", label, &msg);
            return exit::USAGE;
        }
    };
    print_given(
        args,
        global,
        label,
        schema.wrapped,
        &[("provider", &provider), ("function", &function)],
        ("request", &request),
    );
    exit::SUCCESS
}
