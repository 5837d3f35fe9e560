//! Every structured-output schema the compiler can produce must pass
//! OpenAI's strict mode (docs/runtime.md). This file carries its own checker for
//! the documented Structured Outputs subset — written against the rules,
//! not against `schema.rs` — and runs it over every schema the fixtures
//! produce (each user type, list/Option wrappers, every `@ai` return type)
//! and over generated stress modules.
//!
//! The rules checked, per schema node: only the supported keywords (`type`,
//! `properties`, `required`, `additionalProperties`, `items`, `pattern`
//! (on strings, anchored, in llama.cpp's regex subset), `anyOf`,
//! `enum`, `const`, `description`, `$ref`, `$defs`); no empty `{}` and no
//! node that constrains nothing; `type` among the seven JSON types; every
//! object closed (`additionalProperties: false`) with `required` listing
//! exactly its properties; `$ref` is `#/$defs/<present name>` (never `#`, which
//! llama.cpp's converter rejects) and stands alone (the API rejects `$ref` with sibling keywords such as
//! `description`); `$defs` only at the root; the root is an object, never
//! `anyOf` or a bare `$ref`. Limits: nesting ≤ 10, properties ≤ 5000, enum
//! values ≤ 1000, names + enum/const values ≤ 120,000 characters, and at
//! most 15,000 characters in one string enum of more than 250 values.
//! The JSON is parsed with serde_json, rejecting duplicate object keys.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::schema::{self, OutputSchema};
use crate::test_support::{fixtures, vox_files};
use crate::types::{Ty, TypeId};
use crate::{check, Checked, SourceFile, SourceMap};
use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

// ---- the strict-mode checker ------------------------------------------

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "pattern",
    "anyOf",
    "enum",
    "const",
    "description",
    "$ref",
    "$defs",
];
const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];
const MAX_NESTING: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_STRING_CHARS: usize = 120_000;
const LARGE_ENUM: usize = 250;
const MAX_LARGE_ENUM_CHARS: usize = 15_000;

/// Sizes measured by this file's own walk (compare [`schema::stats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Measures {
    nesting: usize,
    properties: usize,
    enum_values: usize,
    /// Property names, definition names and enum values.
    name_and_enum_chars: usize,
    /// `const` values, which count towards the same limit.
    const_chars: usize,
}

/// A `serde_json::Value` that refuses duplicate object keys (serde_json
/// itself silently keeps the last one).
struct NoDuplicateKeys(Value);

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
            .map(NoDuplicateKeys)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(NoDuplicateKeys(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let NoDuplicateKeys(v) = map.next_value()?;
            if out.insert(key.clone(), v).is_some() {
                return Err(A::Error::custom(format!("duplicate key `{key}`")));
            }
        }
        Ok(Value::Object(out))
    }
}

fn parse_strict_json(text: &str) -> Result<Value, String> {
    serde_json::from_str::<NoDuplicateKeys>(text)
        .map(|v| v.0)
        .map_err(|e| format!("not valid JSON (or duplicate keys): {e}"))
}

/// Checks one schema document; returns its measures or every violation.
fn check_strict(text: &str) -> Result<Measures, Vec<String>> {
    let root = parse_strict_json(text).map_err(|e| vec![e])?;
    let mut c = StrictChecker {
        defs: root.get("$defs").and_then(Value::as_object),
        errors: Vec::new(),
        m: Measures::default(),
    };
    c.root(&root);
    if c.errors.is_empty() {
        c.m.nesting = nesting(&root, c.defs, &mut Vec::new());
        c.limits();
    }
    if c.errors.is_empty() {
        Ok(c.m)
    } else {
        Err(c.errors)
    }
}

struct StrictChecker<'a> {
    defs: Option<&'a Map<String, Value>>,
    errors: Vec<String>,
    m: Measures,
}

