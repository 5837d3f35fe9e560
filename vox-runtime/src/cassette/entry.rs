//! One recorded exchange: what was asked, provider-independently, and what
//! came back; its line of JSON in a cassette file; the key that names it;
//! and what tells two requests apart.

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{CassetteField, Error, TransportErrorKind};
use crate::media::load::{Content, Loaded};

/// Part of every key: a new format changes every key, so an old cassette
/// misses instead of replaying something it did not mean.
const KEY_FORMAT: &str = "vox-cassette-1";

/// One rejected attempt of a call: the model's reply (redacted) and the
/// correction the runtime answered it with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    pub reply: String,
    pub correction: String,
}

/// What one attempt of an `@ai` call asks, whatever the provider: the
/// content of the key.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub function: &'a str,
    /// The model as the program names it (`model = …` of the function, the
    /// configured default model, or a fallback's `provider:model`); `None`
    /// for the provider's default.
    pub model: Option<&'a str>,
    pub instruction: &'a str,
    /// The schema's name and a hash of its text (`Invoice@…`).
    pub schema: String,
    /// The arguments as the prompt shows them (a JSON object).
    pub arguments: &'a str,
    /// The rejected attempts before this one.
    pub conversation: &'a [Turn],
}

/// How a recorded exchange ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Finish {
    /// An answer, complete.
    Stop,
    /// An answer cut off at the completion limit; `detail` says how the
    /// server said so.
    Length,
    /// A refusal or a block; `detail` is the runtime's description.
    Refused,
    /// An HTTP status worth falling back from (after the retries).
    HttpError,
    /// No connection could be made (after the retries).
    ConnectError,
    /// A timeout (after the retries).
    Timeout,
    /// The connection failed in flight (after the retries).
    ConnectionError,
}

/// Token usage as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordedUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// What came back for one request, whatever the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Recorded {
    pub finish: Finish,
    /// The reply's text (for a refusal, what the model said instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For `http_error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
    /// The tools the model called instead of answering (redacted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<RecordedCall>,
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

impl Recorded {
    /// The failure a call fell back from, as recorded (`None` for a reply).
    pub fn failure(error: &Error) -> Option<Recorded> {
        let (finish, status, detail) = match error {
            Error::Http {
                status,
                body_excerpt,
            } => (Finish::HttpError, Some(*status), body_excerpt.clone()),
            Error::Transport { kind, message } => (
                match kind {
                    TransportErrorKind::Connect => Finish::ConnectError,
                    TransportErrorKind::Timeout => Finish::Timeout,
                    _ => Finish::ConnectionError,
                },
                None,
                message.clone(),
            ),
            _ => return None,
        };
        Some(Recorded {
            finish,
            content: None,
            detail: Some(detail),
            status,
            usage: None,
            tool_calls: Vec::new(),
        })
    }

    /// The recorded failure as the error it was, or `None` for a reply.
    pub fn as_error(&self) -> Option<Error> {
        let message = self.detail.clone().unwrap_or_default();
        let kind = match self.finish {
            Finish::Stop | Finish::Length | Finish::Refused => return None,
            Finish::HttpError => {
                return Some(Error::Http {
                    status: self.status.unwrap_or(500),
                    body_excerpt: message,
                })
            }
            Finish::ConnectError => TransportErrorKind::Connect,
            Finish::Timeout => TransportErrorKind::Timeout,
            Finish::ConnectionError => TransportErrorKind::Other,
        };
        Some(Error::Transport { kind, message })
    }
}

/// A cassette entry: the request and its reply.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: Key,
    pub function: String,
    pub model: Option<String>,
    pub instruction: String,
    pub schema: String,
    pub arguments: Box<RawValue>,
    pub conversation: Vec<Turn>,
    pub reply: Recorded,
}

/// An entry's line, fields in the order they are written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    key: String,
    function: String,
    model: Option<String>,
    instruction: String,
    schema: String,
    arguments: Box<RawValue>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conversation: Vec<Turn>,
    reply: Recorded,
}

impl Entry {
    /// The entry recording `reply` to `request`.
    pub fn new(request: &Request<'_>, reply: Recorded) -> Result<Entry, Error> {
        let arguments = RawValue::from_string(request.arguments.to_owned()).map_err(|e| {
            Error::Config(format!(
                "internal error: the arguments of `{}` are not JSON ({e})",
                request.function
            ))
        })?;
        Ok(Entry {
            key: request.key(),
            function: request.function.to_owned(),
            model: request.model.map(str::to_owned),
            instruction: request.instruction.to_owned(),
            schema: request.schema.clone(),
            arguments,
            conversation: request.conversation.to_vec(),
            reply,
        })
    }

