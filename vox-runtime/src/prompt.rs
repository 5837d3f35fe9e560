//! What the runtime says to the model: the conversation of one `@ai` call
//! and the chat-completions request body that carries it.
//!
//! Pure functions over plain data, so the exact wording and the request
//! shape (SPEC §5: strict `response_format`) are unit-tested without HTTP.

use bytes::Bytes;

use crate::ai_function::{AiFunction, Args};
use crate::error::Error;

/// The parts of one function's requests to one model that are the same for
/// every call, already rendered as JSON: everything before the arguments
/// and everything after the messages. Built once per function (see
/// `AiFunction::request_parts`).
#[derive(Debug, Clone)]
pub(crate) struct RequestParts {
    model: Box<str>,
    /// `{"model":…,"messages":[{system message},{"role":"user","content":"`
    /// followed by the instruction and the function's name, up to where the
    /// arguments go.
    head: Box<[u8]>,
    /// `],"temperature":…,"response_format":{…}}`.
    tail: Box<[u8]>,
}

impl RequestParts {
    /// Renders the constant parts of `function`'s requests to `model`.
    pub fn new(function: &AiFunction, model: &str) -> Result<RequestParts, Error> {
        let name = function.name();
        let instruction = function.instruction().trim();
        let schema_name = function.output().name();
        let mut head = Vec::with_capacity(instruction.len() + 2 * name.len() + model.len() + 300);
        head.extend_from_slice(br#"{"model":""#);
        push_escaped(&mut head, model.as_bytes());
        head.extend_from_slice(br#"","messages":["#);
        // The schema itself travels in `response_format`, which OpenAI,
        // OpenRouter and the common compatible servers enforce; repeating
        // it here would double its prompt tokens.
        push_message(
            &mut head,
            "system",
            &[
                "You are the implementation of the function `",
                name,
                "`. Answer only with one JSON value that matches the JSON Schema `",
                schema_name,
                "` of the response format: no prose, no Markdown, no code fences.",
            ],
        );
        // The first user message, left open for the arguments.
        head.push(b',');
        let separator = if instruction.is_empty() { "" } else { "\n\n" };
        open_message(
            &mut head,
            "user",
            &[
                instruction,
                separator,
                "Function: ",
                name,
                "\nArguments (JSON): ",
            ],
        );

        let schema = function.output().raw()?.get().as_bytes();
        let mut tail = Vec::with_capacity(schema.len() + schema_name.len() + 100);
        tail.push(b']');
        if let Some(temperature) = function.temperature() {
            tail.extend_from_slice(br#","temperature":"#);
            // A non-finite temperature cannot be sent as JSON; serde_json
            // writes it as `null`, which servers read as "the default".
            serde_json::to_writer(&mut tail, &temperature).map_err(|e| Error::Serialize {
                argument: "<temperature>".to_owned(),
                message: e.to_string(),
            })?;
        }
        tail.extend_from_slice(
            br#","response_format":{"type":"json_schema","json_schema":{"name":""#,
        );
        push_escaped(&mut tail, schema_name.as_bytes());
        tail.extend_from_slice(br#"","strict":true,"schema":"#);
        tail.extend_from_slice(schema);
        tail.extend_from_slice(b"}}}");
        Ok(RequestParts {
            model: model.into(),
            head: head.into(),
            tail: tail.into(),
        })
    }

    /// The model these parts are for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of one chat-completions request: model, messages,
    /// temperature and the strict `response_format` (SPEC §5), one
    /// allocation holding the constant parts around `conversation`.
    pub fn request_body(&self, conversation: &Conversation) -> Bytes {
        let mut body =
            Vec::with_capacity(self.head.len() + conversation.after_head.len() + self.tail.len());
        body.extend_from_slice(&self.head);
        body.extend_from_slice(&conversation.after_head);
        body.extend_from_slice(&self.tail);
        Bytes::from(body)
    }
}

/// What varies in the messages of one call, kept as the JSON text it is
/// sent as: the rendered arguments that end the first user message, then,
/// for each rejected attempt, the model's reply and the correction. Each
/// message is escaped once, when it is added, not again for every request.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    /// Follows `RequestParts::head`, precedes `RequestParts::tail`.
    after_head: Vec<u8>,
}

impl Conversation {
    /// The call's arguments, closing the first user message (whose start,
    /// the instruction, is in `RequestParts::head`).
    pub fn start(args: &Args) -> Conversation {
        let args_json = args.as_json();
        let mut after_head = Vec::with_capacity(args_json.len() * 5 / 4 + 16);
        push_escaped(&mut after_head, args_json.as_bytes());
        after_head.extend_from_slice(b"\"}");
        Conversation { after_head }
    }

    /// Records a rejected reply and asks the model to correct it, quoting
    /// the exact error.
    pub fn push_correction(&mut self, rejected_reply: &str, error: &str) {
        self.after_head.push(b',');
        push_message(&mut self.after_head, "assistant", &[rejected_reply]);
        self.after_head.push(b',');
        push_message(
            &mut self.after_head,
            "user",
            &[
                "Your previous reply was rejected: ",
                error,
                "\nAnswer again with only one JSON value that matches the schema.",
            ],
        );
    }
}

/// Appends one `{"role":…,"content":…}` message whose content is the
/// concatenation of `content`.
fn push_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
    open_message(out, role, content);
    out.extend_from_slice(b"\"}");
}

/// Appends the start of a message: its role and the beginning of its
/// content, the concatenation of `content`, with the string left open.
fn open_message(out: &mut Vec<u8>, role: &str, content: &[&str]) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(role.as_bytes());
    out.extend_from_slice(b"\",\"content\":\"");
    for part in content {
        push_escaped(out, part.as_bytes());
    }
}

/// Appends `text` (valid UTF-8) escaped as the inside of a JSON string:
/// `"` and `\` get a backslash, control characters become `\n`, `\t`… or
/// `\u00XX`; everything else, including non-ASCII, is copied as is.
fn push_escaped(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    let mut start = 0;
    let mut i = 0;
    // Eight bytes at a time while none needs escaping: prompts are mostly
    // plain text, so this is the loop that runs.
    while i + 8 <= text.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&text[i..i + 8]);
        if !needs_escape(u64::from_le_bytes(word)) {
            i += 8;
            continue;
        }
        for offset in 0..8 {
            escape_byte(out, text, &mut start, i + offset);
        }
        i += 8;
    }
    while i < text.len() {
        escape_byte(out, text, &mut start, i);
        i += 1;
    }
    out.extend_from_slice(&text[start..]);
}

