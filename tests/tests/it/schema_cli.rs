//! `cargo vox schema TYPE [PATHS…]`: the exact `response_format` the model
//! is given, as pretty JSON for people and one envelope under `--json`;
//! an unknown type is a usage error, a module with errors gives no schema.

use serde_json::{json, Value};
use vox_e2e::{assert_exact_round_trip, json_lines, work_dir, workspace_root, Run};

const INVOICE: &str = "fixtures/valid/invoice.vox";

fn vox(args: &[&str]) -> Run {
    vox_e2e::vox(&workspace_root(), args)
}

/// The single `--json` envelope.
fn envelope(r: &Run) -> Value {
    let lines = json_lines(r);
    assert_eq!(lines.len(), 1, "exactly one envelope\n{}", r.dump());
    let env = lines.into_iter().next().unwrap();
    assert_eq!(env["command"], "schema", "{env}");
    env
}

#[test]
fn prints_the_strict_response_format_as_pretty_json() {
    let r = vox(&["schema", "Invoice", INVOICE]);
    r.assert_code(0);
    assert!(
        r.stdout.lines().count() > 10,
        "pretty, one key per line\n{}",
        r.dump()
    );
    let format: Value = serde_json::from_str(&r.stdout).expect("stdout is the JSON");
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Invoice");
    assert_eq!(format["json_schema"]["strict"], true);
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["required"],
        json!(["vendor", "lines", "due_date", "status"])
    );
    assert_eq!(
        schema["properties"]["vendor"]["description"],
        "Who sent the invoice."
    );
}

#[test]
fn json_envelope_carries_the_format_and_whether_it_is_wrapped() {
    let r = vox(&["--json", "schema", "list[LineItem]", INVOICE]);
    r.assert_code(0);
    let env = envelope(&r);
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["type"], "list[LineItem]");
    assert_eq!(env["wrapped"], true, "a list is sent wrapped");
    let schema = &env["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["required"], json!(["value"]), "{env}");
    assert_eq!(schema["properties"]["value"]["type"], "array", "{env}");

    let object = envelope(&vox(&["--json", "schema", "Invoice", INVOICE]));
    assert_eq!(object["wrapped"], false, "{object}");
}

#[test]
fn an_unknown_type_is_a_usage_error() {
    let r = vox(&["--json", "schema", "Nope", INVOICE]);
    r.assert_code(2);
    let env = envelope(&r);
    assert_eq!(env["ok"], false, "{env}");
    assert!(
        env["message"].as_str().is_some_and(|m| m.contains("Nope")),
        "{env}"
    );
}

/// Strict structured outputs cannot carry a map: the command says where
/// the map is instead of printing a schema no `@ai` function may use.
#[test]
fn a_type_holding_a_map_has_no_output_schema() {
    let maps = "fixtures/soundness/vox/maps.vox";
    for ty in ["Ledger", "list[Ledger]", "map[str, int]"] {
        let r = vox(&["--json", "schema", ty, maps]);
        r.assert_code(2);
        let env = envelope(&r);
        assert_eq!(env["ok"], false, "{env}");
        let message = env["message"].as_str().unwrap_or("");
        assert!(
            message.contains("holds a map") && message.contains("structured outputs"),
            "{env}"
        );
    }
    let r = vox(&["--json", "schema", "Task", maps]);
    r.assert_code(0);
}

#[test]
fn a_module_with_errors_gives_its_diagnostics_not_a_schema() {
    let dir = work_dir("schema-broken");
    let file = dir.join("broken.vox");
    std::fs::write(&file, "type Invoice {\n    vendor: strr\n}\n").expect("write module");
    let path = file.to_str().expect("UTF-8 path");
    let r = vox(&["--json", "schema", "Invoice", path]);
    r.assert_code(1);
    let env = envelope(&r);
    assert_eq!(env["ok"], false, "{env}");
    assert!(env.get("response_format").is_none(), "{env}");
    let diagnostics = env["diagnostics"].as_array().expect("diagnostics");
    assert!(!diagnostics.is_empty(), "{env}");
    assert!(
        diagnostics
            .iter()
            .all(|d| d["severity"] == "error" || d["severity"] == "warning"),
        "{env}"
    );
}

