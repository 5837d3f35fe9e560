//! `cargo vox schema TYPE [PATHS…]`: the exact strict `response_format` a
//! model is given for a return type, so users can see what it is told.

use clap::Args;

use crate::check::{check_error_free, resolve_inputs, CheckArgs, InputError};
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
}

pub fn run(args: &SchemaArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let out = output::Reporter::new(global.json);
    let check_args = CheckArgs {
        paths: args.paths.clone(),
    };
    let (label, modules) = match resolve_inputs(&check_args, global) {
        Ok(v) => v,
        Err(InputError::Usage(msg)) => {
            out.failure("schema", &args.ty, &msg);
            return Ok(exit::USAGE);
        }
        Err(InputError::Other(err)) => {
            out.failure("schema", &args.ty, &format!("{err:#}"));
            return Ok(exit::FAILURE);
        }
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
    // Printed exactly as sent: vox-codegen's key order, not a re-serialization.
    let response_format = schema.response_format();
    if global.json {
        let head = serde_json::json!({
            "envelope_version": ENVELOPE_VERSION,
            "command": "schema",
            "file_path": label,
            "ok": true,
            "type": args.ty,
            "wrapped": schema.wrapped,
        })
        .to_string();
        // Append the field to the object without re-ordering its keys.
        let head = head.strip_suffix('}').unwrap_or(&head);
        output::emit_line(&format!(
            "{head},\"response_format\":{}}}",
            response_format.to_compact()
        ));
    } else {
        output::emit_line(&response_format.to_pretty());
        if schema.wrapped {
            eprintln!(
                "note: `{}` is not an object, so it is sent wrapped as {{\"value\": …}} and unwrapped from the reply",
                args.ty
            );
        }
    }
    Ok(exit::SUCCESS)
}
