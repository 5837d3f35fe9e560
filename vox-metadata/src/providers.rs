//! The providers Vox speaks to, as one table the compiler and the runtime
//! share (docs/runtime.md, "Providers" and "Adding a provider").
//!
//! vox-codegen reads it to check `provider:` model prefixes and to print
//! `cargo vox schema --provider NAME`; vox-runtime reads it for names,
//! prefixes, environment variables and defaults, and converts schemas for
//! Gemini and names Anthropic's tool with the same functions, so both
//! produce the same bytes by construction.

use crate::json::{Json, JsonError};

/// The request and reply shape a provider's API speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// OpenAI's chat completions; `limit` names the completion limit field
    /// (`max_tokens`, or OpenAI's `max_completion_tokens`).
    Chat {
        /// The completion limit field.
        limit: &'static str,
        /// Whether the server holds every model to `response_format`; when
        /// not (OpenRouter passes it only to models that take it, a
        /// compatible server may drop it), the prompt states the shape too.
        enforced: bool,
    },
    /// Anthropic's Messages API, structured output through a forced tool
    /// call.
    Anthropic,
    /// Gemini's `generateContent` with `responseJsonSchema`.
    Gemini,
    /// Ollama's native `/api/chat` with `format: <schema>`.
    Ollama,
}

/// What is known about one provider before any configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderFacts {
    /// The name `VOX_LLM_PROVIDER` and `provider:` model prefixes use.
    pub name: &'static str,
    /// The API it speaks; `None` for `fixture`, which runs each function's
    /// Vox body instead of sending anything.
    pub protocol: Option<Protocol>,
    /// The base URL used when none is configured.
    pub default_base_url: Option<&'static str>,
    /// The model used when neither the function nor the configuration
    /// names one.
    pub default_model: &'static str,
    /// The environment variables holding its API key, in the order they
    /// are read.
    pub api_key_variables: &'static [&'static str],
    /// Whether a call without a key is a configuration error.
    pub requires_api_key: bool,
    /// How media arguments (images, PDFs, audio) are sent, and the limits
    /// enforced before sending.
    pub media: MediaFacts,
}

/// How a provider takes one kind of media argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaRule {
    /// Largest file sent inline (base64 in the request body), in bytes as
    /// read, before base64 (which adds a third); `0` when the provider
    /// takes none inline.
    pub max_inline_bytes: u64,
    /// Whether an `https` URL is passed on for the provider to fetch.
    pub url: bool,
    /// What it is sent as, in the API's words, for people
    /// (`cargo vox schema`, docs/runtime.md, "Media arguments").
    pub sent_as: &'static str,
}

impl MediaRule {
    /// Not taken at all.
    pub const NONE: MediaRule = MediaRule {
        max_inline_bytes: 0,
        url: false,
        sent_as: "not taken",
    };
}

/// How a provider takes media arguments: per kind, and the largest total
/// of inline media in one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaFacts {
    /// PNG, JPEG, WebP, GIF.
    pub image: MediaRule,
    /// PDF.
    pub document: MediaRule,
    /// WAV, MP3.
    pub audio: MediaRule,
    /// Largest total of the inline media of one request, in bytes as read.
    pub max_total_inline_bytes: u64,
}

const MB: u64 = 1_000_000;

/// OpenAI's chat completions ("Images and vision": `image_url` parts with
/// a data URL or an https URL, 50 MB of images per request; "File inputs":
/// PDFs as `file` parts with `file_data`, not URLs, 32 MB in all; "Audio":
/// `input_audio` parts, wav or mp3, base64 only). OpenRouter and
/// compatible servers take the same shape.
const CHAT_MEDIA: MediaFacts = MediaFacts {
    image: MediaRule {
        max_inline_bytes: 20 * MB,
        url: true,
        sent_as: "an `image_url` content part (a data: URL, or the https URL)",
    },
    document: MediaRule {
        max_inline_bytes: 32 * MB,
        url: false,
        sent_as: "a `file` content part (`file_data`, a data: URL)",
    },
    audio: MediaRule {
        max_inline_bytes: 20 * MB,
        url: false,
        sent_as: "an `input_audio` content part (base64, `wav` or `mp3`)",
    },
    max_total_inline_bytes: 50 * MB,
};

