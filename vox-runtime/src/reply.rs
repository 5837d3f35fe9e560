//! What the model said back: reading a chat-completions response and
//! judging one attempt.
//!
//! An attempt is rejected — and the re-prompt loop asks again, quoting the
//! reason — when the reply is a refusal, was cut off, has no content, is not
//! JSON (after stripping code fences) or does not deserialize into the
//! return type. All of it is pure and unit-tested; only the last step,
//! [`parse_content`], depends on the return type.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::Error;

/// The parts of a chat-completions response the runtime uses, borrowing
/// from the body where JSON escapes allow.
#[derive(Debug, Deserialize)]
pub(crate) struct ChatResponse<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    message: Option<ReplyMessage<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct ReplyMessage<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    refusal: Option<Cow<'a, str>>,
}

/// Token usage of one request, when the server reports it.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

/// Parses a successful response body (which must be UTF-8 JSON).
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse<'_>, Error> {
    let text = std::str::from_utf8(body).map_err(|e| Error::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    serde_json::from_str(text).map_err(|e| Error::MalformedResponse(e.to_string()))
}

/// Why one attempt was rejected, and what the model said.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RejectedReply {
    /// The reason, quoted to the model in the correction.
    pub error: String,
    /// The reply as it goes back into the conversation (content, else the
    /// refusal text, else empty).
    pub reply: String,
}

impl ChatResponse<'_> {
    /// The first choice's content, or why the attempt is rejected without
    /// looking at it: a refusal, a truncated reply, no content at all.
    pub fn content(&self) -> Result<&str, RejectedReply> {
        let (message, finish_reason) = match self.choices.first() {
            Some(choice) => (choice.message.as_ref(), choice.finish_reason.as_deref()),
            None => (None, None),
        };
        let content = message.and_then(|m| m.content.as_deref());
        let refusal = message.and_then(|m| m.refusal.as_deref());
        let reject = |error: String| RejectedReply {
            error,
            reply: content.or(refusal).unwrap_or_default().to_owned(),
        };
        if let Some(refusal) = refusal {
            return Err(reject(format!("the model refused: {refusal}")));
        }
        if finish_reason == Some("length") {
            return Err(reject(
                "the reply was truncated (finish_reason = \"length\"); answer with a shorter value"
                    .to_owned(),
            ));
        }
        content.ok_or_else(|| reject("the reply had no content".to_owned()))
    }
}

/// Parses the reply content as the return type (after stripping code
/// fences and, when wrapped, unwrapping `"value"`).
pub(crate) fn parse_content<T: DeserializeOwned>(
    content: &str,
    wrapped: bool,
) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Wrapped<T> {
        value: T,
    }
    let json = strip_code_fences(content);
    let parsed = if wrapped {
        serde_json::from_str::<Wrapped<T>>(json).map(|w| w.value)
    } else {
        serde_json::from_str::<T>(json)
    };
    parsed.map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            format!("the reply does not match the schema: {e}")
        }
        _ => format!("the reply is not valid JSON: {e}"),
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

    /// What the re-prompt loop decides about one response.
    fn judge<T: DeserializeOwned>(
        response: &ChatResponse<'_>,
        wrapped: bool,
    ) -> Result<T, RejectedReply> {
        let content = response.content()?;
        parse_content(content, wrapped).map_err(|error| RejectedReply {
            error,
            reply: content.to_owned(),
        })
    }

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

    fn response(json: serde_json::Value) -> ChatResponse<'static> {
        let text: &'static str = Box::leak(json.to_string().into_boxed_str());
        parse_response(text.as_bytes()).unwrap()
    }

    fn reply(content: &str) -> ChatResponse<'static> {
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
        let r = parse_response(br#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#).unwrap();
        let usage = r.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (Some(12), Some(3))
        );
        assert!(matches!(
            parse_response(b"not json"),
            Err(Error::MalformedResponse(_))
        ));
    }
}
