//! Streamed calls (docs/runtime.md, "Streaming"): each wire's streamed
//! form read into partial values and the same final value a plain call
//! gives, whatever the fragmenting of the content and the chunking of the
//! body; retries; hostile streams; the fixture provider.

use std::time::Duration;

use serde_json::{json, Value};
use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::transport::{MemoryTransport, ScriptedReply, TransportError, TransportErrorKind};
use vox_runtime::{AiStream, Client, Config, Error, Provider, StreamEvent};

/// `Out { title: str, priority: Priority, lines: list[Line], shape: Shape,
/// note: Option[str], tags: list[str], ok: bool }` as vox-codegen writes it.
pub(crate) const SCHEMA: &str = r#"{"type":"object","properties":{"title":{"type":"string"},"priority":{"type":"string","enum":["Low","High"]},"lines":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"qty":{"type":"integer"}},"required":["name","qty"],"additionalProperties":false}},"shape":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Circle"]},"r":{"type":"number"}},"required":["kind","r"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Square"]},"side":{"type":"number"}},"required":["kind","side"],"additionalProperties":false}]},"note":{"anyOf":[{"type":"string"},{"type":"null"}]},"tags":{"type":"array","items":{"type":"string"}},"ok":{"type":"boolean"}},"required":["title","priority","lines","shape","note","tags","ok"],"additionalProperties":false}"#;
static OUT: OutputSchema = OutputSchema::new("Out", SCHEMA, false);
static READ: AiFunction = AiFunction::new("read", "Read it.", &OUT).with_max_iterations(2);

/// The reply: escapes, multi-byte UTF-8, nested lists, a tagged case, `null`.
pub(crate) const REPLY: &str = r#"{"title":"Caf\u00e9 \"Zoë\" — 日本 😀\nline two","priority":"High","lines":[{"name":"tea \\ pot","qty":3},{"name":"cake","qty":12}],"shape":{"kind":"Circle","r":1.5},"note":null,"tags":["a","b c","日本"],"ok":true}"#;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Wire {
    Chat,
    Anthropic,
    Gemini,
    Ollama,
}

pub(crate) const WIRES: [Wire; 4] = [Wire::Chat, Wire::Anthropic, Wire::Gemini, Wire::Ollama];

/// `text` cut into pieces of `n` characters.
pub(crate) fn fragments(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// The streamed body `wire` sends for `content` in `pieces`, ending as
/// `finish` says (`None`: the server's normal end).
pub(crate) fn streamed_body(wire: Wire, pieces: &[String], finish: Option<&str>) -> String {
    let mut body = String::new();
    match wire {
        Wire::Chat => {
            body.push_str(": keep-alive\r\n\r\n");
            for p in pieces {
                let chunk = json!({"id": "c1", "object": "chat.completion.chunk",
                    "model": "gpt-stream-1",
                    "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]});
                body.push_str(&format!("data: {chunk}\r\n\r\n"));
            }
            let chunk = json!({"choices": [{"index": 0, "delta": {},
                "finish_reason": finish.unwrap_or("stop")}]});
            body.push_str(&format!("data: {chunk}\n\n"));
            let usage =
                json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 22}});
            body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
        }
        Wire::Anthropic => {
            let start = json!({"type": "message_start", "message": {"id": "m1", "type": "message",
                "role": "assistant", "model": "claude-stream-1", "content": [],
                "usage": {"input_tokens": 11, "output_tokens": 1}}});
            body.push_str(&format!("event: message_start\ndata: {start}\n\n"));
            let block = json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "vox_read", "input": {}}});
            body.push_str(&format!("event: content_block_start\ndata: {block}\n\n"));
            body.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
            for p in pieces {
                let delta = json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": p}});
                body.push_str(&format!("event: content_block_delta\ndata: {delta}\n\n"));
            }
            body.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
            let delta = json!({"type": "message_delta", "delta": {"stop_reason":
                finish.unwrap_or("tool_use"), "stop_sequence": null}, "usage": {"output_tokens": 22}});
            body.push_str(&format!("event: message_delta\ndata: {delta}\n\n"));
            body.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        }
        Wire::Gemini => {
            for p in pieces {
                let chunk = json!({"candidates": [{"content": {"parts": [{"text": p}], "role": "model"},
                    "index": 0}]});
                body.push_str(&format!("data: {chunk}\r\n\r\n"));
            }
            let last = json!({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"},
                "finishReason": finish.unwrap_or("STOP"), "index": 0}],
                "modelVersion": "gemini-stream-1",
                "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 22}});
            body.push_str(&format!("data: {last}\r\n\r\n"));
        }
        Wire::Ollama => {
            for p in pieces {
                let line = json!({"model": "m", "message": {"role": "assistant", "content": p},
                    "done": false});
                body.push_str(&format!("{line}\n"));
            }
            let last = json!({"model": "m", "message": {"role": "assistant", "content": ""},
                "done": true, "done_reason": finish.unwrap_or("stop"),
                "prompt_eval_count": 11, "eval_count": 22});
            body.push_str(&format!("{last}\n"));
        }
    }
    body
}

