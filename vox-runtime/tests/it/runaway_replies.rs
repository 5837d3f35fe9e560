//! A reply that ran to the length limit or repeated the previous one is
//! not asked for again the same way (docs/runtime.md, "What the model
//! sees"): the correction names the run and the field it ran away in, and
//! where the function sets a temperature below 1 the next attempt is asked
//! 0.3 higher, once per call.

use serde_json::{json, Value};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{Client, Config, Error, Provider};

static CONTACT: OutputSchema = OutputSchema::new(
    "Contact",
    r#"{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string"}},"required":["name","email"],"additionalProperties":false}"#,
    false,
);
static AT_ZERO: AiFunction = AiFunction::new("contact", "Read the contact.", &CONTACT)
    .with_temperature(0.0)
    .with_max_iterations(3);
static AT_ZERO_4: AiFunction = AiFunction::new("contact", "Read the contact.", &CONTACT)
    .with_temperature(0.0)
    .with_max_iterations(4);
static UNSET: AiFunction =
    AiFunction::new("contact", "Read the contact.", &CONTACT).with_max_iterations(3);

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Contact {
    name: String,
    email: String,
}

fn reply(content: &str, finish: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": finish}]}),
    )
}

const GOOD: &str = r#"{"name":"Anna Schmidt","email":"anna@example.com"}"#;

fn runaway() -> String {
    format!(
        r#"{{"name":"Anna Schmidt","email":"https://www.facebook.com/AnnaSchmidt{}"#,
        "Cancel".repeat(40)
    )
}

async fn call(
    function: &'static AiFunction,
    transport: &MemoryTransport,
) -> Result<Contact, Error> {
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-runaway")
        .max_transport_retries(0)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    client
        .call_ai(function, Args::new().arg("text", "Anna").unwrap(), async {
            panic!("no fixture")
        })
        .await
}

fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_cut_off_runaway_is_named_and_asked_again_warmer() {
    let transport = MemoryTransport::new()
        .reply(reply(&runaway(), "length"))
        .reply(reply(GOOD, "stop"));
    let contact = call(&AT_ZERO, &transport).await.unwrap();
    assert_eq!(contact.email, "anna@example.com");
    let requests = transport.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].json()["temperature"], 0.0);
    let second = requests[1].json();
    assert_eq!(second["temperature"], 0.3, "{second}");
    let correction = last_user_text(&second);
    assert!(
        correction.contains("while repeating `Cancel` (in `email`)"),
        "{correction}"
    );
}

#[tokio::test]
async fn a_repeated_reply_is_asked_once_more_warmer_then_the_call_stops() {
    // Not JSON at all, three times word for word.
    let bad = "I cannot find a contact.";
    let transport = MemoryTransport::new()
        .reply(reply(bad, "stop"))
        .reply(reply(bad, "stop"))
        .reply(reply(bad, "stop"));
    let error = call(&AT_ZERO_4, &transport).await.unwrap_err();
    let requests = transport.requests();
    // Before: the second identical reply ended the call (2 requests); now
    // the third request is asked at a higher temperature, and the third
    // identical reply ends it with a fourth attempt left.
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].json()["temperature"], 0.0);
    assert_eq!(requests[2].json()["temperature"], 0.3);
    match error {
        Error::InvalidOutput {
            attempts,
            last_error,
            ..
        } => {
            assert_eq!(attempts, 3);
            assert!(
                last_error.contains("repeated its previous reply"),
                "{last_error}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn without_a_temperature_only_the_correction_changes() {
    let transport = MemoryTransport::new()
        .reply(reply(&runaway(), "length"))
        .reply(reply(GOOD, "stop"));
    call(&UNSET, &transport).await.unwrap();
    let second = transport.requests()[1].json();
    assert!(second.get("temperature").is_none(), "{second}");
    assert!(last_user_text(&second).contains("while repeating `Cancel`"));
}
