//! Gemini's `generateContent`: `POST {base}/models/{model}:generateContent`
//! with `x-goog-api-key`, the schema in `generationConfig`'s
//! `responseJsonSchema`, converted by the shared provider table's
//! `gemini_schema` (the same bytes `cargo vox schema --provider gemini`
//! prints).

use std::borrow::Cow;

use serde::Deserialize;
use vox_metadata::providers::gemini_schema_text;

use serde::Serialize;
use serde_json::value::RawValue;

use super::RequestParts;
use super::{borrowed, read_object, temperature, KeyHeader, Prepare, Prepared, Protocol};
use crate::error::Error;
use crate::media::load::Content as MediaContent;
use crate::media::load::MediaType;
use crate::media::Kind;
use crate::prompt::{Conversation, Step};
use crate::redact::Redactor;
use crate::reply::{Answer, ResponseMeta, Usage};
use crate::server_text::REASON_CHARS;
use crate::stream::{Event, Streamed};

/// Gemini's `generateContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gemini;

impl Protocol for Gemini {
    // Gemini's reference names models `models/{model}`; either spelling is
    // accepted.
    fn path(&self, model: &str) -> Cow<'static, str> {
        let model = model.strip_prefix("models/").unwrap_or(model);
        Cow::Owned(format!("/models/{model}:generateContent"))
    }

    // "Generating content": `streamGenerateContent`, as Server-Sent Events
    // with `alt=sse`; the body is the same request.
    fn stream_path(&self, model: &str) -> Cow<'static, str> {
        let model = model.strip_prefix("models/").unwrap_or(model);
        Cow::Owned(format!("/models/{model}:streamGenerateContent?alt=sse"))
    }

    fn stream_body(&self, body: &[u8]) -> Vec<u8> {
        body.to_vec()
    }

    // Each event is a `GenerateContentResponse` holding the next piece of
    // the text; the last has `finishReason` and the usage. Read by `parse`,
    // so a block or finish reason means what it does in a whole answer.
    fn read_event(
        &self,
        event: &Event,
        streamed: &mut Streamed,
        redactor: &Redactor,
    ) -> Result<(), Error> {
        if let Some(error) = gemini_error(event.data) {
            return Err(super::stream_error(error.0, &error.1, redactor));
        }
        let answer = self.parse(event.data, redactor)?;
        if let Some(text) = answer.content.as_deref() {
            streamed.push_content(text);
        }
        if answer.usage.prompt_tokens.is_some() {
            streamed.usage.prompt_tokens = answer.usage.prompt_tokens;
        }
        if answer.usage.completion_tokens.is_some() {
            streamed.usage.completion_tokens = answer.usage.completion_tokens;
        }
        if answer.refused.is_some() {
            streamed.refused = answer.refused;
            streamed.finished = true;
        }
        if answer.truncated.is_some() {
            streamed.truncated = answer.truncated;
        }
        // The last event (the one with a finish reason) names the model.
        if answer.meta.finish_reason.is_some() {
            streamed.finished = true;
            streamed.meta = answer.meta;
        }
        Ok(())
    }

    // Gemini API reference: the key in `x-goog-api-key`.
    fn key_header(&self) -> KeyHeader {
        KeyHeader {
            name: reqwest::header::HeaderName::from_static("x-goog-api-key"),
            bearer: false,
        }
    }

    // Gemini API "Structured output" guide: `responseMimeType`
    // `application/json` with the schema in `responseJsonSchema` (the JSON
    // Schema field; `responseSchema` takes OpenAPI's), converted to the
    // subset Gemini accepts with the same function and writer as
    // `cargo vox schema --provider gemini`: the same bytes.
    fn prepare(&self, input: Prepare<'_>) -> Result<Prepared, Error> {
        let converted = gemini_schema_text(input.schema, input.schema_name).map_err(|e| {
            Error::Config(format!(
                "the schema `{}` is invalid JSON: {e}",
                input.schema_name
            ))
        })?;
        let schema = RawValue::from_string(converted).map_err(|e| {
            Error::Config(format!(
                "the schema `{}` could not be converted: {e}",
                input.schema_name
            ))
        })?;
        Ok(Prepared {
            system: input.system,
            schema: Some(schema),
            tool: None,
        })
    }

    fn write_request(
        &self,
        parts: &RequestParts,
        conversation: &Conversation,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        serde_json::to_writer(
            out,
            &GeminiRequest {
                system_instruction: Content {
                    role: None,
                    parts: [Part {
                        text: &*parts.system,
                    }],
                },
                contents: GeminiContents(conversation),
                // "Function calling": the declarations, each schema as
                // JSON Schema (`parametersJsonSchema`).
                tools: (!parts.tools.is_empty()).then(|| {
                    let declarations: Vec<serde_json::Value> = parts
                        .tools
                        .iter()
                        .map(|t| {
                            serde_json::json!({"name": t.name, "description": t.description,
                                "parametersJsonSchema": &*t.parameters})
                        })
                        .collect();
                    [serde_json::json!({ "functionDeclarations": declarations })]
                }),
                // The model is in the URL, not the body.
                // With tools, no response schema: Gemini 2.x refuses function
                // calling beside a JSON response type; the system message
                // states the shape instead, and the reply is judged as always.
                generation_config: GenerationConfig {
                    response_mime_type: parts.tools.is_empty().then_some("application/json"),
                    response_json_schema: parts
                        .tools
                        .is_empty()
                        .then(|| parts.wire_schema.as_deref().unwrap_or(&parts.schema)),
                    max_output_tokens: parts.max_tokens(),
                    temperature: temperature(parts, 2.0),
                },
            },
        )
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: GeminiResponse<'_> = read_object(body)?;
        let usage = response.usage_metadata.unwrap_or_default();
        let mut answer = Answer {
            usage: Usage {
                prompt_tokens: usage.prompt_token_count,
                completion_tokens: match (usage.candidates_token_count, usage.thoughts_token_count)
                {
                    (None, None) => None,
                    (c, t) => Some(c.unwrap_or(0) + t.unwrap_or(0)),
                },
                cached_tokens: usage.cached_content_token_count,
                reasoning_tokens: usage.thoughts_token_count,
            },
            meta: ResponseMeta {
                model: response.model_version,
                finish_reason: None,
            },
            ..Answer::default()
        };
        if let Some(reason) = response.prompt_feedback.and_then(|f| f.block_reason) {
            answer.refused = Some(format!(
                "the prompt was blocked (blockReason = {})",
                redactor.shown(&reason, REASON_CHARS)
            ));
            return Ok(answer);
        }
        let Some(candidate) = response.candidates.into_iter().next() else {
            return Ok(answer);
        };
        let mut parts = Vec::new();
        for raw in candidate.content.map(|c| c.parts).unwrap_or_default() {
            let part: GeminiPart<'_> = read_object(raw.get())?;
            if let Some(call) = &part.function_call {
                answer.tool_calls.push(crate::tools::ToolCall {
                    id: call.id.clone().unwrap_or_default(),
                    name: call.name.clone().unwrap_or_default(),
                    arguments: call.args.map(|a| a.get().to_owned()).unwrap_or_default(),
                    // Echoed whole: a thinking model's `thoughtSignature`
                    // must come back with its call.
                    raw: Some(raw.get().to_owned()),
                });
            }
            parts.push(part);
        }
        let mut texts = parts
            .into_iter()
            .filter(|p| !p.thought)
            .filter_map(|p| p.text);
        answer.content = match (texts.next(), texts.next()) {
            (Some(only), None) => Some(only),
            (Some(first), Some(second)) => {
                let mut all = first.into_owned();
                all.push_str(&second);
                texts.for_each(|t| all.push_str(&t));
                Some(Cow::Owned(all))
            }
            (None, _) => None,
        };
        answer.meta.finish_reason = candidate.finish_reason.as_deref().map(str::to_owned);
        match candidate.finish_reason.as_deref() {
            None | Some("STOP") | Some("FINISH_REASON_UNSPECIFIED") => {}
            Some("MAX_TOKENS") => answer.truncated = Some("finishReason = \"MAX_TOKENS\""),
            Some(other) => {
                answer.refused = Some(format!(
                    "the reply was blocked (finishReason = {})",
                    redactor.shown(other, REASON_CHARS)
                ))
            }
        }
        Ok(answer)
    }
}