impl StrictChecker<'_> {
    fn err(&mut self, path: &str, msg: impl fmt::Display) {
        let at = if path.is_empty() { "(root)" } else { path };
        self.errors.push(format!("{at}: {msg}"));
    }

    fn root(&mut self, root: &Value) {
        let Some(obj) = root.as_object() else {
            return self.err("", "the root is not a JSON object");
        };
        if obj.get("type").and_then(Value::as_str) != Some("object") {
            self.err("", "the root must be `\"type\":\"object\"`");
        }
        if obj.contains_key("anyOf") {
            self.err("", "the root must not be `anyOf`");
        }
        if obj.contains_key("$ref") {
            self.err("", "the root must not be a `$ref`");
        }
        if let Some(defs) = obj.get("$defs") {
            match defs.as_object() {
                Some(defs) if !defs.is_empty() => {
                    for (name, def) in defs {
                        self.m.name_and_enum_chars += name.chars().count();
                        self.node(def, &format!("/$defs/{name}"), false);
                    }
                }
                _ => self.err("/$defs", "must be a non-empty object"),
            }
        }
        self.node(root, "", true);
    }

    fn node(&mut self, v: &Value, path: &str, is_root: bool) {
        let Some(obj) = v.as_object() else {
            return self.err(path, format!("a schema must be an object, found {v}"));
        };
        if obj.is_empty() {
            return self.err(path, "empty schema `{}`");
        }
        for k in obj.keys() {
            if !KEYWORDS.contains(&k.as_str()) {
                self.err(path, format!("unsupported keyword `{k}`"));
            }
        }
        if obj.contains_key("$defs") && !is_root {
            self.err(path, "`$defs` is only allowed at the root");
        }
        if !["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| obj.contains_key(*k))
        {
            self.err(
                path,
                "schema constrains nothing (no type/anyOf/$ref/enum/const)",
            );
        }
        if let Some(r) = obj.get("$ref") {
            self.reference(r, obj, path, is_root);
        }
        let types = self.types(obj, path);
        let is_object = types.contains(&"object");
        let is_array = types.contains(&"array");
        if is_object {
            self.object(obj, path);
        } else {
            for k in ["properties", "required", "additionalProperties"] {
                if obj.contains_key(k) {
                    self.err(path, format!("`{k}` on a schema that is not an object"));
                }
            }
        }
        match (is_array, obj.get("items")) {
            (true, Some(items)) => self.node(items, &format!("{path}/items"), false),
            (true, None) => self.err(path, "an array schema needs `items`"),
            (false, Some(_)) => self.err(path, "`items` on a schema that is not an array"),
            (false, None) => {}
        }
        if let Some(any) = obj.get("anyOf") {
            self.any_of(any, obj, path);
        }
        if let Some(e) = obj.get("enum") {
            self.enumeration(e, &types, path);
        }
        if let Some(c) = obj.get("const") {
            match c {
                Value::String(s) => self.m.const_chars += s.chars().count(),
                Value::Array(_) | Value::Object(_) => self.err(path, "`const` must be a scalar"),
                _ => {}
            }
        }
        if let Some(p) = obj.get("pattern") {
            // Strict mode takes `pattern` on strings; llama.cpp's converter
            // only an anchored one (`^…$`) in its regex subset.
            match p.as_str() {
                _ if types != ["string"] => {
                    self.err(path, "`pattern` on a schema that is not a string")
                }
                Some(p)
                    if p.starts_with('^')
                        && p.ends_with('$')
                        && p.chars().all(|c| {
                            c.is_ascii_alphanumeric() || "^$-[]()\\.?+*{},|".contains(c)
                        }) => {}
                _ => self.err(
                    path,
                    format!("`pattern` {p} is not an anchored regex of llama.cpp's subset"),
                ),
            }
        }
        if let Some(d) = obj.get("description") {
            if !d.is_string() {
                self.err(path, "`description` must be a string");
            }
        }
    }

    fn reference(&mut self, r: &Value, obj: &Map<String, Value>, path: &str, is_root: bool) {
        let others: Vec<&String> = obj
            .keys()
            .filter(|k| *k != "$ref" && !(is_root && *k == "$defs"))
            .collect();
        if !others.is_empty() {
            self.err(
                path,
                format!("`$ref` cannot have sibling keywords {others:?}"),
            );
        }
        let Some(r) = r.as_str() else {
            return self.err(path, "`$ref` must be a string");
        };
        // `#` (the root) is valid JSON Schema and OpenAI takes it, but
        // llama.cpp's converter rejects it: only `#/$defs/<name>`.
        match r.strip_prefix("#/$defs/") {
            Some(name) if self.defs.is_some_and(|d| d.contains_key(name)) => {}
            Some(name) => self.err(path, format!("`$ref` to missing definition `{name}`")),
            None => self.err(
                path,
                format!("`$ref` must be `#/$defs/<name>`, found `{r}`"),
            ),
        }
    }

    fn types<'v>(&mut self, obj: &'v Map<String, Value>, path: &str) -> Vec<&'v str> {
        let listed: Vec<&Value> = match obj.get("type") {
            None => return Vec::new(),
            Some(Value::Array(ts)) if !ts.is_empty() => ts.iter().collect(),
            Some(t @ Value::String(_)) => vec![t],
            Some(other) => {
                self.err(path, format!("`type` must be a type name, found {other}"));
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for t in listed {
            match t.as_str() {
                Some(s) if JSON_TYPES.contains(&s) => out.push(s),
                _ => self.err(path, format!("unsupported type {t}")),
            }
        }
        out
    }

    fn object(&mut self, obj: &Map<String, Value>, path: &str) {
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.err(path, "objects need `\"additionalProperties\": false`");
        }
        let Some(props) = obj.get("properties").and_then(Value::as_object) else {
            return self.err(path, "objects need `properties`");
        };
        let required: Vec<&str> = match obj.get("required").and_then(Value::as_array) {
            Some(r) => r.iter().filter_map(Value::as_str).collect(),
            None => {
                self.err(path, "objects need `required`");
                Vec::new()
            }
        };
        let required_set: BTreeSet<&str> = required.iter().copied().collect();
        if required_set.len() != required.len() {
            self.err(path, format!("`required` repeats a name: {required:?}"));
        }
        let keys: BTreeSet<&str> = props.keys().map(String::as_str).collect();
        if keys != required_set {
            self.err(
                path,
                format!("`required` {required_set:?} is not exactly the properties {keys:?}"),
            );
        }
        for (name, p) in props {
            self.m.properties += 1;
            self.m.name_and_enum_chars += name.chars().count();
            self.node(p, &format!("{path}/properties/{name}"), false);
        }
    }

    fn any_of(&mut self, any: &Value, obj: &Map<String, Value>, path: &str) {
        let siblings: Vec<&String> = obj
            .keys()
            .filter(|k| !matches!(k.as_str(), "anyOf" | "description" | "$defs"))
            .collect();
        if !siblings.is_empty() {
            self.err(path, format!("`anyOf` beside {siblings:?}"));
        }
        let Some(branches) = any.as_array().filter(|b| !b.is_empty()) else {
            return self.err(path, "`anyOf` must be a non-empty array");
        };
        for (i, b) in branches.iter().enumerate() {
            self.node(b, &format!("{path}/anyOf/{i}"), false);
        }
        // Tagged alternatives must be told apart by their `kind`.
        let kinds: Vec<&Value> = branches
            .iter()
            .filter_map(|b| b.pointer("/properties/kind/enum"))
            .collect();
        let distinct: BTreeSet<String> = kinds.iter().map(|k| k.to_string()).collect();
        if distinct.len() != kinds.len() {
            self.err(path, "two `anyOf` alternatives share a `kind`");
        }
    }

    fn enumeration(&mut self, e: &Value, types: &[&str], path: &str) {
        let Some(values) = e.as_array().filter(|v| !v.is_empty()) else {
            return self.err(path, "`enum` must be a non-empty array");
        };
        self.m.enum_values += values.len();
        let mut chars = 0;
        for v in values {
            match v {
                Value::String(s) => chars += s.chars().count(),
                Value::Array(_) | Value::Object(_) => self.err(path, "enum values must be scalars"),
                _ => {}
            }
            if types == ["string"] && !v.is_string() {
                self.err(path, format!("enum value {v} is not a string"));
            }
        }
        self.m.name_and_enum_chars += chars;
        if values.len() > LARGE_ENUM && chars > MAX_LARGE_ENUM_CHARS {
            self.err(
                path,
                format!("an enum of {} values has {chars} characters", values.len()),
            );
        }
    }

    fn limits(&mut self) {
        let m = self.m;
        if m.nesting > MAX_NESTING {
            self.err(
                "",
                format!("nests {} levels (limit {MAX_NESTING})", m.nesting),
            );
        }
        if m.properties > MAX_PROPERTIES {
            self.err(
                "",
                format!("{} properties (limit {MAX_PROPERTIES})", m.properties),
            );
        }
        if m.enum_values > MAX_ENUM_VALUES {
            self.err(
                "",
                format!("{} enum values (limit {MAX_ENUM_VALUES})", m.enum_values),
            );
        }
        let chars = m.name_and_enum_chars + m.const_chars;
        if chars > MAX_STRING_CHARS {
            self.err(
                "",
                format!("{chars} name/enum characters (limit {MAX_STRING_CHARS})"),
            );
        }
    }
}