/// The first `n` characters of the reply.
fn prefix(n: usize) -> String {
    REPLY.chars().take(n).collect()
}

/// `body` as chunks of `n` bytes (splitting characters and lines).
fn byte_chunks(body: &str, n: usize) -> Vec<Vec<u8>> {
    body.as_bytes().chunks(n).map(<[u8]>::to_vec).collect()
}

fn client(wire: Wire, transport: &MemoryTransport) -> Client {
    let provider = match wire {
        Wire::Chat => Provider::OpenAi,
        Wire::Anthropic => Provider::Anthropic,
        Wire::Gemini => Provider::Gemini,
        Wire::Ollama => Provider::Ollama,
    };
    let config = Config::builder(provider)
        .api_key("sk-stream-test")
        .max_transport_retries(0)
        .build()
        .unwrap();
    Client::builder(config)
        .transport(transport.clone())
        .build()
        .unwrap()
}

fn args() -> Args {
    Args::new().arg("text", "the order").unwrap()
}

fn stream(client: &Client) -> AiStream<Value, Out> {
    client.call_ai_stream(&READ, args(), async {
        panic!("the fixture must not run under a network provider")
    })
}

/// The return type as generated code declares it.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Out {
    title: String,
    priority: Priority,
    lines: Vec<Line>,
    shape: Shape,
    note: Option<String>,
    tags: Vec<String>,
    ok: bool,
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Priority {
    Low,
    High,
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Line {
    name: String,
    qty: i64,
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub(crate) enum Shape {
    Circle { r: f64 },
    Square { side: f64 },
}

/// Every event of `stream`, and its outcome.
async fn drain<T>(
    mut stream: AiStream<Value, T>,
) -> (Vec<(u32, Value)>, Vec<(u32, String)>, Result<T, Error>) {
    let mut partials = Vec::new();
    let mut retries = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            StreamEvent::Partial { attempt, value } => partials.push((attempt, value)),
            StreamEvent::Retry { attempt, reason } => retries.push((attempt, reason)),
            StreamEvent::Done(result) => {
                assert!(stream.next().await.is_none(), "nothing after Done");
                return (partials, retries, result);
            }
        }
    }
    panic!("the stream ended without Done");
}

/// Whether `partial` is a state of `full`: keys a subset, strings
/// prefixes, finished list elements equal, atomic values equal.
pub(crate) fn is_state_of(partial: &Value, full: &Value) -> bool {
    match (partial, full) {
        (Value::Object(p), Value::Object(f)) => p
            .iter()
            .all(|(k, v)| f.get(k).is_some_and(|fv| is_state_of(v, fv))),
        (Value::String(p), Value::String(f)) => f.starts_with(p.as_str()),
        (Value::Array(p), Value::Array(f)) => {
            p.len() <= f.len()
                && p.iter().enumerate().all(|(i, v)| {
                    if i + 1 < p.len() {
                        v == &f[i]
                    } else {
                        is_state_of(v, &f[i])
                    }
                })
        }
        (p, f) => p == f,
    }
}

