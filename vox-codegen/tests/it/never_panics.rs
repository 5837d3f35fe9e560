//! The frontend never panics and never hangs, whatever bytes it is given
//! (docs/language.md), and every diagnostic points inside its file on char
//! boundaries. The formatter (`vox_codegen::fmt`) gets the same inputs: it
//! never panics, and whatever it formats formats to itself again.
//!
//! Inputs are random bytes, random token soups, mutations of every fixture
//! (valid and invalid) and hand-written torture cases (huge lines, deep
//! nesting, many declarations). Randomness comes from a fixed-seed
//! xorshift generator, so a failure names the seed and case that reproduce
//! it. Deep nesting also runs on a 2 MiB thread stack — the default for
//! test threads — which is what proves the parser's depth limit protects
//! the stack in debug builds.

use std::path::Path;

use crate::inputs;
use inputs::*;

use vox_codegen::diagnostic::{payload, render, RenderOptions};
use vox_codegen::{check, FileId, SourceFile, SourceMap, Span};

fn span_ok(sources: &SourceMap, span: Span) -> Result<(), String> {
    let file = sources.get(span.file);
    let (s, e) = (span.start as usize, span.end as usize);
    if sources.len() <= span.file.0 as usize {
        return Err(format!("span in unknown file {:?}", span.file));
    }
    if s > e || e > file.text.len() {
        return Err(format!(
            "span {s}..{e} outside file of {} bytes",
            file.text.len()
        ));
    }
    if !file.text.is_char_boundary(s) || !file.text.is_char_boundary(e) {
        return Err(format!("span {s}..{e} not on char boundaries"));
    }
    Ok(())
}

/// Longest we wait for one input before calling it a hang. Not a
/// performance bound: the slowest torture case takes a fraction of this.
const HANG_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs the frontend over `files` (on a worker thread, so a hang fails the
/// test instead of stalling it) and checks every span it reports; also
/// renders each diagnostic (the renderer must cope with anything too).
fn check_one(label: &str, files: &[&[u8]]) {
    let owned: Vec<Vec<u8>> = files.iter().map(|f| f.to_vec()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let mut sources = SourceMap::new();
            for (i, bytes) in owned.iter().enumerate() {
                sources.add(SourceFile::from_bytes(format!("f{i}.vox"), bytes));
            }
            // The formatter takes the same inputs: it must not panic
            // either, and what it returns must be formatted and error-free.
            for (_, file) in sources.files() {
                if let Ok(once) = vox_codegen::fmt::format_source(FileId(0), &file.text) {
                    let twice = vox_codegen::fmt::format_source(FileId(0), &once);
                    assert_eq!(twice.as_ref(), Ok(&once), "fmt is not idempotent");
                }
            }
            let _ = tx.send(check(sources));
        })
        .unwrap();
    let checked = match rx.recv_timeout(HANG_AFTER) {
        Ok(c) => c,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("frontend hangs on {label}; input: {}", shown(files))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let _ = worker.join();
            panic!("frontend panicked on {label}; input: {}", shown(files))
        }
    };
    let _ = worker.join();
    for d in checked.diagnostics() {
        let mut spans = vec![d.span];
        spans.extend(d.related.iter().map(|r| r.span));
        spans.extend(d.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)));
        for span in spans {
            if let Err(why) = span_ok(checked.sources(), span) {
                panic!(
                    "{label}: {} has a bad span: {why}; input: {}",
                    d.code.as_str(),
                    shown(files)
                );
            }
        }
    }
    // Rendering is bounded per diagnostic; keep the cost of huge inputs sane.
    for d in checked.diagnostics().iter().take(50) {
        let text = render(d, checked.sources(), RenderOptions { color: false });
        assert!(text.contains(d.code.as_str()), "{label}: bad rendering");
        let _ = payload(d, checked.sources()).to_compact();
    }
}

