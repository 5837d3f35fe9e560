//! Natural answers taken safely (docs/runtime.md, "Repairs" and "Unknown and
//! missing fields"): one case per repair kind and per wrong-value hole,
//! each with its exact outcome — the value, with the repairs named in the
//! `vox.ai_reply_repaired` event, or a re-prompt carrying this exact
//! correction — against a scripted in-memory transport, repairs on and off.
//! In the `global` test binary, alone: the recording subscriber is the
//! global one.
//!
//! The types are written as vox-codegen emits them (plain enums as string
//! enums, unknown keys denied, `Decimal` as a string with its pattern).

use crate::{sloppy, support};

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use sloppy::{client, correction};
use support::trace::Recorder;
use support::{MemoryServer, Reply};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::Error;

/// `type Priority = | Low | Medium | High`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
enum Priority {
    Low,
    Medium,
    High,
}

/// `type Currency = | USD | EUR | GBP`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde")]
#[allow(clippy::upper_case_acronyms)]
enum Currency {
    USD,
    EUR,
    GBP,
}

/// `type Bill { vendor: str, due_date: Option[str], total: Decimal, currency: Currency, paid: bool }`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", deny_unknown_fields)]
struct Bill {
    vendor: String,
    due_date: Option<String>,
    total: String,
    currency: Currency,
    paid: bool,
}

static PRIORITY_SCHEMA: OutputSchema = OutputSchema::new(
    "Priority",
    r#"{"type":"object","properties":{"value":{"type":"string","enum":["Low","Medium","High"]}},"required":["value"],"additionalProperties":false}"#,
    true,
);
static TRIAGE: AiFunction =
    AiFunction::new("triage", "How urgent is the message?", &PRIORITY_SCHEMA)
        .with_max_iterations(2);

static BILL_SCHEMA: OutputSchema = OutputSchema::new(
    "Bill",
    r#"{"type":"object","properties":{"vendor":{"type":"string"},"due_date":{"anyOf":[{"type":"string"},{"type":"null"}]},"total":{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$","description":"A decimal number written as a string, such as \"12.50\" or \"-3\"."},"currency":{"type":"string","enum":["USD","EUR","GBP"]},"paid":{"type":"boolean"}},"required":["vendor","due_date","total","currency","paid"],"additionalProperties":false}"#,
    false,
);
static EXTRACT_BILL: AiFunction =
    AiFunction::new("extract_bill", "Extract the bill.", &BILL_SCHEMA).with_max_iterations(2);

static TAGS_SCHEMA: OutputSchema = OutputSchema::new(
    "list_str",
    r#"{"type":"object","properties":{"value":{"type":"array","items":{"type":"string"}}},"required":["value"],"additionalProperties":false}"#,
    true,
);
static TAGS: AiFunction = AiFunction::new("tags", "", &TAGS_SCHEMA).with_max_iterations(2);

static TOTAL_SCHEMA: OutputSchema = OutputSchema::new(
    "Decimal",
    r#"{"type":"object","properties":{"value":{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$"}},"required":["value"],"additionalProperties":false}"#,
    true,
);
static TOTAL: AiFunction = AiFunction::new("total", "", &TOTAL_SCHEMA).with_max_iterations(2);

const BILL: &str =
    r#"{"vendor":"ACME","due_date":"2026-01-31","total":"12.50","currency":"EUR","paid":false}"#;

fn bill() -> Bill {
    Bill {
        vendor: "ACME".into(),
        due_date: Some("2026-01-31".into()),
        total: "12.50".into(),
        currency: Currency::EUR,
        paid: false,
    }
}

