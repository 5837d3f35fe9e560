//! Frontend behaviour on whole modules: valid programs check clean, and
//! each kind of mistake yields its stable code.

use vox_codegen::{check, SourceFile, SourceMap};

fn run(src: &str) -> vox_codegen::Checked {
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("test.vox", src));
    check(sources)
}

fn codes(src: &str) -> Vec<&'static str> {
    run(src)
        .diagnostics()
        .iter()
        .map(|d| d.code.as_str())
        .collect()
}

#[test]
fn spec_example_is_clean() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/valid/invoice.vox"
    ))
    .unwrap();
    let c = run(&src);
    let rendered: Vec<String> = c
        .diagnostics()
        .iter()
        .map(|d| vox_codegen::diagnostic::render(d, c.sources(), Default::default()))
        .collect();
    assert!(c.diagnostics().is_empty(), "{}", rendered.join("\n"));
}

#[test]
fn smoke_errors() {
    let src = r#"
type A { x: int, x: str, y: Strng }
fn f(a: A) to int {
    let s: str = 1
    return a.z
}
@ai(structured_output = A, max_iteration = 0)
fn g() to int { return 1 }
"#;
    let c = run(src);
    for d in c.diagnostics() {
        eprintln!(
            "{}",
            vox_codegen::diagnostic::render(d, c.sources(), Default::default())
        );
    }
    assert!(c.has_errors());
}

#[test]
fn reports_every_error_not_just_the_first() {
    let src =
        "fn a() to int { return \"x\" }\nfn b() to str { return 1 }\nfn c() { let y = nope }\n";
    let found = codes(src);
    assert_eq!(
        found.iter().filter(|c| **c == "vox/type/mismatch").count(),
        2,
        "{found:?}"
    );
    assert!(found.contains(&"vox/name/unknown"), "{found:?}");
}

#[test]
fn emission_is_deterministic_and_keyword_safe() {
    let src = "type T { self: int, move: str }\nfn f(ref: T) to int { ref.self }\n";
    let a = run(src);
    let b = run(src);
    assert!(!a.has_errors(), "{:?}", a.diagnostics());
    let opts = vox_codegen::emit::EmitOptions::default();
    let ea = a.emit(&opts);
    let eb = b.emit(&opts);
    assert_eq!(ea, eb);
    assert!(ea.contains("pub self_: i64"), "{ea}");
    assert!(ea.contains("#[serde(rename = \"self\")]"), "{ea}");
    assert!(ea.contains("pub r#move: ::std::string::String"), "{ea}");
    assert!(ea.contains("pub fn f(r#ref: T) -> i64"), "{ea}");
}

#[test]
fn non_exhaustive_matches_name_a_nested_missing_value() {
    let src = "type S =\n | Paid\n | Open(days: int)\nfn f(o: Option[S]) to int {\n    match o {\n        Some(Paid) => 1\n        None => 0\n    }\n}\n";
    let c = run(src);
    let d = c
        .diagnostics()
        .iter()
        .find(|d| d.code.as_str() == "vox/match/non-exhaustive")
        .expect("non-exhaustive");
    assert!(
        d.label.as_deref().unwrap_or("").contains("`Some(Open(_))`"),
        "{:?}",
        d.label
    );
    // Covering it makes the match exhaustive, and a later catch-all unreachable.
    let ok = run(&src.replace(
        "        None => 0\n",
        "        Some(Open(d)) => d\n        None => 0\n        _ => 2\n",
    ));
    let codes: Vec<&str> = ok.diagnostics().iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["vox/match/unreachable"], "{:?}", ok.diagnostics());
}

#[test]
fn decimal_of_a_float_literal_offers_the_literal_as_text() {
    let c = run("fn price() to Decimal {\n    return decimal(12.50)\n}\n");
    let [d] = c.diagnostics() else {
        panic!("{:#?}", c.diagnostics());
    };
    assert_eq!(d.code.as_str(), "vox/type/mismatch");
    let [fix] = d.fixes.as_slice() else {
        panic!("{d:#?}");
    };
    let [edit] = fix.edits.as_slice() else {
        panic!("{fix:#?}");
    };
    assert_eq!(edit.replacement, "\"12.50\"");
    assert_eq!(
        &c.sources().get(edit.span.file).text[edit.span.range()],
        "12.50"
    );
    // A float that is no decimal text (an exponent) gets the hint only.
    let c = run("fn price() to Decimal {\n    return decimal(1e3)\n}\n");
    assert!(
        c.diagnostics()[0].fixes.is_empty(),
        "{:#?}",
        c.diagnostics()
    );
}

