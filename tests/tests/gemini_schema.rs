//! The Gemini form of a schema is computed twice: by vox-runtime when it
//! builds a request, and by vox-codegen for `cargo vox schema --provider
//! gemini`. They must agree for every type the fixture modules declare,
//! or the command would not show what Gemini receives.

use std::path::Path;

use vox_codegen::{check, SourceFile, SourceMap};

fn modules() -> Vec<Vec<std::path::PathBuf>> {
    let root = vox_e2e::workspace_root().join("fixtures");
    let mut out = Vec::new();
    for dir in [
        "kitchen-sink/vox",
        "kitchen-sink/more-vox",
        "invoice-app/vox",
        "soundness/vox",
    ] {
        out.push(vox_e2e::vox_files(&root.join(dir)));
    }
    for file in std::fs::read_dir(root.join("valid")).unwrap() {
        out.push(vec![file.unwrap().path()]);
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

#[test]
fn runtime_and_schema_command_send_gemini_the_same_schema() {
    let mut compared = 0;
    for files in modules() {
        let mut sources = SourceMap::new();
        let mut types = Vec::new();
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            types.extend(declared_types(&String::from_utf8_lossy(&bytes)));
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            sources.add(SourceFile::from_bytes(name, &bytes));
        }
        let checked = check(sources);
        let wrappers = ["{}", "list[{}]", "Option[{}]"];
        for ty in types
            .iter()
            .flat_map(|t| wrappers.map(|w| w.replace("{}", t)))
        {
            let Ok(out) = checked.output_schema(&ty) else {
                continue;
            };
            let strict = out.schema.to_compact();
            let from_codegen: serde_json::Value = serde_json::from_str(
                &vox_codegen::schema::gemini_schema(&out.schema, &out.name).to_compact(),
            )
            .unwrap();
            let from_runtime: serde_json::Value =
                serde_json::from_str(&vox_runtime::gemini_schema_text(&strict, &out.name).unwrap())
                    .unwrap();
            assert_eq!(
                from_codegen,
                from_runtime,
                "{ty} in {:?}",
                files
                    .iter()
                    .map(|f| f.strip_prefix(Path::new("/")).unwrap_or(f))
                    .collect::<Vec<_>>()
            );
            compared += 1;
        }
    }
    assert!(compared > 30, "only {compared} schemas compared");
}