/// Object nesting depth (the root object is level 1), following each
/// definition once per path; `#` (the root itself) is recursion, not depth.
fn nesting(v: &Value, defs: Option<&Map<String, Value>>, open: &mut Vec<String>) -> usize {
    let Some(obj) = v.as_object() else { return 0 };
    let own = usize::from(match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    });
    let mut children: Vec<&Value> = Vec::new();
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        children.extend(props.values());
    }
    children.extend(obj.get("items"));
    if let Some(branches) = obj.get("anyOf").and_then(Value::as_array) {
        children.extend(branches);
    }
    let mut inner = children
        .into_iter()
        .map(|c| nesting(c, defs, open))
        .max()
        .unwrap_or(0);
    if let Some(name) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        if let (false, Some(target)) = (
            open.iter().any(|o| o == name),
            defs.and_then(|d| d.get(name)),
        ) {
            open.push(name.to_string());
            inner = inner.max(nesting(target, defs, open));
            open.pop();
        }
    }
    own + inner
}

fn valid_schema_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks a derived [`OutputSchema`] as a whole: its name, its document,
/// and that the `wrapped` flag matches the root's shape.
/// A schema as vox-runtime sends it: each run-time category's mark
/// (`"x-vox-categories":"Queue"`) replaced by the values a call gives.
fn with_sample_categories(text: &str) -> String {
    const MARK: &str = "\"x-vox-categories\":\"";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        let end = after.find('"').expect("the mark's name is quoted");
        out.push_str("\"enum\":[\"a\",\"b\"]");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn check_output(s: &OutputSchema) -> Result<Measures, Vec<String>> {
    let mut errors = Vec::new();
    if !valid_schema_name(&s.name) {
        errors.push(format!(
            "schema name `{}` is not [A-Za-z0-9_-]{{1,64}}",
            s.name
        ));
    }
    let text = with_sample_categories(&s.schema.to_compact());
    let measures = match check_strict(&text) {
        Ok(m) => Some(m),
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    if s.wrapped && measures.is_some() {
        let value = parse_strict_json(&text).ok();
        let props = value
            .as_ref()
            .and_then(|v| v.get("properties"))
            .and_then(Value::as_object);
        if props.is_none_or(|p| p.len() != 1 || !p.contains_key("value")) {
            errors.push("a wrapped schema must have exactly the property `value`".into());
        }
    }
    match measures {
        Some(m) if errors.is_empty() => Ok(m),
        _ => Err(errors),
    }
}

// ---- where schemas come from ------------------------------------------

/// `[package.metadata.vox] sources`, or the default `["vox"]`.
fn source_dirs(manifest: &str) -> Vec<String> {
    let mut in_vox = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_vox = line == "[package.metadata.vox]";
        } else if in_vox && line.starts_with("sources") {
            let list = line.split_once('=').map_or("", |(_, v)| v);
            return list
                .split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
        }
    }
    vec!["vox".into()]
}

/// Checks files as one module, named relative to `root` (as vox-build does).
fn check_files(root: &Path, files: &[PathBuf]) -> Checked {
    let mut sources = SourceMap::new();
    for f in files {
        let name = f.strip_prefix(root).unwrap_or(f).to_string_lossy();
        sources.add(SourceFile::from_bytes(
            name.replace('\\', "/"),
            &std::fs::read(f).unwrap(),
        ));
    }
    check(sources)
}

fn check_text(src: &str) -> Checked {
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("stress.vox", src));
    check(sources)
}

