//! Tools an `@ai` function lets the model call (docs/runtime.md, "Tools"):
//! what generated code declares for each, and running the calls of one
//! turn.
//!
//! A tool is a Vox function, or a Rust function the crate provides and
//! Vox declares without a body; generated code wraps each in a [`Tool`]
//! whose `run` reads the arguments into the parameters' types (so the
//! arguments are validated exactly as a reply is), calls the function and
//! writes its value as JSON. The runtime runs only tools of the function's
//! own list, whatever a reply or a tool's result says: a call naming
//! another gets an error result, as do arguments that do not fit.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::value::RawValue;

/// What a tool's `run` returns: its value as JSON, or why it failed.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send + 'static>>;

/// Why a tool call gave no value; sent back to the model as the call's
/// error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments do not fit the tool's parameters (the problem, as
    /// serde says it).
    Arguments(String),
    /// The tool ran and failed (its `Error(…)`, or the Rust error's text).
    Failed(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Arguments(m) => write!(f, "the arguments do not fit the tool: {m}"),
            ToolError::Failed(m) => write!(f, "the tool failed: {m}"),
        }
    }
}

/// One tool of an `@ai` function, a `static` in generated code.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The name the model calls it by (the Vox function's).
    pub name: &'static str,
    /// The Vox function's doc comment.
    pub description: &'static str,
    /// The strict JSON Schema of its arguments: an object of the
    /// parameters.
    pub parameters: &'static str,
    /// Reads the arguments (a JSON object's text), runs the function and
    /// writes its value as JSON.
    pub run: fn(String) -> ToolFuture,
}

impl Tool {
    /// A tool named `name` (described by `description`) whose arguments
    /// have the schema `parameters`.
    pub const fn new(
        name: &'static str,
        description: &'static str,
        parameters: &'static str,
        run: fn(String) -> ToolFuture,
    ) -> Tool {
        Tool {
            name,
            description,
            parameters,
            run,
        }
    }
}

/// Reads a tool's arguments: a problem is [`ToolError::Arguments`].
pub fn tool_arguments<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, ToolError> {
    serde_json::from_str(json).map_err(|e| ToolError::Arguments(e.to_string()))
}

/// Writes a tool's value as JSON.
pub fn tool_value<T: serde::Serialize>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string(value).map_err(|e| ToolError::Failed(e.to_string()))
}

/// One call the model asked for in a turn, whatever the provider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    /// The provider's id of the call (`call_…`, `toolu_…`; Gemini's when it
    /// sends one; empty on Ollama, which has none).
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them: JSON text (OpenAI sends a
    /// string holding it, which may not be JSON at all).
    pub arguments: String,
    /// The provider's block or part as sent (Anthropic's `tool_use`,
    /// Gemini's `functionCall` part with its thought signature), echoed as
    /// it is in the conversation that follows.
    pub raw: Option<String>,
}

impl ToolCall {
    /// The arguments as a JSON object (an empty one when the model's text
    /// is not one), for the wires that send them as an object.
    pub fn arguments_value(&self) -> serde_json::Value {
        serde_json::from_str(arguments_object(&self.arguments).get()).unwrap_or_default()
    }

    /// The provider's block or part as the model sent it, else the one
    /// `made` builds from the arguments.
    pub fn as_sent(
        &self,
        made: impl FnOnce(serde_json::Value) -> serde_json::Value,
    ) -> serde_json::Value {
        self.raw
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw).ok())
            .unwrap_or_else(|| made(self.arguments_value()))
    }
}

/// A call's result as it goes back to the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    pub id: String,
    pub name: String,
    /// The value as JSON text, or the error's message.
    pub content: String,
    pub is_error: bool,
}

/// One turn of tool calls and their results.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolStep {
    pub calls: Vec<ToolCall>,
    pub results: Vec<ToolResult>,
}

impl ToolStep {
    /// The calls as a cassette's key records them (name, arguments; ids
    /// differ from one recording to the next and are left out).
    pub fn keyed_calls(&self) -> String {
        let calls: Vec<serde_json::Value> = self
            .calls
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "arguments": c.arguments}))
            .collect();
        serde_json::Value::from(calls).to_string()
    }

    /// The results as a cassette's key records them.
    pub fn keyed_results(&self) -> String {
        let results: Vec<serde_json::Value> = self
            .results
            .iter()
            .map(|r| serde_json::json!({"name": r.name, "content": r.content, "is_error": r.is_error}))
            .collect();
        serde_json::Value::from(results).to_string()
    }
}

