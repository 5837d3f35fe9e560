//! What the runtime says to the model, whatever the provider: the task
//! and answer rule of the system message, the schema stated as a picture
//! of the value, and the conversation of one `@ai` call (the arguments,
//! then each rejected reply and its correction). The wires render it in
//! their API's shape and read the replies; nothing here knows a wire.
//!
//! Pure functions over plain data, so the exact wording (docs/runtime.md,
//! "What the model sees") is unit-tested without HTTP.

use serde_json::value::RawValue;

use crate::args::Args;
use crate::error::Error;
use crate::media::load::{load_all, Loaded, Rules};
use crate::output::OutputSchema;

/// The task: the function's doc comment, or, without one, a sentence
/// naming the function.
pub(crate) fn task_text(name: &str, instruction: &str) -> String {
    let instruction = instruction.trim();
    if instruction.is_empty() {
        format!("Give the result of `{name}` for the input.")
    } else {
        instruction.to_owned()
    }
}

/// How a reply is asked for, after the task.
const ANSWER_RULE: &str =
    "Answer with only one JSON value, with no prose, Markdown or code fences around it.";

/// The system message (docs/runtime.md, "What the model sees"): the task —
/// the function's doc comment — then how to answer; when `shape` is given
/// (a provider that may not enforce the schema, or whose model never sees
/// it), the schema as a picture of the value, with the fields' docs.
pub(crate) fn system_text(name: &str, instruction: &str, shape: Option<&str>) -> String {
    let mut text = task_text(name, instruction);
    text.push_str("\n\n");
    match shape {
        None => text.push_str(ANSWER_RULE),
        Some(shape) => {
            text.push_str(
                "Answer with only one JSON value that matches this schema, with no prose, \
                 Markdown or code fences around it:\n",
            );
            text.push_str(shape);
        }
    }
    text
}

/// The schema of `function`'s output as the prompt states it: a picture of
/// the value (`{"vendor": <string>, "due_date": <string or null>}`), then
/// the fields' descriptions; the schema's JSON text when the picture would
/// be long.
pub(crate) fn stated_shape(output: &OutputSchema) -> Result<String, Error> {
    let schema = output.try_value()?;
    let mut notes = Vec::new();
    let mut picture = String::new();
    Picture {
        doc: crate::correction::Doc::of(schema),
        following: Vec::new(),
        notes: &mut notes,
    }
    .draw(schema, &mut picture, "$", 0);
    if picture.len() + notes.iter().map(String::len).sum::<usize>() > MAX_PICTURE_CHARS {
        return Ok(output.json_text().to_owned());
    }
    for note in notes {
        picture.push('\n');
        picture.push_str(&note);
    }
    Ok(picture)
}

/// Longest picture of a schema in a prompt; a longer one is sent as the
/// schema's JSON text.
const MAX_PICTURE_CHARS: usize = 4000;

/// Draws a schema as a picture of its value.
struct Picture<'s, 'n> {
    doc: crate::correction::Doc<'s>,
    /// `$ref`s being drawn (a recursive type is drawn once).
    following: Vec<&'s str>,
    /// `- $.path: description` lines.
    notes: &'n mut Vec<String>,
}