#[tokio::test]
async fn every_wire_streams_partials_and_the_plain_call_s_value() {
    let want: Value = serde_json::from_str(REPLY).unwrap();
    for wire in WIRES {
        let mut finest: Option<Vec<Value>> = None;
        for n in [1, 3, 7, 16] {
            let body = streamed_body(wire, &fragments(REPLY, n), None);
            let transport =
                MemoryTransport::new().reply(ScriptedReply::chunks(200, byte_chunks(&body, 5)));
            let client = client(wire, &transport);
            let (partials, retries, result) = drain(stream(&client)).await;
            let value = result.unwrap_or_else(|e| panic!("{wire:?} in {n}s: {e}"));
            assert_eq!(
                serde_json::to_value(value).unwrap(),
                want,
                "{wire:?} in {n}s"
            );
            assert!(retries.is_empty(), "{wire:?}: {retries:?}");
            assert!(partials.len() >= 4, "{wire:?} in {n}s: {partials:?}");
            let values: Vec<Value> = partials.iter().map(|(_, v)| v.clone()).collect();
            for (i, v) in values.iter().enumerate() {
                assert!(is_state_of(v, &want), "{wire:?} in {n}s: {v} of {want}");
                if let Some(next) = values.get(i + 1) {
                    assert!(is_state_of(v, next), "{wire:?} in {n}s: {v} then {next}");
                    assert_ne!(v, next, "a partial is sent only when it changed");
                }
            }
            assert!(partials.iter().all(|(a, _)| *a == 1));
            match &finest {
                None => finest = Some(values),
                Some(fine) => {
                    // A coarser chunking shows a subsequence of the finer.
                    let mut it = fine.iter();
                    for v in &values {
                        assert!(it.any(|f| f == v), "{wire:?} in {n}s: {v} not among the 1s");
                    }
                }
            }
            let request = &transport.requests()[0];
            assert!(request.stream, "{wire:?}: the request asks for a stream");
            let body = request.json();
            match wire {
                Wire::Chat => {
                    assert_eq!(body["stream"], true);
                    assert_eq!(body["stream_options"]["include_usage"], true);
                }
                Wire::Anthropic | Wire::Ollama => assert_eq!(body["stream"], true, "{body}"),
                Wire::Gemini => {
                    assert!(
                        request
                            .url
                            .as_str()
                            .ends_with(":streamGenerateContent?alt=sse"),
                        "{}",
                        request.url
                    );
                }
            }
        }
    }
}

/// The same content, as a plain (unstreamed) call gets it.
fn whole_reply(content: &str) -> ScriptedReply {
    ScriptedReply::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"}]}),
    )
}

#[tokio::test]
async fn a_rejected_attempt_is_a_retry_then_the_next_attempt_streams_afresh() {
    // The first reply breaks the type (a number as the title).
    let bad = r#"{"title":7,"priority":"Low","lines":[],"shape":{"kind":"Square","side":2},"note":"n","tags":[],"ok":false}"#;
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::chunks(
            200,
            byte_chunks(&streamed_body(Wire::Chat, &fragments(bad, 4), None), 9),
        ))
        .reply(ScriptedReply::chunks(
            200,
            byte_chunks(&streamed_body(Wire::Chat, &fragments(REPLY, 4), None), 9),
        ));
    let client = client(Wire::Chat, &transport);
    let checks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&checks);
    let stream: AiStream<Value, Out> = client.call_ai_stream_checked(
        &READ,
        args(),
        async { panic!("no fixture") },
        move |_: &Out| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            vec![]
        },
    );
    let (partials, retries, result) = drain(stream).await;
    assert_eq!(result.unwrap(), serde_json::from_str::<Out>(REPLY).unwrap());
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0].0, 1);
    assert!(retries[0].1.contains("title"), "{}", retries[0].1);
    assert!(partials.iter().any(|(a, _)| *a == 2));
    // Attempt 1's partials all come before the retry, attempt 2's after.
    let first_two = partials.iter().position(|(a, _)| *a == 2).unwrap();
    assert!(partials[first_two..].iter().all(|(a, _)| *a == 2));
    // The check ran on the one reply that fit, never on a partial.
    assert_eq!(checks.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(transport.request_count(), 2);
}