    /// The request this entry answers.
    pub fn request(&self) -> Request<'_> {
        Request {
            function: &self.function,
            model: self.model.as_deref(),
            instruction: &self.instruction,
            schema: self.schema.clone(),
            arguments: self.arguments.get(),
            conversation: &self.conversation,
        }
    }

    /// Parses one line of a cassette. The key is computed again from the
    /// content (the written one is for readers), so an entry edited by
    /// hand is found under what it now says.
    pub fn parse(line: &str) -> Result<Entry, String> {
        let line: Line = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if !line.arguments.get().trim_start().starts_with('{') {
            return Err("`arguments` must be a JSON object".into());
        }
        let mut entry = Entry {
            key: Key(0),
            function: line.function,
            model: line.model,
            instruction: line.instruction,
            schema: line.schema,
            arguments: line.arguments,
            conversation: line.conversation,
            reply: line.reply,
        };
        entry.key = entry.request().key();
        Ok(entry)
    }

    /// The entry as one line of JSON (no newline), the same bytes for the
    /// same entry.
    pub fn to_line(&self) -> String {
        let line = Line {
            key: self.key.to_string(),
            function: self.function.clone(),
            model: self.model.clone(),
            instruction: self.instruction.clone(),
            schema: self.schema.clone(),
            arguments: self.arguments.clone(),
            conversation: self.conversation.clone(),
            reply: self.reply.clone(),
        };
        // Strings, integers and validated raw JSON: serializing cannot fail.
        serde_json::to_string(&line).unwrap_or_default()
    }
}

/// A request's key: a 128-bit FNV-1a hash of its content, the same on
/// every platform and in every version that keeps [`KEY_FORMAT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key(pub u128);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// FNV-1a, 128 bits, over length-prefixed parts (so that no two lists of
/// parts hash the same bytes).
pub(crate) struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    pub fn new() -> Fnv128 {
        Fnv128(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u128::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    pub fn part(&mut self, part: &[u8]) -> &mut Fnv128 {
        self.bytes(&(part.len() as u64).to_le_bytes());
        self.bytes(part);
        self
    }

    pub fn finish(&self) -> u128 {
        self.0
    }
}

/// The arguments as a cassette keys them when they hold media: each
/// placeholder (`"<image 1>"`) names its media by a hash of the content
/// (`"<image 1 fnv128:…>"`; an URL's text for a URL), so a key changes
/// with the media, and the cassette holds no bytes of them.
pub(crate) fn arguments_with_media(arguments: &str, media: &[Loaded]) -> String {
    let mut out = arguments.to_owned();
    for m in media {
        let hash = match &m.content {
            Content::Inline { bytes, .. } => Fnv128::new().part(bytes).finish(),
            Content::Url(url) => Fnv128::new().part(b"url").part(url.as_bytes()).finish(),
        };
        let placeholder = m.placeholder();
        let named = format!("<{} {} fnv128:{hash:032x}>", m.kind, m.number);
        out = out.replace(&format!("\"{placeholder}\""), &format!("\"{named}\""));
    }
    out
}

/// `Name@hash` of a schema's text: what a key and an entry say of it.
pub(crate) fn schema_id(name: &str, json: &str) -> String {
    let hash = Fnv128::new().part(json.as_bytes()).finish();
    format!("{name}@{:016x}", (hash >> 64) as u64)
}

impl Request<'_> {
    /// The key of this request.
    pub fn key(&self) -> Key {
        let mut hash = Fnv128::new();
        hash.part(KEY_FORMAT.as_bytes())
            .part(self.function.as_bytes());
        match self.model {
            Some(model) => hash.part(b"model").part(model.as_bytes()),
            None => hash.part(b"default model"),
        };
        hash.part(self.instruction.as_bytes())
            .part(self.schema.as_bytes())
            .part(canonical_json(self.arguments).as_bytes());
        for turn in self.conversation {
            hash.part(turn.reply.as_bytes())
                .part(turn.correction.as_bytes());
        }
        Key(hash.finish())
    }

    /// What differs between this request and `other` (of the same
    /// function), in the order a user checks them.
    pub fn differences(&self, other: &Request<'_>) -> Vec<CassetteField> {
        let mut fields = Vec::new();
        if self.model != other.model {
            fields.push(CassetteField::Model);
        }
        if self.instruction != other.instruction {
            fields.push(CassetteField::Instruction);
        }
        if self.schema != other.schema {
            fields.push(CassetteField::Schema);
        }
        if canonical_json(self.arguments) != canonical_json(other.arguments) {
            fields.push(CassetteField::Arguments);
        }
        if self.conversation != other.conversation {
            fields.push(CassetteField::Conversation);
        }
        fields
    }

    /// A sentence on how `recorded` (the nearest entry) differs from this
    /// request, naming the fields in `fields`.
    pub fn describe_differences(&self, recorded: &Request<'_>, fields: &[CassetteField]) -> String {
        let mut out = String::new();
        for field in fields {
            if !out.is_empty() {
                out.push_str("; ");
            }
            match field {
                CassetteField::Model => {
                    let name = |m: Option<&str>| {
                        m.map_or("the provider's default".to_owned(), |m| format!("`{m}`"))
                    };
                    let _ = write!(
                        out,
                        "model: recorded {}, now {}",
                        name(recorded.model),
                        name(self.model)
                    );
                }
                CassetteField::Instruction => {
                    let _ = write!(
                        out,
                        "instruction: recorded {}, now {}",
                        excerpt(recorded.instruction),
                        excerpt(self.instruction)
                    );
                }
                CassetteField::Schema => {
                    let _ = write!(
                        out,
                        "schema of the return type: recorded `{}`, now `{}`",
                        recorded.schema, self.schema
                    );
                }
                CassetteField::Arguments => {
                    let names = differing_arguments(recorded.arguments, self.arguments);
                    let _ = write!(out, "arguments {names}");
                }
                CassetteField::Conversation => {
                    let _ = write!(
                        out,
                        "conversation: recorded after {} rejected repl{}, now after {}",
                        recorded.conversation.len(),
                        if recorded.conversation.len() == 1 {
                            "y"
                        } else {
                            "ies"
                        },
                        self.conversation.len()
                    );
                    if recorded.conversation.len() == self.conversation.len() {
                        out.push_str(" (a reply or the runtime's correction of it differs)");
                    }
                }
            }
        }
        out
    }
}

