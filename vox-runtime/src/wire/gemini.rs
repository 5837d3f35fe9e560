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

use super::{malformed, temperature, KeyHeader, Prepare, Prepared, Protocol};
use crate::error::Error;
use crate::prompt::{Conversation, RequestParts};
use crate::redact::Redactor;
use crate::reply::{Answer, Usage};
use crate::server_text::REASON_CHARS;

/// Gemini's `generateContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gemini;

impl Protocol for Gemini {
    fn path(&self) -> &'static str {
        "/models/{model}:generateContent"
    }

    // Gemini's reference names models `models/{model}`; either spelling is
    // accepted.
    fn model_in_path<'m>(&self, model: &'m str) -> &'m str {
        model.strip_prefix("models/").unwrap_or(model)
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
                // The model is in the URL, not the body.
                generation_config: GenerationConfig {
                    response_mime_type: "application/json",
                    response_json_schema: parts.wire_schema.as_deref().unwrap_or(parts.schema),
                    max_output_tokens: parts.max_tokens(),
                    temperature: temperature(parts, 2.0),
                },
            },
        )
    }

    fn parse<'b>(&self, body: &'b str, redactor: &Redactor) -> Result<Answer<'b>, Error> {
        let response: GeminiResponse<'_> = serde_json::from_str(body).map_err(malformed)?;
        let usage = response.usage_metadata.unwrap_or_default();
        let mut answer = Answer {
            usage: Usage {
                prompt_tokens: usage.prompt_token_count,
                completion_tokens: usage.candidates_token_count,
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
        let mut texts = candidate
            .content
            .map(|c| c.parts)
            .unwrap_or_default()
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

/// A Gemini `GenerateContentResponse` (Gemini API reference, "Generating
/// content": `candidates[].content.parts[].text`, `finishReason`,
/// `promptFeedback.blockReason`, `usageMetadata`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiResponse<'a> {
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
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct GeminiContent<'a> {
    #[serde(default, borrow)]
    parts: Vec<GeminiPart<'a>>,
}

#[derive(Debug, Deserialize)]
struct GeminiPart<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    /// A thinking model's thought summary, not the answer.
    #[serde(default)]
    thought: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiFeedback<'a> {
    #[serde(default, borrow)]
    block_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiRequest<'a> {
    system_instruction: Content<'a, &'a RawValue>,
    contents: GeminiContents<'a>,
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
    response_mime_type: &'a str,
    response_json_schema: &'a RawValue,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
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
        let mut seq = serializer.serialize_seq(Some(1 + 2 * turns.len()))?;
        seq.serialize_element(&turn("user", &self.0.first))?;
        for t in turns {
            seq.serialize_element(&turn("model", &t.reply_non_empty))?;
            seq.serialize_element(&turn("user", &t.correction))?;
        }
        seq.end()
    }
}
