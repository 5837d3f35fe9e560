//! What the model said back: reading a provider's response and judging one
//! attempt.
//!
//! An attempt is rejected — and the re-prompt loop asks again, quoting the
//! reason — when the reply is a refusal or was blocked, was cut off, has no
//! content, is not JSON (after stripping code fences) or does not
//! deserialize into the return type. Each provider's response shape is
//! read into one [`Answer`]; all of it is pure and unit-tested; only the
//! last step, [`parse_content`], depends on the return type.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::cassette::{Finish, Recorded, RecordedUsage};
use crate::server_text::server_text;

/// Token usage of one request, when the server reports it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Every input token, cached ones included.
    pub prompt_tokens: Option<u64>,
    /// Every output token, reasoning ones included.
    pub completion_tokens: Option<u64>,
    /// Input tokens read from the provider's prompt cache.
    pub cached_tokens: Option<u64>,
    /// Output tokens spent on reasoning (thinking) the reply does not show.
    pub reasoning_tokens: Option<u64>,
}

/// What the server said about its response: the model that answered and
/// why it stopped (`finish_reason`, `stop_reason`, `finishReason`,
/// `done_reason`), as sent; for tracing and the call's report.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ResponseMeta {
    pub model: Option<String>,
    pub finish_reason: Option<String>,
}

/// The model's answer to one request, whatever the provider.
#[derive(Debug, Default)]
pub(crate) struct Answer<'a> {
    /// The text (or, for a forced tool call, the tool's input as JSON).
    pub content: Option<Cow<'a, str>>,
    /// Why there is no usable answer although the request succeeded: a
    /// refusal, a safety block.
    pub refused: Option<String>,
    /// What goes back into the conversation when there is no content (a
    /// refusal's text).
    pub reply_otherwise: Option<Cow<'a, str>>,
    /// Set when the reply hit the completion limit: how the server said so.
    pub truncated: Option<&'static str>,
    /// Anthropic's `tool_use` block (as sent) and its id, for the
    /// `tool_result` that answers it.
    pub tool_use: Option<(&'a str, Cow<'a, str>)>,
    /// The tools the model calls instead of answering (docs/runtime.md,
    /// "Tools"); on Anthropic every `tool_use` block, the answer's too.
    pub tool_calls: Vec<crate::tools::ToolCall>,
    pub usage: Usage,
    /// The model that answered and why it stopped, as the server said.
    pub meta: ResponseMeta,
}

/// Why one attempt was rejected, and what the model said.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RejectedReply {
    /// The reason, quoted to the model in the correction.
    pub error: String,
    /// The reply as it goes back into the conversation (content, else the
    /// refusal text, else empty).
    pub reply: String,
    /// Anthropic: the `tool_use` block as the model sent it, and its id.
    pub tool_use: Option<(String, String)>,
    /// The reply was cut off by the length limit (the next attempt is
    /// asked differently; docs/runtime.md, "What the model sees").
    pub cut_off: bool,
}

impl Answer<'_> {
    /// The answer's content, or why the attempt is rejected without
    /// looking at it: a refusal or block, a truncated reply, no content.
    pub fn content(&self) -> Result<&str, RejectedReply> {
        let content = self.content.as_deref();
        let reply = content
            .or(self.reply_otherwise.as_deref())
            .unwrap_or_default();
        let reject = |error: String| self.rejection(error, reply);
        if let Some(refused) = &self.refused {
            return Err(reject(refused.clone()));
        }
        if let Some(how) = self.truncated {
            let mut rejected = reject(match runaway(reply) {
                Some(run) => format!(
                    "the reply was truncated ({how}) {run}; write each value once and end \
                     the JSON value"
                ),
                None => format!("the reply was truncated ({how}); answer with a shorter value"),
            });
            rejected.cut_off = true;
            return Err(rejected);
        }
        content.ok_or_else(|| reject("the reply had no content".to_owned()))
    }

    /// `error` about this answer, whose content was `reply`.
    pub fn rejection(&self, error: String, reply: &str) -> RejectedReply {
        RejectedReply {
            error,
            reply: reply.to_owned(),
            tool_use: self
                .tool_use
                .as_ref()
                .map(|(block, id)| ((*block).to_owned(), id.clone().into_owned())),
            cut_off: false,
        }
    }
}