/// Which arguments differ, with their values (bounded).
fn differing_arguments(recorded: &str, now: &str) -> String {
    let parse = |text: &str| -> Vec<(String, serde_json::Value)> {
        match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text) {
            Ok(map) => map.into_iter().collect(),
            Err(_) => Vec::new(),
        }
    };
    let (recorded, now) = (parse(recorded), parse(now));
    let find = |list: &'_ [(String, serde_json::Value)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| (canonical_value(v), plain(v)))
    };
    let mut names: Vec<&str> = recorded
        .iter()
        .chain(&now)
        .map(|(n, _)| n.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut parts = Vec::new();
    for name in names {
        let (was, is) = (find(&recorded, name), find(&now, name));
        match (was, is) {
            (Some((a, _)), Some((b, _))) if a == b => {}
            (Some((_, a)), Some((_, b))) => {
                parts.push(format!("`{name}`: {}", difference(&a, &b)));
            }
            (was, is) => {
                let show = |v: Option<(String, String)>| {
                    v.map_or("(none)".to_owned(), |(_, v)| window(&v, 0))
                };
                parts.push(format!(
                    "`{name}`: recorded {}, now {}",
                    show(was),
                    show(is)
                ));
            }
        }
    }
    if parts.is_empty() {
        "(the same values written differently)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A value as a reader compares it: a string's text itself (not its JSON
/// with quotes and escapes), anything else as canonical JSON.
fn plain(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => canonical_value(other),
    }
}

/// Where two texts first differ, with both around that place: `recorded
/// "…Total: 12.50 EUR…", now "…Total: 12.60 EUR…" (from character 143)`.
fn difference(recorded: &str, now: &str) -> String {
    let at = recorded
        .chars()
        .zip(now.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let place = if at == 0 {
        String::new()
    } else {
        format!(" (they differ from character {})", at + 1)
    };
    format!(
        "recorded {}, now {}{place}",
        window(recorded, at),
        window(now, at)
    )
}

/// `text` from a little before character `at` to some way after it,
/// quoted, `…` where it is cut, quotes, backslashes and control characters
/// escaped once.
fn window(text: &str, at: usize) -> String {
    quoted(text, at, 40)
}

/// `text` from 20 characters before character `at` to `after` characters
/// after it, quoted, with `…` where it is cut and quotes, backslashes and
/// control characters escaped once.
fn quoted(text: &str, at: usize, after: usize) -> String {
    const BEFORE: usize = 20;
    let from = at.saturating_sub(BEFORE);
    let mut out = String::from("\"");
    if from > 0 {
        out.push('…');
    }
    let mut chars = text.chars().skip(from);
    for c in chars.by_ref().take(at - from + after) {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "{}", c.escape_default());
            }
            c => out.push(c),
        }
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out.push('"');
    out
}

/// At most 60 characters of `text`, quoted, control characters escaped.
fn excerpt(text: &str) -> String {
    quoted(text, 0, 60)
}

