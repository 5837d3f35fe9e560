//! Streamed answers: reading a provider's event stream into the same
//! [`Answer`] a whole response gives, and the partial values shown while
//! it arrives (docs/runtime.md, "Streaming").
//!
//! The body arrives in chunks of any size. [`Lines`] cuts it into lines
//! (a line, and a UTF-8 character, may be split across chunks; `\r\n`,
//! `\n` and `\r` all end one), [`Events`] makes Server-Sent Events of them
//! (`data:` lines joined until a blank line, `event:` names, `:` comments
//! and other fields ignored) or, for Ollama, one event per non-empty line
//! (NDJSON). Each wire reads its events into a [`Streamed`]: the content
//! so far, and how the answer ended. A stream is judged only once it has
//! ended, exactly as a whole response is; what the partials show is
//! computed from the content so far by [`partial::PartialParser`], so it
//! depends only on the bytes received, never on how they were chunked.

pub(crate) mod call;
pub(crate) mod partial;

use crate::error::Error;
use crate::reply::{Answer, Usage};

/// How a wire's stream is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-Sent Events (OpenAI, Anthropic, Gemini with `alt=sse`).
    Sse,
    /// One JSON object per line (Ollama).
    Ndjson,
}

/// One event of a stream: its `event:` name (SSE only) and its data,
/// borrowed from the reader (which reuses its buffers from one event to
/// the next).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event<'a> {
    pub name: Option<&'a str>,
    pub data: &'a str,
}

/// Cuts a byte stream into lines, incrementally: each byte is looked at
/// once, whatever the chunking.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    partial: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting this one belongs
    /// to it.
    after_cr: bool,
}

