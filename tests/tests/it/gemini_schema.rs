//! The Gemini form of a schema is computed when vox-runtime builds a
//! request and when vox-codegen prints `cargo vox schema --provider
//! gemini`, by one function of the shared provider table
//! (`vox_metadata::providers::gemini_schema`) and one writer. This holds
//! the bytes of the runtime's actual request (on the in-memory transport)
//! against the command's for every type the fixture modules declare, so
//! the command shows exactly what Gemini receives.

use std::path::Path;

use vox_codegen::schema::CompatibleFormat;
use vox_codegen::{check, SourceFile, SourceMap};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Provider};

/// Types the conversion changes (a `Decimal`'s `pattern` is dropped) beside
/// a recursive record, a sum type and a plain enum.
const CONVERTED: &str = "/// A walk.\ntype Walk {\n  /// Where next.\n  next: Option[Walk]\n  steps: list[Walk]\n  cost: Decimal\n  mode: Mode\n  leg: Leg\n}\ntype Mode = | Foot | Bike\ntype Leg =\n  | Stop\n  | Go(by: Mode, cost: Decimal)\n";

/// The modules whose types are compared, as (file name, source) lists.
fn modules() -> Vec<Vec<(String, Vec<u8>)>> {
    let root = vox_e2e::workspace_root().join("fixtures");
    let read = |files: Vec<std::path::PathBuf>| -> Vec<(String, Vec<u8>)> {
        files
            .into_iter()
            .map(|f| {
                let label = f
                    .strip_prefix(Path::new("/"))
                    .unwrap_or(&f)
                    .display()
                    .to_string();
                (label, std::fs::read(&f).unwrap())
            })
            .collect()
    };
    let mut out = vec![vec![(
        "converted.vox".to_owned(),
        CONVERTED.as_bytes().to_vec(),
    )]];
    for dir in [
        "kitchen-sink/vox",
        "kitchen-sink/more-vox",
        "invoice-app/vox",
        "soundness/vox",
    ] {
        out.push(read(vox_e2e::vox_files(&root.join(dir))));
    }
    for file in std::fs::read_dir(root.join("valid")).unwrap() {
        out.push(read(vec![file.unwrap().path()]));
    }
    out
}

fn declared_types(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("type "))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The body of the request vox-runtime sends Gemini for a function
/// returning the schema `name`/`strict`.
async fn runtime_gemini_body(name: &str, strict: &str, wrapped: bool) -> String {
    let schema: &'static OutputSchema = Box::leak(Box::new(OutputSchema::new(
        Box::leak(name.to_owned().into_boxed_str()),
        Box::leak(strict.to_owned().into_boxed_str()),
        wrapped,
    )));
    let function: &'static AiFunction =
        Box::leak(Box::new(AiFunction::new("walk", "Walk it.", schema)));
    let transport = MemoryTransport::new().reply(ScriptedReply::new(400, "no"));
    let config = Config::builder(Provider::Gemini)
        .base_url("http://127.0.0.1:9/v1beta")
        .api_key("g-test")
        .max_transport_retries(0)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    let result: Result<serde_json::Value, _> = client
        .call_ai(function, Args::new(), async { unreachable!("not fixture") })
        .await;
    assert!(result.is_err());
    let requests = transport.requests();
    assert_eq!(requests.len(), 1);
    String::from_utf8(requests[0].body.to_vec()).unwrap()
}

#[tokio::test]
async fn runtime_and_schema_command_send_gemini_the_same_bytes() {
    let mut compared = 0;
    let mut converted = 0;
    for files in modules() {
        let mut sources = SourceMap::new();
        let mut types = Vec::new();
        for (name, bytes) in &files {
            types.extend(declared_types(&String::from_utf8_lossy(bytes)));
            let file = Path::new(name).file_name().unwrap().to_string_lossy();
            sources.add(SourceFile::from_bytes(file.into_owned(), bytes));
        }
        let checked = check(sources);
        if files[0].0 == "converted.vox" {
            assert!(!checked.has_errors(), "{:?}", checked.diagnostics());
        }
        let wrappers = ["{}", "list[{}]", "Option[{}]"];
        for ty in types
            .iter()
            .flat_map(|t| wrappers.map(|w| w.replace("{}", t)))
        {
            let Ok(out) = checked.output_schema(&ty) else {
                continue;
            };
            // A type with a run-time category has no request without a
            // call's values (vox-runtime's runtime_categories tests).
            if out.schema.to_compact().contains("x-vox-categories") {
                continue;
            }
            let request = out
                .for_provider("gemini", "walk", CompatibleFormat::JsonSchema)
                .unwrap();
            let from_command = request
                .get("generationConfig")
                .and_then(|c| c.get("responseJsonSchema"))
                .unwrap()
                .to_compact();
            let body = runtime_gemini_body(&out.name, &out.schema.to_compact(), out.wrapped).await;
            assert!(
                body.contains(&format!(r#""responseJsonSchema":{from_command},"#)),
                "{ty} in {:?}:\ncommand: {from_command}\nruntime: {body}",
                files.iter().map(|(name, _)| name).collect::<Vec<_>>()
            );
            if from_command != out.schema.to_compact() {
                converted += 1;
            }
            compared += 1;
        }
    }
    assert!(compared > 30, "only {compared} schemas compared");
    assert!(converted > 3, "only {converted} schemas differ for Gemini");
}
