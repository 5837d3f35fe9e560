//! Strict JSON Schemas for structured outputs (docs/runtime.md).
//!
//! The schema a model is given for a Vox type is derived here, once, at
//! compile time. It follows OpenAI's strict-mode subset: the root is a
//! closed object (other types are wrapped in `{"value": …}`), every object
//! lists all its properties as required and forbids others, and named types
//! that appear more than once or recursively live in `$defs`. The shapes
//! match the serde representation of the generated Rust types exactly, so
//! a reply that fits the schema deserializes.

use std::collections::{BTreeMap, HashMap};

mod limits;
mod provider;

pub use limits::{
    stats, SchemaStats, MAX_ENUM_VALUES, MAX_NESTING, MAX_PROPERTIES, MAX_STRING_CHARS,
};
pub use provider::{gemini_schema, tool_description, tool_name, CompatibleFormat, PROVIDERS};

use crate::json::Json;
use crate::types::{FieldDef, Ty, TypeDefKind, TypeId, TypeTable};

/// The derived schema of one structured output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    /// `response_format.json_schema.name`: `[A-Za-z0-9_-]{1,64}`.
    pub name: String,
    pub schema: Json,
    /// True when the type is not an object and sits under `"value"`.
    pub wrapped: bool,
}

impl OutputSchema {
    /// The whole `response_format` object sent to the model.
    pub fn response_format(&self) -> Json {
        Json::obj([
            ("type", Json::str("json_schema")),
            (
                "json_schema",
                Json::obj([
                    ("name", Json::str(self.name.clone())),
                    ("strict", Json::Bool(true)),
                    ("schema", self.schema.clone()),
                ]),
            ),
        ])
    }
}

/// How an argument of an `@ai` function reaches the model, for `cargo vox
/// schema` (docs/language.md, "Images, documents and audio"): the media kinds sent as
/// parts of the request (`image`, `document`, `audio`; empty when the
/// value is only JSON in the arguments text) and a phrase saying how.
pub fn argument_sending(ty: &Ty, types: &TypeTable) -> (Vec<&'static str>, String) {
    let kinds = ty.media_kinds(types);
    let words: Vec<&'static str> = kinds.iter().map(|m| m.word()).collect();
    let how = match ty {
        Ty::Media(m) => format!(
            "{}; in the arguments' JSON its place reads \"<{} N>\"",
            m.part(),
            m.word()
        ),
        Ty::List(t) => match **t {
            Ty::Media(m) => format!("one {} part per element", m.word()),
            _ => json_with_parts(&kinds),
        },
        Ty::Option(t) => match **t {
            Ty::Media(m) => format!("{}, or nothing for `None`", m.part()),
            _ => json_with_parts(&kinds),
        },
        _ => json_with_parts(&kinds),
    };
    (words, how)
}

/// [`argument_sending`]'s phrase for a value that is JSON text, with any
/// media inside it sent as parts.
fn json_with_parts(kinds: &[crate::types::Media]) -> String {
    if kinds.is_empty() {
        return "JSON in the arguments text".to_string();
    }
    let each: Vec<String> = kinds
        .iter()
        .map(|m| format!("each `{}` in it as {}", m.name(), m.part()))
        .collect();
    format!("JSON in the arguments text; {}", each.join(", "))
}

/// A schema name from a type's display form: `list[LineItem]` → `list_LineItem`.
pub(crate) fn schema_name(ty: &Ty, types: &TypeTable) -> String {
    let mut name: String = ty
        .display(types)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while name.ends_with('_') {
        name.pop();
    }
    let name = name.replace("__", "_");
    if name.is_empty() {
        return "output".into();
    }
    name.chars().take(64).collect()
}

/// Derives the strict schema of `ty`.
/// The strict schema of a tool's arguments: an object of `params`, as a
/// record of them would be (docs/language.md, "Tools").
pub(crate) fn parameters_schema(name: &str, params: &[(String, Ty)], types: &TypeTable) -> Json {
    let mut table = types.clone();
    let id = TypeId(table.defs.len() as u32);
    table.defs.push(crate::types::TypeDef {
        name: format!("{name}_arguments"),
        docs: Vec::new(),
        is_pub: false,
        kind: TypeDefKind::Record(
            params
                .iter()
                .map(|(n, t)| FieldDef {
                    name: n.clone(),
                    docs: Vec::new(),
                    ty: t.clone(),
                    span: crate::source::Span::new(crate::source::FileId(0), 0, 0),
                })
                .collect(),
        ),
        span: crate::source::Span::new(crate::source::FileId(0), 0, 0),
    });
    output_schema(&Ty::Named(id), &table).schema
}