impl Lines {
    /// Feeds `chunk`, calling `line` for each line it completes (without
    /// its end). A line that is not UTF-8 is an error.
    pub fn push(
        &mut self,
        chunk: &[u8],
        line: &mut dyn FnMut(&str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(at) = memchr::memchr2(b'\n', b'\r', rest) {
            let (head, tail) = rest.split_at(at);
            // A line whole in this chunk is read where it is, not copied.
            let bytes = if self.partial.is_empty() {
                head
            } else {
                self.partial.extend_from_slice(head);
                &self.partial
            };
            let text = std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
                valid_up_to: e.valid_up_to(),
            })?;
            line(text)?;
            self.partial.clear();
            let cr = tail[0] == b'\r';
            rest = &tail[1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// The end of the body: an unterminated last line, if any.
    pub fn finish(&mut self, line: &mut dyn FnMut(&str) -> Result<(), Error>) -> Result<(), Error> {
        if self.partial.is_empty() {
            return Ok(());
        }
        let partial = std::mem::take(&mut self.partial);
        let text = std::str::from_utf8(&partial).map_err(|e| Error::InvalidUtf8 {
            valid_up_to: e.valid_up_to(),
        })?;
        line(text)
    }
}

/// Makes events of lines, as [`Framing`] says.
#[derive(Debug)]
pub(crate) struct Events {
    framing: Framing,
    lines: Lines,
    /// The event's `event:` name, if one was given.
    name: Option<String>,
    data: String,
    has_data: bool,
}

impl Events {
    pub fn new(framing: Framing) -> Events {
        Events {
            framing,
            lines: Lines::default(),
            name: None,
            data: String::new(),
            has_data: false,
        }
    }

    /// Feeds `chunk`, calling `event` for each event it completes.
    pub fn push(
        &mut self,
        chunk: &[u8],
        event: &mut dyn FnMut(Event<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Events {
            framing,
            lines,
            name,
            data,
            has_data,
        } = self;
        lines.push(chunk, &mut |line| {
            Self::line(*framing, name, data, has_data, line, event)
        })
    }

    /// The end of the body: an event not yet closed by a blank line is
    /// dispatched (a server may close right after its last `data:`).
    pub fn finish(
        &mut self,
        event: &mut dyn FnMut(Event<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Events {
            framing,
            lines,
            name,
            data,
            has_data,
        } = self;
        lines.finish(&mut |line| Self::line(*framing, name, data, has_data, line, event))?;
        Self::line(*framing, name, data, has_data, "", event)
    }

    fn line(
        framing: Framing,
        name: &mut Option<String>,
        data: &mut String,
        has_data: &mut bool,
        line: &str,
        event: &mut dyn FnMut(Event<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if framing == Framing::Ndjson {
            if line.trim().is_empty() {
                return Ok(());
            }
            return event(Event {
                name: None,
                data: line,
            });
        }
        if line.is_empty() {
            // The HTML standard's "dispatch the event": nothing without data.
            let result = if std::mem::take(has_data) {
                event(Event {
                    name: name.as_deref(),
                    data,
                })
            } else {
                Ok(())
            };
            *name = None;
            data.clear();
            return result;
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if *has_data {
                    data.push('\n');
                }
                data.push_str(value);
                *has_data = true;
            }
            "event" => {
                let name = name.get_or_insert_with(String::new);
                name.clear();
                name.push_str(value);
            }
            _ => {}
        }
        Ok(())
    }
}

/// What a stream has said so far, whatever the wire.
#[derive(Debug, Default)]
pub(crate) struct Streamed {
    /// The content so far (a forced tool's input JSON, for Anthropic).
    pub content: String,
    /// Whether any content arrived (an empty string is content).
    pub has_content: bool,
    /// A refusal's text, as it goes back into the conversation.
    pub refusal_text: Option<String>,
    /// Why there is no usable answer (a refusal, a block).
    pub refused: Option<String>,
    /// How the server said the reply was cut off.
    pub truncated: Option<&'static str>,
    /// Anthropic: the forced tool's id and name, and the block as sent.
    pub tool: Option<(String, String)>,
    /// Anthropic: the index of the tool's content block.
    pub tool_index: Option<u64>,
    pub tool_block: String,
    /// The tool block of a whole response, as sent.
    pub whole_block: Option<String>,
    pub usage: Usage,
    /// Whether the stream said it was complete (`[DONE]`, `message_stop`,
    /// `done: true`, a finish reason).
    pub finished: bool,
    /// The model that answered and why it stopped, as the stream said.
    pub meta: crate::reply::ResponseMeta,
}

/// How an answer that ended without saying so is reported.
pub(crate) const ENDED_EARLY: &str = "the stream ended before the reply did";

impl Streamed {
    /// Adds `text` to the content.
    pub fn push_content(&mut self, text: &str) {
        self.has_content = true;
        self.content.push_str(text);
    }

    /// A whole response (from a server that did not stream) as what the
    /// stream said.
    pub fn take_whole(&mut self, answer: &Answer<'_>) {
        if let Some(content) = answer.content.as_deref() {
            self.content = content.to_owned();
            self.has_content = true;
        }
        self.refusal_text = answer.reply_otherwise.as_deref().map(str::to_owned);
        self.refused = answer.refused.clone();
        self.truncated = answer.truncated;
        self.usage = answer.usage;
        if let Some((block, id)) = &answer.tool_use {
            self.tool = Some((id.to_string(), String::new()));
            self.whole_block = Some((*block).to_owned());
        }
        self.finished = true;
    }

    /// The stream as one answer, judged as a whole response is.
    pub fn answer(&mut self) -> Answer<'_> {
        if let Some(block) = &self.whole_block {
            self.tool_block = block.clone();
        } else if let Some((id, name)) = &self.tool {
            // The block as the model sent it, for the `tool_result` of a
            // correction; an input that is not JSON (cut off) is `{}`
            // there, and quoted in the correction's text.
            let input = serde_json::from_str::<serde_json::Value>(&self.content)
                .ok()
                .filter(serde_json::Value::is_object)
                .unwrap_or_else(|| serde_json::json!({}));
            self.tool_block = serde_json::json!({
                "type": "tool_use", "id": id, "name": name, "input": input
            })
            .to_string();
        }
        let truncated = self
            .truncated
            .or((!self.finished && self.refused.is_none()).then_some(ENDED_EARLY));
        Answer {
            content: self
                .has_content
                .then_some(std::borrow::Cow::Borrowed(self.content.as_str())),
            refused: self.refused.clone(),
            reply_otherwise: self.refusal_text.as_deref().map(std::borrow::Cow::Borrowed),
            truncated,
            tool_use: self.tool.as_ref().map(|(id, _)| {
                (
                    self.tool_block.as_str(),
                    std::borrow::Cow::Borrowed(id.as_str()),
                )
            }),
            // A function with tools asks whole: a stream has no calls.
            tool_calls: Vec::new(),
            usage: self.usage,
            meta: self.meta.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event, owned.
    #[derive(Debug, PartialEq)]
    struct Owned {
        name: Option<String>,
        data: String,
    }

    fn owned(e: Event<'_>) -> Owned {
        Owned {
            name: e.name.map(str::to_owned),
            data: e.data.to_owned(),
        }
    }

    fn events(framing: Framing, body: &[u8], sizes: &[usize]) -> Vec<Owned> {
        let mut out = Vec::new();
        let mut reader = Events::new(framing);
        let mut at = 0;
        let mut i = 0;
        while at < body.len() {
            let n = sizes[i % sizes.len()].min(body.len() - at);
            reader
                .push(&body[at..at + n], &mut |e| {
                    out.push(owned(e));
                    Ok(())
                })
                .unwrap();
            at += n;
            i += 1;
        }
        reader
            .finish(&mut |e| {
                out.push(owned(e));
                Ok(())
            })
            .unwrap();
        out
    }

    #[test]
    fn sse_events_are_the_same_whatever_the_chunking() {
        let body = ": a comment\r\nevent: ping\r\n\r\nevent: delta\ndata: {\"a\":\"é日本😀\"}\n\ndata: one\ndata: two\r\rdata:[DONE]\n\nevent: lonely\n\nretry: 10\nid: 3\ndata: last";
        let whole = events(Framing::Sse, body.as_bytes(), &[body.len()]);
        assert_eq!(
            whole,
            vec![
                Owned {
                    name: Some("delta".into()),
                    data: "{\"a\":\"é日本😀\"}".into()
                },
                Owned {
                    name: None,
                    data: "one\ntwo".into()
                },
                Owned {
                    name: None,
                    data: "[DONE]".into()
                },
                Owned {
                    name: None,
                    data: "last".into()
                },
            ]
        );
        for sizes in [&[1usize][..], &[2], &[3], &[7], &[16], &[1, 5, 2]] {
            assert_eq!(
                events(Framing::Sse, body.as_bytes(), sizes),
                whole,
                "{sizes:?}"
            );
        }
    }

    #[test]
    fn ndjson_lines_are_events() {
        let body = "{\"a\":1}\r\n\n  \n{\"b\":\"日本\"}";
        for sizes in [&[1usize][..], &[3], &[body.len()]] {
            let got: Vec<String> = events(Framing::Ndjson, body.as_bytes(), sizes)
                .into_iter()
                .map(|e| e.data)
                .collect();
            assert_eq!(got, ["{\"a\":1}", "{\"b\":\"日本\"}"]);
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        let mut reader = Events::new(Framing::Sse);
        let result = reader.push(b"data: \xff\xfe\n\n", &mut |_| Ok(()));
        assert!(
            matches!(result, Err(Error::InvalidUtf8 { .. })),
            "{result:?}"
        );
    }
}