/// The text of `span` in the checked module.
fn text_at(c: &vox_codegen::Checked, span: vox_codegen::source::Span) -> &str {
    &c.sources().get(span.file).text[span.range()]
}

#[test]
fn jumps_are_match_arm_bodies() {
    let src = "fn f(xs: list[Option[int]]) to int {
    let mut total = 0
    for x in xs {
        let v = match x {
            None => continue
            Some(n) => n
        }
        match v {
            0 => break
            _ => {}
        }
        total = total + v
    }
    let head = match first(xs) { Some(Some(n)) => n, _ => return, }
    return match total {
        0 => head
        _ => return total
    }
}

fn g(o: Option[int]) {
    match o {
        Some(_) => return
        None => {}
    }
}
";
    let src = src.replace("_ => return, }", "_ => return -1, }");
    let c = run(&src);
    assert!(c.diagnostics().is_empty(), "{:#?}", c.diagnostics());
    let rust = c.emit(&vox_codegen::emit::EmitOptions::default());
    for jump in ["continue", "break", "return"] {
        assert!(rust.contains(jump), "{jump}: {rust}");
    }
    // A bare `return` ends an arm before its comma.
    let c = run("fn g(o: Option[int]) {\n    match o { Some(_) => return, None => {} }\n}\n");
    assert!(c.diagnostics().is_empty(), "{:#?}", c.diagnostics());
}

#[test]
fn a_jump_arm_outside_a_loop_is_reported_once() {
    let c = run("fn f(o: Option[int]) to int {\n    return match o {\n        None => break\n        Some(n) => n\n    }\n}\n");
    let [d] = c.diagnostics() else {
        panic!("{:#?}", c.diagnostics());
    };
    assert_eq!(d.code.as_str(), "vox/flow/outside-loop");
    assert_eq!(text_at(&c, d.span), "break");
}

#[test]
fn a_match_with_an_arm_that_did_not_parse_is_not_judged_for_exhaustiveness() {
    let src = "fn f(o: Option[int]) to int {\n    return match o {\n        Some(n) => n\n        None => )\n    }\n}\n";
    let c = run(src);
    let codes: Vec<&str> = c.diagnostics().iter().map(|d| d.code.as_str()).collect();
    assert_eq!(
        codes,
        ["vox/syntax/unexpected-token"],
        "{:#?}",
        c.diagnostics()
    );
    assert_eq!(text_at(&c, c.diagnostics()[0].span), ")");
    // Nor when the broken arm is the only one.
    let c = run("fn f(o: Option[int]) {\n    match o {\n        None => +\n    }\n}\n");
    assert!(
        c.diagnostics()
            .iter()
            .all(|d| d.code.as_str() != "vox/match/non-exhaustive"),
        "{:#?}",
        c.diagnostics()
    );
}

#[test]
fn a_statement_as_a_match_arm_is_offered_braces() {
    let src = "fn f(o: Option[int]) {\n    match o {\n        Some(n) => let k = n\n        None => {}\n    }\n}\n";
    let c = run(src);
    let errors: Vec<_> = c.diagnostics().iter().filter(|d| d.is_error()).collect();
    let [d] = errors.as_slice() else {
        panic!("{:#?}", c.diagnostics());
    };
    assert_eq!(d.code.as_str(), "vox/syntax/unexpected-token");
    assert_eq!(d.message, "`let` cannot be a match arm's value");
    assert_eq!(text_at(&c, d.span), "let k = n");
    let [fix] = d.fixes.as_slice() else {
        panic!("{d:#?}");
    };
    assert_eq!(fix.edits[0].replacement, "{ let k = n }");
    assert_eq!(
        fix.applicability,
        vox_codegen::diagnostic::Applicability::MachineApplicable
    );
}

