//! Per-call options (docs/runtime.md, "Options", "Budgets"): what one
//! call changes from its compiled settings, without a rebuild.

use std::time::Duration;

use serde_json::json;
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{CallOptions, Client, Config, Error, Provider, TransportErrorKind};

static CONTACT: OutputSchema = OutputSchema::new(
    "Contact",
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#,
    false,
);
static READ: AiFunction = AiFunction::new("read", "Read the contact.", &CONTACT)
    .with_model("gpt-4o-mini")
    .with_temperature(0.2)
    .with_max_iterations(3);

#[derive(Debug, serde::Deserialize, PartialEq)]
struct Contact {
    name: String,
}

fn chat(content: &str, prompt: u64, completion: u64) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}),
    )
}

fn client(transport: &MemoryTransport) -> Client {
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-options")
        .provider_api_key(Provider::Anthropic, "sk-ant-options")
        .max_transport_retries(0)
        .build()
        .unwrap();
    Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap()
}

async fn call(client: &Client, options: &CallOptions) -> Result<Contact, Error> {
    client
        .call_ai_with(
            &READ,
            options,
            Args::new().arg("text", "Anna").unwrap(),
            async { panic!("no fixture") },
        )
        .await
}

#[tokio::test]
async fn unset_options_keep_the_compiled_settings_and_set_ones_replace_them() {
    let transport = MemoryTransport::new()
        .reply(chat(r#"{"name":"Anna"}"#, 10, 2))
        .reply(chat(r#"{"name":"Anna"}"#, 10, 2));
    let client = client(&transport);
    call(&client, &CallOptions::new()).await.unwrap();
    let options = CallOptions::new()
        .model("gpt-4.1-nano")
        .temperature(0.7)
        .max_tokens(99);
    call(&client, &options).await.unwrap();
    let (compiled, changed) = (
        transport.requests()[0].json(),
        transport.requests()[1].json(),
    );
    assert_eq!(compiled["model"], "gpt-4o-mini");
    assert_eq!(compiled["temperature"], 0.2);
    assert_eq!(compiled["max_completion_tokens"], 4096);
    assert_eq!(changed["model"], "gpt-4.1-nano");
    assert_eq!(changed["temperature"], 0.7);
    assert_eq!(changed["max_completion_tokens"], 99);
}

/// A call's own instruction replaces the doc comment in the system
/// message (the rest of the function unchanged), and the next call without
/// one is back to the doc comment.
#[tokio::test]
async fn an_instruction_option_replaces_the_doc_comment_for_that_call() {
    let transport = MemoryTransport::new().otherwise(|_| chat(r#"{"name":"Anna"}"#, 10, 2));
    let client = client(&transport);
    let reworded = CallOptions::new().instruction("Give the person's first name only.");
    call(&client, &reworded).await.unwrap();
    call(&client, &CallOptions::new()).await.unwrap();
    let system = |i: usize| transport.requests()[i].json()["messages"][0]["content"].to_string();
    assert!(
        system(0).contains("Give the person's first name only."),
        "{}",
        system(0)
    );
    assert!(!system(0).contains("Read the contact."), "{}", system(0));
    assert!(system(1).contains("Read the contact."), "{}", system(1));
    assert_eq!(transport.requests()[0].json()["temperature"], 0.2);
}

#[tokio::test]
async fn a_provider_prefixed_model_goes_to_that_provider_without_a_rebuild() {
    let transport = MemoryTransport::new()
        .reply(chat(r#"{"name":"Anna"}"#, 10, 2))
        .reply(ScriptedReply::json(
            200,
            &json!({"type": "message", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"name": "Anna"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}),
        ));
    let client = client(&transport);
    call(&client, &CallOptions::DEFAULT).await.unwrap();
    let contact = call(
        &client,
        &CallOptions::new().model("anthropic:claude-haiku-4-5"),
    )
    .await
    .unwrap();
    assert_eq!(contact.name, "Anna");
    let requests = transport.requests();
    assert_eq!(requests[0].provider, Provider::OpenAi);
    assert_eq!(requests[1].provider, Provider::Anthropic);
    assert!(
        requests[1].url.as_str().ends_with("/v1/messages"),
        "{}",
        requests[1].url
    );
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
}

#[tokio::test]
async fn max_iterations_and_fallbacks_are_the_call_s() {
    // Every reply is wrong: the call's own attempt limit holds.
    let transport = MemoryTransport::new().otherwise(|_| chat(r#"{"nom":"x"}"#, 5, 1));
    let first = client(&transport);
    let error = call(&first, &CallOptions::new().max_iterations(1))
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::InvalidOutput { attempts: 1, .. }),
        "{error:?}"
    );
    assert_eq!(transport.request_count(), 1);

    // The compiled function has no fallback; the call's own is tried.
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::new(503, "overloaded"))
        .reply(ScriptedReply::json(
            200,
            &json!({"type": "message", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"name": "Bea"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}),
        ));
    let second = client(&transport);
    let contact = call(
        &second,
        &CallOptions::new().fallback(["anthropic:claude-haiku-4-5"]),
    )
    .await
    .unwrap();
    assert_eq!(contact.name, "Bea");
    assert_eq!(transport.requests()[1].provider, Provider::Anthropic);
}

#[tokio::test]
async fn a_token_budget_refuses_the_attempt_that_could_cross_it_before_sending() {
    // Attempt 1 does not fit and uses 120 tokens; attempt 2 would cross a
    // budget of 150.
    let transport = MemoryTransport::new()
        .reply(chat(r#"{"nom":"Anna"}"#, 100, 20))
        .reply(chat(r#"{"name":"Anna"}"#, 100, 20));
    let client = client(&transport);
    let error = call(&client, &CallOptions::new().token_budget(150))
        .await
        .unwrap_err();
    match error {
        Error::BudgetExceeded {
            budget,
            used,
            attempt,
            ..
        } => {
            assert_eq!((budget, used, attempt), (150, 120, 2));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        transport.request_count(),
        1,
        "the second attempt was not sent"
    );
    // A budget the first request alone would cross: nothing is sent.
    let transport = MemoryTransport::new().reply(chat(r#"{"name":"Anna"}"#, 1, 1));
    let error = call(&client_for(&transport), &CallOptions::new().token_budget(5))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::BudgetExceeded {
                used: 0,
                attempt: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(transport.request_count(), 0);
}

fn client_for(transport: &MemoryTransport) -> Client {
    client(transport)
}

#[tokio::test(start_paused = true)]
async fn the_request_timeout_is_the_call_s() {
    let transport = MemoryTransport::new()
        .otherwise(|_| chat(r#"{"name":"Anna"}"#, 1, 1).delay(Duration::from_secs(5)));
    let client = client(&transport);
    let error = call(
        &client,
        &CallOptions::new().request_timeout(Duration::from_secs(2)),
    )
    .await
    .unwrap_err();
    match error {
        Error::Transport {
            kind: TransportErrorKind::Timeout,
            message,
        } => assert!(message.contains("2s"), "{message}"),
        other => panic!("{other:?}"),
    }
    // Without the option, the client's 60 s: the 5 s answer arrives.
    assert_eq!(
        call(&client, &CallOptions::DEFAULT).await.unwrap().name,
        "Anna"
    );
}

/// What a call cost (docs/runtime.md, "Usage and cost"): an invalid
/// attempt, a 429 retried once and again, then the fallback's valid one.
#[tokio::test(start_paused = true)]
async fn the_report_gives_every_attempt_the_retries_the_totals_and_the_cost() {
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::json(
            200,
            &json!({"choices": [{"index": 0, "message": {"role": "assistant",
                "content": "{\"nom\":\"Anna\"}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                    "prompt_tokens_details": {"cached_tokens": 50}}}),
        ))
        .reply(ScriptedReply::new(429, "slow down"))
        .reply(ScriptedReply::new(429, "slow down"))
        .reply(ScriptedReply::json(
            200,
            &json!({"choices": [{"index": 0, "message": {"role": "assistant",
                "content": "{\"name\":\"Anna\"}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                    "completion_tokens_details": {"reasoning_tokens": 10}}}),
        ));
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-options")
        .provider_api_key(Provider::OpenRouter, "sk-or-options")
        .max_transport_retries(1)
        .price(
            "gpt-4o-mini",
            vox_runtime::Price::new(0.15, 0.60).with_cached_input(0.075),
        )
        .price("backup-model", vox_runtime::Price::new(1.0, 2.0))
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    let report = vox_runtime::ReportHandle::new();
    let options = CallOptions::new()
        .fallback(["openrouter:backup-model"])
        .report(&report);
    let contact = call(&client, &options).await.unwrap();
    assert_eq!(contact.name, "Anna");
    assert_eq!(transport.request_count(), 4);
    let report = report.get();
    assert_eq!(report.attempts.len(), 2, "{report:#?}");
    assert_eq!(report.transport_retries, 1);
    assert_eq!(report.fallbacks, 1);
    let (first, second) = (&report.attempts[0], &report.attempts[1]);
    assert_eq!(
        (first.provider, first.model.as_str()),
        (Provider::OpenAi, "gpt-4o-mini")
    );
    assert!(first.rejected.as_deref().unwrap().contains("nom"));
    assert_eq!(
        (second.provider, second.model.as_str()),
        (Provider::OpenRouter, "backup-model")
    );
    assert_eq!(second.rejected, None);
    let totals = report.totals();
    assert_eq!(
        (
            totals.input_tokens,
            totals.output_tokens,
            totals.cached_tokens,
            totals.reasoning_tokens
        ),
        (220, 50, 50, 10)
    );
    // 50 fresh and 50 cached input and 20 output at gpt-4o-mini's prices,
    // 120 input and 30 output at the backup's.
    let want = (50.0 * 0.15 + 50.0 * 0.075 + 20.0 * 0.60 + 120.0 * 1.0 + 30.0 * 2.0) / 1e6;
    let cost = report.cost_usd().unwrap();
    assert!((cost - want).abs() < 1e-6 / 1e3, "{cost} vs {want}");
}

/// Round-robin routing (docs/runtime.md, "Routing"): calls of a function
/// that names no model rotate over the configured targets; a target that
/// fails is skipped for the cool-off, its calls served by the others.
#[tokio::test]
async fn round_robin_splits_calls_evenly_and_routes_around_a_target_that_is_down() {
    static ANY: AiFunction = AiFunction::new("read", "Read the contact.", &CONTACT);
    let run = |down: Option<Provider>| async move {
        let transport = MemoryTransport::new().otherwise(move |request| {
            if Some(request.provider) == down {
                ScriptedReply::new(503, "down")
            } else {
                chat(r#"{"name":"Anna"}"#, 1, 1)
            }
        });
        let config = Config::builder(Provider::OpenAi)
            .api_key("sk-rr")
            .provider_api_key(Provider::OpenRouter, "sk-or-rr")
            .provider_api_key(Provider::Compatible, "sk-c-rr")
            .provider_base_url(Provider::Compatible, "http://127.0.0.1:9/v1")
            .max_transport_retries(0)
            .round_robin([
                "openai:gpt-4o-mini",
                "openrouter:m-two",
                "compatible:m-three",
            ])
            .build()
            .unwrap();
        let client = Client::builder(config)
            .transport(transport.clone())
            .build()
            .unwrap();
        for _ in 0..300 {
            let _: Contact = client
                .call_ai(&ANY, Args::new().arg("text", "x").unwrap(), async {
                    panic!("no fixture")
                })
                .await
                .unwrap();
        }
        let count = |p: Provider| {
            transport
                .requests()
                .iter()
                .filter(|r| r.provider == p)
                .count()
        };
        (
            count(Provider::OpenAi),
            count(Provider::OpenRouter),
            count(Provider::Compatible),
        )
    };
    assert_eq!(run(None).await, (100, 100, 100));
    // OpenRouter answers 503: asked once, then skipped for the cool-off;
    // every call still succeeds, on the other two.
    let (a, b, c) = run(Some(Provider::OpenRouter)).await;
    assert_eq!(b, 1, "{a} {b} {c}");
    assert_eq!(a + c, 300);
    assert!(a.abs_diff(c) <= 2, "{a} {c}");
}

/// A client's budget holds over all its calls: once the calls so far and
/// the next request would cross it, nothing more is sent.
#[tokio::test]
async fn a_client_budget_holds_over_every_call() {
    let transport = MemoryTransport::new().otherwise(|_| chat(r#"{"name":"Anna"}"#, 40, 10));
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-budget")
        .token_budget(170)
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap();
    // Each call uses 50 tokens and its request is estimated at over 70:
    // two fit (100 used), the third would cross 170, and so would every
    // later one.
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        outcomes.push(call(&client, &CallOptions::DEFAULT).await.is_ok());
    }
    assert_eq!(outcomes, [true, true, false, false], "{outcomes:?}");
    assert_eq!(transport.request_count(), 2);
}