/// Every module under `fixtures/` that is meant to check clean:
/// `fixtures/valid` (each file or directory one module) and each fixture
/// crate (its source directories together).
fn fixture_modules() -> Vec<(String, Checked)> {
    let root = fixtures();
    let mut modules = Vec::new();
    let valid = root.join("valid");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&valid)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let mut files = Vec::new();
        if p.is_dir() {
            vox_files(&p, &mut files);
        } else if p.extension().is_some_and(|e| e == "vox") {
            files.push(p.clone());
        }
        if !files.is_empty() {
            let name = format!("valid/{}", p.file_name().unwrap().to_string_lossy());
            modules.push((name, check_files(&valid, &files)));
        }
    }
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    for krate in crates {
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
        let mut files = Vec::new();
        for dir in source_dirs(&manifest) {
            vox_files(&krate.join(dir), &mut files);
        }
        files.sort();
        if !files.is_empty() {
            let name = krate.file_name().unwrap().to_string_lossy().into_owned();
            modules.push((name, check_files(&krate, &files)));
        }
    }
    modules
}

/// The schemas a module can produce: every user type, list/Option (and a
/// nested list) wrappers of each, and every `@ai` return type.
fn schemas_of(c: &Checked) -> Vec<(String, OutputSchema)> {
    let types = &c.info.types;
    let mut tys: Vec<Ty> = Vec::new();
    for id in types.ids() {
        let named = Ty::Named(id);
        tys.push(named.clone());
        tys.push(Ty::List(Box::new(named.clone())));
        tys.push(Ty::Option(Box::new(named.clone())));
        tys.push(Ty::List(Box::new(Ty::List(Box::new(named)))));
    }
    for f in &c.info.fns {
        if f.ai.is_some() {
            tys.push(f.ret.clone());
        }
    }
    // A type that holds a map is never a structured output
    // (`vox/ai/map-in-output`): strict mode cannot describe free-form keys.
    tys.into_iter()
        .filter(|t| types.map_inside(t).is_none())
        .map(|t| (t.display(types), schema::output_schema(&t, types)))
        .collect()
}

