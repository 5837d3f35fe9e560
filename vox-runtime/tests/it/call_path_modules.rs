//! The call path is a pipeline (docs/runtime.md, "Generated code"): the
//! arguments and output schema are plain data, `prompt` says what the
//! model is told whatever the provider, `reply` holds what came back, and
//! only the wires know an API's shape — they render a prompt and read a
//! reply, never the other way round. This reads the runtime's own sources
//! (their non-test code) and fails on an import against that order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules of the call path, each with the files that make it.
const MODULES: &[(&str, &[&str])] = &[
    ("args", &["args.rs"]),
    ("output", &["output.rs"]),
    ("reply", &["reply.rs"]),
    ("prompt", &["prompt.rs"]),
    ("stream", &["stream/mod.rs", "stream/partial.rs"]),
    (
        "wire",
        &[
            "wire/mod.rs",
            "wire/parts.rs",
            "wire/chat.rs",
            "wire/anthropic.rs",
            "wire/gemini.rs",
            "wire/ollama.rs",
        ],
    ),
    ("ai_function", &["ai_function.rs"]),
];

/// The `crate::NAME` paths a file's non-test code names.
fn imports(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        // `crate::{a, b::c}` names `a` and `b`.
        let names: Vec<String> = match after.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(ident)
                .collect(),
            None => vec![ident(after)],
        };
        found.extend(names.into_iter().filter(|n| !n.is_empty()));
        rest = after;
    }
    found
}

#[test]
fn each_module_of_the_call_path_imports_only_those_before_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order: Vec<&str> = MODULES.iter().map(|(m, _)| *m).collect();
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (module, files) in MODULES {
        for file in *files {
            let text =
                std::fs::read_to_string(src.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            edges.entry(module).or_default().extend(
                imports(&text)
                    .into_iter()
                    .filter(|m| order.contains(&m.as_str()) && m != module),
            );
        }
    }
    let mut wrong = Vec::new();
    for (module, used) in &edges {
        let me = order.iter().position(|m| m == module).unwrap();
        for m in used {
            let them = order.iter().position(|o| o == m).unwrap();
            if them > me {
                wrong.push(format!("`{module}` imports `{m}`, which comes after it"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}\n(edges: {edges:?})", wrong.join("\n"));
    // The pipeline's own claims, by name.
    assert!(!edges["prompt"].contains("wire"), "prompt knows no wire");
    assert!(!edges["reply"].contains("wire"), "reply knows no wire");
}
