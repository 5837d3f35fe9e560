//! The sloppy-reply corpus shared by `reply_repairs` and `repair_events`:
//! an invoice type as vox-codegen emits it, its schema, the right answer,
//! and first replies that are either repaired or re-prompted
//! (docs/runtime.md, "Repairs").

#![allow(dead_code)] // each test binary uses a different part of it

use std::time::Duration;

use crate::support::{MemoryServer, Reply};
use vox_runtime::__private::{AiFunction, OutputSchema};
use vox_runtime::{Client, Config, Provider};

/// `type Line { description: str, quantity: int, unit_price: float }`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", deny_unknown_fields)]
pub struct Line {
    pub description: String,
    pub quantity: i64,
    pub unit_price: f64,
}

/// `type Status = | Paid | Open(days_overdue: int)`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", tag = "kind", deny_unknown_fields)]
pub enum Status {
    Paid,
    Open { days_overdue: i64 },
}

/// `type Invoice { vendor: str, lines: list[Line], status: Status, due_date: Option[str] }`
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", deny_unknown_fields)]
pub struct Invoice {
    pub vendor: String,
    pub lines: Vec<Line>,
    pub status: Status,
    pub due_date: Option<String>,
}

/// The schema vox-codegen derives for `Invoice`.
pub static INVOICE: OutputSchema = OutputSchema::new(
    "Invoice",
    r#"{"type":"object","properties":{"vendor":{"type":"string"},"lines":{"type":"array","items":{"type":"object","properties":{"description":{"type":"string"},"quantity":{"type":"integer"},"unit_price":{"type":"number"}},"required":["description","quantity","unit_price"],"additionalProperties":false}},"status":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Paid"]}},"required":["kind"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Open"]},"days_overdue":{"type":"integer"}},"required":["kind","days_overdue"],"additionalProperties":false}]},"due_date":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["vendor","lines","status","due_date"],"additionalProperties":false}"#,
    false,
);

pub static EXTRACT: AiFunction =
    AiFunction::new("extract_invoice", "Extract the invoice.", &INVOICE)
        .with_model("gpt-4o-mini")
        .with_max_iterations(2);

/// `@ai fn count(...) to int`: wrapped in `{"value": …}`.
pub static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "int",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    true,
);
pub static COUNT: AiFunction = AiFunction::new("count", "", &COUNT_SCHEMA).with_max_iterations(2);

/// The right answer, as the second reply sends it.
pub const GOOD: &str = r#"{"vendor":"ACME","lines":[{"description":"Bolts","quantity":2,"unit_price":3.5}],"status":{"kind":"Open","days_overdue":30},"due_date":"2026-01-31"}"#;

pub fn expected() -> Invoice {
    Invoice {
        vendor: "ACME".into(),
        lines: vec![Line {
            description: "Bolts".into(),
            quantity: 2,
            unit_price: 3.5,
        }],
        status: Status::Open { days_overdue: 30 },
        due_date: Some("2026-01-31".into()),
    }
}

