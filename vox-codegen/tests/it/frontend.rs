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