/// The input in a failure message (escaped; long inputs shortened).
fn shown(files: &[&[u8]]) -> String {
    files
        .iter()
        .map(|f| {
            let text = String::from_utf8_lossy(&f[..f.len().min(400)]).into_owned();
            let more = if f.len() > 400 { "…" } else { "" };
            format!("{text:?}{more}")
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Inputs that once hung or crashed the frontend.
#[test]
fn known_regressions() {
    for src in REGRESSIONS {
        check_one(&format!("{src:?}"), &[src.as_bytes()]);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::new(0x5EED_0001);
    for case in 0..1500 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                // Mostly ASCII so the lexer gets past the first byte; some
                // high bytes and NULs for invalid UTF-8.
                match rng.below(10) {
                    0 => rng.next() as u8,
                    1 => 0,
                    _ => 0x20 + rng.below(0x5F) as u8,
                }
            })
            .collect();
        check_one(
            &format!("random bytes #{case} (seed 0x5EED_0001)"),
            &[&bytes],
        );
    }
}

#[test]
fn token_soup_never_panics() {
    let mut rng = Rng::new(0x5EED_0002);
    for case in 0..1500 {
        let mut s = String::new();
        for _ in 0..rng.below(80) {
            s.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
            if rng.below(3) == 0 {
                s.push(' ');
            }
        }
        check_one(
            &format!("token soup #{case} (seed 0x5EED_0002)"),
            &[s.as_bytes()],
        );
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let fixtures = fixture_files();
    let mut rng = Rng::new(0x5EED_0003);
    for (name, bytes) in &fixtures {
        check_one(name, &[bytes]);
        for m in 0..40 {
            let mutated = mutate(&mut rng, bytes);
            check_one(
                &format!("{name} mutation #{m} (seed 0x5EED_0003)"),
                &[&mutated],
            );
        }
    }
    // Two mutated files as one module (cross-file spans and duplicates).
    for m in 0..200 {
        let a = &rng.pick(&fixtures).1;
        let b = &rng.pick(&fixtures).1;
        let (a, b) = (mutate(&mut rng, a), mutate(&mut rng, b));
        check_one(
            &format!("two-file module #{m} (seed 0x5EED_0003)"),
            &[&a, &b],
        );
    }
}

/// Each file of a case is checked as its own module.
fn run_case(name: &str) {
    for (i, file) in case_inputs(name).iter().enumerate() {
        check_one(&format!("{name} #{i}"), &[file]);
    }
}

const CHILD_ENV: &str = "VOX_NEVER_PANICS_CASE";

/// The name libtest gives this module's `child_entry` test in this binary
/// (`never_panics::child_entry`: the module path without the crate).
fn child_entry_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::child_entry"),
        None => "child_entry".to_owned(),
    }
}

/// Runs one case in a child process (this test binary, filtered to
/// [`child_entry`]) so that a stack overflow — which aborts the process —
/// is reported as that case's failure instead of killing every test.
fn run_isolated(name: &str) -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            &child_entry_name(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, name)
        .env_remove("RUST_MIN_STACK")
        .output()
        .unwrap();
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr
        .lines()
        .find(|l| l.contains("overflowed its stack") || l.contains("panicked"))
        .unwrap_or("failed")
        .to_string();
    Err(format!("{name}: {why} ({})", out.status))
}

fn run_all_isolated(cases: &[&str]) {
    let failures: Vec<String> = cases.iter().filter_map(|c| run_isolated(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The child side of [`run_isolated`]; does nothing in a normal test run.
/// Runs the case on the harness thread (2 MiB stack unless `RUST_MIN_STACK`
/// says otherwise, and the parent removes it), then explicitly on a 2 MiB
/// thread.
#[test]
fn child_entry() {
    let Ok(name) = std::env::var(CHILD_ENV) else {
        return;
    };
    run_case(&name);
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || run_case(&name))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_never_overflows_a_2_mib_stack() {
    run_all_isolated(DEEP_CASES);
}

/// Large inputs must complete (the harness would hang otherwise); no timing
/// assertions, so a slow CI machine cannot make this flaky.
#[test]
fn torture_inputs_complete() {
    run_all_isolated(TORTURE_CASES);
}

/// `cargo vox fix`'s engine over mutated fixtures (the fix corpus
/// included): it never panics, ends within its round bound, and what it
/// returns still parses into the same number of files.
#[test]
fn fix_module_never_panics() {
    let mut inputs = fixture_files();
    let fix_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/fix");
    for e in std::fs::read_dir(fix_dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "vox") {
            inputs.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    let mut rng = Rng::new(0x5EED_0F1C);
    for (name, bytes) in &inputs {
        for m in 0..6 {
            let mutated = if m == 0 {
                bytes.clone()
            } else {
                mutate(&mut rng, bytes)
            };
            let file = SourceFile::from_bytes("a.vox", &mutated);
            let files = [vox_codegen::fix::FixFile {
                name: "a.vox".into(),
                text: file.text.clone(),
                editable: file.invalid_utf8_at.is_none(),
            }];
            let label = format!("{name} mutation #{m} (seed 0x5EED_0F1C)");
            let handle = std::thread::Builder::new()
                .stack_size(2 * 1024 * 1024)
                .spawn(move || vox_codegen::fix::fix_module(&files))
                .unwrap();
            let outcome = handle
                .join()
                .unwrap_or_else(|_| panic!("fix_module panicked on {label}"));
            assert_eq!(outcome.texts.len(), 1, "{label}");
        }
    }
}

/// Many diagnostics that get fixes in one module: finding the fixes stays
/// linear (the expressions are indexed by span), so this completes quickly.
#[test]
fn many_fixable_mistakes_complete() {
    let mut src = String::from("type P {\n    x: int\n    y: str\n}\n");
    for i in 0..5_000 {
        src.push_str(&format!(
            "fn f{i}(s: str, xs: list[int], n: int) to int {{\n    let p = P {{ x: 1 }}\n    if n > 0 {{\n        return s.len()\n    }} elif n < 0 {{\n        return xs.length + null\n    }}\n    return n * 1.5\n}}\n"
        ));
    }
    let started = std::time::Instant::now();
    check_one("5,000 functions with fixable mistakes", &[src.as_bytes()]);
    assert!(
        started.elapsed() < HANG_AFTER,
        "took {:?}",
        started.elapsed()
    );
}