/// `text` as canonical JSON: no whitespace, object keys sorted by their
/// bytes (whatever order or spacing it was written in, and whether or not
/// serde_json keeps insertion order in this build). Text that is not JSON
/// is kept as is.
pub(crate) fn canonical_json(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => canonical_value(&value),
        Err(_) => text.to_owned(),
    }
}

fn canonical_value(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut fields: Vec<(&String, &serde_json::Value)> = map.iter().collect();
            fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, value)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(name.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(arguments: &'a str, conversation: &'a [Turn]) -> Request<'a> {
        Request {
            function: "extract",
            model: Some("gpt-4o-mini"),
            instruction: "Extract it.",
            schema: schema_id("Invoice", r#"{"type":"object"}"#),
            arguments,
            conversation,
        }
    }

    #[test]
    fn the_key_is_stable_and_ignores_how_arguments_are_spaced_or_ordered() {
        let a = request(r#"{"text":"A","n":1}"#, &[]);
        let b = request(r#"{ "n": 1, "text": "A" }"#, &[]);
        assert_eq!(a.key(), b.key());
        // Pinned: a key that changes breaks every committed cassette.
        assert_eq!(a.key().to_string(), KEY_PIN);
        assert!(a.differences(&b).is_empty());
    }

    const KEY_PIN: &str = "1d57dd1dad1b96b5eba6c38c366cb789";

    #[test]
    fn every_part_of_the_request_changes_the_key() {
        let turn = [Turn {
            reply: "{}".into(),
            correction: "missing `total`".into(),
        }];
        let base = request(r#"{"text":"A"}"#, &[]);
        let mut variants = vec![
            request(r#"{"text":"B"}"#, &[]),
            request(r#"{"text":"A"}"#, &turn),
        ];
        let mut v = base.clone();
        v.model = None;
        variants.push(v);
        let mut v = base.clone();
        v.instruction = "Extract it!";
        variants.push(v);
        let mut v = base.clone();
        v.schema = schema_id("Invoice", r#"{"type":"array"}"#);
        variants.push(v);
        let mut v = base.clone();
        v.function = "other";
        variants.push(v);
        let mut keys: Vec<Key> = variants.iter().map(Request::key).collect();
        keys.push(base.key());
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), variants.len() + 1);
        // Parts cannot run into each other.
        let mut a = base.clone();
        a.instruction = "ab";
        a.schema = "c".into();
        let mut b = base.clone();
        b.instruction = "a";
        b.schema = "bc".into();
        assert_ne!(a.key(), b.key());
    }

    #[test]
    fn a_line_round_trips_to_the_same_bytes() {
        let turn = [Turn {
            reply: "not json \u{1b}".into(),
            correction: "expected a value".into(),
        }];
        let request = request(r#"{"text":"A \"quoted\" ✓","n":[1.5,2]}"#, &turn);
        let entry = Entry::new(
            &request,
            Recorded {
                finish: Finish::Stop,
                content: Some(r#"{"total":1}"#.into()),
                detail: None,
                status: None,
                tool_calls: Vec::new(),
                usage: Some(RecordedUsage {
                    prompt_tokens: Some(10),
                    completion_tokens: None,
                    ..Default::default()
                }),
            },
        )
        .unwrap();
        let line = entry.to_line();
        assert!(!line.contains('\n'));
        let again = Entry::parse(&line).unwrap();
        assert_eq!(again.to_line(), line);
        assert_eq!(again.key, request.key());
        assert!(
            line.contains(r#""arguments":{"text":"A \"quoted\" ✓","n":[1.5,2]}"#),
            "{line}"
        );
    }

    #[test]
    fn differences_name_the_arguments_that_differ() {
        let a = request(r#"{"text":"A","n":1}"#, &[]);
        let b = request(r#"{"text":"B","n":1}"#, &[]);
        let fields = b.differences(&a);
        assert_eq!(fields, vec![CassetteField::Arguments]);
        assert_eq!(
            b.describe_differences(&a, &fields),
            r#"arguments `text`: recorded "A", now "B""#
        );
    }

    #[test]
    fn recorded_failures_come_back_as_the_same_errors() {
        for error in [
            Error::Http {
                status: 503,
                body_excerpt: "overloaded".into(),
            },
            Error::Transport {
                kind: TransportErrorKind::Timeout,
                message: "timed out".into(),
            },
            Error::Transport {
                kind: TransportErrorKind::Connect,
                message: "refused".into(),
            },
        ] {
            let recorded = Recorded::failure(&error).unwrap();
            assert_eq!(recorded.as_error(), Some(error));
        }
        assert!(Recorded::failure(&Error::Config("x".into())).is_none());
    }
}