#[test]
fn a_statement_where_a_value_goes_is_offered_a_block() {
    for (src, word) in [
        ("fn f(xs: list[int]) {\n    for x in xs {\n        let y = continue\n    }\n}\n", "continue"),
        ("fn f(n: int) to int {\n    return g(return n)\n}\nfn g(n: int) to int {\n    return n\n}\n", "return"),
        ("fn f(xs: list[int]) {\n    for x in xs {\n        print(break)\n    }\n}\n", "break"),
    ] {
        let c = run(src);
        let d = c
            .diagnostics()
            .iter()
            .find(|d| d.is_error())
            .unwrap_or_else(|| panic!("{src}"));
        assert_eq!(d.code.as_str(), "vox/syntax/unexpected-token", "{src}");
        assert_eq!(d.message, "expected an expression", "{src}");
        assert_eq!(text_at(&c, d.span), word, "{src}");
        assert!(
            d.hints.iter().any(|h| h.contains("`{ … }`") && h.contains(&format!("`{word}` is a statement"))),
            "{src}: {:?}",
            d.hints
        );
    }
}

#[test]
fn parse_builtins_read_text_into_an_option() {
    let src = "fn f(s: str) to int {
    let a: Option[int] = parse_int(s)
    let b: Option[float] = parse_float(s)
    let c: Option[Decimal] = parse_decimal(trim(s))
    match parse_int(\" 12 \") {
        Some(n) => return n
        None => {}
    }
    print(a)
    print(b)
    print(c)
    return 0
}
";
    let c = run(src);
    assert!(c.diagnostics().is_empty(), "{:#?}", c.diagnostics());
    let rust = c.emit(&vox_codegen::emit::EmitOptions::default());
    for f in ["parse_int", "parse_float", "parse_decimal"] {
        assert!(
            rust.contains(&format!("::vox_runtime::__private::builtins::{f}(&")),
            "{f}: {rust}"
        );
    }
    // Only a `str` is read, with one argument.
    let c = run("fn f(n: int) to Option[int] {\n    return parse_int(n)\n}\n");
    let [d] = c.diagnostics() else {
        panic!("{:#?}", c.diagnostics());
    };
    assert_eq!(d.code.as_str(), "vox/type/mismatch");
    assert_eq!(text_at(&c, d.span), "n");
    let c = run("fn f(s: str) to Option[float] {\n    return parse_float(s, 10)\n}\n");
    let [d] = c.diagnostics() else {
        panic!("{:#?}", c.diagnostics());
    };
    assert_eq!(d.code.as_str(), "vox/type/arity");
    assert_eq!(text_at(&c, d.span), "parse_float(s, 10)");
    // The result is an `Option`, not the number.
    let c = run("fn f(s: str) to int {\n    return parse_int(s)\n}\n");
    assert_eq!(
        codes_of(&c),
        ["vox/type/mismatch"],
        "{:#?}",
        c.diagnostics()
    );
}

fn codes_of(c: &vox_codegen::Checked) -> Vec<&'static str> {
    c.diagnostics().iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn int_of_a_str_suggests_parse_int() {
    for (call, parse) in [("int(s)", "parse_int"), ("float(s)", "parse_float")] {
        let src = format!("fn f(s: str) {{\n    print({call})\n}}\n");
        let c = run(&src);
        let [d] = c.diagnostics() else {
            panic!("{:#?}", c.diagnostics());
        };
        assert_eq!(d.code.as_str(), "vox/type/mismatch");
        assert_eq!(text_at(&c, d.span), "s");
        assert!(
            d.hints.iter().any(|h| h.contains(&format!("`{parse}(s)`"))),
            "{:?}",
            d.hints
        );
        let [fix] = d.fixes.as_slice() else {
            panic!("{d:#?}");
        };
        // `int(s)` is an `int`, `parse_int(s)` an `Option[int]`: offered, not applied.
        assert_eq!(
            fix.applicability,
            vox_codegen::diagnostic::Applicability::MaybeIncorrect
        );
        let [edit] = fix.edits.as_slice() else {
            panic!("{fix:#?}");
        };
        assert_eq!(text_at(&c, edit.span), &call[..call.find('(').unwrap()]);
        assert_eq!(edit.replacement, parse);
    }
}

#[test]
fn the_parsing_soundness_program_checks_clean() {
    // Built and run under deny(warnings) by tests/tests/it/soundness_fixtures.rs.
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/soundness/vox/parsing.vox"
    ))
    .unwrap();
    let c = run(&src);
    let rendered: Vec<String> = c
        .diagnostics()
        .iter()
        .map(|d| vox_codegen::diagnostic::render(d, c.sources(), Default::default()))
        .collect();
    assert!(c.diagnostics().is_empty(), "{}", rendered.join("\n"));
}