/// What a case must come to.
enum Outcome<T> {
    /// Accepted on the first reply with this value, after these repairs
    /// (event names, comma-separated; empty for none).
    Value(T, &'static str),
    /// Re-prompted with exactly this correction.
    Reprompt(&'static str),
}
use Outcome::{Reprompt, Value};

/// Runs one case; returns the failures.
async fn run<T: DeserializeOwned + PartialEq + Debug + Clone + Send>(
    recorder: &Recorder,
    function: &'static AiFunction,
    name: &str,
    reply: &str,
    good: &str,
    outcome: Outcome<T>,
    counts: &mut Vec<(String, bool, bool)>,
) -> Vec<String> {
    let mut failures = Vec::new();
    let right: T = vox_runtime::serde_json::from_str(good)
        .or_else(|_| {
            vox_runtime::serde_json::from_str::<vox_runtime::serde_json::Value>(good)
                .map(|v| vox_runtime::serde_json::from_value(v["value"].clone()).unwrap())
        })
        .unwrap();
    let mut first = [false, false];
    for (i, repair) in [true, false].into_iter().enumerate() {
        recorder.clear();
        let server = MemoryServer::start(vec![Reply::chat(reply)], Reply::chat(good)).await;
        let got = client(&server, repair)
            .call_ai::<T, _>(function, Args::new(), async {
                Err(Error::Config("the fixture must not run".into()))
            })
            .await;
        let requests = server.request_count();
        first[i] = requests == 1;
        let events: Vec<String> = recorder
            .log
            .lock()
            .unwrap()
            .events
            .iter()
            .filter(|e| e.name == "vox.ai_reply_repaired")
            .filter_map(|e| e.fields.get("repairs").cloned())
            .collect();
        match (&outcome, repair) {
            (Value(want, repairs), true) => {
                if got.as_ref().ok() != Some(want) || requests != 1 {
                    failures.push(format!(
                        "{name}: {got:?} after {requests} requests; correction {:?}",
                        correction(&server)
                    ));
                }
                let named: Vec<&str> = events.iter().map(String::as_str).collect();
                let expected: Vec<&str> = Some(*repairs)
                    .filter(|r| !r.is_empty())
                    .into_iter()
                    .collect();
                if named != expected {
                    failures.push(format!("{name}: repairs {named:?}, expected {expected:?}"));
                }
            }
            (Value(_, repairs), false) => {
                // Off: only a reply that needed no repair passes first.
                if first[1] != repairs.is_empty() || !events.is_empty() {
                    failures.push(format!(
                        "{name}: repairs off: {requests} requests, {events:?}"
                    ));
                }
            }
            (Reprompt(text), on) => {
                // The correction turn quotes the error between a fixed
                // opening and closing line (docs/runtime.md, "What the model sees").
                let c = correction(&server);
                let c = c.as_deref().and_then(|c| {
                    c.strip_prefix("Your previous reply was rejected: ")
                        .and_then(|c| c.rsplit_once('\n'))
                        .map(|(error, _)| error)
                });
                if requests != 2 || got.as_ref().ok() != Some(&right) {
                    failures.push(format!(
                        "{name} (repair {on}): {got:?} after {requests} requests"
                    ));
                }
                if on && c != Some(*text) {
                    failures.push(format!("{name}: correction {c:?}\n   expected {text:?}"));
                }
            }
        }
    }
    counts.push((name.to_owned(), first[0], first[1]));
    failures
}

#[tokio::test]
async fn each_repair_and_each_hole_has_its_exact_outcome() {
    let (_exclusive, recorder) = crate::exclusive().await;
    let r = &recorder;
    let mut f = Vec::new();
    let mut counts = Vec::new();
    let c = &mut counts;
    let good_priority = r#"{"value":"Low"}"#;
    let swap = |from: &str, to: &str| {
        assert!(BILL.contains(from), "{from}");
        BILL.replacen(from, to, 1)
    };

    // Repairs, one case (or more) per kind.
    use Priority::High;
    f.extend(
        run(
            r,
            &TRIAGE,
            "bare enum name",
            "High",
            good_priority,
            Value(High, "enum_name,bare_value"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TRIAGE,
            "bare enum name, lower case, full stop",
            "high.",
            good_priority,
            Value(High, "enum_name,bare_value"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TRIAGE,
            "bare JSON string in another case",
            r#""HIGH""#,
            good_priority,
            Value(High, "bare_value,enum_name"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TRIAGE,
            "wrapped enum in another case",
            r#"{"value": "high"}"#,
            good_priority,
            Value(High, "enum_name"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TRIAGE,
            "string enum as the schema asks",
            r#"{"value": "High"}"#,
            good_priority,
            Value(High, ""),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TAGS,
            "bare list",
            r#"["a", "b"]"#,
            r#"{"value":[]}"#,
            Value(vec!["a".to_owned(), "b".to_owned()], "bare_value"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TAGS,
            "bare list in prose",
            "The tags are: [\"a\", \"b\"]. Done.",
            r#"{"value":[]}"#,
            Value(
                vec!["a".to_owned(), "b".to_owned()],
                "prose_around_json,bare_value",
            ),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "enum value in another case",
            &swap(r#""EUR""#, r#""eur""#),
            BILL,
            Value(bill(), "enum_name"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "Python literals",
            &swap("false", "False"),
            BILL,
            Value(bill(), "python_literals"),
            c,
        )
        .await,
    );
    let none = Bill {
        due_date: None,
        ..bill()
    };
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "Python None",
            &swap(r#""2026-01-31""#, "None"),
            BILL,
            Value(none.clone(), "python_literals"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "triple-quoted string",
            &swap(r#""ACME""#, r#""""ACME""""#),
            BILL,
            Value(bill(), "triple_quoted_strings"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "prose after an unbalanced brace",
            &format!("I'll fill in the template {{vendor, total and so on. Here it is:\n{BILL}"),
            BILL,
            Value(bill(), "prose_around_json"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "code fragments around one object",
            &format!("data = json.loads(text)\nprint(data['amenities'], data[\"total\"])\n{BILL}"),
            BILL,
            Value(bill(), "prose_around_json"),
            c,
        )
        .await,
    );
    let twelve_and_a_half = Bill {
        total: "12.5".into(),
        ..bill()
    };
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "decimal as a number",
            &swap(r#""12.50""#, "12.50"),
            BILL,
            Value(twelve_and_a_half, "number_as_decimal"),
            c,
        )
        .await,
    );
    f.extend(
        run(
            r,
            &TOTAL,
            "bare decimal number",
            "12.5",
            r#"{"value":"1"}"#,
            Value("12.5".to_owned(), "bare_value,number_as_decimal"),
            c,
        )
        .await,
    );
    // A missing `Option` field, with no key the record lacks: `None`.
    f.extend(
        run(
            r,
            &EXTRACT_BILL,
            "missing optional field",
            &swap(r#""due_date":"2026-01-31","#, ""),
            BILL,
            Value(none, ""),
            c,
        )
        .await,
    );

    // Holes and ambiguities: asked again, with exactly this correction.
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "misnamed optional field", &swap(r#""due_date""#, r#""due""#), BILL, Reprompt(
        "the reply does not match the schema (2 problems):\n- $: missing required field \"due_date\"\n- $: unexpected field \"due\" (the fields are \"vendor\", \"due_date\", \"total\", \"currency\", \"paid\"; did you mean \"due_date\"?)"), c).await);
    // Every field there with a value: the extra key cannot be one
    // misnamed, and is dropped (no paid re-prompt).
    f.extend(
        run::<Bill>(
            r,
            &EXTRACT_BILL,
            "extra key beside a complete value",
            &swap(r#""paid":false"#, r#""paid":false,"notes":"x""#),
            BILL,
            Value(bill(), "unknown_keys"),
            c,
        )
        .await,
    );
    // An optional field `null` beside it: the key may be that field.
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "extra key beside a null optional field", &swap(r#""due_date":"2026-01-31""#, r#""due_date":null,"notes":"2026-01-31""#), BILL, Reprompt(
        "the reply does not match the schema: $: unexpected field \"notes\" (the fields are \"vendor\", \"due_date\", \"total\", \"currency\", \"paid\")"), c).await);
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "decimal in words", &swap(r#""12.50""#, r#""twelve""#), BILL, Reprompt(
        "the reply does not match the schema: $.total: expected a decimal number written as a string (such as \"12.50\" or \"-3\"), found the string \"twelve\""), c).await);
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "decimal with a comma", &swap(r#""12.50""#, r#""12,50""#), BILL, Reprompt(
        "the reply does not match the schema: $.total: expected a decimal number written as a string (such as \"12.50\" or \"-3\"), found the string \"12,50\""), c).await);
    f.extend(run::<String>(r, &TOTAL, "bare decimal in words", r#""twelve""#, r#"{"value":"1"}"#, Reprompt(
        "the reply does not match the schema: $.value: expected a decimal number written as a string (such as \"12.50\" or \"-3\"), found the string \"twelve\""), c).await);
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "decimal as a number with more digits than a float keeps", &swap(r#""12.50""#, "12.500000000000000001"), BILL, Reprompt(
        "the reply does not match the schema: $.total: expected a string, found the number 12.5"), c).await);
    f.extend(
        run::<Priority>(
            r,
            &TRIAGE,
            "bare word that is no case",
            "Urgent",
            good_priority,
            Reprompt("the reply is not valid JSON: expected value at line 1 column 1"),
            c,
        )
        .await,
    );
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "two objects in prose", &format!("Either {BILL} or {}.", swap("ACME", "ACME Ltd")), BILL, Reprompt(
        "the reply holds 2 separate JSON values; answer with exactly one JSON value and nothing around it"), c).await);
    f.extend(run::<Bill>(r, &EXTRACT_BILL, "Python True where a string is wanted", &swap(r#""ACME""#, "True"), BILL, Reprompt(
        "the reply does not match the schema: $.vendor: expected a string, found true\nAlso, answer with plain JSON only (the reply had Python's True, False or None)"), c).await);

    eprintln!("first reply right (repairs on / off):");
    for (name, on, off) in &counts {
        eprintln!("  {name}: {on} / {off}");
    }
    assert!(f.is_empty(), "{}", f.join("\n"));
}