/// The most tool calls run from one turn; more are each answered with an
/// error result.
pub(crate) const MAX_CALLS_PER_TURN: usize = 16;

/// Runs the calls of one turn: each named tool of `tools`, concurrently,
/// each within `timeout`; every call gets a result, in the calls' order.
pub(crate) async fn run_calls(
    function: &str,
    tools: &[Tool],
    calls: Vec<ToolCall>,
    timeout: Duration,
    span: &tracing::Span,
) -> ToolStep {
    let mut pending: Vec<Pending> = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        let tool = tools.iter().find(|t| t.name == call.name);
        let outcome = match tool {
            _ if i >= MAX_CALLS_PER_TURN => Pending::Done(Err(format!(
                "not run: at most {MAX_CALLS_PER_TURN} tool calls are run from one turn"
            ))),
            None => Pending::Done(Err(format!(
                "there is no tool `{}`; the tools are: {}",
                crate::server_text::server_text(&call.name, 64),
                tools
                    .iter()
                    .map(|t| format!("`{}`", t.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            Some(tool) => match fits(tool, &call.arguments) {
                Err(problem) => Pending::Done(Err(problem)),
                Ok(()) => {
                    let tool_span = tracing::info_span!(
                        parent: span,
                        "vox.tool_call",
                        vox.function = function,
                        vox.tool = tool.name,
                        vox.tool_call_id = %call.id,
                        error.type = tracing::field::Empty,
                    );
                    let arguments = if call.arguments.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        call.arguments.clone()
                    };
                    let run = (tool.run)(arguments);
                    let bounded = async move {
                        match tokio::time::timeout(timeout, run).await {
                            Ok(Ok(value)) => Ok(value),
                            Ok(Err(e)) => Err(e.to_string()),
                            Err(_) => Err(format!("the tool took longer than {timeout:?}")),
                        }
                    };
                    Pending::Running(Box::pin(tracing::Instrument::instrument(
                        bounded, tool_span,
                    )))
                }
            },
        };
        pending.push(outcome);
    }
    let outcomes = JoinAll(pending).await;
    let results = calls
        .iter()
        .zip(outcomes)
        .map(|(call, outcome)| {
            let (content, is_error) = match outcome {
                Ok(value) => (value, false),
                Err(message) => (message, true),
            };
            if is_error {
                span.in_scope(|| {
                    tracing::info!(tool = %call.name, error = %content, "vox.tool_call_failed");
                });
            }
            ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
            }
        })
        .collect();
    ToolStep { calls, results }
}

/// Whether `arguments` (the model's text) fit `tool`'s parameters, by the
/// same check a reply gets against its schema: every problem by JSON path
/// (`$.id: expected a string, found the number 41`), so the model can
/// correct its call.
fn fits(tool: &Tool, arguments: &str) -> Result<(), String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "the arguments are not JSON ({}); send them as one JSON object",
            crate::correction::plain_serde_message(&e.to_string())
        )
    })?;
    // A generated schema is JSON; were it not, serde's check below says
    // what does not fit.
    let Ok(schema) = serde_json::from_str::<serde_json::Value>(tool.parameters) else {
        return Ok(());
    };
    let checked = crate::correction::check(&schema, &value);
    if checked.problems.is_empty() {
        return Ok(());
    }
    let mut text = String::from("the arguments do not fit the tool's parameters:");
    for problem in &checked.problems {
        text.push_str("\n- ");
        text.push_str(&problem.to_string());
    }
    Err(text)
}

type Outcome = Result<String, String>;

enum Pending {
    Running(Pin<Box<dyn Future<Output = Outcome> + Send>>),
    Done(Outcome),
}

/// Polls every pending call until all are done (a turn's calls run
/// together, however the executor schedules them).
struct JoinAll(Vec<Pending>);