/// The status and message of an `{"error": {"code", "message"}}` event.
fn gemini_error(data: &str) -> Option<(u16, String)> {
    #[derive(Deserialize)]
    struct Failed {
        error: Detail,
    }
    #[derive(Deserialize)]
    struct Detail {
        #[serde(default)]
        code: Option<u16>,
        #[serde(default)]
        message: Option<String>,
    }
    let failed: Failed = serde_json::from_str(data).ok()?;
    Some((
        failed.error.code.unwrap_or(500),
        failed.error.message.unwrap_or_default(),
    ))
}

/// A Gemini `GenerateContentResponse` (Gemini API reference, "Generating
/// content": `candidates[].content.parts[].text`, `finishReason`,
/// `promptFeedback.blockReason`, `usageMetadata`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiResponse<'a> {
    #[serde(default)]
    model_version: Option<String>,
    #[serde(default, borrow)]
    candidates: Vec<GeminiCandidate<'a>>,
    #[serde(default, borrow)]
    prompt_feedback: Option<GeminiFeedback<'a>>,
    #[serde(default)]
    usage_metadata: Option<GeminiUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiCandidate<'a> {
    #[serde(default, borrow)]
    content: Option<GeminiContent<'a>>,
    #[serde(default, borrow, deserialize_with = "borrowed")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct GeminiContent<'a> {
    #[serde(default, borrow)]
    parts: Vec<&'a RawValue>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    text: Option<Cow<'a, str>>,
    /// A thinking model's thought summary, not the answer.
    #[serde(default)]
    thought: bool,
    /// A tool the model calls ("Function calling": `name`, `args`, and an
    /// `id` on the newer models).
    #[serde(default, borrow)]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Debug, Deserialize)]
