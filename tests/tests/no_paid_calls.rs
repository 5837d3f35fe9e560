//! No test reaches a model server, whatever the developer's environment
//! holds: every cargo, cargo-vox and built-binary run of the suite goes
//! through `vox_e2e::offline` (the fixture provider, no provider key, base
//! URL or setting inherited). Here the environment is that of a developer
//! with keys for every provider and a base URL, pointed at a listener on
//! 127.0.0.1 that counts connections: the fixture crates' Vox `@test`s and
//! the example app run, and no connection arrives.
//!
//! Its own test binary: the test sets this process's environment, which
//! no other test may read meanwhile.

use std::ffi::OsStr;
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use vox_e2e::BUILD;
use vox_e2e::{cargo, cargo_vox, copy_fixture, is_provider_variable, read, run, workspace_root};

/// A listener that counts (and drops) every connection made to it.
fn tripwire() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (format!("http://{addr}/v1"), connections)
}

#[test]
fn fixture_tests_and_apps_send_nothing_even_with_keys_and_a_base_url_set() {
    let (url, connections) = tripwire();
    // What a developer's shell might hold: a key for every provider, a
    // provider and base URLs (all pointing at the tripwire).
    let environment = [
        ("OPENAI_API_KEY", "sk-fake-openai-0123456789"),
        ("OPENROUTER_API_KEY", "sk-or-fake-0123456789"),
        ("ANTHROPIC_API_KEY", "sk-ant-fake-0123456789"),
        ("GEMINI_API_KEY", "AIza-fake-0123456789"),
        ("GOOGLE_API_KEY", "AIza-fake-google-0123456789"),
        ("VOX_LLM_API_KEY", "sk-fake-vox-0123456789"),
        ("VOX_LLM_PROVIDER", "compatible"),
        ("VOX_LLM_BASE_URL", url.as_str()),
        ("VOX_LLM_COMPATIBLE_BASE_URL", url.as_str()),
        ("VOX_LLM_GEMINI_BASE_URL", url.as_str()),
        ("VOX_LLM_OLLAMA_BASE_URL", url.as_str()),
        ("VOX_LLM_FALLBACK", "compatible:m"),
        ("VOX_LLM_MAX_RETRIES", "0"),
        ("VOX_LLM_TIMEOUT_SECS", "5"),
    ];
    for (name, value) in environment {
        assert!(is_provider_variable(name), "{name}");
        std::env::set_var(name, value);
    }

    // The helpers' commands carry none of it.
    let cmd = cargo(&workspace_root());
    let envs: Vec<_> = cmd.get_envs().collect();
    for (name, _) in environment {
        let expected = (name == "VOX_LLM_PROVIDER").then_some(OsStr::new("fixture"));
        assert!(
            envs.iter().any(|(k, v)| *k == name && *v == expected),
            "{name} is passed on: {envs:?}"
        );
    }

    // kitchen-sink's Vox @tests (which call @ai functions) through cargo,
    // and through cargo vox; invoice-app's main, which calls several.
    let sink = copy_fixture("kitchen-sink", "no-paid-calls");
    run(cargo(&sink).args(["test", "--quiet"]), BUILD).assert_success();
    run(cargo_vox(&sink).args(["--json", "test"]), BUILD).assert_success();
    let app = workspace_root().join("fixtures/invoice-app");
    let r = run(cargo(&app).args(["run", "--quiet"]), BUILD);
    r.assert_success();
    assert!(r.stdout.contains("ACME Corp"), "{}", r.dump());

    // Give a late connection time to be counted.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "a test run connected to the model server named in the environment"
    );
}

#[test]
fn every_variable_the_runtime_reads_is_a_provider_variable() {
    // The runtime names each variable it reads as a string literal in the
    // files that read the environment (its configuration, cassettes, …), and
    // the provider table in vox-metadata names the providers' key variables;
    // `offline` must remove every one of them. Every source file is looked
    // at, so a module that moves or a new one cannot escape the check.
    let mut sources = read(&workspace_root().join("vox-metadata/src/providers.rs"));
    let mut dirs = vec![workspace_root().join("vox-runtime/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("read vox-runtime/src")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            // The correction property test's own seed variables
            // (`#[cfg(test)]` only) are not the runtime's.
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("correction/bounds.rs")
            {
                continue;
            }
            let text = read(&path);
            if text.contains("env::var") || text.contains("var_os") {
                sources.push_str(&text);
            }
        }
    }
    // Every `"NAME_LIKE_THIS"` literal (read literal by literal, so a `'"'`
    // elsewhere cannot shift what counts as inside a string).
    let mut names: Vec<&str> = Vec::new();
    let bytes = sources.as_bytes();
    for (at, _) in sources.match_indices('"') {
        let rest = &bytes[at + 1..];
        let len = rest
            .iter()
            .take_while(|b| b.is_ascii_uppercase() || **b == b'_')
            .count();
        if len > 3 && rest.get(len) == Some(&b'"') && rest[..len].contains(&b'_') {
            names.push(&sources[at + 1..at + 1 + len]);
        }
    }
    names.sort_unstable();
    names.dedup();
    assert!(names.contains(&"OPENAI_API_KEY") && names.contains(&"VOX_LLM_BASE_URL"));
    for name in names {
        assert!(is_provider_variable(name), "{name} is read by the runtime");
    }
}
