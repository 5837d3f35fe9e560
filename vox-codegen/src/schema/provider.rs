//! The request fields that carry a schema to each provider, as vox-runtime
//! sends them (`cargo vox schema --provider NAME`), from the provider table
//! vox-runtime shares (`vox_metadata::providers`).

use vox_metadata::providers::{self, Protocol};
pub use vox_metadata::providers::{gemini_schema, tool_description, tool_name};

use super::OutputSchema;
use crate::json::Json;

/// The providers vox-runtime speaks to over the network, by the name
/// `VOX_LLM_PROVIDER` and `provider:` model prefixes use (docs/runtime.md,
/// "Providers"), from the table vox-runtime shares.
pub const PROVIDERS: [&str; 6] = {
    let mut names = [""; 6];
    let mut i = 0;
    let mut n = 0;
    while i < providers::PROVIDERS.len() {
        if providers::PROVIDERS[i].protocol.is_some() {
            names[n] = providers::PROVIDERS[i].name;
            n += 1;
        }
        i += 1;
    }
    assert!(n == names.len(), "one name per network provider");
    names
};

/// How a `compatible` server is given the schema (vox-runtime's
/// `ResponseFormat`, `VOX_LLM_RESPONSE_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompatibleFormat {
    /// `response_format` `json_schema`, as OpenAI's.
    #[default]
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": …}`.
    JsonObject,
}

impl OutputSchema {
    /// The fields of the request that carry this schema to `provider`,
    /// exactly as vox-runtime sends them for the `@ai` function `function`
    /// (docs/runtime.md, "Providers"):
    ///
    /// - `openai`, `openrouter`, `compatible`: `{"response_format": …}`;
    /// - `anthropic`: `{"tools": [{name, description, input_schema}],
    ///   "tool_choice": {"type": "tool", "name": …}}`, the tool named after
    ///   the function;
    /// - `gemini`: `{"generationConfig": {"responseMimeType":
    ///   "application/json", "responseJsonSchema": …}}`, the schema
    ///   converted to the subset Gemini accepts ([`gemini_schema`]);
    /// - `ollama`: `{"format": …}`.
    pub fn for_provider(
        &self,
        provider: &str,
        function: &str,
        compatible: CompatibleFormat,
    ) -> Result<Json, String> {
        let protocol = providers::provider(provider).and_then(|p| p.protocol);
        Ok(match protocol {
            Some(Protocol::Chat { .. }) if provider == "compatible" => match compatible {
                CompatibleFormat::JsonSchema => {
                    Json::obj([("response_format", self.response_format())])
                }
                CompatibleFormat::JsonObject => Json::obj([(
                    "response_format",
                    Json::obj([
                        ("type", Json::str("json_object")),
                        ("schema", self.schema.clone()),
                    ]),
                )]),
            },
            Some(Protocol::Chat { .. }) => Json::obj([("response_format", self.response_format())]),
            Some(Protocol::Anthropic) => {
                let tool = tool_name(function);
                Json::obj([
                    (
                        "tools",
                        Json::Arr(vec![Json::obj([
                            ("name", Json::str(tool.clone())),
                            ("description", Json::str(tool_description(function))),
                            ("input_schema", self.schema.clone()),
                        ])]),
                    ),
                    (
                        "tool_choice",
                        Json::obj([("type", Json::str("tool")), ("name", Json::str(tool))]),
                    ),
                ])
            }
            Some(Protocol::Gemini) => Json::obj([(
                "generationConfig",
                Json::obj([
                    ("responseMimeType", Json::str("application/json")),
                    (
                        "responseJsonSchema",
                        gemini_schema(&self.schema, &self.name),
                    ),
                ]),
            )]),
            Some(Protocol::Ollama) => Json::obj([("format", self.schema.clone())]),
            _ => {
                return Err(format!(
                    "unknown provider `{provider}` (expected one of: {})",
                    PROVIDERS.join(", ")
                ))
            }
        })
    }
}