/// How a cut-off reply ran away, when it ends repeating itself: ``while
/// repeating `Cancel` (in `email`)``. A run is a piece of 1 to 64
/// characters repeated at least 8 times, over at least 24 characters, at
/// the very end of the reply; the field is the last key written before
/// the run began.
pub(crate) fn runaway(reply: &str) -> Option<String> {
    let chars: Vec<char> = reply.chars().collect();
    let n = chars.len();
    for period in 1..=64.min(n / 8) {
        let unit = &chars[n - period..];
        let mut start = n - period;
        while start >= period && chars[start - period..start] == *unit {
            start -= period;
        }
        let repeats = (n - start) / period;
        if repeats >= 8 && n - start >= 24 {
            let unit: String = unit.iter().collect();
            let before: String = chars[..start].iter().collect();
            let shown = crate::server_text::server_text(&unit, 64);
            return Some(match last_key(&before) {
                Some(key) => format!("while repeating `{shown}` (in `{key}`)"),
                None => format!("while repeating `{shown}`"),
            });
        }
    }
    None
}

/// The last `"key":` in `text`, if any.
fn last_key(text: &str) -> Option<String> {
    let mut search = text;
    while let Some(at) = search.rfind("\":") {
        let head = &search[..at];
        if let Some(open) = head.rfind('"') {
            let key = &head[open + 1..];
            if !key.is_empty() && key.len() <= 64 && !key.contains(['"', '\\']) {
                return Some(key.to_owned());
            }
        }
        search = head;
    }
    None
}

/// How servers say a reply was cut off, as [`Answer`] keeps it.
const TRUNCATIONS: [&str; 6] = [
    "finish_reason = \"length\"",
    "stop_reason = \"max_tokens\"",
    "stop_reason = \"model_context_window_exceeded\"",
    "finishReason = \"MAX_TOKENS\"",
    "done = false",
    "done_reason = \"length\"",
];

impl Answer<'_> {
    /// This answer as a cassette records it, its texts passed through
    /// `redact` (docs/runtime.md, "Cassettes").
    pub(crate) fn recorded(&self, redact: &dyn Fn(&str) -> String) -> Recorded {
        let content = self
            .content
            .as_deref()
            .or(self.reply_otherwise.as_deref())
            .map(redact);
        let (finish, detail) = match (&self.refused, self.truncated) {
            (Some(refused), _) => (Finish::Refused, Some(redact(refused))),
            (None, Some(how)) => (Finish::Length, Some(how.to_owned())),
            (None, None) => (Finish::Stop, None),
        };
        let usage = (self.usage != Usage::default()).then_some(RecordedUsage {
            prompt_tokens: self.usage.prompt_tokens,
            completion_tokens: self.usage.completion_tokens,
            cached_tokens: self.usage.cached_tokens,
            reasoning_tokens: self.usage.reasoning_tokens,
        });
        Recorded {
            finish,
            content,
            detail,
            status: None,
            usage,
            tool_calls: self
                .tool_calls
                .iter()
                .map(|c| crate::cassette::RecordedCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: redact(&c.arguments),
                    raw: c.raw.as_deref().map(redact),
                })
                .collect(),
        }
    }

    /// Keeps only what answers a function whose tools are `tools` (the
    /// answer tool `answer_tool` on Anthropic): the user's tools' calls
    /// stay and, beside them, no content is taken as the answer; a call of
    /// the answer tool is the answer. Without tools, calls are ignored.
    pub(crate) fn settle_tools(&mut self, has_tools: bool, answer_tool: Option<&str>) {
        if !has_tools {
            self.tool_calls.clear();
            return;
        }
        if let Some(answer_tool) = answer_tool {
            if let Some(at) = self.tool_calls.iter().position(|c| c.name == answer_tool) {
                // The final answer, whatever else the turn holds.
                let call = self.tool_calls.swap_remove(at);
                self.tool_calls.clear();
                // A correction answers the answer's own block.
                if self
                    .tool_use
                    .as_ref()
                    .is_some_and(|(_, id)| *id != call.id.as_str())
                {
                    self.tool_use = None;
                }
                self.content = Some(Cow::Owned(call.arguments));
                return;
            }
        }
        if !self.tool_calls.is_empty() {
            self.content = None;
            self.tool_use = None;
        }
    }

    /// The answer a cassette recorded: judged exactly like the server's.
    pub(crate) fn replayed(recorded: &Recorded) -> Answer<'_> {
        let usage = recorded.usage.unwrap_or_default();
        let mut answer = Answer {
            usage: Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cached_tokens: usage.cached_tokens,
                reasoning_tokens: usage.reasoning_tokens,
            },
            ..Answer::default()
        };
        let content = recorded.content.as_deref().map(Cow::Borrowed);
        match recorded.finish {
            Finish::Refused => {
                answer.refused = Some(
                    recorded
                        .detail
                        .clone()
                        .unwrap_or_else(|| "the model refused".to_owned()),
                );
                answer.reply_otherwise = content;
            }
            Finish::Length => {
                let how = recorded.detail.as_deref().unwrap_or_default();
                answer.truncated = Some(
                    TRUNCATIONS
                        .into_iter()
                        .find(|t| *t == how)
                        .unwrap_or("as recorded"),
                );
                answer.content = content;
            }
            _ => answer.content = content,
        }
        answer.tool_calls = recorded
            .tool_calls
            .iter()
            .map(|c| crate::tools::ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                raw: c.raw.clone(),
            })
            .collect();
        answer
    }
}

