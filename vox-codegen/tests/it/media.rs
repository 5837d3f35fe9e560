//! Media types (`Image`, `Document`, `Audio`; docs/language.md, "Images,
//! documents and audio"): accepted wherever a value goes in — parameters, records,
//! variants, lists, options, bindings, plain functions' results — and
//! refused, at any depth, in what an `@ai` function returns
//! (`vox/ai/media-in-output`). The nesting forms are generated, not listed:
//! every shape a type can take around a media value, composed with every
//! outer wrapper.

use vox_codegen::{check, Checked, SourceFile, SourceMap};

fn run(src: &str) -> Checked {
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("test.vox", src));
    check(sources)
}

fn rendered(c: &Checked) -> String {
    c.diagnostics()
        .iter()
        .map(|d| vox_codegen::diagnostic::render(d, c.sources(), Default::default()))
        .collect::<Vec<_>>()
        .join("\n")
}

const MEDIA: [&str; 3] = ["Image", "Document", "Audio"];

/// A shape holding the media type `m`: (type declarations, the type written).
/// The declarations' names are suffixed with `n` so shapes can be combined.
fn shapes(m: &str, n: usize) -> Vec<(String, String)> {
    vec![
        (String::new(), m.to_string()),
        (String::new(), format!("list[{m}]")),
        (String::new(), format!("Option[{m}]")),
        (String::new(), format!("Result[{m}]")),
        (String::new(), format!("List[Option[Result[{m}]]]")),
        // A record field, after other fields.
        (
            format!("type Scan{n} {{ note: str, pages: int, file: {m} }}\n"),
            format!("Scan{n}"),
        ),
        // Two records deep, through a list.
        (
            format!(
                "type Inner{n} {{ file: list[{m}] }}\ntype Outer{n} {{ label: str, inner: Inner{n} }}\n"
            ),
            format!("Outer{n}"),
        ),
        // A variant's field (not the first variant).
        (
            format!("type Source{n} =\n    | Typed(text: str)\n    | Scanned(file: {m})\n"),
            format!("Source{n}"),
        ),
        // A variant's field through Option, in a record.
        (
            format!(
                "type Kind{n} =\n    | Plain\n    | Attached(file: Option[{m}])\ntype Holder{n} {{ kind: Kind{n} }}\n"
            ),
            format!("Holder{n}"),
        ),
        // A recursive type: the media is reached after the cycle.
        (
            format!(
                "type Node{n} {{ next: Option[Node{n}], leaf: Leaf{n} }}\ntype Leaf{n} {{ file: Result[{m}] }}\n"
            ),
            format!("Node{n}"),
        ),
        // A recursive type that holds the media itself.
        (
            format!("type Tree{n} {{ kids: list[Tree{n}], file: Option[{m}] }}\n"),
            format!("Tree{n}"),
        ),
    ]
}

/// Outer wrappers applied to a shape's type.
fn wrappers() -> Vec<fn(&str) -> String> {
    vec![
        |t| t.to_string(),
        |t| format!("list[{t}]"),
        |t| format!("Option[{t}]"),
        |t| format!("Result[{t}]"),
        |t| format!("Option[list[{t}]]"),
    ]
}

/// Every (declarations, type) holding media: shapes × wrappers.
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut n = 0;
    for m in MEDIA {
        for wrap in wrappers() {
            for (decls, ty) in shapes(m, n) {
                out.push((decls, wrap(&ty)));
            }
            n += 1;
        }
    }
    out
}

#[test]
fn an_ai_function_cannot_return_media_at_any_depth() {
    let corpus = corpus();
    assert!(corpus.len() >= 100, "{}", corpus.len());
    for (decls, ty) in corpus {
        let src = format!(
            "{decls}\n/// Look.\n@ai\n@uses(net)\nfn look(x: {ty}) to {ty} {{\n    return x\n}}\n"
        );
        let c = run(&src);
        let codes: Vec<&str> = c.diagnostics().iter().map(|d| d.code.as_str()).collect();
        assert_eq!(
            codes,
            ["vox/ai/media-in-output"],
            "{ty}:\n{src}\n{}",
            rendered(&c)
        );
        let d = &c.diagnostics()[0];
        // The span is the written return type (the last occurrence of it).
        let ret_at = src.rfind(&format!("to {ty} {{")).unwrap() + 3;
        assert_eq!(
            (d.span.start as usize, d.span.end as usize),
            (ret_at, ret_at + ty.len()),
            "{ty}: {}",
            rendered(&c)
        );
        let text = rendered(&c);
        assert!(
            text.contains("a model answers with text") && text.contains("as `str`"),
            "{text}"
        );
        // A media value inside a declared type points at the field holding it.
        if !decls.is_empty() {
            assert_eq!(d.related.len(), 1, "{ty}: {text}");
            let field = &src[d.related[0].span.range()];
            assert_eq!(field, "file", "{ty}: {text}");
        }
    }
}

