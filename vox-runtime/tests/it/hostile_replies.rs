//! A server that knows the return type sends replies shaped to make
//! describing them expensive: one bad leaf deep in a recursive sum type
//! (issue 19). Each call must come back promptly — with the correction
//! naming the leaf — with repairs on and off (docs/runtime.md,
//! "Corrections").
//!
//! The correction is computed on the call's own task, so a runaway cannot
//! be cut off by a tokio timeout: every call runs on a thread of its own
//! and the test fails when it has not answered within a generous guard,
//! instead of hanging CI.

use crate::support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{FakeServer, Reply};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{Client, Config, Error, Provider};

/// `type Expr = | Lit(v: int) | Add(args: list[Expr]) | Mul(args: list[Expr])`
/// as vox-codegen emits it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(crate = "vox_runtime::serde", tag = "kind")]
enum Expr {
    Lit { v: i64 },
    Add { args: Vec<Expr> },
    Mul { args: Vec<Expr> },
}

/// `cargo vox schema Expr`: a sum type goes out wrapped in `{"value": …}`.
static EXPR_SCHEMA: OutputSchema = OutputSchema::new(
    "Expr",
    r##"{"type":"object","properties":{"value":{"$ref":"#/$defs/Expr"}},"required":["value"],"additionalProperties":false,"$defs":{"Expr":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Lit"]},"v":{"type":"integer"}},"required":["kind","v"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Add"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["kind","args"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Mul"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["kind","args"],"additionalProperties":false}]}}}"##,
    true,
);

static PARSE: AiFunction = AiFunction::new("parse_expr", "Parse the expression.", &EXPR_SCHEMA)
    .with_model("gpt-4o-mini")
    .with_max_iterations(2);

/// How long one call may take before the test gives up on it: far above
/// what a debug build needs (milliseconds), far below a hung CI job.
const GUARD: Duration = Duration::from_secs(20);

/// `depth` nested `Add`/`Mul` nodes around one `Lit` whose `v` is a
/// string, and the path of that `v`.
fn deep_bad_leaf(depth: usize) -> (String, String) {
    let mut json = String::from(r#"{"kind":"Lit","v":"seven"}"#);
    let mut path = String::from(".v");
    for level in 0..depth {
        let kind = if level % 2 == 0 { "Add" } else { "Mul" };
        json = format!(r#"{{"kind":"{kind}","args":[{json}]}}"#);
        path = format!(".args[0]{path}");
    }
    (format!(r#"{{"value":{json}}}"#), format!("$.value{path}"))
}

/// One call against a server that first sends `bad`, then a good reply:
/// the result, the correction the second request carried and how long
/// the call took. Panics when the call does not finish within [`GUARD`].
fn call_on_own_thread(bad: String, repair: bool) -> (Result<Expr, Error>, String, Duration) {
    call_with_reply(Reply::chat(&bad), repair)
}

fn call_with_reply(bad: Reply, repair: bool) -> (Result<Expr, Error>, String, Duration) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        runtime.block_on(async move {
            let good = r#"{"value":{"kind":"Lit","v":7}}"#;
            let server = FakeServer::start(vec![bad], Reply::chat(good)).await;
            let client = Client::new(
                Config::builder(Provider::Compatible)
                    .base_url(server.base_url())
                    .api_key("sk-hostile-test-1234")
                    .request_timeout(Duration::from_secs(5))
                    .max_transport_retries(0)
                    .repair(repair)
                    .build()
                    .expect("config"),
            )
            .expect("client");
            let started = Instant::now();
            let result = client
                .call_ai::<Expr, _>(&PARSE, Args::new(), async {
                    Err(Error::Config("the fixture must not run".into()))
                })
                .await;
            let took = started.elapsed();
            let requests = server.requests();
            let correction = requests
                .get(1)
                .and_then(|r| {
                    r.json()["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .and_then(|m| m["content"].as_str())
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            let _ = tx.send((result, correction, took));
        });
    });
    match rx.recv_timeout(GUARD) {
        Ok(outcome) => outcome,
        // The thread is left spinning; the test binary ends with the test.
        Err(_) => panic!(
            "the call did not finish within {GUARD:?} (repairs {}): describing the reply \
             does not scale with its size",
            if repair { "on" } else { "off" }
        ),
    }
}

#[test]
fn one_bad_leaf_deep_in_a_recursive_sum_type_is_named_promptly() {
    for repair in [true, false] {
        for depth in [12, 20, 40, 60] {
            let (bad, path) = deep_bad_leaf(depth);
            let (result, correction, took) = call_on_own_thread(bad.clone(), repair);
            eprintln!(
                "depth {depth} ({} bytes), repairs {repair}: {took:?}",
                bad.len()
            );
            assert_eq!(
                result.expect("the second reply is good"),
                Expr::Lit { v: 7 },
                "depth {depth}"
            );
            let want = format!(r#"{path}: expected an integer, found the string "seven""#);
            assert!(
                correction.contains(&want),
                "depth {depth}, repairs {repair}: the correction {correction:?} lacks {want:?}"
            );
        }
    }
}

/// Prose full of brackets that never close: looking for the one JSON value
/// in it must not scan the rest of the reply from every bracket (quadratic:
/// 64 KiB took a second unoptimized, 512 KiB over a minute).
#[test]
fn prose_with_unclosed_brackets_is_judged_promptly() {
    for unit in ["{ a ", "[ x ", "{ don't ", "{ 'a "] {
        let prose = unit.repeat(512 * 1024 / unit.len());
        for repair in [true, false] {
            let (result, correction, took) = call_on_own_thread(prose.clone(), repair);
            eprintln!(
                "{unit:?} x {} ({} bytes), repairs {repair}: {took:?}",
                prose.len() / unit.len(),
                prose.len()
            );
            assert_eq!(
                result.expect("the second reply is good"),
                Expr::Lit { v: 7 }
            );
            assert!(
                correction.contains("the reply is not valid JSON"),
                "{unit:?}: {correction:?}"
            );
        }
    }
}