impl<'s> Picture<'s, '_> {
    fn draw(&mut self, schema: &'s serde_json::Value, out: &mut String, path: &str, depth: usize) {
        use serde_json::Value;
        if depth > 12 || out.len() > MAX_PICTURE_CHARS {
            out.push_str("<value>");
            return;
        }
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or(r);
            if self.following.contains(&r) {
                out.push('<');
                out.push_str(name);
                out.push_str(", as above>");
                return;
            }
            self.following.push(r);
            self.draw(self.doc.resolve(schema), out, path, depth);
            self.following.pop();
            return;
        }
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            let note = format!("- {path}: {d}");
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    out.push_str(" or ");
                }
                self.draw(b, out, path, depth + 1);
            }
            return;
        }
        if let Some(cases) = schema.get("enum").and_then(Value::as_array) {
            if let [one] = cases.as_slice() {
                out.push_str(&one.to_string());
                return;
            }
            out.push_str("<one of ");
            let list: Vec<String> = cases.iter().map(Value::to_string).collect();
            out.push_str(&list.join(", "));
            out.push('>');
            return;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                out.push('{');
                let props = schema.get("properties").and_then(Value::as_object);
                let names: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (i, name) in names.iter().enumerate() {
                    let Some(p) = props.and_then(|p| p.get(*name)) else {
                        continue;
                    };
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&serde_json::Value::from(*name).to_string());
                    out.push_str(": ");
                    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    let inner = if plain {
                        format!("{path}.{name}")
                    } else {
                        format!("{path}[{}]", serde_json::Value::from(*name))
                    };
                    self.draw(p, out, &inner, depth + 1);
                }
                out.push('}');
            }
            Some("array") => {
                out.push('[');
                match schema.get("items") {
                    Some(items) => self.draw(items, out, &format!("{path}[i]"), depth + 1),
                    None => out.push_str("<value>"),
                }
                out.push_str(", …]");
            }
            Some("string")
                if schema.get("pattern").and_then(Value::as_str)
                    == Some(crate::correction::DECIMAL_PATTERN) =>
            {
                out.push_str("<decimal number as a string, like \"12.50\">");
            }
            Some("null") => out.push_str("null"),
            Some("boolean") => out.push_str("<true or false>"),
            Some(ty) => {
                out.push('<');
                out.push_str(ty);
                out.push('>');
            }
            None => out.push_str("<value>"),
        }
    }
}

/// What varies in the messages of one call: the first user message (the
/// arguments), then, for each rejected attempt, the model's reply and the
/// correction. Each text is kept as the JSON string it is sent as, escaped
/// once when it is added, not again for every request.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    /// The first user message's text, as a JSON string.
    pub first: Box<RawValue>,
    /// The media of the arguments, sent with the first user message (each
    /// labelled with its placeholder where the API has parts), in every
    /// request of the call.
    pub media: Vec<Loaded>,
    /// The function's worked examples, before everything else: each an
    /// input (as the first user message would say it) and the answer, as
    /// JSON strings (docs/runtime.md, "Conversations").
    pub examples: Vec<(Box<RawValue>, Box<RawValue>)>,
    /// The conversation so far (an argument of type `list[Message]`), one
    /// turn per message, after the examples and before the first message:
    /// whether the model said it, and its text as a JSON string.
    pub history: Vec<(bool, Box<RawValue>)>,
    /// What followed the first message: each rejected attempt with its
    /// correction, and each turn of tool calls with their results, in
    /// order.
    pub turns: Vec<Step>,
}

/// What frames a function's calls besides the arguments: the parameter
/// holding the conversation so far, and the worked examples.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing<'a> {
    pub history: Option<&'a str>,
    pub examples: &'a [crate::args::Example],
}

/// One exchange after the first message.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// A rejected reply and its correction.
    Rejected(Turn),
    /// The model's tool calls and their results (docs/runtime.md, "Tools").
    Tools(crate::tools::ToolStep),
}

/// A message of an `@ai` call's history, as a Vox `Message` serializes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryMessage {
    role: HistoryRole,
    content: String,
}

#[derive(serde::Deserialize)]
enum HistoryRole {
    User,
    Assistant,
}

/// A rejected attempt and the correction that answers it, as JSON strings.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    /// The reply as it goes back into the conversation.
    pub reply: Box<RawValue>,
    /// The reply, or a placeholder where it is blank (for the APIs that
    /// refuse empty text).
    pub reply_non_empty: Box<RawValue>,
    /// Anthropic: the `tool_use` block as the model sent it, and its id.
    pub tool_use: Option<(Box<RawValue>, String)>,
    /// What the user says back: the correction quoting the error.
    pub correction: Box<RawValue>,
}