#[test]
fn media_goes_in_everywhere_and_plain_functions_return_it() {
    for (decls, ty) in corpus() {
        // An `@ai` parameter, a plain function's parameter and result, a
        // `let` binding with the type written, a `@test` building one.
        let src = format!(
            "{decls}\n/// Describe.\n@ai\n@uses(net)\nfn describe(x: {ty}, note: str) to str {{\n    return note\n}}\n\
             fn keep(x: {ty}) to {ty} {{\n    let y: {ty} = x\n    return y\n}}\n"
        );
        let c = run(&src);
        assert!(c.diagnostics().is_empty(), "{ty}:\n{src}\n{}", rendered(&c));
    }
}

#[test]
fn the_diagnostic_names_the_path_to_the_media() {
    let src = "type Page { scan: Image }\ntype Doc = | Empty | Paged(pages: list[Page])\n\
               /// Read.\n@ai\n@uses(net)\nfn read(d: Doc) to Option[Doc] {\n    return Some(d)\n}\n";
    let c = run(src);
    let text = rendered(&c);
    assert_eq!(c.diagnostics().len(), 1, "{text}");
    let d = &c.diagnostics()[0];
    assert_eq!(d.code.as_str(), "vox/ai/media-in-output");
    assert!(
        d.message
            .contains("cannot return `Option[Doc]`: it holds an `Image`"),
        "{text}"
    );
    assert!(
        text.contains("the `Image` is field `scan` of `Page`, in an element of a `list`, in field `pages` of variant `Paged`, in the value of an `Option`"),
        "{text}"
    );
    assert!(text.contains("`scan` holds the `Image`"), "{text}");

    let c = run("/// Draw.\n@ai\n@uses(net)\nfn draw(what: str) to Image {\n    return image_url(\"https://example.com/cat.png\")\n}\n");
    let text = rendered(&c);
    assert_eq!(c.diagnostics().len(), 1, "{text}");
    assert_eq!(
        c.diagnostics()[0].message,
        "an `@ai` function cannot return an `Image`"
    );
    assert!(
        text.contains("`Image` is sent to a model, never returned by one"),
        "{text}"
    );
}

#[test]
fn media_constructors_check_their_literals() {
    let case = |call: &str| -> Vec<&'static str> {
        let ty = match call.split('_').next() {
            Some("document") => "Document",
            Some("audio") => "Audio",
            _ => "Image",
        };
        let c = run(&format!("fn f() to {ty} {{\n    return {call}\n}}\n"));
        c.diagnostics().iter().map(|d| d.code.as_str()).collect()
    };
    const BAD: &str = "vox/type/invalid-media-source";
    for ok in [
        "image_file(\"scan.png\")",
        "image_file(\"./scans/scan 1.png\")",
        "image_file(\"C:\\\\scans\\\\scan.png\")",
        "image_file(\"/tmp/a:b.png\")",
        "image_url(\"https://example.com/scan.png\")",
        "image_url(\"HTTPS://example.com\")",
        "audio_file(\"memo.wav\")",
        "audio_url(\"https://example.com/memo.mp3\")",
        "document_file(\"invoice.pdf\")",
        "document_url(\"https://example.com/invoice.pdf\")",
        "image_file(trim(\"  scan.png  \"))",
    ] {
        assert_eq!(case(ok), Vec::<&str>::new(), "{ok}");
    }
    for bad in [
        "image_file(\"\")",
        "image_url(\"  \")",
        "image_file(\"https://example.com/scan.png\")",
        "image_file(\"data:image/png;base64,AAAA\")",
        "document_file(\"HTTPS://example.com/a.pdf\")",
        "image_url(\"scan.png\")",
        "image_url(\"C:\\\\scan.png\")",
        "document_url(\"www.example.com/invoice.pdf\")",
        "image_url(\"http://localhost:8080/scan.png\")",
        "image_url(\"data:image/png;base64,iVBORw0KGgo=\")",
        "image_url(\"gs://bucket/scan.png\")",
        "image_url(\"https:///scan.png\")",
        "audio_url(\"memo.wav\")",
    ] {
        assert_eq!(case(bad), vec![BAD], "{bad}");
    }
    // Only an `https` URL has a fix: the other URLs have no constructor.
    let c = run("fn f() to Image {\n    return image_file(\"http://example.com/a.png\")\n}\n");
    assert!(c.diagnostics()[0].fixes.is_empty(), "{}", rendered(&c));
    // Not a string: the ordinary type error.
    assert_eq!(case("image_file(3)"), vec!["vox/type/mismatch"]);
    assert_eq!(case("image_file()"), vec!["vox/type/arity"]);
}