/// Checks every schema of a clean module; returns how many were checked.
fn assert_module_strict(name: &str, c: &Checked) -> usize {
    assert!(
        !c.has_errors(),
        "{name} must check clean: {:#?}",
        c.diagnostics
    );
    let schemas = schemas_of(c);
    let mut failures = Vec::new();
    for (ty, s) in &schemas {
        if let Err(errors) = check_output(s) {
            failures.push(format!(
                "{name}: schema of `{ty}` is not strict:\n  {}\n  schema: {}",
                errors.join("\n  "),
                s.schema.to_compact()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    schemas.len()
}

fn schema_of(c: &Checked, ty: &str) -> OutputSchema {
    let id: TypeId = c.info.types.find(ty).expect("type exists");
    schema::output_schema(&Ty::Named(id), &c.info.types)
}

// ---- tests --------------------------------------------------------------

#[test]
fn every_fixture_schema_is_strict() {
    let modules = fixture_modules();
    let names: Vec<&str> = modules.iter().map(|(n, _)| n.as_str()).collect();
    for expected in ["valid/invoice.vox", "invoice-app", "kitchen-sink"] {
        assert!(
            names.contains(&expected),
            "missing module {expected}: {names:?}"
        );
    }
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, c) in &modules {
        match std::panic::catch_unwind(|| assert_module_strict(name, c)) {
            Ok(n) => checked += n,
            Err(e) => failures.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| format!("{name}: panicked")),
            ),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 50, "only {checked} schemas checked");
}

#[test]
fn ai_return_types_of_fixtures_are_covered() {
    // Records are not wrapped; sums and scalars are, and still pass.
    let modules = fixture_modules();
    let mut ai_fns = 0;
    for (_, c) in &modules {
        for f in c.info.fns.iter().filter(|f| f.ai.is_some()) {
            ai_fns += 1;
            let s = schema::output_schema(&f.ret, &c.info.types);
            let is_record = matches!(&f.ret, Ty::Named(id)
                if c.info.types.get(*id).is_some_and(|d| d.fields().is_some()));
            assert_eq!(s.wrapped, !is_record, "{}", f.name);
            check_output(&s).unwrap_or_else(|e| panic!("{}: {e:#?}", f.name));
        }
    }
    assert!(ai_fns >= 4, "only {ai_fns} @ai functions in the fixtures");
}

#[test]
fn recursive_records_through_list_and_option() {
    let c = check_text(
        "/// A tree.\ntype Tree {\n label: str\n children: list[Tree]\n}\n\
         type Link {\n value: int\n next: Option[Link]\n}\n\
         type Forest {\n trees: list[Tree]\n head: Option[Link]\n best: Option[Tree]\n}\n",
    );
    assert_module_strict("recursive", &c);
    // The recursive root keeps its object at the root and a copy under
    // `$defs/Tree` for the inner references.
    let tree = schema_of(&c, "Tree").schema.to_compact();
    assert!(
        tree.contains(r##""items":{"$ref":"#/$defs/Tree"}"##),
        "{tree}"
    );
    let v = parse_strict_json(&tree).unwrap();
    assert_eq!(v["type"], "object", "{tree}");
    assert_eq!(v["properties"], v["$defs"]["Tree"]["properties"], "{tree}");
    assert_eq!(v["description"], "A tree.", "{tree}");
    let forest = schema_of(&c, "Forest").schema.to_compact();
    assert!(forest.contains(r#""$defs":{"#), "{forest}");
    assert!(forest.contains(r##""$ref":"#/$defs/Link""##), "{forest}");
}

#[test]
fn mutually_recursive_types() {
    let c = check_text(
        "type Dept {\n name: str\n staff: list[Person]\n}\n\
         type Person {\n name: str\n dept: Option[Dept]\n role: Role\n}\n\
         type Role =\n | Lead(reports: list[Person])\n | Member\n\
         type Org { depts: list[Dept] }\n",
    );
    assert_module_strict("mutual", &c);
    let org = schema_of(&c, "Org").schema.to_compact();
    for def in ["Dept", "Person"] {
        assert!(
            org.contains(&format!(r##""$ref":"#/$defs/{def}""##)),
            "{org}"
        );
    }
}

#[test]
fn a_type_used_in_three_places_goes_to_defs() {
    let c = check_text(
        "type Money {\n amount: Decimal\n currency: str\n}\n\
         type Line { price: Money }\n\
         type Order {\n subtotal: Money\n tax: Money\n lines: list[Line]\n}\n",
    );
    assert_module_strict("shared", &c);
    let order = schema_of(&c, "Order");
    let v = parse_strict_json(&order.schema.to_compact()).unwrap();
    assert!(v.pointer("/$defs/Money").is_some(), "{v}");
    let refs = v.to_string().matches(r##""$ref":"#/$defs/Money""##).count();
    assert_eq!(refs, 3, "{v}");
}

#[test]
fn sum_types_with_docs() {
    let c = check_text(
        "/// How a parcel travels.\ntype Shipping =\n\
         /// Picked up by the customer.\n | Pickup\n\
         /// A courier with a tracking code.\n | Courier(company: str, tracking: Option[str])\n\
         | Freight(weight_kg: float, pallets: list[Pallet])\n\
         type Pallet { id: str }\n\
         /// An order.\ntype Parcel {\n shipping: Shipping\n items: list[str]\n}\n",
    );
    assert_module_strict("sum-docs", &c);
    let parcel = schema_of(&c, "Parcel").schema.to_compact();
    for d in [
        "Picked up by the customer.",
        "A courier with a tracking code.",
        "An order.",
    ] {
        assert!(parcel.contains(d), "{d}: {parcel}");
    }
    let id = c.info.types.find("Shipping").unwrap();
    let shipping = schema::output_schema(&Ty::Named(id), &c.info.types);
    assert!(shipping
        .schema
        .to_compact()
        .contains(r#""description":"How a parcel travels.""#));
}

/// A sum type whose cases carry no fields is a string enum (with the cases'
/// docs in its description), at the root and inside records; `Decimal` is a
/// string with an anchored pattern. Both pass the strict-mode checker and
/// llama.cpp's subset (string `enum`, anchored `pattern`, no `$ref` to `#`).
#[test]
fn plain_enums_and_decimals() {
    let c = check_text(
        "/// A currency.\ntype Currency =\n | USD\n /// Euro.\n | EUR\n | GBP\n\
         type Price {\n amount: Decimal\n currency: Currency\n alt: Option[Currency]\n past: list[Currency]\n}\n\
         type Quote =\n | Firm(price: Price)\n | Pending\n",
    );
    assert_module_strict("plain-enums", &c);
    let currency = schema_of(&c, "Currency");
    assert!(currency.wrapped);
    assert_eq!(
        currency.schema.to_compact(),
        r#"{"type":"object","properties":{"value":{"type":"string","enum":["USD","EUR","GBP"],"description":"A currency.\n`EUR`: Euro."}},"required":["value"],"additionalProperties":false}"#
    );
    let price = schema_of(&c, "Price").schema.to_compact();
    assert!(
        price.contains(r#""amount":{"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$""#),
        "{price}"
    );
    assert!(
        price.contains(r##""alt":{"anyOf":[{"$ref":"#/$defs/Currency"},{"type":"null"}]}"##),
        "{price}"
    );
    // A sum type with a case that has fields stays tagged by `kind`.
    let quote = schema_of(&c, "Quote").schema.to_compact();
    assert!(
        quote.contains(r#""kind":{"type":"string","enum":["Pending"]}"#),
        "{quote}"
    );
    let broken = r#"{"type":"object","properties":{"a":{"type":"string","pattern":"\\d+"}},"required":["a"],"additionalProperties":false}"#;
    assert!(check_strict(broken).is_err());
}

fn nested_records(levels: usize) -> String {
    let mut src = String::new();
    for i in 1..=levels {
        let inner = if i < levels {
            format!("\n next: L{}", i + 1)
        } else {
            String::new()
        };
        src.push_str(&format!("type L{i} {{\n name{i}: str{inner}\n}}\n"));
    }
    src
}

#[test]
fn nine_nested_records_are_legal() {
    let c = check_text(&nested_records(9));
    assert_module_strict("nested", &c);
    let m = check_output(&schema_of(&c, "L1")).unwrap();
    assert_eq!(m.nesting, 9);
    // The wrapper of `list[L1]` adds the tenth and last allowed level.
    let id = c.info.types.find("L1").unwrap();
    let list = schema::output_schema(&Ty::List(Box::new(Ty::Named(id))), &c.info.types);
    assert_eq!(check_output(&list).unwrap().nesting, 10);
}

#[test]
fn documented_field_of_a_shared_type() {
    // A doc comment on a field whose type lives in `$defs` must not become
    // a `description` beside the `$ref` (the API rejects that).
    let c = check_text(
        "type Money { amount: Decimal }\n\
         type Invoice {\n /// Before tax.\n net: Money\n /// After tax.\n gross: Money\n}\n\
         type Node {\n /// The parent node.\n parent: Option[Node]\n /// Child nodes.\n kids: list[Node]\n}\n",
    );
    assert_module_strict("doc-on-ref", &c);
}

#[test]
fn documented_field_of_a_documented_type() {
    // Both the field and its (inlined) type have a doc comment: the schema
    // must still have one `description` per node, and the field's text
    // must reach the model.
    let c = check_text(
        "/// How a parcel travels.\ntype Shipping =\n | Pickup\n | Courier(company: str)\n\
         /// A postal address.\ntype Address { street: str }\n\
         type Parcel {\n /// The shipping method.\n shipping: Shipping\n /// Where it goes.\n destination: Address\n}\n",
    );
    assert_module_strict("doc-on-documented-type", &c);
    let parcel = schema_of(&c, "Parcel").schema.to_compact();
    for d in ["The shipping method.", "Where it goes."] {
        assert!(parcel.contains(d), "{d}: {parcel}");
    }
}

#[test]
fn a_variant_field_named_kind() {
    // `kind` is the tag of a sum type; a variant field of the same name must
    // either be rejected by the checker or still give a valid schema.
    let c = check_text("type Event =\n | Click(kind: str)\n | Idle\n");
    if !c.has_errors() {
        assert_module_strict("kind-field", &c);
    }
}

#[test]
fn independent_counts_match_schema_stats() {
    let mut compared = 0;
    let mut modules = fixture_modules();
    for src in [
        nested_records(9),
        "type T { a: list[T]\n b: Option[U] }\ntype U = | X(t: T) | Y\ntype V { u: U\n w: U\n t: T }\n"
            .to_string(),
    ] {
        modules.push(("stress".into(), check_text(&src)));
    }
    for (name, c) in &modules {
        for (ty, s) in schemas_of(c) {
            // The compiled schema of a run-time category has no values
            // yet; its limits are vox-runtime's to check, per call.
            if s.schema.to_compact().contains("x-vox-categories") {
                continue;
            }
            let Ok(mine) = check_output(&s) else { continue };
            let theirs = schema::stats(&s.schema);
            assert_eq!(mine.const_chars, 0);
            assert_eq!(
                (
                    mine.nesting,
                    mine.properties,
                    mine.enum_values,
                    mine.name_and_enum_chars
                ),
                (
                    theirs.nesting,
                    theirs.properties,
                    theirs.enum_values,
                    theirs.string_chars
                ),
                "{name}: `{ty}`: {}",
                s.schema.to_compact()
            );
            compared += 1;
        }
    }
    assert!(compared >= 50, "only {compared} schemas compared");
}

/// Every `$ref` in `v`, with its JSON pointer.
fn refs_in(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => out.push((at.to_string(), r.clone())),
                    _ => refs_in(x, &format!("{at}/{k}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                refs_in(x, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// What llama.cpp's JSON-Schema-to-grammar converter and llguidance take
/// as well as OpenAI strict mode: every `$ref` points into `#/$defs/`
/// (no `#`, which a root type that refers to itself used to produce), and
/// the root is an object, never only a `$ref`. Over every schema of the
/// fixtures and of the recursive stress modules.
#[test]
fn every_ref_points_into_defs() {
    let mut modules = fixture_modules();
    for src in [
        "/// A tree.\ntype Tree {\n label: str\n children: list[Tree]\n}\n".to_string(),
        "type Link {\n value: int\n next: Option[Link]\n}\n".to_string(),
        "type Dept {\n name: str\n staff: list[Person]\n}\n\
         type Person {\n name: str\n dept: Option[Dept]\n role: Role\n}\n\
         type Role =\n | Lead(reports: list[Person])\n | Member\n"
            .to_string(),
        "type Expr =\n | Num(n: int)\n | Add(terms: list[Expr])\n | Neg(inner: Option[Expr])\n".to_string(),
        "type T { a: list[T]\n b: Option[U] }\ntype U = | X(t: T) | Y\ntype V { u: U\n w: U\n t: T }\n"
            .to_string(),
        nested_records(9),
    ] {
        modules.push(("stress".into(), check_text(&src)));
    }
    let mut refs_seen = 0;
    let mut self_refs = 0;
    for (name, c) in &modules {
        assert!(!c.has_errors(), "{name}: {:#?}", c.diagnostics);
        for (ty, s) in schemas_of(c) {
            let v = parse_strict_json(&s.schema.to_compact()).unwrap();
            assert_eq!(v["type"], "object", "{name}: `{ty}`");
            assert!(v.get("$ref").is_none(), "{name}: `{ty}`: root is a $ref");
            let mut refs = Vec::new();
            refs_in(&v, "", &mut refs);
            for (at, r) in &refs {
                let target = r.strip_prefix("#/$defs/");
                assert!(
                    target.is_some_and(|t| v["$defs"].get(t).is_some()),
                    "{name}: `{ty}`: `$ref` {r:?} at {at:?} does not point into $defs: {v}"
                );
                if s.name == target.unwrap_or_default() && !s.wrapped {
                    self_refs += 1;
                }
            }
            refs_seen += refs.len();
        }
    }
    assert!(refs_seen >= 20, "only {refs_seen} references checked");
    assert!(
        self_refs >= 3,
        "only {self_refs} references to a recursive root"
    );
}

/// The checker itself must reject each kind of violation.
#[test]
fn checker_rejects_what_strict_mode_rejects() {
    let ok = r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}"#;
    assert!(check_strict(ok).is_ok());
    let obj = |prop: &str| {
        format!(
            r#"{{"type":"object","properties":{{"a":{prop}}},"required":["a"],"additionalProperties":false}}"#
        )
    };
    let bad: Vec<(String, &str)> = vec![
        (obj(r#"{"type":"string","default":"x"}"#), "`default`"),
        (obj(r#"{"type":"string","minLength":1}"#), "`minLength`"),
        (obj(r#"{"type":"string","format":"date"}"#), "`format`"),
        (obj(r#"{"oneOf":[{"type":"string"},{"type":"null"}]}"#), "`oneOf`"),
        (obj(r#"{"allOf":[{"type":"string"}]}"#), "`allOf`"),
        (
            obj(r#"{"type":"object","properties":{},"required":[],"additionalProperties":false,"patternProperties":{}}"#),
            "`patternProperties`",
        ),
        (obj("{}"), "empty"),
        (obj(r#"{"description":"x"}"#), "constrains nothing"),
        (obj(r#"{"type":"date"}"#), "unsupported type"),
        (obj(r#"{"type":"array"}"#), "needs `items`"),
        (obj(r#"{"type":"array","items":{}}"#), "empty"),
        (obj(r##"{"$ref":"#/$defs/Nope"}"##), "missing definition"),
        (obj(r##"{"$ref":"#/definitions/X"}"##), "must be `#/$defs/"),
        (obj(r##"{"$ref":"#"}"##), "must be `#/$defs/"),
        (obj(r##"{"$ref":"#/$defs/X","description":"d"}"##), "sibling"),
        (obj(r#"{"anyOf":[]}"#), "non-empty"),
        (obj(r#"{"anyOf":[{"type":"string"},{}]}"#), "empty"),
        (obj(r#"{"type":"string","enum":[]}"#), "non-empty"),
        (obj(r#"{"type":"string","enum":[1]}"#), "not a string"),
        (
            obj(r#"{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}"#),
            "additionalProperties",
        ),
        (
            obj(r#"{"type":"object","properties":{"b":{"type":"string"}},"required":[],"additionalProperties":false}"#),
            "not exactly",
        ),
        (
            obj(r#"{"type":"object","properties":{"b":{"type":"string"}},"required":["b","c"],"additionalProperties":false}"#),
            "not exactly",
        ),
        (
            obj(r#"{"type":"object","required":[],"additionalProperties":false}"#),
            "need `properties`",
        ),
        (obj(r#"{"type":"object","properties":{},"required":[],"additionalProperties":false,"$defs":{"X":{"type":"null"}}}"#), "only allowed at the root"),
        (
            r#"{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#.into(),
            "duplicate key",
        ),
        (r#"{"anyOf":[{"type":"string"}]}"#.into(), "root"),
        (r##"{"$ref":"#/$defs/X","$defs":{"X":{"type":"null"}}}"##.into(), "root"),
        (r#"{"type":"array","items":{"type":"string"}}"#.into(), "root"),
        (r#"[]"#.into(), "root"),
    ];
    for (schema, why) in &bad {
        match check_strict(schema) {
            Ok(_) => panic!("accepted ({why}): {schema}"),
            Err(errors) => assert!(
                errors.iter().any(|e| e.contains(why)),
                "{schema}: expected `{why}` among {errors:#?}"
            ),
        }
    }
}

#[test]
fn checker_enforces_the_size_limits() {
    // Eleven nested objects.
    let mut deep = r#"{"type":"string"}"#.to_string();
    for _ in 0..11 {
        deep = format!(
            r#"{{"type":"object","properties":{{"x":{deep}}},"required":["x"],"additionalProperties":false}}"#
        );
    }
    let e = check_strict(&deep).unwrap_err();
    assert!(e.iter().any(|e| e.contains("nests 11 levels")), "{e:?}");
    // Nesting through `$defs` counts too: root → D1 → … → D10.
    let defs: Vec<String> = (1..=10)
        .map(|i| {
            let x = if i < 10 {
                format!(r##"{{"$ref":"#/$defs/D{}"}}"##, i + 1)
            } else {
                r#"{"type":"string"}"#.to_string()
            };
            format!(
                r#""D{i}":{{"type":"object","properties":{{"x":{x}}},"required":["x"],"additionalProperties":false}}"#
            )
        })
        .collect();
    let via_defs = format!(
        r##"{{"type":"object","properties":{{"x":{{"$ref":"#/$defs/D1"}}}},"required":["x"],"additionalProperties":false,"$defs":{{{}}}}}"##,
        defs.join(",")
    );
    let e = check_strict(&via_defs).unwrap_err();
    assert!(e.iter().any(|e| e.contains("nests 11 levels")), "{e:?}");

    let object_of = |n: usize, prop: &dyn Fn(usize) -> String| {
        let props: Vec<String> = (0..n)
            .map(|i| format!(r#""{}":{{"type":"string"}}"#, prop(i)))
            .collect();
        let names: Vec<String> = (0..n).map(|i| format!(r#""{}""#, prop(i))).collect();
        format!(
            r#"{{"type":"object","properties":{{{}}},"required":[{}],"additionalProperties":false}}"#,
            props.join(","),
            names.join(",")
        )
    };
    assert!(check_strict(&object_of(5000, &|i| format!("p{i}"))).is_ok());
    let e = check_strict(&object_of(5001, &|i| format!("p{i}"))).unwrap_err();
    assert!(e.iter().any(|e| e.contains("5001 properties")), "{e:?}");
    // 1,000 properties with 121-character names: over 120,000 characters.
    let e = check_strict(&object_of(1000, &|i| format!("{i:0>121}"))).unwrap_err();
    assert!(
        e.iter().any(|e| e.contains("name/enum characters")),
        "{e:?}"
    );

    let with_enum = |n: usize, len: usize| {
        let vals: Vec<String> = (0..n).map(|i| format!(r#""{i:0>len$}""#)).collect();
        format!(
            r#"{{"type":"object","properties":{{"e":{{"type":"string","enum":[{}]}}}},"required":["e"],"additionalProperties":false}}"#,
            vals.join(",")
        )
    };
    assert!(check_strict(&with_enum(1000, 4)).is_ok());
    let e = check_strict(&with_enum(1001, 4)).unwrap_err();
    assert!(e.iter().any(|e| e.contains("1001 enum values")), "{e:?}");
    let e = check_strict(&with_enum(300, 51)).unwrap_err();
    assert!(
        e.iter().any(|e| e.contains("an enum of 300 values")),
        "{e:?}"
    );
}

// ---- the strict-mode limits, at and one past each ------------------------

/// Checks `types` with an `@ai` function returning `ret`, and gives the
/// labels of its `vox/ai/schema-limit` errors (each names the limits the
/// schema exceeds) after asserting nothing else is wrong.
fn schema_limit_labels(types: &str, ret: &str) -> Vec<String> {
    let src = format!("{types}\n@ai\n@uses(net)\nfn f() to {ret} {{\n    return f()\n}}\n");
    let c = check_text(&src);
    let mut labels = Vec::new();
    for d in &c.diagnostics {
        if d.code == crate::Code::SchemaLimit {
            labels.push(d.label.clone().unwrap_or_default());
        } else {
            assert!(d.severity != crate::Severity::Error, "{}: {d:?}", d.message);
        }
    }
    labels
}

/// Nesting: the tenth level of objects is allowed, the eleventh is not.
#[test]
fn nesting_limit_at_and_past_ten_levels() {
    assert_eq!(
        schema_limit_labels(&nested_records(10), "L1"),
        Vec::<String>::new()
    );
    assert_eq!(
        schema_limit_labels(&nested_records(11), "L1"),
        ["objects nest 11 levels deep (the limit is 10)"]
    );
    // The `{"value": …}` wrapper of a non-object output is a level too.
    assert_eq!(
        schema_limit_labels(&nested_records(10), "list[L1]"),
        ["objects nest 11 levels deep (the limit is 10)"]
    );
}

/// A record of `n` fields `p0: int` … (names of 2 to 5 characters).
fn wide_record(n: usize) -> String {
    let fields: Vec<String> = (0..n).map(|i| format!(" p{i}: int")).collect();
    format!("type Wide {{\n{}\n}}\n", fields.join("\n"))
}

/// Properties: 5,000 in all are allowed, 5,001 are not.
#[test]
fn property_limit_at_and_past_5000() {
    assert_eq!(
        schema_limit_labels(&wide_record(5000), "Wide"),
        Vec::<String>::new()
    );
    assert_eq!(
        schema_limit_labels(&wide_record(5001), "Wide"),
        ["5001 object properties in total (the limit is 5000)"]
    );
    // Counted across objects: the wrapper's `value` is the 5,001st.
    assert_eq!(
        schema_limit_labels(&wide_record(5000), "list[Wide]"),
        ["5001 object properties in total (the limit is 5000)"]
    );
}

/// A plain enum of `n` cases `V0` … and a record holding it.
fn big_enum(n: usize) -> String {
    let cases: Vec<String> = (0..n).map(|i| format!(" | V{i}")).collect();
    format!(
        "type Big =\n{}\ntype Holder {{ e: Big }}\n",
        cases.join("\n")
    )
}

/// Enum values: 1,000 in all are allowed, 1,001 are not.
#[test]
fn enum_value_limit_at_and_past_1000() {
    assert_eq!(
        schema_limit_labels(&big_enum(1000), "Holder"),
        Vec::<String>::new()
    );
    assert_eq!(
        schema_limit_labels(&big_enum(1001), "Holder"),
        ["1001 enum values in total (the limit is 1000)"]
    );
}

/// A record of 1,000 fields with names of 120 characters, the last one
/// `extra` characters longer.
fn long_names(extra: usize) -> String {
    let fields: Vec<String> = (0..1000)
        .map(|i| {
            let width = if i == 999 { 119 + extra } else { 119 };
            format!(" f{i:0>width$}: int")
        })
        .collect();
    format!("type Long {{\n{}\n}}\n", fields.join("\n"))
}

/// Names and enum values: 120,000 characters in all are allowed, 120,001
/// are not.
#[test]
fn string_limit_at_and_past_120000_characters() {
    assert_eq!(
        schema_limit_labels(&long_names(0), "Long"),
        Vec::<String>::new()
    );
    assert_eq!(
        schema_limit_labels(&long_names(1), "Long"),
        ["120001 characters of names and enum values (the limit is 120000)"]
    );
    // Enum values and definition names count too: the enum `Tag` is used
    // twice, so it is `$defs/Tag` (3 characters), with its value `A` (1).
    let tagged = format!(
        "{}type Tag = | A\ntype Two {{ l: Long\n t: Tag\n u: Tag }}\n",
        long_names(0)
    );
    let labels = schema_limit_labels(&tagged, "Two");
    // 120,000 + `l`, `t`, `u` + `Tag` + `A`.
    assert_eq!(
        labels,
        ["120007 characters of names and enum values (the limit is 120000)"]
    );
}

/// Every limit exceeded at once: one sentence each, in one diagnostic.
#[test]
fn every_exceeded_limit_is_named() {
    let stats = schema::SchemaStats {
        nesting: 11,
        properties: 5001,
        enum_values: 1001,
        string_chars: 120_001,
    };
    assert_eq!(stats.violations().len(), 4, "{:?}", stats.violations());
    let at_limits = schema::SchemaStats {
        nesting: schema::MAX_NESTING,
        properties: schema::MAX_PROPERTIES,
        enum_values: schema::MAX_ENUM_VALUES,
        string_chars: schema::MAX_STRING_CHARS,
    };
    assert_eq!(at_limits.violations(), Vec::<String>::new());
    assert_eq!(
        schema::SchemaStats::default().violations(),
        Vec::<String>::new()
    );
}

/// Property names are names, whatever they spell: a property called
/// `$defs`, `$ref`, `properties` or `enum` is measured like any other (a
/// schema `stats` is given need not come from a Vox type).
#[test]
fn stats_measure_properties_named_like_keywords() {
    let leaf = r#"{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}"#;
    for name in ["$defs", "$ref", "properties", "enum", "type"] {
        let text = format!(
            r#"{{"type":"object","properties":{{"{name}":{leaf}}},"required":["{name}"],"additionalProperties":false}}"#
        );
        let json = crate::json::Json::parse(&text).unwrap();
        let st = schema::stats(&json);
        assert_eq!(
            (st.nesting, st.properties, st.enum_values, st.string_chars),
            (2, 2, 0, name.chars().count() + 1),
            "{text}"
        );
    }
}