/// `value` (text) as a JSON string. Text always serializes; the fallback is
/// never used.
fn json_string<T: serde::Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("\"\"".to_owned()).unwrap_or_default())
}

const CORRECTION_START: &str = "Your previous reply was rejected: ";
const CORRECTION_END: &str = "\nAnswer again with only the corrected JSON value.";

impl Conversation {
    /// The call's arguments as the first user message, with their media
    /// made ready to send under `rules` (the provider's; `None` for a
    /// request rendered only as a cassette's key): files are read now.
    /// `media_in_text`: the wire's images carry no labels (Ollama's), so
    /// the message says how they line up.
    pub fn start(
        function: Framing<'_>,
        args: &Args,
        rules: Option<Rules<'_>>,
        media_in_text: bool,
    ) -> Result<Conversation, Error> {
        let media = load_all(args.media(), rules)?;
        let mut conversation = Conversation::of_function(function, args)?;
        if !media.is_empty() {
            if media_in_text {
                // Ollama's images have no labels: say how they line up.
                let placeholders: Vec<String> = media.iter().map(Loaded::placeholder).collect();
                conversation.first = json_string(&format_args!(
                    "Input (JSON): {}\nThe images attached are, in order: {}.",
                    args.as_json(),
                    placeholders.join(", ")
                ));
            }
            conversation.media = media;
        }
        Ok(conversation)
    }

    /// The call of `function` with `args` without media: its examples,
    /// its history argument as turns and the other arguments as the first
    /// message.
    pub fn of_function(function: Framing<'_>, args: &Args) -> Result<Conversation, Error> {
        let (history, rest) = match function.history {
            Some(name) => args.split_off(name)?,
            None => (None, args.clone()),
        };
        let mut conversation = Conversation::text_only(&rest);
        if let (Some(history), Some(name)) = (history, function.history) {
            let messages: Vec<HistoryMessage> =
                serde_json::from_str(history.get()).map_err(|e| Error::Serialize {
                    argument: name.to_owned(),
                    message: format!("not a list of messages: {e}"),
                })?;
            conversation.history = messages
                .into_iter()
                .map(|m| {
                    (
                        matches!(m.role, HistoryRole::Assistant),
                        json_string(&m.content),
                    )
                })
                .collect();
        }
        for example in function.examples {
            let input = crate::batch::args_from_json(example.arguments)?;
            conversation.examples.push((
                Conversation::text_only(&input).first,
                json_string(example.output),
            ));
        }
        Ok(conversation)
    }

    /// What comes before the first message, in order: each example's
    /// input and answer, then the history; `true` where the model speaks.
    pub fn before_first(&self) -> impl Iterator<Item = (bool, &RawValue)> {
        self.examples
            .iter()
            .flat_map(|(input, output)| [(false, &**input), (true, &**output)])
            .chain(
                self.history
                    .iter()
                    .map(|(assistant, text)| (*assistant, &**text)),
            )
    }

    /// The call's arguments as the first user message, without their media
    /// (for callers that refuse media arguments first).
    pub fn text_only(args: &Args) -> Conversation {
        // One `str` argument is the message itself; other arguments are
        // their JSON object (docs/runtime.md, "What the model sees").
        let single = args.single_text_json().and_then(|raw| {
            // The JSON string serde wrote is sent as it is, not decoded and
            // written again; it is read borrowed unless it has escapes.
            // Text that starts with printable ASCII (not an escape's
            // backslash) is not blank; other text is decoded to look.
            let printable = raw
                .as_bytes()
                .get(1)
                .is_some_and(|&b| b.is_ascii_graphic() && b != b'\\' && b != b'"');
            let blank = !printable
                && match serde_json::from_str::<&str>(raw) {
                    Ok(text) => text.trim().is_empty(),
                    Err(_) => serde_json::from_str::<String>(raw).ok()?.trim().is_empty(),
                };
            (!blank).then(|| RawValue::from_string(raw.to_owned()).ok())?
        });
        let first = match single {
            Some(first) => first,
            _ if args.is_empty() => json_string("(no input)"),
            _ => json_string(&format_args!("Input (JSON): {}", args.as_json())),
        };
        Conversation {
            first,
            media: Vec::new(),
            examples: Vec::new(),
            history: Vec::new(),
            turns: Vec::new(),
        }
    }