/// Parses the reply content as the return type (after stripping code
/// fences and, when wrapped, unwrapping `"value"`).
pub(crate) fn parse_content<T: DeserializeOwned>(
    content: &str,
    wrapped: bool,
) -> Result<T, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wrapped<T> {
        value: T,
    }
    let json = strip_code_fences(content);
    let parsed = if wrapped {
        serde_json::from_str::<Wrapped<T>>(json).map(|w| w.value)
    } else {
        serde_json::from_str::<T>(json)
    };
    // serde quotes the reply (`unknown variant `…``), raw: escape it. The
    // caller bounds the whole message once it is redacted.
    parsed.map_err(|e| match e.classify() {
        serde_json::error::Category::Data => format!(
            "the reply does not match the schema: {}",
            server_text(&e.to_string(), usize::MAX)
        ),
        _ => format!(
            "the reply is not valid JSON: {}",
            server_text(&e.to_string(), usize::MAX)
        ),
    })
}

/// Removes one surrounding Markdown code fence (```` ``` ```` or
/// ```` ```json ````, any info string) and surrounding whitespace.
pub fn strip_code_fences(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(after_open) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    // The opening fence's line ends at the first newline; what follows the
    // backticks on it is an info string such as `json`.
    let Some(newline) = after_open.find('\n') else {
        return trimmed;
    };
    let body = &after_open[newline + 1..];
    match body.trim_end().strip_suffix("```") {
        Some(inner) => inner.trim(),
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::redact::Redactor;
    use crate::server_text::REFUSAL_CHARS;
    use crate::wire::chat::Chat;
    use crate::wire::{parse_response, Wire};

    /// What the re-prompt loop decides about one response.
    fn judge<T: DeserializeOwned>(
        response: &Answer<'_>,
        wrapped: bool,
    ) -> Result<T, RejectedReply> {
        let content = response.content()?;
        parse_content(content, wrapped).map_err(|error| response.rejection(error, content))
    }

    const CHAT: Wire = Wire::Chat(Chat {
        limit: "max_tokens",
        format: crate::config::ResponseFormat::JsonSchema,
        stated: true,
    });

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_code_fences("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_code_fences("  ```\n[1, 2]\n```  \n"), "[1, 2]");
        assert_eq!(strip_code_fences("```JSON \r\n{}\r\n```"), "{}");
        assert_eq!(strip_code_fences(" {\"a\":1} "), "{\"a\":1}");
        // Not a fence pair: left as is (and then fails to parse as JSON).
        assert_eq!(strip_code_fences("```json\n{}"), "```json\n{}");
        assert_eq!(strip_code_fences("```{}```"), "```{}```");
        assert_eq!(strip_code_fences(""), "");
        assert_eq!(strip_code_fences("```"), "```");
    }

    fn response(json: serde_json::Value) -> Answer<'static> {
        response_of(CHAT, json)
    }

    fn response_of(wire: Wire, json: serde_json::Value) -> Answer<'static> {
        let text: &'static str = Box::leak(json.to_string().into_boxed_str());
        parse_response(wire, text.as_bytes(), &Redactor::default()).unwrap()
    }

    fn reply(content: &str) -> Answer<'static> {
        response(
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}),
        )
    }

    #[test]
    fn valid_object_and_wrapped_values_parse() {
        let v: serde_json::Value = judge(&reply(r#"{"vendor":"ACME"}"#), false).unwrap();
        assert_eq!(v["vendor"], "ACME");
        let n: i64 = judge(&reply(r#"{"value": 42}"#), true).unwrap();
        assert_eq!(n, 42);
        let list: Vec<String> =
            judge(&reply("```json\n{\"value\": [\"a\",\"b\"]}\n```"), true).unwrap();
        assert_eq!(list, ["a", "b"]);
    }

    #[test]
    fn rejections_quote_the_reason() {
        let e = judge::<i64>(&reply("Sure! 42"), true).unwrap_err();
        assert!(
            e.error
                .starts_with("the reply is not valid JSON: expected value at line 1 column 1"),
            "{}",
            e.error
        );
        assert_eq!(e.reply, "Sure! 42");

        let e = judge::<i64>(&reply(r#"{"value": "x"}"#), true).unwrap_err();
        assert!(
            e.error.starts_with(
                "the reply does not match the schema: invalid type: string \"x\", expected i64"
            ),
            "{}",
            e.error
        );

        let e = judge::<i64>(&reply("42"), true).unwrap_err();
        assert!(e.error.contains("does not match the schema"), "{}", e.error);

        let refusal = response(
            serde_json::json!({"choices": [{"message": {"content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]}),
        );
        let e = judge::<i64>(&refusal, false).unwrap_err();
        assert_eq!(e.error, "the model refused: I can't help with that.");
        assert_eq!(e.reply, "I can't help with that.");

        let cut = response(
            serde_json::json!({"choices": [{"message": {"content": "{\"value\": [1, 2"}, "finish_reason": "length"}]}),
        );
        let e = judge::<Vec<i64>>(&cut, true).unwrap_err();
        assert!(e.error.contains("truncated"), "{}", e.error);

        let empty = response(serde_json::json!({"choices": []}));
        assert_eq!(
            judge::<i64>(&empty, false).unwrap_err().error,
            "the reply had no content"
        );
        let no_content =
            response(serde_json::json!({"choices": [{"message": {"role": "assistant"}}]}));
        assert_eq!(
            judge::<i64>(&no_content, false).unwrap_err().error,
            "the reply had no content"
        );
    }

    #[test]
    fn usage_is_read_when_present() {
        let r = parse_response(CHAT, br#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#, &Redactor::default()).unwrap();
        assert_eq!(
            (r.usage.prompt_tokens, r.usage.completion_tokens),
            (Some(12), Some(3))
        );
        for wire in [CHAT, Wire::Anthropic, Wire::Gemini, Wire::Ollama] {
            assert!(matches!(
                parse_response(wire, b"not json", &Redactor::default()),
                Err(Error::MalformedResponse(_))
            ));
        }
    }

    #[test]
    fn anthropic_tool_use_is_the_content_and_is_kept_for_the_tool_result() {
        let answer = response_of(
            Wire::Anthropic,
            serde_json::json!({"type": "message", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"value": 3}}
            ], "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 4}}),
        );
        assert_eq!(answer.content().unwrap(), r#"{"value":3}"#);
        assert_eq!(answer.usage.completion_tokens, Some(4));
        let rejected = answer.rejection("bad".into(), r#"{"value":3}"#);
        let (block, id) = rejected.tool_use.unwrap();
        assert_eq!(id, "toolu_1");
        assert!(block.contains(r#""type":"tool_use""#), "{block}");

        let cut = response_of(
            Wire::Anthropic,
            serde_json::json!({"content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}], "stop_reason": "max_tokens"}),
        );
        assert!(cut
            .content()
            .unwrap_err()
            .error
            .contains("stop_reason = \"max_tokens\""));
        let refused = response_of(
            Wire::Anthropic,
            serde_json::json!({"content": [{"type": "text", "text": "No."}], "stop_reason": "refusal"}),
        );
        let e = refused.content().unwrap_err();
        assert_eq!(
            e.error,
            "the model refused (stop_reason = \"refusal\"): No."
        );
        assert_eq!(e.reply, "No.");
    }

    #[test]
    fn gemini_parts_finish_reasons_and_blocks() {
        let answer = response_of(
            Wire::Gemini,
            serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "thinking…", "thought": true}, {"text": "{\"value\":"}, {"text": "1}"}
            ]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}),
        );
        assert_eq!(answer.content().unwrap(), r#"{"value":1}"#);
        assert_eq!(answer.usage.prompt_tokens, Some(5));
        let cut = response_of(
            Wire::Gemini,
            serde_json::json!({"candidates": [{"content": {"parts": [{"text": "{"}]}, "finishReason": "MAX_TOKENS"}]}),
        );
        assert!(cut.content().unwrap_err().error.contains("truncated"));
        let unsafe_reply = response_of(
            Wire::Gemini,
            serde_json::json!({"candidates": [{"finishReason": "SAFETY"}]}),
        );
        assert_eq!(
            unsafe_reply.content().unwrap_err().error,
            "the reply was blocked (finishReason = SAFETY)"
        );
        let blocked = response_of(
            Wire::Gemini,
            serde_json::json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
        );
        assert_eq!(
            blocked.content().unwrap_err().error,
            "the prompt was blocked (blockReason = PROHIBITED_CONTENT)"
        );
    }

    #[test]
    fn ollama_message_and_length() {
        let answer = response_of(
            Wire::Ollama,
            serde_json::json!({"model": "m", "message": {"role": "assistant", "content": "{}"}, "done": true, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 1}),
        );
        assert_eq!(answer.content().unwrap(), "{}");
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: Some(3),
                completion_tokens: Some(1),
                ..Usage::default()
            }
        );
        let cut = response_of(
            Wire::Ollama,
            serde_json::json!({"message": {"content": "{"}, "done_reason": "length"}),
        );
        assert!(cut
            .content()
            .unwrap_err()
            .error
            .contains("done_reason = \"length\""));
        // A partial response (`done: false`, whatever `done_reason` says)
        // is cut short too; a missing `done` is not taken to mean that.
        for reason in [
            serde_json::json!("stop"),
            serde_json::json!(""),
            serde_json::Value::Null,
        ] {
            let partial = response_of(
                Wire::Ollama,
                serde_json::json!({"message": {"content": "{}"}, "done": false, "done_reason": reason}),
            );
            assert_eq!(
                partial.content().unwrap_err().error,
                "the reply was truncated (done = false); answer with a shorter value"
            );
        }
        let no_done = response_of(
            Wire::Ollama,
            serde_json::json!({"message": {"content": "{}"}}),
        );
        assert_eq!(no_done.content().unwrap(), "{}");
    }

    /// Every way a wire says a reply was cut off survives a cassette: the
    /// replayed answer says it the same way.
    #[test]
    fn every_truncation_a_wire_reports_is_replayed_as_recorded() {
        let cut = [
            (
                CHAT,
                serde_json::json!({"choices": [{"message": {"content": "{"}, "finish_reason": "length"}]}),
            ),
            (
                Wire::Anthropic,
                serde_json::json!({"content": [{"type": "text", "text": "{"}], "stop_reason": "max_tokens"}),
            ),
            (
                Wire::Anthropic,
                serde_json::json!({"content": [{"type": "text", "text": "{"}], "stop_reason": "model_context_window_exceeded"}),
            ),
            (
                Wire::Gemini,
                serde_json::json!({"candidates": [{"content": {"parts": [{"text": "{"}]}, "finishReason": "MAX_TOKENS"}]}),
            ),
            (
                Wire::Ollama,
                serde_json::json!({"message": {"content": "{"}, "done": false}),
            ),
            (
                Wire::Ollama,
                serde_json::json!({"message": {"content": "{"}, "done": true, "done_reason": "length"}),
            ),
        ];
        let mut seen = Vec::new();
        for (wire, body) in cut {
            let answer = response_of(wire, body);
            let how = answer.truncated.expect("cut off");
            let recorded = answer.recorded(&|t: &str| t.to_owned());
            let replayed = Answer::replayed(&recorded);
            assert_eq!(replayed.truncated, Some(how));
            assert_eq!(replayed.content.as_deref(), Some("{"));
            seen.push(how);
        }
        seen.sort_unstable();
        let mut known = TRUNCATIONS.to_vec();
        known.sort_unstable();
        assert_eq!(seen, known);
    }

    /// A cassette keeps what judging a reply needs: its text, a refusal's
    /// reason and text, and the usage when the server reported any.
    #[test]
    fn a_recorded_answer_is_judged_like_the_server_s() {
        let round_trip = |answer: &Answer<'_>| {
            let recorded = answer.recorded(&|t: &str| t.replace("secret", "[REDACTED]"));
            (
                recorded.clone(),
                Answer::replayed(&recorded).content().map(str::to_owned),
            )
        };
        let done = response(
            serde_json::json!({"choices": [{"message": {"content": "{\"value\": 1}"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
        );
        let (recorded, judged) = round_trip(&done);
        assert_eq!(recorded.finish, Finish::Stop);
        assert_eq!(judged.unwrap(), "{\"value\": 1}");
        let usage = recorded.usage.expect("usage reported");
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (Some(12), Some(3))
        );
        let replayed = Answer::replayed(&recorded);
        assert_eq!(replayed.usage, done.usage);

        let unreported = reply("1");
        assert!(round_trip(&unreported).0.usage.is_none());

        let refused = response(
            serde_json::json!({"choices": [{"message": {"refusal": "No secret for you."}}]}),
        );
        let (recorded, judged) = round_trip(&refused);
        assert_eq!(recorded.finish, Finish::Refused);
        let rejected = judged.unwrap_err();
        assert_eq!(rejected.error, "the model refused: No [REDACTED] for you.");
        assert_eq!(rejected.reply, "No [REDACTED] for you.");
        // A refusal recorded without its reason is still a refusal.
        let bare = Recorded {
            detail: None,
            ..recorded
        };
        assert_eq!(
            Answer::replayed(&bare).content().unwrap_err().error,
            "the model refused"
        );
    }

    /// What a server says instead of an answer is quoted redacted first,
    /// then bounded and escaped: a key across the cut is not half shown.
    #[test]
    fn refusals_and_reasons_are_redacted_bounded_and_escaped() {
        let key = "sk-refusal-key-0123456789";
        let redactor = Redactor::new(Some(key), None);
        let text = format!("{}{key}{}", "a".repeat(REFUSAL_CHARS - 5), "b".repeat(100));
        let body = serde_json::json!({"choices": [{"message": {"refusal": text}}]}).to_string();
        let answer = parse_response(CHAT, body.as_bytes(), &redactor).unwrap();
        let error = answer.content().unwrap_err().error;
        assert!(!error.contains("sk-ref"), "{error}");
        assert!(error.ends_with("a[REDA… (105 more bytes)"), "{error}");

        let body =
            serde_json::json!({"candidates": [{"finishReason": "OTHER\n\u{1b}[2J".repeat(100)}]})
                .to_string();
        let answer = parse_response(Wire::Gemini, body.as_bytes(), &redactor).unwrap();
        let error = answer.content().unwrap_err().error;
        assert!(
            error.starts_with("the reply was blocked (finishReason = OTHER\\n\\u{1b}[2JOTHER"),
            "{error}"
        );
        assert!(error.ends_with(" more bytes))"), "{error}");
        assert!(!error.chars().any(char::is_control), "{error}");
    }
}

#[cfg(test)]
mod runaway_tests {
    use super::runaway;

    #[test]
    fn runs_at_the_end_are_found_with_their_field() {
        let email = format!(r#"{{"name":"A","email":"x{}"#, "Cancel".repeat(20));
        assert_eq!(
            runaway(&email).as_deref(),
            Some("while repeating `Cancel` (in `email`)")
        );
        let tags = format!(r#"{{"tags":["tea","{}"#, "🍵".repeat(30));
        assert_eq!(
            runaway(&tags).as_deref(),
            Some("while repeating `🍵` (in `tags`)")
        );
        let lines = format!(r#"{{"lines":[{}"#, r#"{"item":"tea","qty":1},"#.repeat(10));
        let found = runaway(&lines).unwrap();
        assert!(found.contains("qty"), "{found}");
        // Too short a run, or none: nothing said.
        assert_eq!(runaway(r#"{"a":"abababab"}"#), None);
        assert_eq!(runaway(r#"{"name":"Anna Schmidt","email":"anna@exa"#), None);
        assert_eq!(runaway(""), None);
    }
}
