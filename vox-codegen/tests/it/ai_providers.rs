//! `@ai` arguments for providers (docs/runtime.md, "Providers" and
//! "Fallbacks"): `model = "provider:…"` prefixes (a misspelt provider is an
//! error with the fix; a model's own colon is not a prefix), `max_tokens`,
//! and `fallback = […]` list values, and what they emit.

use vox_codegen::emit::EmitOptions;
use vox_codegen::{check, Checked, Code, SourceFile, SourceMap};

fn check_decorator(decorator: &str) -> (Checked, String) {
    let text = format!(
        "type Answer {{\n    text: str\n}}\n\n/// Answer.\n{decorator}\n@uses(net)\nfn answer(q: str) to Answer {{\n    return Answer {{ text: q }}\n}}\n"
    );
    let mut map = SourceMap::new();
    map.add(SourceFile::new("vox/a.vox".to_owned(), text.clone()));
    (check(map), text)
}

fn emitted(decorator: &str) -> String {
    let (checked, _) = check_decorator(decorator);
    assert!(
        checked.diagnostics().is_empty(),
        "{:#?}",
        checked.diagnostics()
    );
    let opts = EmitOptions {
        script: false,
        standalone: false,
        source_names: vec!["vox/a.vox".to_owned()],
        cassettes: None,
    };
    checked.emit(&opts)
}

/// The messages of the diagnostics for `decorator` (all `vox/ai/invalid-value`).
fn errors(decorator: &str) -> Vec<String> {
    let (checked, _) = check_decorator(decorator);
    checked
        .diagnostics()
        .iter()
        .map(|d| {
            assert_eq!(d.code, Code::AiInvalidValue, "{d:#?}");
            d.message.clone()
        })
        .collect()
}

#[test]
fn provider_prefixes_max_tokens_and_fallbacks_are_emitted() {
    let code = emitted(
        r#"@ai(structured_output = Answer, model = "anthropic:claude-sonnet-4-5", max_tokens = 256, fallback = ["openai:gpt-4o-mini", "ollama:llama3.2:3b",])"#,
    );
    assert!(
        code.contains(".with_model(\"anthropic:claude-sonnet-4-5\")"),
        "{code}"
    );
    assert!(code.contains(".with_max_tokens(256)"), "{code}");
    assert!(
        code.contains(".with_fallback(&[\"openai:gpt-4o-mini\", \"ollama:llama3.2:3b\"])"),
        "{code}"
    );
    // No fallbacks at all, said explicitly.
    let code = emitted("@ai(structured_output = Answer, fallback = [])");
    assert!(code.contains(".with_fallback(&[])"), "{code}");
    let code = emitted("@ai(structured_output = Answer)");
    assert!(!code.contains(".with_fallback(") && !code.contains(".with_max_tokens("));
}

#[test]
fn a_models_own_colon_is_not_a_prefix() {
    for model in [
        "llama3.2:3b",
        "qwen2:7b",
        "meta-llama/llama-3.1-8b-instruct:free",
        "gemma:2b",
    ] {
        let code = emitted(&format!(
            "@ai(structured_output = Answer, model = \"{model}\")"
        ));
        assert!(
            code.contains(&format!(".with_model(\"{model}\")")),
            "{code}"
        );
    }
}

#[test]
fn a_misspelt_provider_is_an_error_with_the_fix() {
    let decorator = r#"@ai(structured_output = Answer, model = "anthropc:claude-sonnet-4-5")"#;
    let (checked, text) = check_decorator(decorator);
    let [d] = checked.diagnostics() else {
        panic!("{:#?}", checked.diagnostics())
    };
    assert_eq!(d.code, Code::AiInvalidValue);
    assert_eq!(d.message, "unknown provider `anthropc` in `model`");
    let fix = &d.fixes[0];
    assert_eq!(fix.message, "did you mean `anthropic`?");
    let edit = &fix.edits[0];
    assert_eq!(
        &text[edit.span.start as usize..edit.span.end as usize],
        "\"anthropc:claude-sonnet-4-5\""
    );
    assert_eq!(edit.replacement, "\"anthropic:claude-sonnet-4-5\"");
    for (model, provider) in [
        ("OpenAI:gpt-4o", "openai"),
        ("gemni:gemini-2.5-flash", "gemini"),
        ("olama:llama3.2", "ollama"),
        ("openrouer:x", "openrouter"),
    ] {
        let (checked, _) = check_decorator(&format!(
            "@ai(structured_output = Answer, model = \"{model}\")"
        ));
        assert_eq!(
            checked.diagnostics()[0].fixes[0].message,
            format!("did you mean `{provider}`?"),
            "{model}"
        );
    }
}

#[test]
fn bad_fallbacks_and_limits_are_diagnostics() {
    assert_eq!(
        errors(
            r#"@ai(structured_output = Answer, fallback = ["gpt-4o-mini", "fixture:x", "nope:m", "openai:", 3])"#
        ),
        [
            "the fallback `gpt-4o-mini` has no provider",
            "`fixture` cannot be a fallback",
            "unknown provider `nope` in `fallback`",
            "the fallback `openai:` names no model",
            "each fallback must be a string `\"provider:model\"`",
        ]
    );
    assert_eq!(
        errors(r#"@ai(structured_output = Answer, fallback = "openai:gpt-4o")"#),
        ["`fallback` must be a list of `\"provider:model\"` strings, e.g. `fallback = [\"openai:gpt-4o-mini\"]`"]
    );
    assert_eq!(
        errors("@ai(structured_output = Answer, max_tokens = 0)"),
        ["`max_tokens` must be between 1 and 1000000, found 0"]
    );
    assert_eq!(
        errors("@ai(structured_output = Answer, max_tokens = \"lots\")"),
        ["`max_tokens` must be an integer of at least 1"]
    );
}