/// A plain enum is a string enum and a `Decimal` a string with its pattern,
/// exactly as printed (docs/language.md, "How types look to the model").
#[test]
fn plain_enums_and_decimals_as_the_model_sees_them() {
    let dir = work_dir("schema-plain-enum");
    let file = dir.join("price.vox");
    std::fs::write(
        &file,
        "/// A currency.\ntype Currency =\n    | USD\n    /// The euro.\n    | EUR\n\n\
         type Price {\n    amount: Decimal\n    currency: Currency\n}\n",
    )
    .expect("write module");
    let path = file.to_str().expect("UTF-8 path");
    let env = envelope(&vox(&["--json", "schema", "Price", path]));
    assert_eq!(
        env["response_format"]["json_schema"]["schema"],
        json!({"type": "object", "properties": {
            "amount": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$",
                "description": "A decimal number written as a string, such as \"12.50\" or \"-3\"."},
            "currency": {"type": "string", "enum": ["USD", "EUR"],
                "description": "A currency.\n`EUR`: The euro."}},
            "required": ["amount", "currency"], "additionalProperties": false}),
        "{env}"
    );
    let wrapped = envelope(&vox(&["--json", "schema", "Currency", path]));
    assert_eq!(wrapped["wrapped"], true, "{wrapped}");
    assert_eq!(
        wrapped["response_format"]["json_schema"]["schema"]["properties"]["value"]["enum"],
        json!(["USD", "EUR"]),
        "{wrapped}"
    );
}

/// `cargo vox --json schema Invoice INVOICE --provider PROVIDER`.
fn provider_json(provider: &str) -> Run {
    vox(&[
        "--json",
        "schema",
        "Invoice",
        INVOICE,
        "--provider",
        provider,
    ])
}

#[test]
fn provider_flag_prints_the_fields_that_carry_the_schema_to_that_provider() {
    let base = envelope(&vox(&["--json", "schema", "Invoice", INVOICE]));
    let schema = base["response_format"]["json_schema"]["schema"].clone();

    let r = vox(&["schema", "Invoice", INVOICE, "--provider", "anthropic"]);
    r.assert_code(0);
    let request: Value = serde_json::from_str(&r.stdout).expect("stdout is the JSON");
    assert_eq!(request["tools"][0]["name"], "extract_invoice", "{request}");
    assert_eq!(request["tools"][0]["input_schema"], schema);
    assert_eq!(
        request["tool_choice"],
        json!({"type": "tool", "name": "extract_invoice"})
    );

    let env = envelope(&provider_json("gemini"));
    assert_eq!(env["provider"], "gemini", "{env}");
    let config = &env["request"]["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseJsonSchema"], schema, "nothing to convert");

    let env = envelope(&provider_json("ollama"));
    assert_eq!(env["request"], json!({"format": schema}));

    let r = provider_json("claude");
    r.assert_code(2);
    assert!(
        envelope(&r)["message"]
            .as_str()
            .unwrap()
            .contains("unknown provider `claude`"),
        "{}",
        r.dump()
    );
}

/// Every `--json schema` line is one of vox-metadata's types, exactly:
/// success a `SchemaEnvelope`, failure an `Envelope`; reading and writing
/// it back through the type gives the same JSON (no field unknown to the
/// types, none missing).
#[test]
fn lines_are_vox_metadata_types_exactly() {
    for args in [
        &["--json", "schema", "Invoice", INVOICE][..],
        &["--json", "schema", "list[LineItem]", INVOICE],
        &[
            "--json",
            "schema",
            "Invoice",
            INVOICE,
            "--provider",
            "anthropic",
        ],
        &[
            "--json",
            "schema",
            "Invoice",
            INVOICE,
            "--provider",
            "gemini",
        ],
    ] {
        let r = vox(args);
        r.assert_code(0);
        let line = r.stdout.trim_end();
        let env: vox_metadata::SchemaEnvelope = assert_exact_round_trip("schema --json", line);
        assert!(env.ok && env.command == "schema", "{line}");
        assert_eq!(vox_metadata::SchemaEnvelope::from_line(line).unwrap(), env);
        assert_eq!(
            env.response_format.is_some(),
            !args.contains(&"--provider"),
            "{line}"
        );
        assert_eq!(
            env.request.is_some(),
            args.contains(&"--provider"),
            "{line}"
        );
    }
    let r = vox(&["--json", "schema", "Nope", INVOICE]);
    r.assert_code(2);
    let env: vox_metadata::Envelope = assert_exact_round_trip("schema --json", r.stdout.trim_end());
    assert!(!env.ok && env.message.is_some(), "{env:?}");
}