    /// Records a rejected reply and asks the model to correct it, quoting
    /// the exact error.
    pub fn push_correction(&mut self, rejected: &crate::reply::RejectedReply) {
        let reply = &rejected.reply;
        let placeholder = if reply.trim().is_empty() {
            "(no reply)"
        } else {
            reply
        };
        self.turns.push(Step::Rejected(Turn {
            reply: json_string(reply),
            reply_non_empty: json_string(placeholder),
            // The block is JSON the model sent (it was read as JSON); were
            // it not, the turn goes back as plain messages.
            tool_use: rejected.tool_use.as_ref().and_then(|(block, id)| {
                RawValue::from_string(block.clone())
                    .ok()
                    .map(|block| (block, id.clone()))
            }),
            correction: json_string(&format_args!(
                "{CORRECTION_START}{}{CORRECTION_END}",
                rejected.error
            )),
        }));
    }

    /// About how many bytes the messages take.
    pub(crate) fn len(&self) -> usize {
        self.first.get().len()
            + self
                .before_first()
                .map(|(_, text)| text.get().len() + 32)
                .sum::<usize>()
            + self
                .turns
                .iter()
                .map(|step| match step {
                    Step::Rejected(t) => t.reply.get().len() + t.correction.get().len() + 64,
                    Step::Tools(step) => {
                        step.calls
                            .iter()
                            .map(|c| c.arguments.len() + c.name.len() + 64)
                            .sum::<usize>()
                            + step
                                .results
                                .iter()
                                .map(|r| r.content.len() + 64)
                                .sum::<usize>()
                    }
                })
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai_function::AiFunction;
    use crate::config::ResponseFormat;
    use crate::wire::chat::Chat;
    use crate::wire::{RequestParts, Wire};
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
    const CHAT: Wire = Wire::Chat(Chat {
        limit: "max_tokens",
        format: ResponseFormat::JsonSchema,
        stated: false,
    });
    /// A compatible server: the prompt states the schema's shape.
    const STATED: Wire = Wire::Chat(Chat {
        limit: "max_tokens",
        format: ResponseFormat::JsonSchema,
        stated: true,
    });

    fn rejected(reply: &str, error: &str) -> crate::reply::RejectedReply {
        crate::reply::RejectedReply {
            cut_off: false,
            error: error.to_owned(),
            reply: reply.to_owned(),
            tool_use: None,
        }
    }

    fn body(function: &AiFunction, model: &str, conversation: &Conversation) -> serde_json::Value {
        body_of(CHAT, function, model, conversation)
    }

    fn body_of(
        wire: Wire,
        function: &AiFunction,
        model: &str,
        conversation: &Conversation,
    ) -> serde_json::Value {
        let parts = RequestParts::new(function, wire, model, 4096).unwrap();
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
    fn the_task_is_the_system_message_and_one_str_argument_the_user_message() {
        let args = Args::new().arg("ocr_text", "ACME, 2 widgets").unwrap();
        let conversation = Conversation::text_only(&args);
        let first = body(&EXTRACT, "gpt-4o-mini", &conversation);
        let [(system_role, system), (user_role, user)] = &messages(&first)[..] else {
            panic!("two messages expected")
        };
        assert_eq!(system_role, "system");
        assert_eq!(
            system,
            "Extract the invoice fields from OCR text.\n\nAnswer with only one JSON value, \
             with no prose, Markdown or code fences around it."
        );
        assert_eq!(
            (user_role.as_str(), user.as_str()),
            ("user", "ACME, 2 widgets")
        );
        // Several arguments, or one that is not a string: their JSON object.
        let args = Args::new().arg("text", "x").unwrap().arg("n", &2).unwrap();
        let messages_of =
            |args: &Args| messages(&body(&EXTRACT, "m", &Conversation::text_only(args)));
        assert_eq!(
            messages_of(&args)[1].1,
            r#"Input (JSON): {"text":"x","n":2}"#
        );
        let args = Args::new().arg("n", &2).unwrap();
        assert_eq!(messages_of(&args)[1].1, r#"Input (JSON): {"n":2}"#);
    }

    #[test]
    fn a_server_that_may_not_enforce_the_schema_is_told_its_shape() {
        static BILL: OutputSchema = OutputSchema::new(
            "Bill",
            r##"{"type":"object","properties":{"vendor":{"type":"string","description":"Who sent it."},"total":{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$"},"currency":{"type":"string","enum":["USD","EUR"]},"due":{"anyOf":[{"type":"string"},{"type":"null"}]},"lines":{"type":"array","items":{"$ref":"#/$defs/Line"}},"status":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Paid"]}},"required":["kind"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Open"]},"days":{"type":"integer"}},"required":["kind","days"],"additionalProperties":false}]}},"required":["vendor","total","currency","due","lines","status"],"additionalProperties":false,"$defs":{"Line":{"type":"object","properties":{"qty":{"type":"integer"},"sub":{"anyOf":[{"$ref":"#/$defs/Line"},{"type":"null"}]}},"required":["qty","sub"],"additionalProperties":false}}}"##,
            false,
        );
        static EXTRACT_BILL: AiFunction = AiFunction::new("extract_bill", "Read the bill.", &BILL);
        let args = Args::new().arg("text", "ACME 12.50 EUR").unwrap();
        for wire in [STATED, Wire::Ollama] {
            let body = body_of(wire, &EXTRACT_BILL, "m", &Conversation::text_only(&args));
            let messages = messages(&body);
            assert_eq!(
                messages[0].1,
                "Read the bill.\n\nAnswer with only one JSON value that matches this schema, \
                 with no prose, Markdown or code fences around it:\n\
                 {\"vendor\": <string>, \"total\": <decimal number as a string, like \"12.50\">, \
                 \"currency\": <one of \"USD\", \"EUR\">, \"due\": <string> or null, \
                 \"lines\": [{\"qty\": <integer>, \"sub\": <Line, as above> or null}, …], \
                 \"status\": {\"kind\": \"Paid\"} or {\"kind\": \"Open\", \"days\": <integer>}}\n\
                 - $.vendor: Who sent it."
            );
            assert_eq!(messages[1].1, "ACME 12.50 EUR");
        }
        // A long picture gives way to the schema's text.
        let props: Vec<String> = (0..400)
            .map(|i| format!(r#""field_{i}":{{"type":"string"}}"#))
            .collect();
        let names: Vec<String> = (0..400).map(|i| format!(r#""field_{i}""#)).collect();
        let json: &'static str = Box::leak(
            format!(
                r#"{{"type":"object","properties":{{{}}},"required":[{}],"additionalProperties":false}}"#,
                props.join(","),
                names.join(",")
            )
            .into_boxed_str(),
        );
        let wide: &'static OutputSchema =
            Box::leak(Box::new(OutputSchema::new("Wide", json, false)));
        let f: &'static AiFunction = Box::leak(Box::new(AiFunction::new("f", "Do.", wide)));
        let system = messages(&body_of(
            STATED,
            f,
            "m",
            &Conversation::text_only(&Args::new()),
        ))
        .remove(0)
        .1;
        assert!(system.ends_with(json), "{system}");
    }

    #[test]
    fn request_body_carries_strict_response_format() {
        let body = body(
            &EXTRACT,
            "gpt-4o-mini",
            &Conversation::text_only(&Args::new()),
        );
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
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(keys.len(), 5, "{keys:?}");
    }

    #[test]
    fn request_body_without_temperature_leaves_it_out() {
        static DEFAULT_TEMPERATURE: AiFunction =
            AiFunction::new("extract_invoice", "Extract.", &INVOICE);
        let body = body(
            &DEFAULT_TEMPERATURE,
            "m",
            &Conversation::text_only(&Args::new()),
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
        let mut conversation = Conversation::text_only(&args);
        conversation.push_correction(&rejected(&tricky, &tricky));
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
            .starts_with("line one\n\ttab \"q\" \\ \u{1}\n\n"));
        assert_eq!(messages[1]["content"], tricky.as_str());
        assert_eq!(messages[2]["content"], tricky.as_str());
        assert!(messages[3]["content"].as_str().unwrap().contains(&tricky));
    }

    #[test]
    fn constant_parts_are_rendered_once_per_function_for_its_model() {
        static ONCE: AiFunction = AiFunction::new("once", "Do it.", &INVOICE);
        let first = ONCE.request_parts(CHAT, "model-a", 4096, None).unwrap();
        let again = ONCE.request_parts(CHAT, "model-a", 4096, None).unwrap();
        match (&first, &again) {
            (Cow::Borrowed(a), Cow::Borrowed(b)) => assert!(std::ptr::eq(*a, *b)),
            other => panic!("kept parts expected: {other:?}"),
        }
        // Another model (a second client with another default) gets its
        // own parts, built for that call.
        let other = ONCE.request_parts(CHAT, "model-b", 4096, None).unwrap();
        assert!(matches!(other, Cow::Owned(_)));
        let body: serde_json::Value =
            serde_json::from_slice(&other.request_body(&Conversation::text_only(&Args::new())))
                .unwrap();
        assert_eq!(body["model"], "model-b");
        assert_eq!(
            ONCE.request_parts(CHAT, "model-a", 4096, None)
                .unwrap()
                .model(),
            "model-a"
        );

        // A broken generated schema is an error for every call, not a panic.
        static BROKEN: OutputSchema = OutputSchema::new("Broken", "{", false);
        static USES_BROKEN: AiFunction = AiFunction::new("f", "", &BROKEN);
        for _ in 0..2 {
            assert!(matches!(
                USES_BROKEN.request_parts(CHAT, "m", 4096, None),
                Err(Error::Config(m)) if m.contains("vox-codegen bug")
            ));
        }
    }

    #[test]
    fn an_empty_instruction_names_the_function_as_the_task() {
        static BARE: AiFunction = AiFunction::new("bare", "  ", &INVOICE);
        let args = Args::new().arg("n", &1).unwrap();
        let messages_of = |args: &Args| messages(&body(&BARE, "m", &Conversation::text_only(args)));
        let with_n = messages_of(&args);
        assert!(
            with_n[0]
                .1
                .starts_with("Give the result of `bare` for the input.\n\n"),
            "{}",
            with_n[0].1
        );
        assert_eq!(
            with_n[1],
            ("user".to_owned(), "Input (JSON): {\"n\":1}".to_owned())
        );
        assert_eq!(messages_of(&Args::new())[1].1, "(no input)");
    }

    /// One text argument is the message itself unless it is blank (any
    /// whitespace, escaped or not, ASCII or not); then the JSON object is.
    #[test]
    fn one_blank_text_argument_is_sent_as_its_object() {
        let user = |text: &str| {
            let args = Args::new().arg("text", text).unwrap();
            messages(&body(&EXTRACT, "m", &Conversation::text_only(&args)))[1]
                .1
                .clone()
        };
        for blank in ["", " ", "\n\t\r ", "\u{3000}\u{a0}", "\u{2028}"] {
            assert_eq!(
                user(blank),
                format!("Input (JSON): {}", serde_json::json!({ "text": blank })),
                "{blank:?}"
            );
        }
        for text in ["x", " x", "\\", "\"", "\n x", "é", "\u{3000}漢"] {
            assert_eq!(user(text), text, "{text:?}");
        }
    }

    #[test]
    fn correction_appends_reply_and_quotes_error() {
        let mut conversation = Conversation::text_only(&Args::new());
        conversation.push_correction(&rejected("{}", "missing field `vendor` at line 1 column 2"));
        let messages = messages(&body(&EXTRACT, "m", &conversation));
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2], ("assistant".to_owned(), "{}".to_owned()));
        assert_eq!(messages[3].0, "user");
        assert_eq!(
            messages[3].1,
            "Your previous reply was rejected: missing field `vendor` at line 1 column 2\n\
             Answer again with only the corrected JSON value."
        );
    }

    #[test]
    fn every_wire_renders_valid_json_with_its_schema_field_and_limit() {
        let tricky = "\"q\" \\ \n é 😀";
        let args = Args::new().arg("text", tricky).unwrap();
        let openai = Wire::Chat(Chat {
            limit: "max_completion_tokens",
            format: ResponseFormat::JsonSchema,
            stated: false,
        });
        let object = Wire::Chat(Chat {
            limit: "max_tokens",
            format: ResponseFormat::JsonObject,
            stated: true,
        });
        for wire in [openai, object, Wire::Anthropic, Wire::Gemini, Wire::Ollama] {
            let mut conversation = Conversation::text_only(&args);
            conversation.push_correction(&rejected(tricky, tricky));
            conversation.push_correction(&rejected("", "empty"));
            let body = body_of(wire, &EXTRACT, "m", &conversation);
            let schema = INVOICE.value().clone();
            match wire {
                Wire::Chat(Chat { limit, format, .. }) => {
                    assert_eq!(body[limit], 4096, "{body}");
                    assert_eq!(body["messages"].as_array().unwrap().len(), 6);
                    if format == ResponseFormat::JsonObject {
                        assert_eq!(
                            body["response_format"],
                            serde_json::json!({"type": "json_object", "schema": schema})
                        );
                    }
                }
                Wire::Anthropic => {
                    assert_eq!(body["max_tokens"], 4096);
                    assert_eq!(body["tools"][0]["name"], "extract_invoice");
                    assert_eq!(body["tools"][0]["input_schema"], schema);
                    assert_eq!(
                        body["tool_choice"],
                        serde_json::json!({"type": "tool", "name": "extract_invoice"})
                    );
                    assert!(body["system"]
                        .as_str()
                        .unwrap()
                        .contains("`extract_invoice`"));
                    let messages = body["messages"].as_array().unwrap();
                    assert_eq!(messages.len(), 5);
                    assert_eq!(messages[1]["content"], tricky);
                    assert_eq!(messages[3]["content"], "(no reply)");
                    assert_eq!(body["temperature"], 0.2);
                }
                Wire::Gemini => {
                    let config = &body["generationConfig"];
                    assert_eq!(config["responseMimeType"], "application/json");
                    assert_eq!(config["responseJsonSchema"], schema);
                    assert_eq!(config["maxOutputTokens"], 4096);
                    assert_eq!(config["temperature"], 0.2);
                    let contents = body["contents"].as_array().unwrap();
                    assert_eq!(contents.len(), 5);
                    assert_eq!(contents[1]["role"], "model");
                    assert_eq!(contents[1]["parts"][0]["text"], tricky);
                    assert!(body.get("model").is_none());
                }
                Wire::Ollama => {
                    assert_eq!(body["stream"], false);
                    assert_eq!(body["format"], schema);
                    assert_eq!(body["options"]["num_predict"], 4096);
                    assert_eq!(body["options"]["temperature"], 0.2);
                }
            }
        }
    }

    #[test]
    fn anthropic_correction_answers_the_tool_call_with_an_error_result() {
        let mut conversation = Conversation::text_only(&Args::new());
        let block = r#"{"type":"tool_use","id":"toolu_9","name":"extract_invoice","input":{}}"#;
        conversation.push_correction(&crate::reply::RejectedReply {
            cut_off: false,
            error: "missing field `vendor`".into(),
            reply: "{}".into(),
            tool_use: Some((block.into(), "toolu_9".into())),
        });
        let body = body_of(Wire::Anthropic, &EXTRACT, "m", &conversation);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[1],
            serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_9", "name": "extract_invoice", "input": {}}]})
        );
        assert_eq!(
            messages[2],
            serde_json::json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": "toolu_9", "is_error": true,
                "content": "Your previous reply was rejected: missing field `vendor`\nAnswer again with only the corrected JSON value."}]})
        );
        // Temperatures above Anthropic's range of 0 to 1 are clamped.
        static HOT: AiFunction = AiFunction::new("hot", "", &INVOICE).with_temperature(1.7);
        let body = body_of(
            Wire::Anthropic,
            &HOT,
            "m",
            &Conversation::text_only(&Args::new()),
        );
        assert_eq!(body["temperature"], 1.0);
    }

    #[test]
    fn the_gemini_schema_keeps_the_declared_property_order() {
        static ZYX: OutputSchema = OutputSchema::new(
            "Zyx",
            r#"{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"integer"},"x":{"type":"boolean"}},"required":["z","y","x"],"additionalProperties":false}"#,
            false,
        );
        static F: AiFunction = AiFunction::new("f", "", &ZYX);
        let parts = RequestParts::new(&F, Wire::Gemini, "m", 10).unwrap();
        let body = parts.request_body(&Conversation::text_only(&Args::new()));
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(
            text.contains(r#""responseJsonSchema":{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"integer"},"x":{"type":"boolean"}},"required":["z","y","x"],"additionalProperties":false}"#),
            "{text}"
        );
    }

    /// The kept first request gives the same bytes as rendering the body
    /// whole, on every wire, for arguments of every kind (escapes, other
    /// scripts, no input, the marker's own text), for a function without
    /// temperature or instruction, and for a schema holding the marker
    /// (then there is no kept request and bodies are rendered whole).
    #[test]
    fn first_requests_are_rendered_as_a_whole() {
        static MARKED: OutputSchema = OutputSchema::new(
            "Marked",
            r#"{"type":"string","description":"\u0000vox:first-user-message\u0000"}"#,
            false,
        );
        static PLAIN: AiFunction = AiFunction::new("plain", "", &INVOICE);
        static WITH_MARKER: AiFunction = AiFunction::new(
            "marked",
            "Says \"\u{0}vox:first-user-message\u{0}\" and \\u0000.",
            &MARKED,
        );
        let wires = [
            CHAT,
            STATED,
            Wire::Chat(Chat {
                limit: "max_completion_tokens",
                format: ResponseFormat::JsonObject,
                stated: true,
            }),
            Wire::Anthropic,
            Wire::Gemini,
            Wire::Ollama,
        ];
        let arguments = [
            Args::new(),
            Args::new().arg("text", "ACME Corp, 2 widgets").unwrap(),
            Args::new()
                .arg("text", "quote \" slash \\ tab \t nul \u{0} é 漢字 🎉")
                .unwrap(),
            Args::new()
                .arg("text", "\"\\u0000vox:first-user-message\\u0000\"")
                .unwrap(),
            Args::new()
                .arg("a", &1)
                .unwrap()
                .arg("b", &["x", "y"])
                .unwrap(),
        ];
        for function in [&EXTRACT, &PLAIN, &WITH_MARKER] {
            for wire in wires {
                let parts = RequestParts::new(function, wire, "model-a", 512).unwrap();
                for args in &arguments {
                    let conversation = Conversation::text_only(args);
                    let kept = parts.request_body(&conversation);
                    let whole = parts.render(&conversation);
                    assert_eq!(
                        String::from_utf8_lossy(&kept),
                        String::from_utf8_lossy(&whole),
                        "{} on {wire:?}",
                        function.name()
                    );
                    serde_json::from_slice::<serde_json::Value>(&kept).expect("valid JSON");
                }
                assert_eq!(
                    parts.first_request().is_some(),
                    !std::ptr::eq(function, &WITH_MARKER),
                    "{} on {wire:?}",
                    function.name()
                );
            }
        }
    }
}
