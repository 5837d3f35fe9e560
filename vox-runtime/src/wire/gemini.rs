//! Gemini's `generateContent`: `POST {base}/models/{model}:generateContent`
//! with `x-goog-api-key`, the schema in `generationConfig`'s
//! `responseJsonSchema`, converted by the shared provider table's
//! `gemini_schema` (the same bytes `cargo vox schema --provider gemini`
//! prints).

use std::borrow::Cow;

use serde::Deserialize;
use vox_metadata::providers::gemini_schema_text;

use super::{malformed, non_empty, push_escaped, KeyHeader, Protocol, Render};
use crate::error::Error;
use crate::redact::Redactor;
use crate::reply::{Answer, RejectedReply, Usage};
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

    fn render(&self, r: &Render<'_>, head: &mut Vec<u8>, tail: &mut Vec<u8>) -> Result<(), Error> {
        // Gemini API "Structured output" guide: `responseMimeType`
        // `application/json` with the schema in `responseJsonSchema`
        // (the JSON Schema field; `responseSchema` takes OpenAPI's).
        // The model is in the URL, not the body.
        head.extend_from_slice(br#"{"systemInstruction":{"parts":[{"text":""#);
        push_escaped(head, r.system.as_bytes());
        head.extend_from_slice(br#""}]},"contents":[{"role":"user","parts":[{"text":""#);

        // The same conversion as `cargo vox schema --provider
        // gemini`, written by the same writer: the same bytes.
        let text = std::str::from_utf8(r.schema).map_err(|e| {
            Error::Config(format!(
                "the schema `{}` is invalid UTF-8: {e}",
                r.schema_name
            ))
        })?;
        let converted = gemini_schema_text(text, r.schema_name).map_err(|e| {
            Error::Config(format!(
                "the schema `{}` is invalid JSON: {e}",
                r.schema_name
            ))
        })?;
        tail.extend_from_slice(
            br#"],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":"#,
        );
        tail.extend_from_slice(converted.as_bytes());
        tail.extend_from_slice(br#","maxOutputTokens":"#);
        tail.extend_from_slice(r.limit.as_bytes());
        r.temperature(tail, br#","temperature":"#, 2.0)?;
        tail.extend_from_slice(b"}}");
        Ok(())
    }

    fn close_first_message(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\"}]}");
    }

    fn push_correction(&self, out: &mut Vec<u8>, rejected: &RejectedReply, correction: &[&str]) {
        out.extend_from_slice(br#"{"role":"model","parts":[{"text":""#);
        push_escaped(out, non_empty(&rejected.reply).as_bytes());
        out.extend_from_slice(br#""}]},{"role":"user","parts":[{"text":""#);
        for part in correction {
            push_escaped(out, part.as_bytes());
        }
        out.extend_from_slice(b"\"}]}");
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