#[tokio::test]
async fn cut_offs_refusals_and_error_events_are_rejected_attempts_or_errors() {
    // Cut off by the length limit: a rejected attempt, then a whole reply.
    for wire in WIRES {
        let finish = match wire {
            Wire::Chat => "length",
            Wire::Anthropic => "max_tokens",
            Wire::Gemini => "MAX_TOKENS",
            Wire::Ollama => "length",
        };
        let half = prefix(60);
        let transport = MemoryTransport::new()
            .reply(ScriptedReply::chunks(
                200,
                byte_chunks(&streamed_body(wire, &fragments(&half, 5), Some(finish)), 7),
            ))
            .reply(ScriptedReply::chunks(
                200,
                byte_chunks(&streamed_body(wire, &fragments(REPLY, 50), None), 64),
            ));
        let (_, retries, result) = drain(stream(&client(wire, &transport))).await;
        assert!(result.is_ok(), "{wire:?}: {result:?}");
        assert_eq!(retries.len(), 1, "{wire:?}");
        assert!(
            retries[0].1.contains("truncated"),
            "{wire:?}: {}",
            retries[0].1
        );
    }
    // A stream that just stops (no end marker): rejected as cut off.
    let mut cut = String::new();
    for p in fragments(&prefix(40), 5) {
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": p}}]});
        cut.push_str(&format!("data: {chunk}\n\n"));
    }
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::chunks(200, byte_chunks(&cut, 3)))
        .reply(whole_reply(REPLY));
    let (_, retries, result) = drain(stream(&client(Wire::Chat, &transport))).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(retries[0].1.contains("stream ended"), "{retries:?}");
    // An `error` event mid-stream: the request's failure, typed.
    let mut body = streamed_body(Wire::Anthropic, &fragments(REPLY, 9), None);
    let at = body.find("event: content_block_stop").unwrap();
    body.truncate(at);
    body.push_str("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    let transport =
        MemoryTransport::new().reply(ScriptedReply::chunks(200, byte_chunks(&body, 11)));
    let (partials, _, result) = drain(stream(&client(Wire::Anthropic, &transport))).await;
    assert!(!partials.is_empty());
    match result {
        Err(Error::Http {
            status: 529,
            body_excerpt,
        }) => {
            assert!(body_excerpt.contains("Overloaded"), "{body_excerpt}")
        }
        other => panic!("{other:?}"),
    }
    // A refusal: a rejected attempt quoting it.
    let refusal = json!({"choices": [{"index": 0, "delta": {"refusal": "I can't help"}, "finish_reason": "stop"}]});
    let transport = MemoryTransport::new()
        .reply(ScriptedReply::chunks(
            200,
            [format!("data: {refusal}\n\ndata: [DONE]\n\n")],
        ))
        .reply(whole_reply(REPLY));
    let (_, retries, result) = drain(stream(&client(Wire::Chat, &transport))).await;
    assert!(result.is_ok());
    assert!(retries[0].1.contains("refused"), "{retries:?}");
    // Invalid JSON in an event: a malformed response.
    let transport =
        MemoryTransport::new().reply(ScriptedReply::chunks(200, ["data: {\"choices\": [\n\n"]));
    let (_, _, result) = drain(stream(&client(Wire::Chat, &transport))).await;
    assert!(
        matches!(result, Err(Error::MalformedResponse(_))),
        "{result:?}"
    );
    // The connection drops mid-stream: a transport error, not a hang.
    let body = streamed_body(Wire::Chat, &fragments(REPLY, 9), None);
    let transport = MemoryTransport::new().reply(
        ScriptedReply::chunks(200, byte_chunks(&body[..body.len() / 2], 13)).then_fail(
            TransportError::new(TransportErrorKind::Other, "connection reset by peer"),
        ),
    );
    let (_, _, result) = drain(stream(&client(Wire::Chat, &transport))).await;
    match result {
        Err(Error::Transport { message, .. }) => assert!(message.contains("reset"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn stalled_endless_and_huge_streams_end_in_typed_errors() {
    let config = |builder: vox_runtime::ConfigBuilder| {
        builder
            .api_key("sk-stream-test")
            .max_transport_retries(0)
            .stream_idle_timeout(Duration::from_secs(3))
            .stream_timeout(Duration::from_secs(20))
            .stream_first_byte_timeout(Duration::from_secs(5))
            .max_body_bytes(4096)
            .build()
            .unwrap()
    };
    let run = |reply: ScriptedReply| async move {
        let transport = MemoryTransport::new().reply(reply);
        let client = Client::builder(config(Config::builder(Provider::OpenAi)))
            .transport(transport)
            .build()
            .unwrap();
        drain(stream(&client)).await.2
    };
    let body = streamed_body(Wire::Chat, &fragments(REPLY, 9), None);
    let half = byte_chunks(&body[..body.len() / 2], 20);
    // Stalls after a few chunks: the idle timeout.
    let stalled = run(ScriptedReply::chunks(200, half.clone()).then_hang()).await;
    assert!(
        matches!(&stalled, Err(Error::Transport { kind: TransportErrorKind::Timeout, message }) if message.contains("idle")),
        "{stalled:?}"
    );
    // A byte a second, forever: within the idle timeout, not the whole.
    let drip: Vec<&[u8]> = std::iter::repeat_n(b": .\n".as_slice(), 100).collect();
    let endless = run(ScriptedReply::chunks(200, drip).chunk_delay(Duration::from_secs(1))).await;
    assert!(
        matches!(&endless, Err(Error::Transport { kind: TransportErrorKind::Timeout, message }) if message.contains("did not end")),
        "{endless:?}"
    );
    // Nothing at all: the first-byte timeout.
    let silent = run(ScriptedReply::chunks(200, Vec::<Vec<u8>>::new()).then_hang()).await;
    assert!(
        matches!(&silent, Err(Error::Transport { kind: TransportErrorKind::Timeout, message }) if message.contains("first-byte")),
        "{silent:?}"
    );
    // More than the body limit: too large, as a whole body would be.
    let huge: Vec<Vec<u8>> = (0..100)
        .map(|_| b": padding padding padding\n".repeat(8))
        .collect();
    let huge = run(ScriptedReply::chunks(200, huge)).await;
    assert!(
        matches!(huge, Err(Error::ResponseTooLarge { limit_bytes: 4096 })),
        "{huge:?}"
    );
}

#[tokio::test]
async fn the_fixture_provider_streams_the_fixture_value_in_pieces() {
    let client = Client::new(Config::builder(Provider::Fixture).build().unwrap()).unwrap();
    let want: Value = serde_json::from_str(REPLY).unwrap();
    let fixture = want.clone();
    let stream: AiStream<Value, Value> =
        client.call_ai_stream(&READ, args(), async move { Ok(fixture) });
    let (partials, retries, result) = drain(stream).await;
    assert_eq!(result.unwrap(), want);
    assert!(retries.is_empty());
    assert!(partials.len() >= 4, "{partials:?}");
    for (_, p) in &partials {
        assert!(is_state_of(p, &want), "{p}");
    }
}

#[tokio::test]
async fn a_streamed_reply_records_the_server_s_usage_and_replays_to_both_calls() {
    let dir = std::env::temp_dir().join(format!(
        "vox-stream-cassette-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let cassette_client = |transport: &MemoryTransport, mode: vox_runtime::CassetteMode| {
        let config = Config::builder(Provider::OpenAi)
            .api_key("sk-stream-test")
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
    let body = streamed_body(Wire::Chat, &fragments(REPLY, 7), None);
    let transport = MemoryTransport::new().reply(ScriptedReply::chunks(200, byte_chunks(&body, 5)));
    let recording = cassette_client(&transport, vox_runtime::CassetteMode::Record);
    let (_, _, recorded) = drain(stream(&recording)).await;
    let recorded = recorded.unwrap();
    // The usage is the stream's own (`include_usage`'s last chunk).
    let text = std::fs::read_to_string(dir.join("read.jsonl")).unwrap();
    let entry: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        entry["reply"]["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 22}),
        "{entry}"
    );
    // Replayed with no server: the streamed call streams the recording in
    // pieces, and the plain call gets the same value from the same entry.
    let silent = MemoryTransport::new();
    let replaying = cassette_client(&silent, vox_runtime::CassetteMode::Replay);
    let (partials, _, replayed) = drain(stream(&replaying)).await;
    assert_eq!(replayed.unwrap(), recorded);
    assert!(partials.len() >= 4, "{partials:?}");
    let plain: Out = replaying
        .call_ai(&READ, args(), async { panic!("no fixture") })
        .await
        .unwrap();
    assert_eq!(plain, recorded);
    assert_eq!(silent.request_count(), 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// A streamed attempt's report (and span) names the model that answered
/// and why it stopped, as the stream's events said, on every wire.
#[tokio::test]
async fn a_streamed_attempt_reports_the_model_and_the_finish_reason() {
    for (wire, model, reason) in [
        (Wire::Chat, "gpt-stream-1", "stop"),
        (Wire::Anthropic, "claude-stream-1", "tool_use"),
        (Wire::Gemini, "gemini-stream-1", "STOP"),
        (Wire::Ollama, "m", "stop"),
    ] {
        let body = streamed_body(wire, &fragments(REPLY, 7), None);
        let transport =
            MemoryTransport::new().reply(ScriptedReply::chunks(200, byte_chunks(&body, 64)));
        let report = vox_runtime::ReportHandle::new();
        let options = vox_runtime::CallOptions::new().report(&report);
        client(wire, &transport)
            .call_ai_stream_with::<Value, Out, _>(&READ, &options, args(), async {
                panic!("the fixture must not run under a network provider")
            })
            .finish()
            .await
            .map(|_: Out| ())
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        let attempt = &report.get().attempts[0];
        assert_eq!(
            (
                attempt.response_model.as_deref(),
                attempt.finish_reason.as_deref()
            ),
            (Some(model), Some(reason)),
            "{wire:?}"
        );
    }
}

/// Past a reply's first 4 KiB, partials come at most one per 50 ms, and a
/// stream that goes quiet still shows what arrived (a timer wakes the
/// program: no later chunk is needed).
#[tokio::test(start_paused = true)]
async fn past_the_first_4_kib_partials_come_on_time_even_when_the_stream_goes_quiet() {
    let chunk = |text: &str| {
        let event = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
        format!("data: {event}\n\n").into_bytes()
    };
    let mut chunks = vec![chunk(&format!("{{\"title\":\"{}", "x".repeat(5000)))];
    chunks.extend((0..9).map(|_| chunk(&"y".repeat(20))));
    let transport = MemoryTransport::new().reply(
        ScriptedReply::chunks(200, chunks)
            .chunk_delay(Duration::from_millis(10))
            .then_hang(),
    );
    let config = Config::builder(Provider::OpenAi)
        .api_key("sk-stream-test")
        .max_transport_retries(0)
        .stream_idle_timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let client = Client::builder(config)
        .transport(transport)
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();
    let mut stream = stream(&client);
    let mut seen = Vec::new();
    let outcome = loop {
        match stream.next().await {
            Some(StreamEvent::Partial { value, .. }) => {
                let title = value["title"].as_str().unwrap().len();
                seen.push((start.elapsed(), title));
            }
            Some(StreamEvent::Done(result)) => break result,
            other => panic!("{other:?}"),
        }
    };
    assert!(
        matches!(
            outcome,
            Err(Error::Transport {
                kind: TransportErrorKind::Timeout,
                ..
            })
        ),
        "{outcome:?}"
    );
    // The first chunk (10 ms) shows at once; the others (every 10 ms to
    // 100 ms) at most one per 50 ms; the last of them once 50 ms have
    // passed since the partial before, though no chunk came after it.
    let times: Vec<Duration> = seen.iter().map(|s| s.0).collect();
    assert_eq!(seen.first().map(|s| s.1), Some(5000), "{seen:?}");
    assert_eq!(seen.last().map(|s| s.1), Some(5000 + 9 * 20), "{seen:?}");
    for pair in times.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_millis(50), "{seen:?}");
    }
    let last = *times.last().unwrap();
    assert!(
        last > Duration::from_millis(100) && last < Duration::from_millis(200),
        "{seen:?}"
    );
}