struct FunctionCall<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, borrow)]
    args: Option<&'a RawValue>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiFeedback<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed")]
    block_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    /// Part of `promptTokenCount` read from a cache.
    #[serde(default)]
    cached_content_token_count: Option<u64>,
    /// Thinking tokens, billed as output beside `candidatesTokenCount`.
    #[serde(default)]
    thoughts_token_count: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiRequest<'a> {
    system_instruction: Content<'a, &'a RawValue>,
    contents: GeminiContents<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[serde_json::Value; 1]>,
    generation_config: GenerationConfig<'a>,
}

#[derive(Serialize)]
struct Content<'a, T = &'a str> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    parts: [Part<T>; 1],
}

#[derive(Serialize)]
struct Part<T> {
    text: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_json_schema: Option<&'a RawValue>,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

/// The first turn's parts with media ("File input methods": `inlineData`
/// with `mimeType` and base64 `data`; `fileData` with `fileUri` for a URL,
/// and `mimeType` where the kind says it).
fn gemini_parts(conversation: &Conversation) -> Vec<serde_json::Value> {
    use serde_json::json;
    super::media_first(
        conversation,
        |text| json!({ "text": text }),
        |media, data| {
            Some(match &media.content {
                MediaContent::Inline { media_type, .. } => json!({
                    "inlineData": {"mimeType": media_type.gemini_mime(), "data": data["plain"]}
                }),
                // A URL's type is told by its extension (checked when the
                // media were loaded); a document is a PDF.
                MediaContent::Url(url) => {
                    let mime = match MediaType::of_url(url) {
                        Some(media_type) if media_type.kind() == media.kind => {
                            media_type.gemini_mime()
                        }
                        _ if media.kind == Kind::Document => "application/pdf",
                        _ => return None,
                    };
                    json!({ "fileData": {"mimeType": mime, "fileUri": url} })
                }
            })
        },
    )
}

/// The arguments, then each rejected reply (as the model's turn, never
/// empty) and its correction.
struct GeminiContents<'a>(&'a Conversation);