/// Whether any byte of `word` is a control character, `"` or `\`.
/// (SWAR: `(x - 0x01…) & !x & 0x80…` is non-zero exactly when some byte of
/// `x` is zero, and `(x - n…) & !x & 0x80…` when some byte is below `n`.)
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | has_quote | has_backslash) & HIGH != 0
}

/// Escapes `text[i]` if it needs it, first copying the plain run
/// `text[*start..i]`.
fn escape_byte(out: &mut Vec<u8>, text: &[u8], start: &mut usize, i: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let byte = text[i];
    if byte >= 0x20 && byte != b'"' && byte != b'\\' {
        return;
    }
    out.extend_from_slice(&text[*start..i]);
    *start = i + 1;
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai_function::OutputSchema;
    use std::borrow::Cow;

    static INVOICE: OutputSchema = OutputSchema::new(
        "Invoice",
        r#"{"type":"object","properties":{"vendor":{"type":"string"}},"required":["vendor"],"additionalProperties":false}"#,
        false,
    );
    static EXTRACT: AiFunction = AiFunction::new(
        "extract_invoice",
        "Extract the invoice fields from OCR text.",
        &INVOICE,
    )
    .with_model("gpt-4o-mini")
    .with_temperature(0.2)
    .with_max_iterations(3);

    /// The request body of `conversation` for `function` and `model`, as JSON.
    fn body(function: &AiFunction, model: &str, conversation: &Conversation) -> serde_json::Value {
        let parts = RequestParts::new(function, model).unwrap();
        serde_json::from_slice(&parts.request_body(conversation)).expect("valid JSON")
    }

    /// The messages of a request body as (role, content) pairs.
    fn messages(body: &serde_json::Value) -> Vec<(String, String)> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn first_user_message_starts_with_instruction_then_json_arguments() {
        let args = Args::new().arg("ocr_text", "ACME, 2 widgets").unwrap();
        let conversation = Conversation::start(&args);
        let body = body(&EXTRACT, "gpt-4o-mini", &conversation);
        let [(system_role, system), (user_role, user)] = &messages(&body)[..] else {
            panic!("two messages expected")
        };
        assert_eq!(system_role, "system");
        assert_eq!(
            system,
            "You are the implementation of the function `extract_invoice`. Answer only with one \
             JSON value that matches the JSON Schema `Invoice` of the response format: no prose, \
             no Markdown, no code fences."
        );
        assert_eq!(user_role, "user");
        assert!(user.starts_with(
            "Extract the invoice fields from OCR text.\n\nFunction: extract_invoice\n"
        ));
        let json_start = user.find('{').unwrap();
        let rendered: serde_json::Value = serde_json::from_str(&user[json_start..]).unwrap();
        assert_eq!(rendered, serde_json::json!({"ocr_text": "ACME, 2 widgets"}));
    }

    #[test]
    fn request_body_carries_strict_response_format() {
        let body = body(&EXTRACT, "gpt-4o-mini", &Conversation::start(&Args::new()));
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
        assert_eq!(
            body["response_format"],
            serde_json::json!({"type": "json_schema", "json_schema": {
                "name": "Invoice", "strict": true, "schema": INVOICE.value()}})
        );
        let keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 4, "{keys:?}");
    }

    #[test]
    fn request_body_without_temperature_leaves_it_out() {
        static DEFAULT_TEMPERATURE: AiFunction =
            AiFunction::new("extract_invoice", "Extract.", &INVOICE);
        let body = body(
            &DEFAULT_TEMPERATURE,
            "m",
            &Conversation::start(&Args::new()),
        );
        assert!(body.get("temperature").is_none(), "{body}");
    }

    #[test]
    fn every_text_survives_escaping() {
        // Quotes, backslashes, every control character, non-ASCII, and
        // sequences that look like escapes must all come back verbatim.
        let mut tricky: String = (0u8..0x20).map(char::from).collect();
        tricky.push_str("\"quoted\" back\\slash \\n not-a-newline \u{7f} é 😀 \u{2028} {}`");
        static TRICKY_SCHEMA: OutputSchema =
            OutputSchema::new("Odd\"Name\\", r#"{"type":"object"}"#, false);
        static TRICKY_FN: AiFunction =
            AiFunction::new("odd\"fn", "line one\n\ttab \"q\" \\ \u{1}", &TRICKY_SCHEMA)
                .with_temperature(0.2);
        let args = Args::new().arg("text", &tricky).unwrap();
        let mut conversation = Conversation::start(&args);
        conversation.push_correction(&tricky, &tricky);
        let body = body(&TRICKY_FN, &tricky, &conversation);
        assert_eq!(body["model"], tricky.as_str());
        assert_eq!(
            body["response_format"]["json_schema"]["name"],
            "Odd\"Name\\"
        );
        let messages = body["messages"].as_array().unwrap();
        assert!(messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("`odd\"fn`"));
        let user = messages[1]["content"].as_str().unwrap();
        assert!(user.starts_with("line one\n\ttab \"q\" \\ \u{1}\n\nFunction: odd\"fn\n"));
        let json_start = user.find('{').unwrap();
        let rendered: serde_json::Value = serde_json::from_str(&user[json_start..]).unwrap();
        assert_eq!(rendered["text"], tricky.as_str());
        assert_eq!(messages[2]["content"], tricky.as_str());
        assert!(messages[3]["content"].as_str().unwrap().contains(&tricky));
        // The escaper agrees with serde_json byte for byte.
        let mut ours = Vec::new();
        push_escaped(&mut ours, tricky.as_bytes());
        let theirs = serde_json::to_string(&tricky).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            theirs[1..theirs.len() - 1]
        );
    }

    #[test]
    fn escaper_matches_serde_json_for_every_byte_at_every_offset() {
        // Every ASCII byte (and a multi-byte character) at each position of
        // a word, so the eight-at-a-time path and the tail both see it.
        let mut samples: Vec<String> = Vec::new();
        for byte in 0u8..0x80 {
            for position in 0..17 {
                let mut text = "a".repeat(16);
                text.insert(position, char::from(byte));
                samples.push(text);
            }
        }
        samples.push("ünïcödé ✓ 😀 \u{7f}\u{80}".repeat(3));
        samples.push(String::new());
        for text in samples {
            let mut ours = Vec::new();
            push_escaped(&mut ours, text.as_bytes());
            let theirs = serde_json::to_string(&text).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                theirs[1..theirs.len() - 1],
                "{text:?}"
            );
        }
    }

    #[test]
    fn constant_parts_are_rendered_once_per_function_for_its_model() {
        static ONCE: AiFunction = AiFunction::new("once", "Do it.", &INVOICE);
        let first = ONCE.request_parts("model-a").unwrap();
        let again = ONCE.request_parts("model-a").unwrap();
        match (&first, &again) {
            (Cow::Borrowed(a), Cow::Borrowed(b)) => assert!(std::ptr::eq(*a, *b)),
            other => panic!("kept parts expected: {other:?}"),
        }
        // Another model (a second client with another default) gets its
        // own parts, built for that call.
        let other = ONCE.request_parts("model-b").unwrap();
        assert!(matches!(other, Cow::Owned(_)));
        let body: serde_json::Value =
            serde_json::from_slice(&other.request_body(&Conversation::start(&Args::new())))
                .unwrap();
        assert_eq!(body["model"], "model-b");
        assert_eq!(ONCE.request_parts("model-a").unwrap().model(), "model-a");

        // A broken generated schema is an error for every call, not a panic.
        static BROKEN: OutputSchema = OutputSchema::new("Broken", "{", false);
        static USES_BROKEN: AiFunction = AiFunction::new("f", "", &BROKEN);
        for _ in 0..2 {
            assert!(matches!(
                USES_BROKEN.request_parts("m"),
                Err(Error::Config(m)) if m.contains("vox-codegen bug")
            ));
        }
    }

    #[test]
    fn an_empty_instruction_starts_the_user_message_with_the_function() {
        static BARE: AiFunction = AiFunction::new("bare", "  ", &INVOICE);
        let args = Args::new().arg("n", &1).unwrap();
        let messages = messages(&body(&BARE, "m", &Conversation::start(&args)));
        assert_eq!(
            messages[1],
            (
                "user".to_owned(),
                "Function: bare\nArguments (JSON): {\"n\":1}".to_owned()
            )
        );
    }

    #[test]
    fn correction_appends_reply_and_quotes_error() {
        let mut conversation = Conversation::start(&Args::new());
        conversation.push_correction("{}", "missing field `vendor` at line 1 column 2");
        let messages = messages(&body(&EXTRACT, "m", &conversation));
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2], ("assistant".to_owned(), "{}".to_owned()));
        assert_eq!(messages[3].0, "user");
        assert_eq!(
            messages[3].1,
            "Your previous reply was rejected: missing field `vendor` at line 1 column 2\n\
             Answer again with only one JSON value that matches the schema."
        );
    }
}