pub(crate) fn output_schema(ty: &Ty, types: &TypeTable) -> OutputSchema {
    let name = schema_name(ty, types);
    let root_record = match ty {
        Ty::Named(id) => types.get(*id).and_then(|d| d.fields().map(|_| *id)),
        _ => None,
    };
    let mut b = Builder::new(types, ty, root_record);
    let (schema, wrapped) = match root_record {
        Some(id) => (b.record_body(id), false),
        None => {
            let value = b.schema(ty);
            (
                Json::obj([
                    ("type", Json::str("object")),
                    ("properties", Json::obj([("value", value)])),
                    ("required", Json::Arr(vec![Json::str("value")])),
                    ("additionalProperties", Json::Bool(false)),
                ]),
                true,
            )
        }
    };
    let schema = b.attach_defs(schema);
    OutputSchema {
        name,
        schema,
        wrapped,
    }
}

struct Builder<'a> {
    types: &'a TypeTable,
    /// Types that go in `$defs` (used more than once, or recursive).
    shared: Vec<TypeId>,
    /// `$defs` built so far, by name (sorted output).
    defs: BTreeMap<String, Json>,
    /// Guards against building the same definition twice (and cycles).
    in_progress: Vec<TypeId>,
}

impl<'a> Builder<'a> {
    fn new(types: &'a TypeTable, root_ty: &Ty, root: Option<TypeId>) -> Builder<'a> {
        // Count how often each named type is referenced in the reachable graph.
        let mut uses: HashMap<TypeId, usize> = HashMap::new();
        let mut recursive: Vec<TypeId> = Vec::new();
        let mut seen: Vec<TypeId> = Vec::new();
        let mut stack: Vec<(TypeId, Vec<TypeId>)> = Vec::new();
        let mut roots = Vec::new();
        named_in(root_ty, &mut roots);
        for r in &roots {
            *uses.entry(*r).or_default() += 1;
        }
        // Depth-first walk to find references and cycles, without recursion.
        for r in roots {
            if seen.contains(&r) {
                continue;
            }
            seen.push(r);
            stack.push((r, children(types, r)));
            let mut path = vec![r];
            while let Some((_, kids)) = stack.last_mut() {
                if let Some(k) = kids.pop() {
                    *uses.entry(k).or_default() += 1;
                    if path.contains(&k) {
                        if !recursive.contains(&k) {
                            recursive.push(k);
                        }
                    } else if !seen.contains(&k) {
                        seen.push(k);
                        path.push(k);
                        let next = children(types, k);
                        stack.push((k, next));
                    }
                } else {
                    stack.pop();
                    path.pop();
                }
            }
        }
        // A root record that refers to itself is also kept under
        // `$defs/<Name>`: inner references are `#/$defs/<Name>`, never
        // `#`, which llama.cpp's schema converter rejects (docs/runtime.md,
        // "Recursive return types").
        let mut shared: Vec<TypeId> = uses
            .iter()
            .filter(|(id, n)| {
                if Some(**id) == root {
                    recursive.contains(id)
                } else {
                    **n > 1 || recursive.contains(id)
                }
            })
            .map(|(id, _)| *id)
            .collect();
        shared.sort();
        Builder {
            types,
            shared,
            defs: BTreeMap::new(),
            in_progress: Vec::new(),
        }
    }

    fn schema(&mut self, ty: &Ty) -> Json {
        match ty {
            Ty::Int => Json::obj([("type", Json::str("integer"))]),
            Ty::Float => Json::obj([("type", Json::str("number"))]),
            Ty::Bool => Json::obj([("type", Json::str("boolean"))]),
            Ty::Str => Json::obj([("type", Json::str("string"))]),
            Ty::Decimal => decimal_schema(),
            Ty::Date => date_schema(),
            Ty::Unit => Json::obj([("type", Json::str("null"))]),
            Ty::List(t) => Json::obj([("type", Json::str("array")), ("items", self.schema(t))]),
            Ty::Option(t) => Json::obj([(
                "anyOf",
                Json::Arr(vec![
                    self.schema(t),
                    Json::obj([("type", Json::str("null"))]),
                ]),
            )]),
            // serde's external tagging: {"Ok": value} or {"Err": "message"}.
            Ty::Result(t) => {
                let ok = closed_object(vec![("Ok".into(), self.schema(t))], None);
                let err = closed_object(
                    vec![("Err".into(), Json::obj([("type", Json::str("string"))]))],
                    None,
                );
                Json::obj([("anyOf", Json::Arr(vec![ok, err]))])
            }
            // The JSON form of a map (an `@ai` argument): an object. It is
            // never a structured output (`vox/ai/map-in-output`).
            Ty::Map(t) => Json::obj([
                ("type", Json::str("object")),
                ("additionalProperties", self.schema(t)),
            ]),
            Ty::Named(id) => self.named(*id),
            // Never, Unknown and Error do not survive checking, and media
            // is never a model's output (`vox/ai/media-in-output`); a string
            // is the least surprising stand-in should one ever reach here.
            Ty::Media(_) | Ty::Never | Ty::Unknown | Ty::Error => {
                Json::obj([("type", Json::str("string"))])
            }
        }
    }

    fn named(&mut self, id: TypeId) -> Json {
        let Some(def) = self.types.get(id) else {
            return Json::obj([("type", Json::str("string"))]);
        };
        if self.shared.contains(&id) {
            let name = def.name.clone();
            if !self.defs.contains_key(&name) && !self.in_progress.contains(&id) {
                self.in_progress.push(id);
                let body = self.type_body(id);
                self.in_progress.retain(|t| *t != id);
                self.defs.insert(name.clone(), body);
            }
            return Json::obj([("$ref", Json::str(format!("#/$defs/{name}")))]);
        }
        self.type_body(id)
    }

    fn type_body(&mut self, id: TypeId) -> Json {
        let Some(def) = self.types.get(id) else {
            return Json::obj([("type", Json::str("string"))]);
        };
        match &def.kind {
            TypeDefKind::Record(_) => self.record_body(id),
            // A run-time category: marked for vox-runtime, which puts the
            // call's values in an `enum` before anything is sent
            // (docs/runtime.md, "Categories at run time").
            TypeDefKind::Dynamic => {
                let mut pairs = vec![
                    ("type".to_string(), Json::str("string")),
                    ("x-vox-categories".to_string(), Json::str(def.name.clone())),
                ];
                if let Some(d) = doc_text(&def.docs) {
                    pairs.push(("description".into(), Json::str(d)));
                }
                Json::Obj(pairs)
            }
            TypeDefKind::Sum(variants) if def.is_plain_enum() => {
                // `"USD"`: a string enum; the cases' docs go into the
                // description, since enum values cannot carry their own.
                let mut docs: Vec<String> = doc_text(&def.docs).into_iter().collect();
                docs.extend(
                    variants
                        .iter()
                        .filter_map(|v| doc_text(&v.docs).map(|d| format!("`{}`: {d}", v.name))),
                );
                let mut pairs = vec![
                    ("type".to_string(), Json::str("string")),
                    (
                        "enum".to_string(),
                        Json::Arr(variants.iter().map(|v| Json::str(v.name.clone())).collect()),
                    ),
                ];
                if !docs.is_empty() {
                    pairs.push(("description".into(), Json::str(docs.join("\n"))));
                }
                Json::Obj(pairs)
            }
            TypeDefKind::Sum(variants) => {
                let variants = variants.clone();
                let docs = def.docs.clone();
                let alts: Vec<Json> = variants
                    .iter()
                    .map(|v| {
                        let mut props = vec![(
                            "kind".to_string(),
                            Json::obj([
                                ("type", Json::str("string")),
                                ("enum", Json::Arr(vec![Json::str(v.name.clone())])),
                            ]),
                        )];
                        let (fields, notes) = self.fields(&v.fields);
                        props.extend(fields);
                        closed_object(props, with_notes(doc_text(&v.docs), notes))
                    })
                    .collect();
                let mut pairs = vec![("anyOf".to_string(), Json::Arr(alts))];
                if let Some(d) = doc_text(&docs) {
                    pairs.push(("description".into(), Json::str(d)));
                }
                Json::Obj(pairs)
            }
        }
    }

    fn record_body(&mut self, id: TypeId) -> Json {
        let Some(def) = self.types.get(id) else {
            return closed_object(Vec::new(), None);
        };
        let fields = def.fields().map(<[FieldDef]>::to_vec).unwrap_or_default();
        let docs = doc_text(&def.docs);
        let (props, notes) = self.fields(&fields);
        closed_object(props, with_notes(docs, notes))
    }

    /// Property schemas of `fields`, with each field's doc comment as its
    /// `description`. Strict mode forbids keywords beside `$ref`, so the docs
    /// of fields whose type is a reference come back as notes for the
    /// enclosing object's description instead.
    fn fields(&mut self, fields: &[FieldDef]) -> (Vec<(String, Json)>, Vec<String>) {
        let mut notes = Vec::new();
        let props = fields
            .iter()
            .map(|f| {
                let mut s = self.schema(&f.ty);
                if let (Some(d), Json::Obj(pairs)) = (doc_text(&f.docs), &mut s) {
                    if pairs.iter().any(|(k, _)| k == "$ref") {
                        notes.push(format!("`{}`: {d}", f.name));
                    } else if let Some((_, Json::Str(existing))) =
                        pairs.iter_mut().find(|(k, _)| k == "description")
                    {
                        // The field's own doc first, then its type's.
                        *existing = format!("{d}\n{existing}");
                    } else {
                        pairs.push(("description".into(), Json::str(d)));
                    }
                }
                (f.name.clone(), s)
            })
            .collect();
        (props, notes)
    }

    fn attach_defs(self, schema: Json) -> Json {
        if self.defs.is_empty() {
            return schema;
        }
        let Json::Obj(mut pairs) = schema else {
            return schema;
        };
        pairs.push(("$defs".into(), Json::Obj(self.defs.into_iter().collect())));
        Json::Obj(pairs)
    }
}

/// The text a `Decimal` must match in a reply (docs/language.md,
/// "Decimal"): an optional `-`, digits, and optionally `.` and digits.
/// vox-runtime checks it on every reply whose schema has it.
pub const DECIMAL_PATTERN: &str = "^-?[0-9]+(\\.[0-9]+)?$";

/// A `Decimal`: a string with [`DECIMAL_PATTERN`] (OpenAI strict mode,
/// llama.cpp's grammar converter and Ollama take `pattern`; Gemini's subset
/// drops it and the runtime's check remains).
fn decimal_schema() -> Json {
    Json::obj([
        ("type", Json::str("string")),
        ("pattern", Json::str(DECIMAL_PATTERN)),
        (
            "description",
            Json::str("A decimal number written as a string, such as \"12.50\" or \"-3\"."),
        ),
    ])
}

/// The text a `Date` must match in a reply (docs/language.md, "Dates");
/// vox-runtime also checks that it is a real day.
pub const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// A `Date`: a string with [`DATE_PATTERN`] and a description saying the
/// form. Not `format: date`: the strict-mode subset this schema keeps to
/// (`schema::limits`, tested by `strict_tests`) has no `format`, and a
/// pattern is taken by OpenAI strict mode, llguidance and llama.cpp's
/// grammar converter alike (Gemini's subset drops it; the runtime's check
/// of every reply remains, and also refuses a day that does not exist).
fn date_schema() -> Json {
    Json::obj([
        ("type", Json::str("string")),
        ("pattern", Json::str(DATE_PATTERN)),
        (
            "description",
            Json::str("A calendar date written YYYY-MM-DD (ISO 8601), such as \"2026-12-31\"."),
        ),
    ])
}

fn closed_object(props: Vec<(String, Json)>, description: Option<String>) -> Json {
    let required = props.iter().map(|(k, _)| Json::str(k.clone())).collect();
    let mut pairs = vec![
        ("type".to_string(), Json::str("object")),
        ("properties".to_string(), Json::Obj(props)),
        ("required".to_string(), Json::Arr(required)),
        ("additionalProperties".to_string(), Json::Bool(false)),
    ];
    if let Some(d) = description {
        pairs.push(("description".into(), Json::str(d)));
    }
    Json::Obj(pairs)
}

/// An object's description: its doc comment, then notes about its fields.
fn with_notes(docs: Option<String>, notes: Vec<String>) -> Option<String> {
    if notes.is_empty() {
        return docs;
    }
    let mut parts: Vec<String> = docs.into_iter().collect();
    parts.extend(notes);
    Some(parts.join("\n"))
}

fn doc_text(docs: &[String]) -> Option<String> {
    let text = docs
        .iter()
        .map(|d| d.trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn named_in(t: &Ty, out: &mut Vec<TypeId>) {
    match t {
        Ty::Named(id) => out.push(*id),
        Ty::List(t) | Ty::Option(t) | Ty::Result(t) => named_in(t, out),
        _ => {}
    }
}

/// Named types referenced by a type's fields (with repetition).
fn children(types: &TypeTable, id: TypeId) -> Vec<TypeId> {
    let mut out = Vec::new();
    if let Some(def) = types.get(id) {
        def.every_field().for_each(|f| named_in(&f.ty, &mut out));
    }
    out
}

#[cfg(test)]
mod strict_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, SourceFile, SourceMap};

    fn schema_of(src: &str, ty_name: &str) -> OutputSchema {
        let mut sources = SourceMap::new();
        sources.add(SourceFile::new("t.vox", src));
        let c = check(sources);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        let id = c.info.types.find(ty_name).expect("type");
        output_schema(&Ty::Named(id), &c.info.types)
    }

    #[test]
    fn record_with_scalars_lists_and_options() {
        let s = schema_of(
            "type Dto { ok: bool\n score: int\n tags: list[str]\n note: Option[str] }",
            "Dto",
        );
        assert!(!s.wrapped);
        assert_eq!(
            s.schema.to_compact(),
            r#"{"type":"object","properties":{"ok":{"type":"boolean"},"score":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"note":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["ok","score","tags","note"],"additionalProperties":false}"#
        );
    }

    #[test]
    fn shared_and_recursive_types_use_defs() {
        let s = schema_of(
            "type P { x: int }\ntype Pair { a: P, b: P }\ntype Node { value: int\n children: list[Node]\n next: Option[Node] }\ntype Tree { root: Node }",
            "Pair",
        );
        let text = s.schema.to_compact();
        assert!(text.contains(r##""a":{"$ref":"#/$defs/P"}"##), "{text}");
        assert!(text.contains(r#""$defs":{"P":{"type":"object""#), "{text}");
        let t = schema_of(
            "type Node { value: int\n children: list[Node] }\ntype Tree { root: Node }",
            "Tree",
        )
        .schema
        .to_compact();
        assert!(
            t.contains(r##""children":{"type":"array","items":{"$ref":"#/$defs/Node"}}"##),
            "{t}"
        );
        // A recursive root: the root object, and a copy under
        // `$defs/Node` that inner references point at.
        let r = schema_of("type Node { value: int\n next: Option[Node] }", "Node")
            .schema
            .to_compact();
        let body = r##""type":"object","properties":{"value":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"required":["value","next"],"additionalProperties":false"##;
        assert_eq!(r, format!(r#"{{{body},"$defs":{{"Node":{{{body}}}}}}}"#));
        assert!(!r.contains(r##""$ref":"#""##), "{r}");
    }

    #[test]
    fn sum_types_are_tagged_any_of_and_wrapped_at_root() {
        let s = schema_of("/// State.\ntype S =\n | A\n /// Bee.\n | B(n: int)", "S");
        assert!(s.wrapped);
        let text = s.schema.to_compact();
        assert!(text.starts_with(r#"{"type":"object","properties":{"value":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["A"]}},"required":["kind"],"additionalProperties":false},"#), "{text}");
        assert!(text.contains(r#""description":"Bee.""#));
        assert!(text.contains(r#""description":"State.""#));
    }

    #[test]
    fn plain_enums_are_string_enums_and_decimals_have_a_pattern() {
        let s = schema_of(
            "/// Money.\ntype Currency =\n | USD\n /// Euro.\n | EUR\n | GBP",
            "Currency",
        );
        assert!(s.wrapped);
        assert_eq!(
            s.schema.to_compact(),
            r#"{"type":"object","properties":{"value":{"type":"string","enum":["USD","EUR","GBP"],"description":"Money.\n`EUR`: Euro."}},"required":["value"],"additionalProperties":false}"#
        );
        let p = schema_of(
            "type Currency = | USD | EUR\ntype Price {\n /// Net.\n amount: Decimal\n currency: Currency }",
            "Price",
        );
        assert_eq!(
            p.schema.to_compact(),
            r#"{"type":"object","properties":{"amount":{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$","description":"Net.\nA decimal number written as a string, such as \"12.50\" or \"-3\"."},"currency":{"type":"string","enum":["USD","EUR"]}},"required":["amount","currency"],"additionalProperties":false}"#
        );
        assert!(stats(&p.schema).violations().is_empty());
        let d = schema_of("type Bill {\n /// When.\n due: Date\n}", "Bill");
        assert_eq!(
            d.schema.to_compact(),
            r#"{"type":"object","properties":{"due":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$","description":"When.\nA calendar date written YYYY-MM-DD (ISO 8601), such as \"2026-12-31\"."}},"required":["due"],"additionalProperties":false}"#
        );
        assert!(stats(&d.schema).violations().is_empty());
    }

    #[test]
    fn names_are_sanitized() {
        let types = TypeTable::default();
        assert_eq!(
            schema_name(&Ty::List(Box::new(Ty::Str)), &types),
            "list_str"
        );
        assert_eq!(
            schema_name(&Ty::Option(Box::new(Ty::List(Box::new(Ty::Int)))), &types),
            "Option_list_int"
        );
    }

    #[test]
    fn each_provider_gets_the_schema_in_its_own_field() {
        let schema = OutputSchema {
            name: "Node".into(),
            schema: Json::obj([
                ("type", Json::str("object")),
                (
                    "properties",
                    Json::obj([(
                        "next",
                        Json::obj([(
                            "anyOf",
                            Json::Arr(vec![
                                Json::obj([("$ref", Json::str("#"))]),
                                Json::obj([("type", Json::str("null"))]),
                            ]),
                        )]),
                    )]),
                ),
            ]),
            wrapped: false,
        };
        let gemini = schema
            .for_provider("gemini", "walk", CompatibleFormat::JsonSchema)
            .unwrap()
            .to_compact();
        assert_eq!(
            gemini,
            r##"{"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"$defs":{"Node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}}}}}}}"##
        );
        let anthropic = schema
            .for_provider("anthropic", "walk", CompatibleFormat::JsonSchema)
            .unwrap();
        assert_eq!(
            anthropic.get("tool_choice").unwrap().to_compact(),
            r#"{"type":"tool","name":"walk"}"#
        );
        let object = schema
            .for_provider("compatible", "walk", CompatibleFormat::JsonObject)
            .unwrap()
            .to_compact();
        assert!(
            object.starts_with(r#"{"response_format":{"type":"json_object","schema":{"#),
            "{object}"
        );
        assert!(schema
            .for_provider("claude", "walk", CompatibleFormat::JsonSchema)
            .is_err());
    }

    /// Each network provider's request fields, in full: OpenAI and
    /// OpenRouter take `response_format` `json_schema` whatever format is
    /// chosen for `compatible` servers (it is only theirs), and Ollama takes
    /// the schema itself as `format`.
    #[test]
    fn the_compatible_format_is_only_for_compatible_servers() {
        let s = schema_of("type Dto { ok: bool }", "Dto");
        let json_schema = Json::obj([("response_format", s.response_format())]).to_compact();
        assert!(
            json_schema.starts_with(r#"{"response_format":{"type":"json_schema","json_schema":{"name":"Dto","strict":true,"schema":{"type":"object""#),
            "{json_schema}"
        );
        for provider in ["openai", "openrouter"] {
            for format in [CompatibleFormat::JsonSchema, CompatibleFormat::JsonObject] {
                let fields = s.for_provider(provider, "f", format).unwrap().to_compact();
                assert_eq!(fields, json_schema, "{provider}, {format:?}");
            }
        }
        let compatible = |format| {
            s.for_provider("compatible", "f", format)
                .unwrap()
                .to_compact()
        };
        assert_eq!(compatible(CompatibleFormat::JsonSchema), json_schema);
        assert_eq!(
            compatible(CompatibleFormat::JsonObject),
            format!(
                r#"{{"response_format":{{"type":"json_object","schema":{}}}}}"#,
                s.schema.to_compact()
            )
        );
        for format in [CompatibleFormat::JsonSchema, CompatibleFormat::JsonObject] {
            assert_eq!(
                s.for_provider("ollama", "f", format).unwrap().to_compact(),
                format!(r#"{{"format":{}}}"#, s.schema.to_compact())
            );
        }
        // Every name `PROVIDERS` lists is answered, and only those.
        for provider in PROVIDERS {
            assert!(
                s.for_provider(provider, "f", CompatibleFormat::JsonSchema)
                    .is_ok(),
                "{provider}"
            );
        }
        let unknown = s
            .for_provider("fixture", "f", CompatibleFormat::JsonSchema)
            .unwrap_err();
        assert!(unknown.contains("openai, "), "{unknown}");
    }

    /// How each argument of an `@ai` function reaches the model
    /// (docs/language.md, "Images, documents and audio"), as `cargo vox
    /// schema` reports it: a media value is a part of its kind, a list of
    /// one is a part per element, an option of one is a part or nothing,
    /// and anything else is JSON text with each media kind inside it sent
    /// as parts.
    #[test]
    fn arguments_say_how_they_are_sent() {
        let src = "type Page {\n number: int\n scan: Image\n}\n\
            type Folder {\n pages: list[Page]\n cover: Option[Document]\n voice: Audio\n}\n\
            type Out { n: int }\n\
            /// Read.\n@ai\n@uses(net)\n\
            fn read(scan: Image, pdf: Document, memo: Audio, pages: list[Page], shots: list[Image], \
            memos: list[Audio], maybe_pdf: Option[Document], maybe_scan: Option[Image], \
            maybe_page: Option[Page], folder: Folder, nested: list[list[Image]], note: str, \
            counts: list[int], label: Option[str]) to Out {\n    return Out { n: 1 }\n}\n";
        let mut sources = SourceMap::new();
        sources.add(SourceFile::new("t.vox", src));
        let c = check(sources);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        let fns = c.ai_functions();
        assert_eq!(fns.len(), 1);
        let got: Vec<(&str, Vec<&str>, &str)> = fns[0]
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.parts.clone(), p.sent_as.as_str()))
            .collect();
        let json = "JSON in the arguments text";
        let want: Vec<(&str, Vec<&str>, &str)> = vec![
            (
                "scan",
                vec!["image"],
                "an image part; in the arguments' JSON its place reads \"<image N>\"",
            ),
            (
                "pdf",
                vec!["document"],
                "a document part; in the arguments' JSON its place reads \"<document N>\"",
            ),
            (
                "memo",
                vec!["audio"],
                "an audio part; in the arguments' JSON its place reads \"<audio N>\"",
            ),
            (
                "pages",
                vec!["image"],
                "JSON in the arguments text; each `Image` in it as an image part",
            ),
            ("shots", vec!["image"], "one image part per element"),
            ("memos", vec!["audio"], "one audio part per element"),
            (
                "maybe_pdf",
                vec!["document"],
                "a document part, or nothing for `None`",
            ),
            (
                "maybe_scan",
                vec!["image"],
                "an image part, or nothing for `None`",
            ),
            (
                "maybe_page",
                vec!["image"],
                "JSON in the arguments text; each `Image` in it as an image part",
            ),
            (
                "folder",
                vec!["image", "document", "audio"],
                "JSON in the arguments text; each `Image` in it as an image part, \
                 each `Document` in it as a document part, each `Audio` in it as an audio part",
            ),
            (
                "nested",
                vec!["image"],
                "JSON in the arguments text; each `Image` in it as an image part",
            ),
            ("note", vec![], json),
            ("counts", vec![], json),
            ("label", vec![], json),
        ];
        assert_eq!(got, want);
    }
}