/// Placeholder for `fixture`, whose calls never send media.
const NO_MEDIA: MediaFacts = MediaFacts {
    image: MediaRule::NONE,
    document: MediaRule::NONE,
    audio: MediaRule::NONE,
    max_total_inline_bytes: 0,
};

/// Model used when neither the function, the configuration nor the
/// provider's row names one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// Every provider, in the order `VOX_LLM_PROVIDER` lists them (and
/// vox-runtime's `Provider` enum declares them).
pub const PROVIDERS: [ProviderFacts; 7] = [
    ProviderFacts {
        name: "openai",
        // OpenAI's "Chat Completions" reference: `max_tokens` is deprecated
        // there in favour of `max_completion_tokens`.
        protocol: Some(Protocol::Chat {
            limit: "max_completion_tokens",
            enforced: true,
        }),
        default_base_url: Some("https://api.openai.com/v1"),
        default_model: DEFAULT_MODEL,
        api_key_variables: &["OPENAI_API_KEY"],
        requires_api_key: true,
        media: CHAT_MEDIA,
    },
    ProviderFacts {
        name: "openrouter",
        protocol: Some(Protocol::Chat {
            limit: "max_tokens",
            enforced: false,
        }),
        default_base_url: Some("https://openrouter.ai/api/v1"),
        default_model: DEFAULT_MODEL,
        api_key_variables: &["OPENROUTER_API_KEY"],
        requires_api_key: true,
        media: CHAT_MEDIA,
    },
    ProviderFacts {
        name: "anthropic",
        protocol: Some(Protocol::Anthropic),
        default_base_url: Some("https://api.anthropic.com/v1"),
        default_model: "claude-haiku-4-5",
        api_key_variables: &["ANTHROPIC_API_KEY"],
        requires_api_key: true,
        media: MediaFacts {
            // "Images and vision": `image` blocks with a `base64` or `url`
            // source, at most 5 MB per image (as sent, so 3.75 MB before
            // base64); "PDF support": `document` blocks, the same sources;
            // a request is at most 32 MB (24 MB of files before base64).
            image: MediaRule {
                max_inline_bytes: 3_750_000,
                url: true,
                sent_as: "an `image` block (a `base64` or `url` source)",
            },
            document: MediaRule {
                max_inline_bytes: 23 * MB,
                url: true,
                sent_as: "a `document` block (a `base64` or `url` source)",
            },
            audio: MediaRule::NONE,
            max_total_inline_bytes: 23 * MB,
        },
    },
    ProviderFacts {
        name: "gemini",
        protocol: Some(Protocol::Gemini),
        default_base_url: Some("https://generativelanguage.googleapis.com/v1beta"),
        default_model: "gemini-2.5-flash",
        api_key_variables: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        requires_api_key: true,
        media: MediaFacts {
            // "File input methods": `inlineData` (base64) parts up to 100 MB
            // a request, PDFs up to 50 MB; `fileData` with `fileUri` for a
            // public or signed https URL.
            image: MediaRule {
                max_inline_bytes: 100 * MB,
                url: true,
                sent_as: "an `inlineData` part (or `fileData` with the URL)",
            },
            document: MediaRule {
                max_inline_bytes: 50 * MB,
                url: true,
                sent_as: "an `inlineData` part (or `fileData` with the URL)",
            },
            audio: MediaRule {
                max_inline_bytes: 100 * MB,
                url: true,
                sent_as: "an `inlineData` part (or `fileData` with the URL)",
            },
            max_total_inline_bytes: 100 * MB,
        },
    },
    ProviderFacts {
        name: "ollama",
        protocol: Some(Protocol::Ollama),
        default_base_url: Some("http://127.0.0.1:11434"),
        default_model: "llama3.2",
        api_key_variables: &[],
        requires_api_key: false,
        media: MediaFacts {
            // Ollama's "Generate a chat completion": a message's `images`, a
            // list of base64 images; no documents, audio or URLs. No limit
            // is documented: this one keeps a request within reason.
            image: MediaRule {
                max_inline_bytes: 100 * MB,
                url: false,
                sent_as: "the message's `images` (base64)",
            },
            document: MediaRule::NONE,
            audio: MediaRule::NONE,
            max_total_inline_bytes: 100 * MB,
        },
    },
    ProviderFacts {
        name: "compatible",
        protocol: Some(Protocol::Chat {
            limit: "max_tokens",
            enforced: false,
        }),
        default_base_url: None,
        default_model: DEFAULT_MODEL,
        api_key_variables: &["VOX_LLM_API_KEY"],
        requires_api_key: false,
        media: CHAT_MEDIA,
    },
    ProviderFacts {
        name: "fixture",
        protocol: None,
        default_base_url: None,
        default_model: DEFAULT_MODEL,
        api_key_variables: &[],
        requires_api_key: false,
        media: NO_MEDIA,
    },
];

