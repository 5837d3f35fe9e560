//! What the runtime says to the model: the conversation of one `@ai` call
//! and the chat-completions request body that carries it.
//!
//! Pure functions over plain data, so the exact wording and the request
//! shape (SPEC §5: strict `response_format`) are unit-tested without HTTP.

use serde::Serialize;

use crate::ai_function::{AiFunction, Args};
use crate::error::Error;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatMessage {
    pub role: &'static str,
    pub content: String,
}

impl ChatMessage {
    fn system(content: String) -> Self {
        ChatMessage {
            role: "system",
            content,
        }
    }
    fn user(content: String) -> Self {
        ChatMessage {
            role: "user",
            content,
        }
    }
    fn assistant(content: String) -> Self {
        ChatMessage {
            role: "assistant",
            content,
        }
    }
}

/// The conversation of one call; it grows by two messages per rejected
/// attempt (the model's reply and the correction).
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    messages: Vec<ChatMessage>,
}

impl Conversation {
    /// The system message and the first user message of a call.
    pub fn start(function: &AiFunction, args: &Args) -> Conversation {
        let output = function.output;
        // The schema itself travels in `response_format`, which OpenAI,
        // OpenRouter and the common compatible servers enforce; repeating
        // it here would double its prompt tokens.
        let system = format!(
            "You are the implementation of the function `{name}`. Answer only with one JSON value \
             that matches the JSON Schema `{schema}` of the response format: no prose, no Markdown, \
             no code fences.",
            name = function.name,
            schema = output.name(),
        );
        let mut user = String::with_capacity(function.instruction.len() + function.name.len() + 64);
        let instruction = function.instruction.trim();
        if !instruction.is_empty() {
            user.push_str(instruction);
            user.push_str("\n\n");
        }
        user.push_str("Function: ");
        user.push_str(function.name);
        user.push_str("\nArguments (JSON): ");
        // Serializing `Args` cannot fail: it holds only JSON values and
        // string keys. Fall back to `{}` rather than panic all the same.
        user.push_str(&serde_json::to_string(args).unwrap_or_else(|_| "{}".to_owned()));
        Conversation {
            messages: vec![ChatMessage::system(system), ChatMessage::user(user)],
        }
    }

    /// Records a rejected reply and asks the model to correct it, quoting
    /// the exact error.
    pub fn push_correction(&mut self, rejected_reply: &str, error: &str) {
        self.messages
            .push(ChatMessage::assistant(rejected_reply.to_owned()));
        self.messages.push(ChatMessage::user(format!(
            "Your previous reply was rejected: {error}\n\
             Answer again with only one JSON value that matches the schema."
        )));
    }

    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    response_format: ResponseFormat<'a>,
}

#[derive(Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: JsonSchemaFormat<'a>,
}

#[derive(Serialize)]
struct JsonSchemaFormat<'a> {
    name: &'a str,
    strict: bool,
    schema: &'a serde_json::value::RawValue,
}

/// The JSON body of one chat-completions request.
pub(crate) fn request_body(
    function: &AiFunction,
    model: &str,
    conversation: &Conversation,
) -> Result<Vec<u8>, Error> {
    let request = ChatRequest {
        model,
        messages: conversation.messages(),
        temperature: function.temperature,
        response_format: ResponseFormat {
            kind: "json_schema",
            json_schema: JsonSchemaFormat {
                name: function.output.name(),
                strict: true,
                schema: function.output.raw()?,
            },
        },
    };
    // Sized up front: growing the buffer by doubling from serde_json's
    // default 128 bytes was a measurable part of the per-call overhead.
    let text_len: usize = conversation
        .messages()
        .iter()
        .map(|m| m.content.len() + 32)
        .sum();
    let mut body =
        Vec::with_capacity(text_len + function.output.json_text().len() + model.len() + 160);
    serde_json::to_writer(&mut body, &request)
        .map(|()| body)
        .map_err(|e| Error::Serialize {
            argument: "<request>".to_owned(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai_function::OutputSchema;

    static INVOICE: OutputSchema = OutputSchema::new(
        "Invoice",
        r#"{"type":"object","properties":{"vendor":{"type":"string"}},"required":["vendor"],"additionalProperties":false}"#,
        false,
    );
    static EXTRACT: AiFunction = AiFunction {
        name: "extract_invoice",
        instruction: "Extract the invoice fields from OCR text.",
        model: Some("gpt-4o-mini"),
        temperature: Some(0.2),
        max_iterations: 3,
        output: &INVOICE,
    };

    #[test]
    fn first_user_message_starts_with_instruction_then_json_arguments() {
        let args = Args::new().arg("ocr_text", "ACME, 2 widgets").unwrap();
        let conversation = Conversation::start(&EXTRACT, &args);
        let [system, user] = conversation.messages() else {
            panic!("two messages expected")
        };
        assert_eq!(system.role, "system");
        assert!(system.content.contains("Answer only with one JSON value"));
        assert!(system.content.contains("`Invoice`"));
        assert_eq!(user.role, "user");
        assert!(user.content.starts_with(
            "Extract the invoice fields from OCR text.\n\nFunction: extract_invoice\n"
        ));
        let json_start = user.content.find('{').unwrap();
        let rendered: serde_json::Value =
            serde_json::from_str(&user.content[json_start..]).unwrap();
        assert_eq!(rendered, serde_json::json!({"ocr_text": "ACME, 2 widgets"}));
    }

    #[test]
    fn request_body_carries_strict_response_format() {
        let conversation = Conversation::start(&EXTRACT, &Args::new());
        let body = request_body(&EXTRACT, "gpt-4o-mini", &conversation).unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
        assert_eq!(
            body["response_format"],
            serde_json::json!({"type": "json_schema", "json_schema": {
                "name": "Invoice", "strict": true, "schema": INVOICE.value()}})
        );
    }

    #[test]
    fn correction_appends_reply_and_quotes_error() {
        let mut conversation = Conversation::start(&EXTRACT, &Args::new());
        conversation.push_correction("{}", "missing field `vendor` at line 1 column 2");
        let messages = conversation.messages();
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2], ChatMessage::assistant("{}".into()));
        assert_eq!(messages[3].role, "user");
        assert!(messages[3]
            .content
            .contains("missing field `vendor` at line 1 column 2"));
    }
}