/// What a case must come to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Right on the first reply, after these repairs (names as in the
    /// `vox.ai_reply_repaired` event).
    Repaired(&'static str),
    /// Re-prompted; the correction contains this text.
    Reprompted(&'static str),
}
pub use Outcome::{Repaired, Reprompted};

pub struct Case {
    pub name: &'static str,
    pub reply: Reply,
    pub outcome: Outcome,
}

pub fn case(name: &'static str, content: &str, outcome: Outcome) -> Case {
    Case {
        name,
        reply: Reply::chat(content),
        outcome,
    }
}

pub fn corpus() -> Vec<Case> {
    let good = GOOD;
    let swap = |from: &str, to: &str| {
        assert!(good.contains(from), "{from}");
        good.replacen(from, to, 1)
    };
    vec![
        // Repairs whose meaning is unambiguous.
        case("code fence", &format!("```json\n{good}\n```"), Repaired("")),
        // A key the type lacks beside every field, each with a value: it
        // cannot be a field misnamed, so it is dropped (no paid re-prompt).
        case(
            "unknown key beside every field",
            &swap(r#""due_date":"2026-01-31""#, r#""due_date":"2026-01-31","note":"paid by card""#),
            Repaired("unknown_keys"),
        ),
        case(
            "unknown key in a list item",
            &swap(r#""unit_price":3.5"#, r#""unit_price":3.5,"currency":"EUR""#),
            Repaired("unknown_keys"),
        ),
        case(
            "unknown key in a case",
            &swap(r#""days_overdue":30"#, r#""days_overdue":30,"reason":"late""#),
            Repaired("unknown_keys"),
        ),
        case(
            "unknown keys at two levels",
            &swap(r#""unit_price":3.5"#, r#""unit_price":3.5,"sku":"B-1""#)
                .replacen(r#""vendor":"ACME""#, r#""vendor":"ACME","vat_id":"X""#, 1),
            Repaired("unknown_keys"),
        ),
        // Where an optional field is absent or null, the unknown key may be
        // that field misnamed: asked again, never read as `None`.
        case(
            "misnamed optional field beside its null",
            &swap(r#""due_date":"2026-01-31""#, r#""due_date":null,"due":"2026-01-31""#),
            Reprompted(r#"unexpected field "due""#),
        ),
        case(
            "misnamed optional field, absent",
            &swap(r#""due_date":"2026-01-31""#, r#""due":"2026-01-31""#),
            Reprompted(r#"unexpected field "due""#),
        ),
        case(
            "unknown key beside a missing required field",
            &swap(r#""quantity":2,"#, r#""qty":2,"#),
            Reprompted(r#"unexpected field "qty""#),
        ),
        case("bare code fence", &format!("```\n{good}\n```"), Repaired("")),
        case(
            "prose before",
            &format!("Here is the invoice you asked for:\n{good}"),
            Repaired("prose_around_json"),
        ),
        case(
            "prose after",
            &format!("{good}\nLet me know if you need anything else."),
            Repaired("prose_around_json"),
        ),
        case(
            "prose around a fence",
            &format!("Sure! Here it is:\n```json\n{good}\n```\nI hope it's right."),
            Repaired("prose_around_json"),
        ),
        case(
            "trailing comma in an object",
            &swap(r#""2026-01-31"}"#, r#""2026-01-31",}"#),
            Repaired("trailing_commas"),
        ),
        case(
            "trailing comma in a list",
            &swap(r#""unit_price":3.5}]"#, r#""unit_price":3.5},]"#),
            Repaired("trailing_commas"),
        ),
        case(
            "line comment",
            &swap(r#""vendor":"ACME","#, "\"vendor\":\"ACME\", // from the header\n"),
            Repaired("comments"),
        ),
        case(
            "block comment",
            &swap(r#""due_date":"#, r#"/* ISO date */ "due_date":"#),
            Repaired("comments"),
        ),
        case(
            "single-quoted strings",
            &swap(r#""vendor":"ACME""#, r#"'vendor':'ACME'"#),
            Repaired("single_quoted_strings"),
        ),
        case(
            "unquoted keys",
            &swap(r#""vendor":"ACME","lines""#, r#"vendor:"ACME",lines"#),
            Repaired("unquoted_keys"),
        ),
        case(
            "every JSON5 slip at once",
            "{vendor: 'ACME', // who\n lines: [{description: 'Bolts', quantity: 2, unit_price: 3.5,},],\n /* state */ status: {kind: 'Open', days_overdue: 30}, due_date: '2026-01-31',}",
            Repaired("unquoted_keys,single_quoted_strings,comments,trailing_commas"),
        ),
        case(
            "integer as a string",
            &swap(r#""quantity":2"#, r#""quantity":"2""#),
            Repaired("number_in_string"),
        ),
        case(
            "float as a string",
            &swap(r#""unit_price":3.5"#, r#""unit_price":"3.5""#),
            Repaired("number_in_string"),
        ),
        case(
            "integral float",
            &swap(r#""quantity":2"#, r#""quantity":2.0"#),
            Repaired("integral_float"),
        ),
        case(
            "integral float as a string",
            &swap(r#""quantity":2"#, r#""quantity":"2.0""#),
            Repaired("number_in_string,integral_float"),
        ),
        case(
            "number string inside a sum case",
            &swap(r#""days_overdue":30"#, r#""days_overdue":"30""#),
            Repaired("number_in_string"),
        ),
        case(
            "kind in lower case",
            &swap(r#""kind":"Open""#, r#""kind":"open""#),
            Repaired("kind_case"),
        ),
        case(
            "kind in upper case",
            &swap(r#""kind":"Open""#, r#""kind":"OPEN""#),
            Repaired("kind_case"),
        ),
        case(
            "list as a JSON string",
            &swap(
                r#""lines":[{"description":"Bolts","quantity":2,"unit_price":3.5}]"#,
                r#""lines":"[{\"description\":\"Bolts\",\"quantity\":2,\"unit_price\":3.5}]""#,
            ),
            Repaired("json_in_string"),
        ),
        case(
            "object as a JSON string",
            &swap(
                r#""status":{"kind":"Open","days_overdue":30}"#,
                r#""status":"{\"kind\":\"Open\",\"days_overdue\":30}""#,
            ),
            Repaired("json_in_string"),
        ),
        case(
            "prose, a trailing comma, a number string and a kind's case",
            &format!(
                "The invoice:\n{}\nDone.",
                swap(r#""quantity":2"#, r#""quantity":"2""#)
                    .replace(r#""kind":"Open""#, r#""kind":"open""#)
                    .replace(r#""2026-01-31"}"#, r#""2026-01-31",}"#)
            ),
            Repaired("prose_around_json,trailing_commas,number_in_string,kind_case"),
        ),
        // Never repaired, or not unambiguous: asked again.
        case(
            "two JSON values in prose",
            &format!("Either {} or {good}.", swap("ACME", "ACME Ltd")),
            Reprompted("the reply holds 2 separate JSON values"),
        ),
        case(
            "two JSON values back to back",
            &format!("{good}{good}"),
            Reprompted("2 separate JSON values"),
        ),
        case(
            "price with a currency sign",
            &swap(r#""unit_price":3.5"#, r#""unit_price":"$3.50""#),
            Reprompted(r#"$.lines[0].unit_price: expected a number, found the string "$3.50""#),
        ),
        case(
            "quantity with a unit",
            &swap(r#""quantity":2"#, r#""quantity":"2 pcs""#),
            Reprompted(r#"$.lines[0].quantity: expected an integer, found the string "2 pcs""#),
        ),
        case(
            "fractional quantity",
            &swap(r#""quantity":2"#, r#""quantity":2.5"#),
            Reprompted("$.lines[0].quantity: expected an integer"),
        ),
        case(
            "null for a required string",
            &swap(r#""vendor":"ACME""#, r#""vendor":null"#),
            Reprompted("$.vendor: expected a string, found null"),
        ),
        case(
            "missing required field",
            &swap(r#""vendor":"ACME","#, ""),
            Reprompted(r#"$: missing required field "vendor""#),
        ),
        case(
            "value wrapped in an extra object",
            &format!(r#"{{"invoice":{good}}}"#),
            Reprompted(r#"$: unexpected field "invoice""#),
        ),
        case(
            "kind that matches no case",
            &swap(r#""kind":"Open""#, r#""kind":"Opened""#),
            Reprompted(r#"$.status: expected one of {"kind":"Paid"} or {"kind":"Open","days_overdue":<integer>}"#),
        ),
        case(
            "sum type as a bare string",
            &swap(r#"{"kind":"Open","days_overdue":30}"#, r#""OPEN""#),
            Reprompted(r#"$.status: expected one of {"kind":"Paid"} or {"kind":"Open","days_overdue":<integer>}, found "OPEN""#),
        ),
        case(
            "NaN",
            &swap(r#""unit_price":3.5"#, r#""unit_price":NaN"#),
            Reprompted("the reply is not valid JSON"),
        ),
        case(
            "number where a string is wanted",
            &swap(r#""vendor":"ACME""#, r#""vendor":42"#),
            Reprompted("$.vendor: expected a string, found the number 42"),
        ),
        case("empty content", "", Reprompted("the reply was empty")),
        case(
            "prose only",
            "I could not find an invoice in this text.",
            Reprompted("the reply is not valid JSON"),
        ),
        Case {
            name: "cut off (finish_reason length), though the JSON is whole",
            reply: Reply::choice(serde_json::json!({"index": 0,
                "message": {"role": "assistant", "content": good}, "finish_reason": "length"})),
            outcome: Reprompted("truncated"),
        },
        Case {
            name: "refusal",
            reply: Reply::choice(serde_json::json!({"index": 0,
                "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."},
                "finish_reason": "stop"})),
            outcome: Reprompted("the model refused"),
        },
    ]
}

pub fn client(server: &MemoryServer, repair: bool) -> Client {
    server.client(
        Config::builder(Provider::Compatible)
            .base_url(server.base_url())
            .api_key("sk-repair-test-1234")
            .request_timeout(Duration::from_secs(5))
            .max_transport_retries(0)
            .repair(repair)
            .build()
            .unwrap(),
    )
}

/// The correction the second request carries, if any.
pub fn correction(server: &MemoryServer) -> Option<String> {
    let requests = server.requests();
    let second = requests.get(1)?.json();
    let messages = second["messages"].as_array()?;
    messages.last()?["content"].as_str().map(str::to_owned)
}