/// The row of the provider named exactly `name` (lower case).
pub fn provider(name: &str) -> Option<&'static ProviderFacts> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// The names of the providers that are reached over the network (all but
/// `fixture`), in table order.
pub fn network_provider_names() -> impl Iterator<Item = &'static str> {
    PROVIDERS
        .iter()
        .filter(|p| p.protocol.is_some())
        .map(|p| p.name)
}

/// Splits a `provider:model` reference: `"anthropic:claude-sonnet-4-5"` is
/// `(Some(anthropic), "claude-sonnet-4-5")`. Only an exact provider name
/// before the first `:` is a prefix, so model names with colons of their
/// own (`llama3.2:3b`) stay whole: `(None, "llama3.2:3b")`.
pub fn split_model(model: &str) -> (Option<&'static ProviderFacts>, &str) {
    if let Some((prefix, rest)) = model.split_once(':') {
        if let Some(p) = provider(prefix) {
            return (Some(p), rest);
        }
    }
    (None, model)
}

/// The name of the tool Anthropic is asked to call for the `@ai` function
/// `function`: Anthropic allows `^[a-zA-Z0-9_-]{1,64}$`.
pub fn tool_name(function: &str) -> String {
    let mut tool: String = function
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if tool.is_empty() {
        tool.push_str("result");
    }
    tool
}

/// The description of that tool.
pub fn tool_description(function: &str) -> String {
    format!("The result of the function `{function}`.")
}

