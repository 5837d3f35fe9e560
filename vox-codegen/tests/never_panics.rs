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

use std::path::{Path, PathBuf};

use vox_codegen::diagnostic::{payload, render, RenderOptions};
use vox_codegen::{check, FileId, SourceFile, SourceMap, Span};

/// xorshift64*: tiny, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Tokens and fragments that stress the parser's recovery.
const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\"",
    "@ai(",
    "@uses(net)",
    "@test",
    "|",
    "=>",
    "match",
    "if",
    "else",
    "for",
    "in",
    "let",
    "let mut",
    "return",
    "fn",
    "type",
    "pub",
    "to",
    "=",
    ":",
    ",",
    ";",
    ".",
    "\n",
    "///",
    "//",
    "\\",
    "\\u{",
    "_",
    "x",
    "Some(",
    "None",
    "Ok(",
    "Error(",
    "list[",
    "Option[",
    "1_000",
    "1e999",
    "99999999999999999999",
    "-",
    "not",
    "and",
    "or",
    "is",
    "isnt",
    "\0",
    "\u{FFFD}",
    "é",
    "\r\n",
    "\t",
    "Invoice {",
    "structured_output = ",
    "max_iterations = ",
];

fn fixture_files() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.join("valid"), root.join("invalid")];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "vox") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    assert!(out.len() > 10, "fixtures not found");
    out
}

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
    for d in &checked.diagnostics {
        let mut spans = vec![d.span];
        spans.extend(d.related.iter().map(|r| r.span));
        spans.extend(d.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)));
        for span in spans {
            if let Err(why) = span_ok(&checked.sources, span) {
                panic!(
                    "{label}: {} has a bad span: {why}; input: {}",
                    d.code.as_str(),
                    shown(files)
                );
            }
        }
    }
    // Rendering is bounded per diagnostic; keep the cost of huge inputs sane.
    for d in checked.diagnostics.iter().take(50) {
        let text = render(d, &checked.sources, RenderOptions { color: false });
        assert!(text.contains(d.code.as_str()), "{label}: bad rendering");
        let _ = payload(d, &checked.sources).to_compact();
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
    for src in [
        "type T { )",
        "type T { ]",
        "type T { x: int ) }",
        "type T = | A(x: int ]",
        "fn f() { let x = (1 + 2\n return x\n}",
        "@ai(max_iterations = 99999999999999999999)\nfn f() to int { return 1 }",
    ] {
        check_one(&format!("{src:?}"), &[src.as_bytes()]);
    }
}

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(6) {
            // Flip a byte (may create invalid UTF-8).
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            // Insert a fragment.
            1 => {
                let i = rng.below(len + 1);
                let frag = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                out.splice(i..i, frag.iter().copied());
            }
            // Delete a slice.
            2 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(40));
                out.drain(i..i + n);
            }
            // Truncate.
            3 => out.truncate(rng.below(len + 1)),
            // Duplicate a slice somewhere else.
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(80));
                let slice: Vec<u8> = out[i..i + n].to_vec();
                let at = rng.below(len + 1);
                out.splice(at..at, slice);
            }
            // Insert a random byte.
            _ => {
                let i = rng.below(len + 1);
                out.insert(i, rng.next() as u8);
            }
        }
    }
    out
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

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * depth + middle.len());
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..depth {
        s.push_str(close);
    }
    s
}

const DEEP: usize = 10_000;
const MB: usize = 1 << 20;

/// Inputs nested 10,000 deep: far beyond the parser's depth limit. Each one
/// must be rejected with a diagnostic, not a stack overflow.
const DEEP_CASES: &[&str] = &[
    "parens",
    "brackets",
    "braces",
    "ifs",
    "else-if chain",
    "matches",
    "list types",
    "minus and not",
    "patterns",
    "unclosed parens",
    "unclosed braces",
    "binary chain",
    "field chain",
];

/// Huge or truncated inputs that must complete.
const TORTURE_CASES: &[&str] = &[
    "1 MB expression line",
    "1 MB string literal",
    "1 MB of junk",
    "1 MB identifier",
    "1 MB of invalid UTF-8 and NULs",
    "1 MB unterminated string",
    "unterminated at EOF",
    "20,000 types and functions",
    "20,000 duplicate functions",
    "20,000-long call chain needing @uses(net)",
];