impl Future for JoinAll {
    type Output = Vec<Outcome>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut all_done = true;
        for slot in self.0.iter_mut() {
            if let Pending::Running(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(outcome) => *slot = Pending::Done(outcome),
                    Poll::Pending => all_done = false,
                }
            }
        }
        if !all_done {
            return Poll::Pending;
        }
        let outcomes = std::mem::take(&mut self.0)
            .into_iter()
            .map(|slot| match slot {
                Pending::Done(outcome) => outcome,
                // Every slot is done when all_done holds.
                Pending::Running(_) => Err("not run".to_owned()),
            })
            .collect();
        Poll::Ready(outcomes)
    }
}

/// The arguments of a call as a JSON value for the wires that send them as
/// an object (Anthropic's `input`, Gemini's `args`, Ollama's `arguments`):
/// the model's text when it is a JSON object, else an empty object.
pub(crate) fn arguments_object(arguments: &str) -> Box<RawValue> {
    match serde_json::from_str::<Box<RawValue>>(arguments) {
        Ok(raw) if raw.get().trim_start().starts_with('{') => raw,
        _ => RawValue::from_string("{}".to_owned()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(args: String) -> ToolFuture {
        Box::pin(async move {
            #[derive(serde::Deserialize, serde::Serialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                id: String,
            }
            let a: A = tool_arguments(&args)?;
            tool_value(&a)
        })
    }

    fn slow(_: String) -> ToolFuture {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok("late".into())
        })
    }

    static TOOLS: [Tool; 2] = [
        Tool::new("echo", "", "{}", echo),
        Tool::new("slow", "", "{}", slow),
    ];

    /// The arguments are checked against the tool's schema before it
    /// runs, every problem by path; a tool whose schema they fit runs.
    #[tokio::test]
    async fn arguments_are_checked_against_the_parameters_schema() {
        static STRICT: [Tool; 1] = [Tool::new(
            "echo",
            "",
            r#"{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}"#,
            echo,
        )];
        let step = run_calls(
            "f",
            &STRICT,
            vec![
                call("echo", r#"{"id":"A1"}"#),
                call("echo", r#"{"id":7,"extra":true}"#),
                call("echo", ""),
            ],
            Duration::from_secs(5),
            &tracing::Span::none(),
        )
        .await;
        assert!(!step.results[0].is_error, "{:?}", step.results[0]);
        let bad = &step.results[1];
        assert!(bad.is_error);
        assert!(
            bad.content
                .starts_with("the arguments do not fit the tool's parameters:\n- "),
            "{}",
            bad.content
        );
        assert!(bad.content.contains("$.id"), "{}", bad.content);
        assert!(bad.content.contains("extra"), "{}", bad.content);
        // No arguments at all: `{}`, which lacks `id`.
        assert!(step.results[2].is_error);
        assert!(
            step.results[2].content.contains("id"),
            "{}",
            step.results[2].content
        );
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: format!("id-{name}"),
            name: name.into(),
            arguments: arguments.into(),
            raw: None,
        }
    }

    #[tokio::test]
    async fn only_listed_tools_run_and_bad_arguments_are_error_results() {
        let step = run_calls(
            "f",
            &TOOLS,
            vec![
                call("echo", r#"{"id":"A1"}"#),
                call("delete_all", "{}"),
                call("echo", r#"{"id":1}"#),
                call("echo", "not json"),
            ],
            Duration::from_secs(5),
            &tracing::Span::none(),
        )
        .await;
        let results: Vec<(&str, bool)> = step
            .results
            .iter()
            .map(|r| (r.content.as_str(), r.is_error))
            .collect();
        assert_eq!(results[0], (r#"{"id":"A1"}"#, false));
        assert_eq!(
            results[1],
            (
                "there is no tool `delete_all`; the tools are: `echo`, `slow`",
                true
            )
        );
        assert!(results[2].1 && results[2].0.contains("invalid type: integer `1`"));
        assert!(results[3].1 && results[3].0.starts_with("the arguments are not JSON"));
        assert_eq!(step.results[0].id, "id-echo");
    }

    #[tokio::test(start_paused = true)]
    async fn a_tool_past_its_timeout_is_an_error_result() {
        let step = run_calls(
            "f",
            &TOOLS,
            vec![call("slow", "{}"), call("echo", r#"{"id":"B"}"#)],
            Duration::from_secs(1),
            &tracing::Span::none(),
        )
        .await;
        assert!(step.results[0].is_error);
        assert_eq!(step.results[0].content, "the tool took longer than 1s");
        assert!(!step.results[1].is_error);
    }
}