#[test]
fn the_wrong_constructor_is_fixed_by_its_name() {
    let src = "fn f() to list[Image] {\n    return [image_file(\"https://example.com/a.png\"), image_url(\"b.png\")]\n}\n";
    let c = run(src);
    assert_eq!(c.diagnostics().len(), 2, "{}", rendered(&c));
    let outcome = vox_codegen::fix::fix_module(&[vox_codegen::fix::FixFile {
        name: "test.vox".into(),
        text: src.into(),
        editable: true,
    }]);
    let fixed = outcome.texts[0].clone();
    assert_eq!(
        fixed,
        "fn f() to list[Image] {\n    return [image_url(\"https://example.com/a.png\"), image_file(\"b.png\")]\n}\n"
    );
    assert!(!run(&fixed).has_errors());
}

#[test]
fn media_types_are_builtin_names() {
    for m in MEDIA {
        let c = run(&format!("type {m} {{ x: int }}\n"));
        assert_eq!(
            c.diagnostics()
                .iter()
                .map(|d| d.code.as_str())
                .collect::<Vec<_>>(),
            ["vox/name/duplicate"],
            "{}",
            rendered(&c)
        );
    }
    for f in ["image_file", "document_url"] {
        let c = run(&format!("fn {f}(x: str) to str {{ x }}\n"));
        assert!(
            c.diagnostics()
                .iter()
                .any(|d| d.code.as_str() == "vox/name/duplicate"),
            "{}",
            rendered(&c)
        );
    }
}

#[test]
fn emitted_code_uses_the_runtime_types() {
    let src = "type Receipt { scan: Image, pdf: Option[Document] }\n\
               /// Total.\n@ai\n@uses(net)\nfn total(r: Receipt, extra: list[Image]) to float {\n    return 1.0\n}\n\
               @uses(net)\nfn run() to float {\n    let r = Receipt { scan: image_file(\"a.png\"), pdf: Some(document_url(\"https://x.example/a.pdf\")) }\n    return total(r, [image_url(\"https://x.example/b.png\")])\n}\n";
    let c = run(src);
    assert!(c.diagnostics().is_empty(), "{}", rendered(&c));
    let rust = c.emit(&Default::default());
    for needle in [
        "pub scan: ::vox_runtime::Image,",
        "pub pdf: ::std::option::Option<::vox_runtime::Document>,",
        "extra: ::std::vec::Vec<::vox_runtime::Image>",
        "::vox_runtime::Image::from_path(::std::string::String::from(\"a.png\"))",
        "::vox_runtime::Document::from_url(",
        "::vox_runtime::Image::from_url(",
        ".arg(\"extra\", &extra)?",
    ] {
        assert!(rust.contains(needle), "missing {needle}:\n{rust}");
    }
}

#[test]
fn a_type_holding_media_has_no_output_schema() {
    let c = run("type Receipt { note: str, scan: list[Image] }\n");
    assert!(!c.has_errors());
    let e = c.output_schema("Receipt").unwrap_err();
    assert!(
        e.contains(
            "`Receipt` holds an `Image` (an element of a `list`, in field `scan` of `Receipt`)"
        ),
        "{e}"
    );
    let e = c.output_schema("Option[Document]").unwrap_err();
    assert!(e.contains("`Option[Document]` holds a `Document`"), "{e}");
    assert!(c.output_schema("str").is_ok());
}