impl Serialize for GeminiContents<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let turn = |role, text| Content::<&RawValue> {
            role: Some(role),
            parts: [Part { text }],
        };
        let turns = &self.0.turns;
        // Written only as JSON, which needs no length up front.
        let mut seq = serializer.serialize_seq(None)?;
        for (assistant, text) in self.0.before_first() {
            seq.serialize_element(&turn(if assistant { "model" } else { "user" }, text))?;
        }
        if self.0.media.is_empty() {
            seq.serialize_element(&turn("user", &self.0.first))?;
        } else {
            seq.serialize_element(&serde_json::json!({
                "role": "user",
                "parts": gemini_parts(self.0),
            }))?;
        }
        for step in turns {
            match step {
                Step::Rejected(t) => {
                    seq.serialize_element(&turn("model", &t.reply_non_empty))?;
                    seq.serialize_element(&turn("user", &t.correction))?;
                }
                Step::Tools(step) => {
                    use serde_json::json;
                    let calls: Vec<serde_json::Value> = step
                        .calls
                        .iter()
                        .map(|c| {
                            c.as_sent(
                                |args| json!({"functionCall": {"name": c.name, "args": args}}),
                            )
                        })
                        .collect();
                    seq.serialize_element(&json!({"role": "model", "parts": calls}))?;
                    // `functionResponse.response` is an object: the value
                    // under `result`, or the problem under `error`.
                    let results: Vec<serde_json::Value> = step
                        .results
                        .iter()
                        .map(|r| {
                            let response = if r.is_error {
                                json!({ "error": r.content })
                            } else {
                                let value: serde_json::Value = serde_json::from_str(&r.content)
                                    .unwrap_or_else(|_| serde_json::Value::from(r.content.clone()));
                                json!({ "result": value })
                            };
                            let mut part = json!({"name": r.name, "response": response});
                            if !r.id.is_empty() {
                                part["id"] = serde_json::Value::from(r.id.clone());
                            }
                            json!({ "functionResponse": part })
                        })
                        .collect();
                    seq.serialize_element(&json!({"role": "user", "parts": results}))?;
                }
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    //! Reading `generateContent` responses, in the shapes of the Gemini API
    //! reference (`GenerateContentResponse`, `Candidate`, `PromptFeedback`,
    //! `UsageMetadata`).

    use super::*;

    fn parse(body: &str) -> Answer<'_> {
        Gemini
            .parse(body, &Redactor::default())
            .unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    /// A complete response as the API returns it, with the fields the
    /// runtime does not read.
    const RESPONSE: &str = r#"{
      "candidates": [
        {
          "content": {"parts": [{"text": "{\"vendor\": \"ACME\"}"}], "role": "model"},
          "finishReason": "STOP",
          "index": 0,
          "safetyRatings": [
            {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "NEGLIGIBLE"}
          ],
          "avgLogprobs": -0.0123
        }
      ],
      "usageMetadata": {
        "promptTokenCount": 8,
        "candidatesTokenCount": 5,
        "totalTokenCount": 33,
        "thoughtsTokenCount": 20,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}]
      },
      "modelVersion": "gemini-2.5-flash",
      "responseId": "mK1aaJ2nFLmgz7IP7dXtkQk"
    }"#;

    #[test]
    fn a_finished_candidate_gives_its_text_and_usage() {
        let answer = parse(RESPONSE);
        assert_eq!(answer.content.as_deref(), Some(r#"{"vendor": "ACME"}"#));
        assert_eq!(answer.refused, None);
        assert_eq!(answer.truncated, None);
        assert_eq!(answer.reply_otherwise, None);
        assert!(answer.tool_use.is_none());
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(8),
                // `candidatesTokenCount` and `thoughtsTokenCount`.
                completion_tokens: Some(25),
                reasoning_tokens: Some(20),
                ..Usage::default()
            }
        );
    }

    #[test]
    fn text_parts_are_joined_without_thoughts_or_other_parts() {
        let content = |parts: &str| {
            let body = format!(
                r#"{{"candidates":[{{"content":{{"role":"model","parts":{parts}}},"finishReason":"STOP"}}]}}"#
            );
            Gemini
                .parse(&body, &Redactor::default())
                .unwrap()
                .content
                .map(Cow::into_owned)
        };
        assert_eq!(content(r#"[{"text":"1"}]"#).as_deref(), Some("1"));
        assert_eq!(
            content(r#"[{"text":"{\"a\":"},{"text":"[1,"},{"text":"2]}"}]"#).as_deref(),
            Some(r#"{"a":[1,2]}"#)
        );
        assert_eq!(
            content(r#"[{"text":"**Planning** the answer","thought":true},{"text":"[]"},{"text":"x","thought":true}]"#)
                .as_deref(),
            Some("[]")
        );
        assert_eq!(
            content(r#"[{"functionCall":{"name":"f","args":{}}},{"inlineData":{"mimeType":"image/png","data":"iVBOR"}},{"text":"3"},{"thoughtSignature":"CiQB"}]"#)
                .as_deref(),
            Some("3")
        );
        assert_eq!(
            content(r#"[{"text":"","thought":false}]"#).as_deref(),
            Some("")
        );
        assert_eq!(content("[]"), None);
        assert_eq!(
            content(r#"[{"text":"only a thought","thought":true}]"#),
            None
        );
    }

    #[test]
    fn a_single_unescaped_part_is_borrowed() {
        let body = r#"{"candidates":[{"content":{"parts":[{"text":"7"}]}}]}"#;
        assert!(matches!(parse(body).content, Some(Cow::Borrowed("7"))));
    }

    #[test]
    fn only_the_first_candidate_is_read() {
        let body = r#"{"candidates":[
            {"content":{"parts":[{"text":"1"}]},"finishReason":"STOP","index":0},
            {"content":{"parts":[{"text":"2"}]},"finishReason":"SAFETY","index":1}
        ]}"#;
        let answer = parse(body);
        assert_eq!(answer.content.as_deref(), Some("1"));
        assert_eq!(answer.refused, None);
    }

    #[test]
    fn finish_reasons() {
        let with = |reason: &str| {
            format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"text":"{{\"v\":"}}]}},"finishReason":{reason}}}]}}"#
            )
        };
        for reason in ["\"STOP\"", "\"FINISH_REASON_UNSPECIFIED\"", "null"] {
            let body = with(reason);
            let answer = parse(&body);
            assert_eq!(answer.refused, None, "{reason}");
            assert_eq!(answer.truncated, None, "{reason}");
            assert_eq!(answer.content.as_deref(), Some("{\"v\":"), "{reason}");
        }
        let body = with("\"MAX_TOKENS\"");
        let answer = parse(&body);
        assert_eq!(answer.truncated, Some("finishReason = \"MAX_TOKENS\""));
        assert_eq!(answer.refused, None);
        // Every other reason means the text is not an answer, even when
        // some is there.
        for reason in [
            "SAFETY",
            "RECITATION",
            "LANGUAGE",
            "OTHER",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "MALFORMED_FUNCTION_CALL",
            "IMAGE_SAFETY",
            "stop",
        ] {
            let body = with(&format!("\"{reason}\""));
            let answer = parse(&body);
            assert_eq!(answer.truncated, None, "{reason}");
            assert_eq!(
                answer.content().unwrap_err().error,
                format!("the reply was blocked (finishReason = {reason})")
            );
        }
    }

    #[test]
    fn a_blocked_prompt_has_no_candidates_and_says_why() {
        let body = r#"{
          "promptFeedback": {
            "blockReason": "SAFETY",
            "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]
          },
          "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12},
          "modelVersion": "gemini-2.5-flash"
        }"#;
        let answer = parse(body);
        assert_eq!(
            answer.refused.as_deref(),
            Some("the prompt was blocked (blockReason = SAFETY)")
        );
        assert_eq!(answer.content, None);
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(12),
                completion_tokens: None,
                ..Usage::default()
            }
        );
        // The block decides even if a candidate came along.
        let both = r#"{"promptFeedback":{"blockReason":"OTHER"},
            "candidates":[{"content":{"parts":[{"text":"{}"}]},"finishReason":"STOP"}]}"#;
        let answer = parse(both);
        assert_eq!(answer.content, None);
        assert_eq!(
            answer.content().unwrap_err().error,
            "the prompt was blocked (blockReason = OTHER)"
        );
        // Feedback without a block reason blocks nothing.
        let rated = r#"{"promptFeedback":{"safetyRatings":[]},
            "candidates":[{"content":{"parts":[{"text":"{}"}]},"finishReason":"STOP"}]}"#;
        assert_eq!(parse(rated).content().unwrap(), "{}");
    }

    #[test]
    fn missing_parts_are_no_answer_rather_than_an_error() {
        for body in [
            "{}",
            r#"{"candidates":[]}"#,
            r#"{"candidates":[{}]}"#,
            r#"{"candidates":[{"content":null,"finishReason":"STOP"}]}"#,
            r#"{"candidates":[{"content":{"role":"model"}}]}"#,
            r#"{"candidates":[{"content":{"parts":[]}}],"promptFeedback":null,"usageMetadata":null}"#,
            r#"{"promptFeedback":{"blockReason":null}}"#,
        ] {
            let answer = parse(body);
            assert_eq!(answer.content, None, "{body}");
            assert_eq!(answer.refused, None, "{body}");
            assert_eq!(answer.truncated, None, "{body}");
            assert_eq!(answer.usage, Usage::default(), "{body}");
            assert_eq!(
                answer.content().unwrap_err().error,
                "the reply had no content"
            );
        }
    }

    #[test]
    fn malformed_bodies_are_typed_errors() {
        for body in [
            "",
            "{\"candidates\":",
            "[]",
            r#"{"candidates": {"content": {}}}"#,
            r#"{"candidates": [{"content": {"parts": {"text": "1"}}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": 1}]}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "1", "thought": "yes"}]}}]}"#,
            r#"{"candidates": [{"finishReason": 1}]}"#,
            r#"{"promptFeedback": {"blockReason": 2}}"#,
            r#"{"usageMetadata": {"promptTokenCount": "8"}}"#,
            r#"{"candidates": []}]"#,
        ] {
            match Gemini.parse(body, &Redactor::default()) {
                Err(Error::MalformedResponse(message)) => assert!(!message.is_empty(), "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    /// Reasons are the server's text: redacted, bounded to a short enum
    /// name's length, one line.
    #[test]
    fn reasons_are_redacted_bounded_and_escaped() {
        let key = "AIzaSyD-gemini-reason-0123456789";
        let redactor = Redactor::new(Some(key), None);
        let reason = format!("{key}\n{}", "Z".repeat(200));
        for body in [
            serde_json::json!({"candidates": [{"finishReason": reason}]}),
            serde_json::json!({"promptFeedback": {"blockReason": reason}}),
        ] {
            let body = body.to_string();
            let refused = Gemini.parse(&body, &redactor).unwrap().refused.unwrap();
            assert!(!refused.contains(key), "{refused}");
            assert!(refused.contains("= [REDACTED]\\nZZZ"), "{refused}");
            assert!(refused.ends_with(" more bytes))"), "{refused}");
            assert!(!refused.chars().any(char::is_control), "{refused}");
            let shown = refused
                .split(" = ")
                .nth(1)
                .unwrap()
                .split('…')
                .next()
                .unwrap();
            assert_eq!(shown.chars().count(), REASON_CHARS, "{refused}");
        }
    }
}
