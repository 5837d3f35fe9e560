//! Categories known only at run time (docs/runtime.md, "Categories at run
//! time"): the schema a call sends lists exactly the values its options
//! give, a reply outside them is corrected with them listed, and a call
//! without them, or with too many, fails before anything is sent.

use serde_json::json;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{CallOptions, Client, Config, Error, Provider};

/// What vox-codegen generates for `type Category = dynamic` inside
/// `type Ticket { queue: Category, also: list[Category] }`.
static TICKET: OutputSchema = OutputSchema::new(
    "Ticket",
    r#"{"type":"object","properties":{"queue":{"type":"string","x-vox-categories":"Category"},"also":{"type":"array","items":{"type":"string","x-vox-categories":"Category"}}},"required":["queue","also"],"additionalProperties":false}"#,
    false,
);
static ROUTE: AiFunction =
    AiFunction::new("route", "Route the ticket.", &TICKET).with_max_iterations(2);

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Ticket {
    queue: String,
    also: Vec<String>,
}

fn chat(content: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

fn client(transport: &MemoryTransport) -> Client {
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-categories")
        .max_transport_retries(0)
        .build()
        .unwrap();
    Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap()
}

async fn route(client: &Client, options: &CallOptions) -> Result<Ticket, Error> {
    client
        .call_ai_with(
            &ROUTE,
            options,
            Args::new().arg("text", "My parcel never came").unwrap(),
            async { panic!("no fixture") },
        )
        .await
}

#[tokio::test]
async fn the_schema_carries_exactly_the_values_and_a_reply_outside_them_is_corrected() {
    let transport = MemoryTransport::new()
        .reply(chat(r#"{"queue":"delivery","also":["billing"]}"#))
        .reply(chat(r#"{"queue":"shipping","also":["billing"]}"#));
    let client = client(&transport);
    let options = CallOptions::new().categories("Category", ["billing", "shipping", "returns"]);
    let ticket = route(&client, &options).await.unwrap();
    assert_eq!(ticket.queue, "shipping");
    assert_eq!(ticket.also, ["billing"]);

    let requests = transport.requests();
    assert_eq!(requests.len(), 2, "one correction");
    let first = requests[0].json();
    let schema = &first["response_format"]["json_schema"]["schema"];
    let values = json!(["billing", "shipping", "returns"]);
    assert_eq!(schema["properties"]["queue"]["enum"], values);
    assert_eq!(schema["properties"]["also"]["items"]["enum"], values);
    assert!(
        !String::from_utf8_lossy(&requests[0].body).contains("x-vox-categories"),
        "the mark never leaves the process"
    );
    let correction = String::from_utf8_lossy(&requests[1].body);
    assert!(
        correction.contains(
            r#"expected one of \"billing\", \"shipping\", \"returns\", found \"delivery\""#
        ),
        "{correction}"
    );
}

#[tokio::test]
async fn each_call_sends_its_own_values() {
    let transport = MemoryTransport::new()
        .reply(chat(r#"{"queue":"a","also":[]}"#))
        .reply(chat(r#"{"queue":"z","also":[]}"#));
    let client = client(&transport);
    route(
        &client,
        &CallOptions::new().categories("Category", ["a", "b"]),
    )
    .await
    .unwrap();
    route(
        &client,
        &CallOptions::new().categories("Category", ["y", "z"]),
    )
    .await
    .unwrap();
    let requests = transport.requests();
    let enum_of = |i: usize| {
        requests[i].json()["response_format"]["json_schema"]["schema"]["properties"]["queue"]
            ["enum"]
            .clone()
    };
    assert_eq!(enum_of(0), json!(["a", "b"]));
    assert_eq!(enum_of(1), json!(["y", "z"]));
}

#[tokio::test]
async fn a_call_without_values_or_past_the_limits_fails_before_sending() {
    let transport = MemoryTransport::new();
    let client = client(&transport);
    let err = route(&client, &CallOptions::new()).await.unwrap_err();
    assert!(
        matches!(&err, Error::Categories { function, type_name, .. }
            if function == "route" && type_name == "Category"),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(".categories(\"Category\""),
        "{err}"
    );

    let too_many: Vec<String> = (0..600).map(|i| format!("queue-{i}")).collect();
    let err = route(
        &client,
        &CallOptions::new().categories("Category", too_many),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("enum values in all"), "{err}");
    assert!(transport.requests().is_empty(), "nothing was sent");
}

/// The cassette key includes the values: a reply recorded for one set
/// replays for the same set and misses for another.
#[tokio::test]
async fn the_cassette_key_includes_the_value_set() {
    use vox_runtime::CassetteMode;
    let dir = std::env::temp_dir().join(format!(
        "vox-categories-cassette-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let client_in = |mode: CassetteMode, transport: &MemoryTransport| {
        let config = Config::builder(Provider::OpenAi)
            .api_key("sk-categories")
            .max_transport_retries(0)
            .cassette(&dir)
            .cassette_mode(mode)
            .build()
            .unwrap();
        Client::builder(config)
            .transport(transport.clone())
            .build()
            .unwrap()
    };
    let set_a = CallOptions::new().categories("Category", ["billing", "shipping"]);
    let set_b = CallOptions::new().categories("Category", ["billing", "returns"]);
    let recording = MemoryTransport::new().reply(chat(r#"{"queue":"billing","also":[]}"#));
    let recorded = route(&client_in(CassetteMode::Record, &recording), &set_a)
        .await
        .unwrap();
    assert_eq!(recorded.queue, "billing");
    assert_eq!(recording.request_count(), 1);

    let silent = MemoryTransport::new();
    let replayer = client_in(CassetteMode::Replay, &silent);
    assert_eq!(route(&replayer, &set_a).await.unwrap(), recorded);
    let miss = route(&replayer, &set_b).await.unwrap_err();
    assert!(matches!(miss, Error::CassetteMiss { .. }), "{miss}");
    assert_eq!(silent.request_count(), 0);
    std::fs::remove_dir_all(&dir).ok();
}