/// The files of one named deep or torture case.
fn case_inputs(name: &str) -> Vec<Vec<u8>> {
    let one = |s: String| vec![s.into_bytes()];
    match name {
        "parens" => one(format!(
            "fn f() to int {{\n    return {}\n}}\n",
            nested("(", "1", ")", DEEP)
        )),
        "brackets" => one(format!(
            "fn f() to int {{\n    return {}\n}}\n",
            nested("[", "1", "]", DEEP)
        )),
        "braces" => one(format!("fn f() {}\n", nested("{", "", "}", DEEP))),
        "ifs" => one(format!(
            "fn f(b: bool) to int {{\n{}\n}}\n",
            nested("if b { ", "1", " } else { 0 }", DEEP)
        )),
        "else-if chain" => one(format!(
            "fn f(n: int) to int {{\n    {} else {{ 0 }}\n}}\n",
            (0..DEEP)
                .map(|i| format!("if n is {i} {{ {i} }}"))
                .collect::<Vec<_>>()
                .join(" else ")
        )),
        "matches" => one(format!(
            "fn f(n: int) to int {{\n    return {}\n}}\n",
            nested("match n { _ => ", "1", " }", DEEP)
        )),
        "list types" => one(format!(
            "type T {{ x: {} }}\n",
            nested("list[", "int", "]", DEEP)
        )),
        "minus and not" => one(format!(
            "fn f() to int {{\n    return {}1\n}}\nfn g() to bool {{ return {}true }}\n",
            "-".repeat(DEEP),
            "not ".repeat(DEEP)
        )),
        "patterns" => one(format!(
            "fn f(o: int) to int {{\n    return match o {{ {} => 1 }}\n}}\n",
            nested("Some(", "x", ")", DEEP)
        )),
        "unclosed parens" => one(format!("fn f() {{ {}", "(".repeat(DEEP))),
        "unclosed braces" => one("{".repeat(DEEP)),
        "binary chain" => one(format!(
            "fn f() to int {{\n    return 1{}\n}}\n",
            " + 1".repeat(DEEP)
        )),
        "field chain" => one(format!(
            "type P {{ p: Option[P] }}\nfn f(x: P) to int {{\n    return x{}\n}}\n",
            ".p".repeat(DEEP)
        )),
        "1 MB expression line" => one(format!(
            "fn f() to int {{ return 1{} }}\n",
            " + 1".repeat(MB / 4)
        )),
        "1 MB string literal" => one(format!(
            "fn f() to str {{ return \"{}\" }}\n",
            "a".repeat(MB)
        )),
        "1 MB of junk" => one("$".repeat(MB)),
        "1 MB identifier" => one("x".repeat(MB)),
        "1 MB of invalid UTF-8 and NULs" => {
            vec![(0..MB).map(|i| if i % 3 == 0 { 0xFF } else { 0 }).collect()]
        }
        "1 MB unterminated string" => one(format!("fn f() {{ let s = \"{}", "b".repeat(MB))),
        "unterminated at EOF" => [
            "\"",
            "\"abc",
            "\"\\",
            "\"\\u{",
            "@ai(model = \"x",
            "/// doc",
        ]
        .iter()
        .map(|tail| format!("fn f() to str {{\n    return {tail}").into_bytes())
        .collect(),
        "20,000 types and functions" => one((0..20_000)
            .map(|i| {
                format!("type T{i} {{ x: int }}\nfn f{i}(t: T{i}) to int {{ return t.x + {i} }}\n")
            })
            .collect()),
        "20,000 duplicate functions" => {
            one("fn same() to int { return undefined_name }\n".repeat(20_000))
        }
        "20,000-long call chain needing @uses(net)" => {
            let mut s = String::from(
                "type R { x: int }\n@ai(structured_output = R)\n@uses(net)\nfn f0() to R { return R { x: 0 } }\n",
            );
            for i in 1..20_000 {
                s.push_str(&format!("fn f{i}() to R {{ return f{}() }}\n", i - 1));
            }
            one(s)
        }
        _ => panic!("unknown case {name}"),
    }
}

/// Each file of a case is checked as its own module.
fn run_case(name: &str) {
    for (i, file) in case_inputs(name).iter().enumerate() {
        check_one(&format!("{name} #{i}"), &[file]);
    }
}

const CHILD_ENV: &str = "VOX_NEVER_PANICS_CASE";

/// Runs one case in a child process (this test binary, filtered to
/// [`child_entry`]) so that a stack overflow — which aborts the process —
/// is reported as that case's failure instead of killing every test.
fn run_isolated(name: &str) -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
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
