//! The inputs of the never-panics tests, shared with every test that
//! must survive any buffer (vox-codegen's frontend and formatter, and
//! `cargo vox lsp`, which includes this file by path): a fixed-seed
//! generator, fragments that stress the parser's recovery, mutations of
//! the fixtures, and the deep and torture cases.

#![allow(dead_code)] // each test binary uses a different part of it

use std::path::{Path, PathBuf};

/// Inputs that once hung or crashed the frontend.
pub const REGRESSIONS: &[&str] = &[
    "type T { )",
    "type T { ]",
    "type T { x: int ) }",
    "type T = | A(x: int ]",
    "fn f() { let x = (1 + 2\n return x\n}",
    "@ai(max_iterations = 99999999999999999999)\nfn f() to int { return 1 }",
];

/// xorshift64*: tiny, deterministic, good enough to pick mutations.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Tokens and fragments that stress the parser's recovery.
pub const FRAGMENTS: &[&str] = &[
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
    "A | B =>",
    "x if x > 1 =>",
    "Some(1 | 2)",
    "while",
    "break",
    "continue",
    "range(",
    "try",
    "f\"{",
    "}\"",
    "map[str, ",
    "[:]",
    "[\"k\": ",
    "{\"k\": ",
    "{}",
    "insert(",
    "keys(",
];

pub fn fixture_files() -> Vec<(String, Vec<u8>)> {
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

pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
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

pub fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
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

pub const DEEP: usize = 10_000;
pub const MB: usize = 1 << 20;

/// Inputs nested 10,000 deep: far beyond the parser's depth limit. Each one
/// must be rejected with a diagnostic, not a stack overflow.
pub const DEEP_CASES: &[&str] = &[
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
    "map literals",
    "brace map literals",
    "map types",
    "lambdas in lambdas",
    "block lambdas",
    "constants of constants",
];

/// Huge or truncated inputs that must complete.
pub const TORTURE_CASES: &[&str] = &[
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
    "100,000 alternatives and guards",
    "100,000 map entries, half of them repeated keys",
    "100,000-entry const list",
    "10,000 constants in a chain",
    "10,000 lambdas in one call chain",
    "1 MB multi-line string",
    "100,000-line multi-line string",
    "unterminated multi-line string",
    "10,000 multi-line strings opened on their line",
];

/// The files of one named deep or torture case.
pub fn case_inputs(name: &str) -> Vec<Vec<u8>> {
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
        "100,000 alternatives and guards" => one(format!(
            "fn f(o: Option[int]) to int {{\n    return match o {{\n        Some({}) => 1\n{}        _ => 0\n    }}\n}}\n",
            vec!["1"; 100_000].join(" | "),
            "        Some(n) if n > 2 => 2\n".repeat(2_000)
        )),
        "unclosed braces" => one("{".repeat(DEEP)),
        "map literals" => one(format!(
            "fn f() to int {{\n    return len({})\n}}\n",
            nested("[\"k\": ", "1", "]", DEEP)
        )),
        "brace map literals" => one(format!(
            "fn f() to int {{\n    return len({})\n}}\n",
            nested("{\"k\": ", "1", "}", DEEP)
        )),
        "map types" => one(format!(
            "type T {{ x: {} }}\n",
            nested("map[str, ", "int", "]", DEEP)
        )),
        "100,000 map entries, half of them repeated keys" => one(format!(
            "fn f() to int {{\n    return len([{}])\n}}\n",
            (0..100_000)
                .map(|i| format!("\"k{}\": {i}", i % 50_000))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        "lambdas in lambdas" => one(format!(
            "fn f(xs: list[int]) to list[int] {{\n    return {}\n}}\n",
            nested("map(xs, fn(x) => ", "x", ")", DEEP)
        )),
        "block lambdas" => one(format!(
            "fn f(xs: list[int]) to list[int] {{\n    return {}\n}}\n",
            nested("map(xs, fn(x) { ", "x", " })", DEEP)
        )),
        "constants of constants" => one(format!(
            "const A = {}\n",
            nested("[", "A", "]", DEEP)
        )),
        "100,000-entry const list" => one(format!(
            "const NAMES = [{}]\nfn f() to int {{\n    return len(NAMES) + len(filter(NAMES, fn(n) => n is \"k7\"))\n}}\n",
            (0..100_000)
                .map(|i| format!("\"k{i}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        "10,000 constants in a chain" => one(
            (0..10_000)
                .map(|i| format!("const C{i} = C{} + 1\n", i + 1))
                .chain(std::iter::once("const C10000 = 0\n".to_string()))
                .collect(),
        ),
        "10,000 lambdas in one call chain" => one(format!(
            "fn f(xs: list[int]) to list[int] {{\n    return {}\n}}\n",
            nested("filter(", "xs", ", fn(x) => x > 1)", DEEP)
        )),
        "1 MB multi-line string" => one(format!(
            "const TEXT = \"\"\"\n    {}\n    \"\"\"\nfn f() to int {{\n    return len(TEXT)\n}}\n",
            "a\\t\\u{41}\"".repeat(MB / 10)
        )),
        "100,000-line multi-line string" => one(format!(
            "fn f() to str {{\n    return \"\"\"\n{}        \"\"\"\n}}\n",
            format!("{}   less\n\n", "        line\n".repeat(98)).repeat(1_000)
        )),
        "unterminated multi-line string" => one(format!(
            "fn f() to str {{\n    return \"\"\"\n{}",
            "        text \\\n".repeat(50_000)
        )),
        "10,000 multi-line strings opened on their line" => one(
            "fn f() {\n    let s = \"\"\"a\"\"\" + \"\"\"b\n\"\"\"\n}\n".repeat(5_000),
        ),
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