/// The keywords Gemini's `responseJsonSchema` accepts (Gemini API
/// "Structured output" guide, "JSON Schema support"); others are dropped.
pub const GEMINI_KEYWORDS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// `schema` (the strict schema named `name`) in the subset Gemini's
/// `responseJsonSchema` accepts (docs/runtime.md, "Providers"): keywords
/// outside [`GEMINI_KEYWORDS`] are dropped (such as `pattern`; the runtime
/// still checks it on the reply), and references to the root
/// (`{"$ref": "#"}`, from recursive return types) point at a copy of the
/// root under `$defs/<name>` instead, since Gemini resolves references only
/// into `$defs`. Key order is kept.
pub fn gemini_schema(schema: &Json, name: &str) -> Json {
    fn filter(value: &Json, root_ref: &str, in_map: bool) -> Json {
        match value {
            Json::Obj(pairs) => Json::Obj(
                pairs
                    .iter()
                    .filter(|(k, _)| in_map || GEMINI_KEYWORDS.contains(&k.as_str()))
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("$ref", Json::Str(r)) if r == "#" && !in_map => {
                                Json::str(root_ref.to_owned())
                            }
                            // Maps from names to schemas: every key is kept.
                            ("properties" | "$defs", _) if !in_map => filter(v, root_ref, true),
                            ("enum" | "required" | "propertyOrdering", _) if !in_map => v.clone(),
                            _ => filter(v, root_ref, false),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Json::Arr(items) => {
                Json::Arr(items.iter().map(|v| filter(v, root_ref, false)).collect())
            }
            other => other.clone(),
        }
    }
    fn refers_to_root(value: &Json) -> bool {
        match value {
            Json::Obj(pairs) => pairs.iter().any(|(k, v)| {
                (k == "$ref" && matches!(v, Json::Str(r) if r == "#")) || refers_to_root(v)
            }),
            Json::Arr(items) => items.iter().any(refers_to_root),
            _ => false,
        }
    }
    if !refers_to_root(schema) {
        return filter(schema, "#", false);
    }
    let mut def_name = tool_name(name);
    let has_def = |n: &str| matches!(schema.get("$defs"), Some(Json::Obj(defs)) if defs.iter().any(|(k, _)| k == n));
    while has_def(&def_name) {
        def_name.push('_');
    }
    let root_ref = format!("#/$defs/{def_name}");
    let converted = filter(schema, &root_ref, false);
    let Json::Obj(mut pairs) = converted else {
        return converted;
    };
    let body = Json::Obj(
        pairs
            .iter()
            .filter(|(k, _)| k != "$defs")
            .cloned()
            .collect(),
    );
    match pairs.iter_mut().find(|(k, _)| k == "$defs") {
        Some((_, Json::Obj(defs))) => defs.push((def_name, body)),
        _ => pairs.push(("$defs".into(), Json::Obj(vec![(def_name, body)]))),
    }
    Json::Obj(pairs)
}

/// [`gemini_schema`] on JSON text, written compactly: what Gemini receives
/// for the strict schema text `schema` named `name`.
pub fn gemini_schema_text(schema: &str, name: &str) -> Result<String, JsonError> {
    Ok(gemini_schema(&Json::parse(schema)?, name).to_compact())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_each_provider_once_and_fixture_has_no_protocol() {
        let mut names: Vec<&str> = PROVIDERS.iter().map(|p| p.name).collect();
        names.dedup();
        assert_eq!(names.len(), PROVIDERS.len());
        assert_eq!(
            network_provider_names().collect::<Vec<_>>(),
            [
                "openai",
                "openrouter",
                "anthropic",
                "gemini",
                "ollama",
                "compatible"
            ]
        );
        assert_eq!(provider("fixture").unwrap().protocol, None);
        for p in &PROVIDERS {
            assert_eq!(
                p.requires_api_key,
                p.default_base_url
                    .is_some_and(|u| u.starts_with("https://")),
                "{}: the hosted APIs need a key, local servers do not",
                p.name
            );
        }
    }

    #[test]
    fn model_prefixes_split_only_at_known_providers() {
        let name = |m| {
            let (p, rest) = split_model(m);
            (p.map(|p: &ProviderFacts| p.name), rest)
        };
        assert_eq!(
            name("anthropic:claude-sonnet-4-5"),
            (Some("anthropic"), "claude-sonnet-4-5")
        );
        assert_eq!(name("ollama:llama3.2:3b"), (Some("ollama"), "llama3.2:3b"));
        assert_eq!(name("llama3.2:3b"), (None, "llama3.2:3b"));
        assert_eq!(name("Anthropic:x"), (None, "Anthropic:x"));
        assert_eq!(name("gpt-4o"), (None, "gpt-4o"));
    }

    #[test]
    fn tool_names_are_what_anthropic_accepts() {
        assert_eq!(tool_name("extract_invoice"), "extract_invoice");
        assert_eq!(tool_name("odd\"fn é"), "odd_fn__");
        assert_eq!(tool_name(""), "result");
        assert_eq!(tool_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn gemini_schema_keeps_its_subset_and_moves_root_references_into_defs() {
        let conv = |text: &str, name: &str| gemini_schema_text(text, name).unwrap();
        assert_eq!(
            conv(
                r#"{"type":"object","properties":{"a":{"type":"string","pattern":"x"}},"required":["a"],"additionalProperties":false,"$schema":"x"}"#,
                "P"
            ),
            r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}"#
        );
        let recursive = r##"{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]},"leaf":{"$ref":"#/$defs/Leaf"}},"$defs":{"Leaf":{"type":"object","properties":{"up":{"$ref":"#"}}}}}"##;
        assert_eq!(
            conv(recursive, "Node"),
            r##"{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]},"leaf":{"$ref":"#/$defs/Leaf"}},"$defs":{"Leaf":{"type":"object","properties":{"up":{"$ref":"#/$defs/Node"}}},"Node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]},"leaf":{"$ref":"#/$defs/Leaf"}}}}}"##
        );
        // A definition already named like the root: the copy gets a `_`.
        let taken = r##"{"type":"object","properties":{"n":{"$ref":"#"}},"$defs":{"Node":{"type":"null"}}}"##;
        assert!(conv(taken, "Node").contains(r##""n":{"$ref":"#/$defs/Node_"}"##));
        // A property named like a dropped keyword is still a property, and
        // enum values and required names are kept as they are.
        let named = r#"{"type":"object","properties":{"pattern":{"type":"string","enum":["pattern"]}},"required":["pattern"]}"#;
        assert_eq!(conv(named, "N"), named);
        // A reference to the root inside an array of schemas.
        assert!(conv(r##"{"type":"object","anyOf":[{"$ref":"#"}]}"##, "a b")
            .contains(r##""$defs":{"a_b":"##));
        assert!(gemini_schema_text("{", "N").is_err());
    }
}
