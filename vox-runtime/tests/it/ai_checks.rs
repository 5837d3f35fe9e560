//! Checks of the value (`@ai(check = f)`, `Client::call_ai_checked`)
//! against a scripted in-memory transport and under the `fixture` provider
//! (docs/runtime.md, "Checks").

use crate::sloppy;
use crate::support;

use sloppy::{client, correction, expected, Invoice, Status, EXTRACT, GOOD};
use support::{MemoryServer, Reply};
use vox_runtime::__private::Args;
use vox_runtime::{Client, Config, Error, Provider};

/// `fn invoice_ok(inv: Invoice) to list[str]`: the lines must be there
/// and an open invoice must be overdue by at most a year.
fn invoice_ok(inv: &Invoice) -> Vec<String> {
    let mut problems = Vec::new();
    if inv.lines.is_empty() {
        problems.push("an invoice has at least one line".to_owned());
    }
    if let Status::Open { days_overdue } = inv.status {
        if !(0..=365).contains(&days_overdue) {
            problems.push(format!(
                "days_overdue must be between 0 and 365, not {days_overdue}"
            ));
        }
    }
    problems
}

const NO_LINES_LATE: &str =
    r#"{"vendor":"ACME","lines":[],"status":{"kind":"Open","days_overdue":4000},"due_date":null}"#;

async fn no_fixture() -> Result<Invoice, Error> {
    Err(Error::Config("the fixture must not run".into()))
}

#[tokio::test]
async fn a_rejected_value_is_corrected_with_the_checks_problems() {
    let server = MemoryServer::start(vec![Reply::chat(NO_LINES_LATE)], Reply::chat(GOOD)).await;
    let invoice = client(&server, true)
        .call_ai_checked(&EXTRACT, Args::new(), no_fixture(), invoice_ok)
        .await
        .unwrap();
    assert_eq!(invoice, expected());
    assert_eq!(server.request_count(), 2);
    let c = correction(&server).unwrap();
    assert!(
        c.contains(
            "the reply fits the schema, but the function's check rejected it:\n\
             - an invoice has at least one line\n\
             - days_overdue must be between 0 and 365, not 4000"
        ),
        "{c}"
    );
}

#[tokio::test]
async fn a_value_that_never_passes_is_invalid_output() {
    let server = MemoryServer::start(vec![], Reply::chat(NO_LINES_LATE)).await;
    let err = client(&server, true)
        .call_ai_checked(&EXTRACT, Args::new(), no_fixture(), invoice_ok)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidOutput { attempts: 2, last_error, .. }
            if last_error.ends_with("- days_overdue must be between 0 and 365, not 4000")),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 2);
    // Without the check the same reply is accepted at once.
    let server = MemoryServer::start(vec![], Reply::chat(NO_LINES_LATE)).await;
    let unchecked: Invoice = client(&server, true)
        .call_ai(&EXTRACT, Args::new(), no_fixture())
        .await
        .unwrap();
    assert!(unchecked.lines.is_empty());
}

#[tokio::test]
async fn a_repaired_value_is_checked_too() {
    // Repaired (`"4000"` → 4000), then rejected by the check.
    let sloppy = NO_LINES_LATE.replace("4000", "\"4000\"");
    let server = MemoryServer::start(vec![Reply::chat(&sloppy)], Reply::chat(GOOD)).await;
    let invoice = client(&server, true)
        .call_ai_checked(&EXTRACT, Args::new(), no_fixture(), invoice_ok)
        .await
        .unwrap();
    assert_eq!(invoice, expected());
    assert_eq!(server.request_count(), 2);
    assert!(correction(&server).unwrap().contains("not 4000"));
}

#[tokio::test]
async fn the_fixture_bodys_value_is_checked() {
    let client = Client::new(Config::builder(Provider::Fixture).build().unwrap()).unwrap();
    let good = client
        .call_ai_checked(&EXTRACT, Args::new(), async { Ok(expected()) }, invoice_ok)
        .await
        .unwrap();
    assert_eq!(good, expected());
    let bad: Invoice = serde_json::from_str(NO_LINES_LATE).unwrap();
    let err = client
        .call_ai_checked(&EXTRACT, Args::new(), async { Ok(bad) }, invoice_ok)
        .await
        .unwrap_err();
    match &err {
        Error::InvalidOutput {
            function,
            attempts: 1,
            last_error,
            last_reply,
        } => {
            assert_eq!(function, "extract_invoice");
            assert!(
                last_error.contains("- an invoice has at least one line"),
                "{last_error}"
            );
            assert_eq!(last_reply, NO_LINES_LATE);
        }
        other => panic!("{other:?}"),
    }
    // A fixture body's own error passes through unchecked.
    let err = client
        .call_ai_checked(&EXTRACT, Args::new(), no_fixture(), invoice_ok)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
}