/// A module whose `@ai` functions take media (docs/language.md, "Images,
/// documents and audio"); `read_scan` and `read_note` return `Invoice`.
const MEDIA_MODULE: &str = "type Page {\n    number: int\n    scan: Image\n}\n\
type Invoice {\n    vendor: str\n}\n\
/// Read the scan.\n@ai\n@uses(net)\n\
fn read_scan(scan: Image, pages: list[Page], pdf: Option[Document], memos: list[Audio], note: str) to Invoice {\n    return Invoice { vendor: note }\n}\n\
/// Read the text.\n@ai\n@uses(net)\nfn read_note(text: str) to Invoice {\n    return Invoice { vendor: text }\n}\n\
/// Count.\n@ai\n@uses(net)\nfn tally(scan: Image) to int {\n    return 1\n}\n";

fn media_module(tag: &str) -> String {
    let file = work_dir(tag).join("media.vox");
    std::fs::write(&file, MEDIA_MODULE).expect("write module");
    file.to_str().expect("UTF-8 path").to_owned()
}

/// `cargo vox schema` says how each argument of the functions returning the
/// type is sent: media as image, document or audio parts, the rest as JSON
/// text. People read it on stderr (stdout stays the JSON); `--json` has it
/// under `arguments`.
#[test]
fn schema_says_how_each_argument_is_sent() {
    let path = media_module("schema-media-args");
    let r = vox(&["schema", "Invoice", &path]);
    r.assert_code(0);
    let _: Value = serde_json::from_str(&r.stdout).expect("stdout is only the JSON");
    let expected = [
        "note: `read_scan` sends its arguments as:",
        "  scan: Image → an image part; in the arguments' JSON its place reads \"<image N>\"",
        "  pages: list[Page] → JSON in the arguments text; each `Image` in it as an image part",
        "  pdf: Option[Document] → a document part, or nothing for `None`",
        "  memos: list[Audio] → one audio part per element",
        "  note: str → JSON in the arguments text",
        "note: `read_note` sends its arguments as:",
        "  text: str → JSON in the arguments text\n",
    ]
    .join("\n");
    assert!(r.stderr.contains(&expected), "{}", r.dump());
    assert!(
        !r.stderr.contains("tally"),
        "only functions returning Invoice\n{}",
        r.dump()
    );

    let env = envelope(&vox(&["--json", "schema", "Invoice", &path]));
    let args = env["arguments"].as_array().expect("arguments");
    assert_eq!(args.len(), 6, "{env}");
    assert_eq!(
        args[0],
        json!({"function": "read_scan", "name": "scan", "type": "Image", "parts": ["image"],
            "sent_as": "an image part; in the arguments' JSON its place reads \"<image N>\""}),
        "{env}"
    );
    assert_eq!(args[1]["parts"], json!(["image"]), "{env}");
    assert_eq!(args[2]["parts"], json!(["document"]), "{env}");
    assert_eq!(args[3]["parts"], json!(["audio"]), "{env}");
    assert_eq!(args[4]["parts"], json!([]), "{env}");
    assert_eq!(args[5]["function"], "read_note", "{env}");

    // `--function` picks one; with `--provider` the arguments are there too.
    let env = envelope(&vox(&[
        "--json",
        "schema",
        "int",
        &path,
        "--function",
        "tally",
        "--provider",
        "anthropic",
    ]));
    assert_eq!(
        env["arguments"],
        json!([{"function": "tally", "name": "scan", "type": "Image", "parts": ["image"],
            "sent_as": "an image part; in the arguments' JSON its place reads \"<image N>\""}]),
        "{env}"
    );
    let line = vox(&["--json", "schema", "Invoice", &path]).stdout;
    let env: vox_metadata::SchemaEnvelope =
        assert_exact_round_trip("schema --json", line.trim_end());
    assert_eq!(env.arguments.len(), 6);
    assert_eq!(env.arguments[3].parts, ["audio"]);
}

/// A type that holds media has no output schema: a model cannot return it.
#[test]
fn a_type_holding_media_is_a_usage_error() {
    let path = media_module("schema-media-type");
    for (ty, says) in [
        (
            "Page",
            "`Page` holds an `Image` (field `scan` of `Page`): a model cannot return media",
        ),
        ("list[Document]", "`list[Document]` holds a `Document`"),
        ("Audio", "`Audio` is sent to a model, never returned by one"),
    ] {
        let r = vox(&["--json", "schema", ty, &path]);
        r.assert_code(2);
        let env = envelope(&r);
        assert_eq!(env["ok"], false, "{env}");
        assert!(
            env["message"].as_str().is_some_and(|m| m.contains(says)),
            "{ty}: {env}"
        );
    }
}
