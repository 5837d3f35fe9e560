//! Corrections that name the path: what is wrong with a reply, said in
//! JSON Schema terms.
//!
//! Runs only after a reply failed to deserialize into the return type (the
//! success path never comes here, docs/runtime.md "Corrections"): the
//! parsed `serde_json::Value` is checked against the function's strict
//! schema and every problem found in one pass is listed by JSON path —
//! `$.lines[0].quantity: expected an integer, found the string "2"` — with
//! no Rust type name in it.
//!
//! The work is bounded whatever the reply's shape, because a model or a
//! server that knows the return type chooses that shape. An `anyOf` is not
//! described by checking every branch in full at every level (exponential
//! in the nesting of a recursive sum type): whether the value fits a branch
//! is a yes/no walk that stops at the first problem — a wrong `kind`, a
//! missing or unexpected field ends it before any field value is looked
//! at — and is remembered per (branch, value), and only the one branch the
//! value names (its `kind`, its keys, the `T` of an `Option[T]`) is then
//! described in full. Every step is counted against [`MAX_VISITS`]; a reply
//! that exhausts it is described by what was found until then.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

/// At most this many problems are listed in one correction.
pub(crate) const MAX_PROBLEMS: usize = 20;
/// Longest quoted value in a message, in characters.
const QUOTE_CHARS: usize = 80;
/// Longest list of alternatives in a message, in characters.
const SHAPES_CHARS: usize = 600;
/// Deepest value nesting followed (serde_json parses no deeper).
const MAX_DEPTH: usize = 128;
/// Most `anyOf`s followed without going one level into the value
/// (`Option[Option[Result[T]]]` takes three).
const MAX_HOPS: usize = 32;
/// Most steps one check takes: a value looked at against a schema counts
/// one, each field of an object and each property of its schema one more.
/// A check of a reply under 64 KiB takes well under this (a few steps per
/// value in it, docs/runtime.md "Corrections"); past it the check stops.
pub(crate) const MAX_VISITS: usize = 250_000;

/// One thing wrong with a reply, at a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// `$`, `$.lines[0].quantity`, `$["odd key"]`.
    pub path: String,
    /// What is wrong, in schema terms.
    pub message: String,
    /// A string the Rust type alone does not check: a value outside an
    /// `enum` (a run-time category) or a `Decimal`'s text.
    pub atomic: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// What a check of a reply found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checked {
    /// At most [`MAX_PROBLEMS`], in document order.
    pub problems: Vec<Problem>,
    /// False when the check stopped at [`MAX_VISITS`] steps: the problems
    /// are the ones found until then.
    pub complete: bool,
    /// Steps taken (at most [`MAX_VISITS`]).
    pub steps: usize,
}

impl Checked {
    /// No problem found (the value fits, or the check stopped before
    /// finding one).
    pub(crate) fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    /// The correction text: one problem per line after the first; when
    /// the check stopped early, a last line says the list may go on.
    pub(crate) fn describe(&self) -> String {
        let mut text = describe(&self.problems);
        if !self.complete && !self.problems.is_empty() {
            text.push_str(
                "\n(the reply is too large to check in full; there may be more problems after these)",
            );
        }
        text
    }
}

/// Checks `value` against the strict schema `root` (with its `$defs`).
pub(crate) fn check(root: &Value, value: &Value) -> Checked {
    let mut v = Validator {
        doc: Doc::of(root),
        out: Vec::new(),
        visits_left: MAX_VISITS,
        exhausted: false,
        fits_memo: HashMap::new(),
    };
    let mut path = String::from("$");
    v.check(root, value, &mut path, 0, 0);
    v.out.truncate(MAX_PROBLEMS);
    Checked {
        problems: v.out,
        complete: !v.exhausted,
        steps: MAX_VISITS - v.visits_left,
    }
}

/// The problems of `value` against the strict schema `root` (with its
/// `$defs`), at most [`MAX_PROBLEMS`], in document order.
#[cfg(test)]
pub(crate) fn problems(root: &Value, value: &Value) -> Vec<Problem> {
    check(root, value).problems
}

/// The correction text for `problems` (one per line after the first).
pub(crate) fn describe(problems: &[Problem]) -> String {
    match problems {
        [] => "the reply does not match the schema".to_owned(),
        [one] => format!("the reply does not match the schema: {one}"),
        many => {
            let mut text = format!(
                "the reply does not match the schema ({} problems):",
                many.len()
            );
            for p in many {
                let _ = write!(text, "\n- {p}");
            }
            text
        }
    }
}

struct Validator<'s> {
    doc: Doc<'s>,
    out: Vec<Problem>,
    /// Steps left before the check stops.
    visits_left: usize,
    /// The steps ran out: nothing more is looked at or said.
    exhausted: bool,
    /// Whether a value fits an `anyOf` branch, by the addresses of the
    /// (resolved) branch and of the value: both stay borrowed, unmoved,
    /// for the whole check, so an address names one node.
    fits_memo: HashMap<(*const Value, *const Value), bool>,
}

/// A whole schema document, for following its references.
#[derive(Clone, Copy)]
pub(crate) struct Doc<'s> {
    root: &'s Value,
    defs: Option<&'s Map<String, Value>>,
}

impl<'s> Doc<'s> {
    pub(crate) fn of(root: &'s Value) -> Doc<'s> {
        Doc {
            root,
            defs: root.get("$defs").and_then(Value::as_object),
        }
    }

    /// `schema` with a `$ref` followed (`#/$defs/<name>`, or `#` from code
    /// generated before references to the root went into `$defs`).
    pub(crate) fn resolve(self, schema: &'s Value) -> &'s Value {
        let mut s = schema;
        for _ in 0..8 {
            match s.get("$ref").and_then(Value::as_str) {
                Some("#") => s = self.root,
                Some(r) => match r
                    .strip_prefix("#/$defs/")
                    .and_then(|name| self.defs.and_then(|d| d.get(name)))
                {
                    Some(target) => s = target,
                    None => return s,
                },
                None => return s,
            }
        }
        s
    }

    /// Whether `schema` accepts `null` (an `Option`: `anyOf` with a `null`
    /// branch, or `type: "null"`).
    pub(crate) fn admits_null(self, schema: &'s Value) -> bool {
        let schema = self.resolve(schema);
        let is_null = |s: &Value| s.get("type").and_then(Value::as_str) == Some("null");
        is_null(schema)
            || schema
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|bs| bs.iter().any(|b| is_null(self.resolve(b))))
    }
}

impl<'s> Validator<'s> {
    fn push(&mut self, path: &str, message: String) {
        self.push_problem(path, message, false);
    }

    fn push_problem(&mut self, path: &str, message: String, atomic: bool) {
        if self.out.len() < MAX_PROBLEMS {
            self.out.push(Problem {
                path: path.to_owned(),
                message,
                atomic,
            });
        }
    }

    /// Takes `steps` from the budget; false (and nothing more is done) once
    /// it is spent.
    fn spend(&mut self, steps: usize) -> bool {
        if self.exhausted {
            return false;
        }
        match self.visits_left.checked_sub(steps) {
            Some(left) => {
                self.visits_left = left;
                true
            }
            None => {
                self.visits_left = 0;
                self.exhausted = true;
                false
            }
        }
    }

    /// Describes what is wrong with `value` (nothing, if it fits).
    fn check(
        &mut self,
        schema: &'s Value,
        value: &Value,
        path: &mut String,
        depth: usize,
        hops: usize,
    ) {
        if depth > MAX_DEPTH || hops > MAX_HOPS || self.out.len() >= MAX_PROBLEMS || !self.spend(1)
        {
            return;
        }
        let schema = self.doc.resolve(schema);
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            return self.any_of(branches, value, path, depth, hops);
        }
        let Some(ty) = schema.get("type").and_then(Value::as_str) else {
            return;
        };
        if !fits_type(ty, value) {
            let expected = match ty {
                // Out of range (a fraction is simply not an integer).
                "integer"
                    if value.is_u64()
                        || value
                            .as_f64()
                            .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
                {
                    format!(
                        "an integer (a whole number from {} to {})",
                        i64::MIN,
                        i64::MAX
                    )
                }
                _ => describe_type(ty).to_owned(),
            };
            return self.push(path, format!("expected {expected}, found {}", found(value)));
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !self.spend(allowed.len()) {
                return;
            }
            if !allowed.contains(value) {
                let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
                let expected = match list.as_slice() {
                    [one] => one.clone(),
                    _ => format!("one of {}", clip(&list.join(", "), SHAPES_CHARS)),
                };
                return self.push_problem(
                    path,
                    format!("expected {expected}, found {}", quote(value)),
                    true,
                );
            }
        }
        if let (Some(pattern), Value::String(text)) =
            (schema.get("pattern").and_then(Value::as_str), value)
        {
            // The one pattern Vox generates: a `Decimal`'s text. Others
            // (a hand-written schema's) are left to the type's parse.
            if pattern == DECIMAL_PATTERN && !crate::__private::decimal::is_decimal(text) {
                return self.push_problem(
                    path,
                    format!("{NOT_A_DECIMAL}, found {}", found(value)),
                    true,
                );
            }
            // A `Date`: ISO 8601 `YYYY-MM-DD`, a real day (`31/12/2026` and
            // `2026-02-30` are sent back to the model).
            if pattern == DATE_PATTERN && !crate::__private::date::is_date(text) {
                return self.push_problem(
                    path,
                    format!("{NOT_A_DATE}, found {}", found(value)),
                    true,
                );
            }
        }
        match (ty, value) {
            ("object", Value::Object(fields)) => self.object(schema, fields, path, depth),
            ("array", Value::Array(items)) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        if self.out.len() >= MAX_PROBLEMS || self.exhausted {
                            break;
                        }
                        let len = path.len();
                        let _ = write!(path, "[{i}]");
                        self.check(item_schema, item, path, depth + 1, 0);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &mut self,
        schema: &'s Value,
        fields: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let props = schema.get("properties").and_then(Value::as_object);
        // In declaration order: strict schemas list every property in
        // `required`, in order (serde_json's maps are sorted).
        let known = declared(schema);
        if !self.spend(known.len() + fields.len()) {
            return;
        }
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let unknown: Vec<&str> = fields
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k) && !props.is_some_and(|p| p.contains_key(*k)))
            .collect();
        // A missing field that may be null means `None` — unless the object
        // also holds a key it does not have, which may be that field
        // misnamed (docs/runtime.md, "Unknown and missing fields").
        let missing: Vec<&str> = known
            .iter()
            .copied()
            .filter(|name| !fields.contains_key(*name))
            .filter(|name| {
                !(unknown.is_empty()
                    && props
                        .and_then(|p| p.get(*name))
                        .is_some_and(|f| self.doc.admits_null(f)))
            })
            .collect();
        for name in &known {
            match (fields.get(*name), props.and_then(|p| p.get(*name))) {
                (None, _) if !missing.contains(name) => {}
                (None, _) => {
                    self.push(path, format!("missing required field {}", json_str(name)));
                }
                (Some(field), Some(field_schema)) => {
                    let len = path.len();
                    push_key(path, name);
                    self.check(field_schema, field, path, depth + 1, 0);
                    path.truncate(len);
                }
                (Some(_), None) => {}
            }
        }
        for (name, field) in fields {
            if self.out.len() >= MAX_PROBLEMS || self.exhausted {
                break;
            }
            if is_declared(&known, props, name) {
                continue;
            }
            match props.and_then(|p| p.get(name)) {
                Some(field_schema) => {
                    let len = path.len();
                    push_key(path, name);
                    self.check(field_schema, field, path, depth + 1, 0);
                    path.truncate(len);
                }
                None if closed => {
                    let hint = if known.is_empty() {
                        "the object has no fields".to_owned()
                    } else {
                        format!(
                            "the fields are {}",
                            clip(
                                &known
                                    .iter()
                                    .map(|k| json_str(k))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                SHAPES_CHARS
                            )
                        )
                    };
                    let guess = did_you_mean(name, &missing)
                        .or_else(|| did_you_mean(name, &known))
                        .map(|g| format!("; did you mean {}?", json_str(g)))
                        .unwrap_or_default();
                    self.push(
                        path,
                        format!(
                            "unexpected field {} ({hint}{guess})",
                            clip(&json_str(name), QUOTE_CHARS)
                        ),
                    );
                }
                None => {}
            }
        }
    }

    fn any_of(
        &mut self,
        branches: &'s [Value],
        value: &Value,
        path: &mut String,
        depth: usize,
        hops: usize,
    ) {
        // Fits some branch: nothing to say.
        if self.fits_any_of(branches, value, depth, hops) || self.exhausted {
            return;
        }
        let doc = self.doc;
        let resolved: Vec<&'s Value> = branches.iter().map(|b| doc.resolve(b)).collect();
        let is_null = |b: &&Value| b.get("type").and_then(Value::as_str) == Some("null");
        let non_null: Vec<usize> = (0..resolved.len())
            .filter(|i| !is_null(&resolved[*i]))
            .collect();
        let nullable = non_null.len() < resolved.len();
        // `Option[T]`: the problems against T, "or null" where the type is wrong.
        if let [only] = non_null.as_slice() {
            let start = self.out.len();
            self.check(resolved[*only], value, path, depth, hops + 1);
            if nullable {
                for p in &mut self.out[start..] {
                    if p.path != *path {
                        continue;
                    }
                    if let Some((what, found)) = p
                        .message
                        .strip_prefix("expected ")
                        .and_then(|rest| rest.split_once(", found "))
                    {
                        // `Option[Option[T]]` says it once.
                        if !what.ends_with(" or null") {
                            p.message = format!("expected {what} or null, found {found}");
                        }
                    }
                }
            }
            return;
        }
        // A sum type or `Result`: the branch the value names by its `kind`
        // (or, without kinds, by exactly its keys), else the alternatives.
        if let Value::Object(fields) = value {
            let chosen: Vec<usize> = match fields.get("kind").and_then(Value::as_str) {
                Some(kind) => non_null
                    .iter()
                    .copied()
                    .filter(|i| kind_of(resolved[*i]) == Some(kind))
                    .collect(),
                None => non_null
                    .iter()
                    .copied()
                    .filter(|i| {
                        kind_of(resolved[*i]).is_none()
                            && resolved[*i]
                                .get("properties")
                                .and_then(Value::as_object)
                                .is_some_and(|p| {
                                    p.len() == fields.len()
                                        && fields.keys().all(|k| p.contains_key(k))
                                })
                    })
                    .collect(),
            };
            if let [one] = chosen.as_slice() {
                return self.check(resolved[*one], value, path, depth, hops + 1);
            }
        }
        let shapes: Vec<String> = resolved.iter().map(|b| shape(doc, b, 0)).collect();
        self.push(
            path,
            format!(
                "expected one of {}, found {}",
                clip(&shapes.join(" or "), SHAPES_CHARS),
                quote(value)
            ),
        );
    }

    /// Whether `value` fits some branch of an `anyOf`.
    fn fits_any_of(
        &mut self,
        branches: &'s [Value],
        value: &Value,
        depth: usize,
        hops: usize,
    ) -> bool {
        for branch in branches {
            let branch = self.doc.resolve(branch);
            let key = (branch as *const Value, value as *const Value);
            let fits = match self.fits_memo.get(&key) {
                Some(fits) => *fits,
                None => {
                    let fits = self.fits(branch, value, depth, hops + 1);
                    // A verdict reached after the budget ran out is no verdict.
                    if !self.exhausted {
                        self.fits_memo.insert(key, fits);
                    }
                    fits
                }
            };
            if fits {
                return true;
            }
        }
        false
    }

    /// Whether `value` fits `schema`: what [`Validator::check`] decides,
    /// without saying why, stopping at the first problem. The cheap
    /// verdicts come first — type, `enum`, a missing or unexpected field —
    /// so a sum-type case whose `kind` differs is left before any of the
    /// value's fields is looked into. Once the budget is spent the answer
    /// is "fits": nothing more is claimed.
    fn fits(&mut self, schema: &'s Value, value: &Value, depth: usize, hops: usize) -> bool {
        if depth > MAX_DEPTH || hops > MAX_HOPS || !self.spend(1) {
            return true;
        }
        let schema = self.doc.resolve(schema);
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            return self.fits_any_of(branches, value, depth, hops) || self.exhausted;
        }
        let Some(ty) = schema.get("type").and_then(Value::as_str) else {
            return true;
        };
        if !fits_type(ty, value) {
            return false;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !self.spend(allowed.len()) {
                return true;
            }
            if !allowed.contains(value) {
                return false;
            }
        }
        if let (Some(DECIMAL_PATTERN), Value::String(text)) =
            (schema.get("pattern").and_then(Value::as_str), value)
        {
            if !crate::__private::decimal::is_decimal(text) {
                return false;
            }
        }
        if let (Some(DATE_PATTERN), Value::String(text)) =
            (schema.get("pattern").and_then(Value::as_str), value)
        {
            if !crate::__private::date::is_date(text) {
                return false;
            }
        }
        match (ty, value) {
            ("object", Value::Object(fields)) => {
                let props = schema.get("properties").and_then(Value::as_object);
                let known = declared(schema);
                if !self.spend(known.len() + fields.len()) {
                    return true;
                }
                let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
                let has_unknown = fields.keys().any(|name| !is_declared(&known, props, name));
                if closed && has_unknown {
                    return false;
                }
                // A missing field that may be null is `None` when no key is
                // unknown (as in `Validator::object`).
                let doc = self.doc;
                if known.iter().any(|name| {
                    !fields.contains_key(*name)
                        && (has_unknown
                            || !props
                                .and_then(|p| p.get(*name))
                                .is_some_and(|f| doc.admits_null(f)))
                }) {
                    return false;
                }
                // Scalars first: a `kind` decides before any nested value.
                let Some(props) = props else { return true };
                for scalars in [true, false] {
                    for (name, field) in fields {
                        if scalars == (field.is_object() || field.is_array()) {
                            continue;
                        }
                        if let Some(field_schema) = props.get(name) {
                            if !self.fits(field_schema, field, depth + 1, 0) {
                                return false;
                            }
                        }
                    }
                }
                true
            }
            ("array", Value::Array(items)) => match schema.get("items") {
                Some(item_schema) => items
                    .iter()
                    .all(|item| self.fits(item_schema, item, depth + 1, 0)),
                None => true,
            },
            _ => true,
        }
    }
}

/// How a `Decimal` that is not a decimal number is described.
pub(crate) const NOT_A_DECIMAL: &str =
    "expected a decimal number written as a string (such as \"12.50\" or \"-3\")";

/// The pattern of a `Date`'s schema (vox-codegen's `DATE_PATTERN`).
pub(crate) const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
/// [`DATE_PATTERN`] as it appears in a schema's JSON text.
pub(crate) const DATE_PATTERN_JSON: &str = r#""pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$""#;
/// What a reply that is not a date is told.
const NOT_A_DATE: &str = "expected a date written YYYY-MM-DD (ISO 8601, a real day)";

/// The pattern of a `Decimal`'s schema (vox-codegen's `DECIMAL_PATTERN`).
pub(crate) const DECIMAL_PATTERN: &str = "^-?[0-9]+(\\.[0-9]+)?$";
/// [`DECIMAL_PATTERN`] as it appears in a schema's JSON text.
pub(crate) const DECIMAL_PATTERN_JSON: &str = r#""pattern":"^-?[0-9]+(\\.[0-9]+)?$""#;

/// The field `key` most likely stands for: one whose name matches it
/// ignoring case, `_` and `-`, contains it or is contained in it (3 or more
/// characters), or is within an edit distance of about a third of its
/// length — the closest, if exactly one is closest.
fn did_you_mean<'a>(key: &str, fields: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-' && *c != ' ')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let k = norm(key);
    if k.is_empty() {
        return None;
    }
    let score = |field: &str| -> Option<usize> {
        let f = norm(field);
        if f == k {
            return Some(0);
        }
        let shorter = f.chars().count().min(k.chars().count());
        if shorter >= 3 && (f.contains(&k) || k.contains(&f)) {
            return Some(1);
        }
        let d = edit_distance(&k, &f);
        (d <= (k.chars().count().max(f.chars().count()) / 3).max(1)).then_some(1 + d)
    };
    let scored: Vec<(usize, &'a str)> = fields
        .iter()
        .filter_map(|f| score(f).map(|s| (s, *f)))
        .collect();
    let best = scored.iter().map(|(s, _)| *s).min()?;
    match scored
        .iter()
        .filter(|(s, _)| *s == best)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [(_, one)] => Some(one),
        _ => None,
    }
}

/// Levenshtein distance over characters (keys are short: at most a few
/// dozen characters are compared; longer ones are cut).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// An object schema's property names in declaration order: `required`
/// (which lists all of them in a strict schema), then any others.
fn declared(schema: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        // A strict schema requires exactly its properties: nothing to add
        // (and no quadratic search on a record with many fields).
        let all_required =
            names.len() == props.len() && names.iter().all(|n| props.contains_key(*n));
        if !all_required {
            let listed: std::collections::HashSet<&str> = names.iter().copied().collect();
            for name in props.keys() {
                if !listed.contains(name.as_str()) {
                    names.push(name);
                }
            }
        }
    }
    names
}

/// Whether an object schema with the [`declared`] names `known` (and
/// `props`) declares `name`.
fn is_declared(known: &[&str], props: Option<&Map<String, Value>>, name: &str) -> bool {
    // `known` holds every property, and more only when `required` names
    // one without a property (never in a strict schema).
    props.is_some_and(|p| p.contains_key(name))
        || (known.len() > props.map_or(0, Map::len) && known.contains(&name))
}

/// The `kind` a sum-type alternative requires (`{"kind": {"enum": ["Paid"]}}`).
pub(crate) fn kind_of(branch: &Value) -> Option<&str> {
    let kind = branch.get("properties")?.get("kind")?;
    match kind
        .get("enum")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([Value::String(k)]) => Some(k),
        _ => kind.get("const").and_then(Value::as_str),
    }
}

fn fits_type(ty: &str, value: &Value) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn describe_type(ty: &str) -> &'static str {
    match ty {
        "object" => "an object",
        "array" => "a list",
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        "null" => "null",
        _ => "a value of the schema's type",
    }
}

/// How the value found is described: `the string "2"`, `the number 2.5`.
fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => format!("the string {}", quote(value)),
        Value::Array(a) if a.is_empty() => "an empty list".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// `value` as compact JSON, cut to a readable length (without writing
/// out the whole of a large value first).
fn quote(value: &Value) -> String {
    /// Keeps the first bytes written, then refuses more.
    struct Head(Vec<u8>);
    impl std::io::Write for Head {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            // Room for QUOTE_CHARS + 1 characters of up to 4 bytes.
            let room = (QUOTE_CHARS + 1) * 4 - self.0.len();
            if room == 0 {
                return Err(std::io::Error::other("enough for a quote"));
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut head = Head(Vec::new());
    // An error only means the value is longer than the quote.
    let _ = serde_json::to_writer(&mut head, value);
    clip(&String::from_utf8_lossy(&head.0), QUOTE_CHARS)
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

fn push_key(path: &mut String, key: &str) {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        let _ = write!(path, "[{}]", json_str(key));
    }
}

/// A short picture of what `schema` accepts: `{"kind":"Open","days":<integer>}`.
fn shape<'s>(doc: Doc<'s>, schema: &'s Value, depth: usize) -> String {
    if depth > 4 {
        return "<value>".into();
    }
    let schema = doc.resolve(schema);
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let parts: Vec<String> = branches.iter().map(|b| shape(doc, b, depth + 1)).collect();
        return if depth == 0 {
            parts.join(" or ")
        } else {
            format!("<{}>", parts.join(" or ").replace(['<', '>'], ""))
        };
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return match values.as_slice() {
            [one] => one.to_string(),
            many => format!(
                "<one of {}>",
                many.iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") if depth < 2 => {
            let mut text = String::from("{");
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (i, name) in declared(schema).into_iter().enumerate() {
                    let Some(p) = props.get(name) else { continue };
                    if i > 0 {
                        text.push(',');
                    }
                    let _ = write!(text, "{}:{}", json_str(name), shape(doc, p, depth + 1));
                }
            }
            text.push('}');
            text
        }
        Some("array") if depth < 2 => match schema.get("items") {
            Some(items) => format!("[{}, …]", shape(doc, items, depth + 1)),
            None => "<list>".into(),
        },
        Some("array") => "<list>".into(),
        Some("object") => "<object>".into(),
        Some("null") => "null".into(),
        Some(ty) => format!("<{}>", if ty == "boolean" { "true or false" } else { ty }),
        None => "<value>".into(),
    }
}

/// serde's text of a typed-parse failure the schema check found nothing
/// wrong with (rare: the two agree by construction), with Rust's type
/// names replaced by JSON's.
pub(crate) fn plain_serde_message(message: &str) -> String {
    let mut text = message.to_owned();
    for (rust, json) in [
        ("i128", "an integer"),
        ("u128", "an integer"),
        ("isize", "an integer"),
        ("usize", "an integer"),
        ("i64", "an integer"),
        ("u64", "an integer"),
        ("i32", "an integer"),
        ("u32", "an integer"),
        ("i16", "an integer"),
        ("u16", "an integer"),
        ("i8", "an integer"),
        ("u8", "an integer"),
        ("f64", "a number"),
        ("f32", "a number"),
        ("a sequence", "a list"),
        ("a map", "an object"),
        ("unit value", "null"),
    ] {
        text = replace_word(&text, rust, json);
    }
    // `struct Invoice`, `internally tagged enum Status`, `enum Status`.
    for (prefix, json) in [
        ("internally tagged enum ", "an object with a \"kind\""),
        ("struct variant ", "an object"),
        ("tuple variant ", "a list"),
        ("struct ", "an object"),
        ("enum ", "one of the alternatives"),
    ] {
        while let Some(at) = text.find(prefix) {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            text = format!("{}{json}{}", &text[..at], &rest[end..]);
        }
    }
    text.replace("Option value", "a value or null")
        .replace(" expected a an ", " expected an ")
        .replace(" expected an an ", " expected an ")
}

/// Replaces `word` where it is not part of a longer identifier.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        if ident(before) || ident(after) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod bounds;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invoice_schema() -> Value {
        json!({"type":"object","properties":{
            "vendor":{"type":"string"},
            "lines":{"type":"array","items":{"$ref":"#/$defs/Line"}},
            "status":{"anyOf":[
                {"type":"object","properties":{"kind":{"type":"string","enum":["Paid"]}},"required":["kind"],"additionalProperties":false},
                {"type":"object","properties":{"kind":{"type":"string","enum":["Open"]},"days_overdue":{"type":"integer"}},"required":["kind","days_overdue"],"additionalProperties":false}
            ]},
            "due":{"anyOf":[{"type":"string"},{"type":"null"}]}
        },"required":["vendor","lines","status","due"],"additionalProperties":false,
        "$defs":{"Line":{"type":"object","properties":{"quantity":{"type":"integer"},"price":{"type":"number"}},"required":["quantity","price"],"additionalProperties":false}}})
    }

    fn texts(ps: &[Problem]) -> Vec<String> {
        ps.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn every_problem_is_named_by_path_in_one_pass() {
        let reply = json!({"lines":[{"quantity":1,"price":2},{"quantity":"2","price":"x"}],
            "status":"OPEN","due":5,"note":"hi"});
        assert_eq!(
            texts(&problems(&invoice_schema(), &reply)),
            [
                r#"$: missing required field "vendor""#,
                r#"$.lines[1].quantity: expected an integer, found the string "2""#,
                r#"$.lines[1].price: expected a number, found the string "x""#,
                r#"$.status: expected one of {"kind":"Paid"} or {"kind":"Open","days_overdue":<integer>}, found "OPEN""#,
                r#"$.due: expected a string or null, found the number 5"#,
                r#"$: unexpected field "note" (the fields are "vendor", "lines", "status", "due")"#,
            ]
        );
    }

    #[test]
    fn a_named_kind_is_checked_as_that_case() {
        let reply =
            json!({"vendor":"A","lines":[],"status":{"kind":"Open","days_overdue":2.5},"due":null});
        assert_eq!(
            texts(&problems(&invoice_schema(), &reply)),
            [r#"$.status.days_overdue: expected an integer, found the number 2.5"#]
        );
        let reply = json!({"vendor":"A","lines":[],"status":{"kind":"Paid"},"due":"soon"});
        assert!(problems(&invoice_schema(), &reply).is_empty());
        let reply = json!({"vendor":null,"lines":[],"status":{"kind":"Late"},"due":null});
        let t = texts(&problems(&invoice_schema(), &reply));
        assert_eq!(t[0], r#"$.vendor: expected a string, found null"#);
        assert!(
            t[1].starts_with(r#"$.status: expected one of {"kind":"Paid"}"#),
            "{t:?}"
        );
        assert!(t[1].ends_with(r#"found {"kind":"Late"}"#), "{t:?}");
    }

    #[test]
    fn no_rust_names_and_odd_keys_are_quoted() {
        let schema = json!({"type":"object","properties":{"a b":{"type":"integer"}},"required":["a b"],"additionalProperties":false});
        assert_eq!(
            texts(&problems(&schema, &json!({"a b": 1e30}))),
            [
                r#"$["a b"]: expected an integer (a whole number from -9223372036854775808 to 9223372036854775807), found the number 1e+30"#
            ]
        );
        assert_eq!(
            texts(&problems(&schema, &json!([1]))),
            [r#"$: expected an object, found a list"#]
        );
        for (serde, plain) in [
            (
                "invalid type: string \"2\", expected i64 at line 1 column 5",
                "invalid type: string \"2\", expected an integer at line 1 column 5",
            ),
            (
                "invalid type: map, expected internally tagged enum Status",
                "invalid type: map, expected an object with a \"kind\"",
            ),
            ("expected f64", "expected a number"),
            (
                "invalid type: sequence, expected struct Invoice",
                "invalid type: sequence, expected an object",
            ),
        ] {
            assert_eq!(plain_serde_message(serde), plain);
        }
        assert_eq!(replace_word("ui64 i64x i64", "i64", "N"), "ui64 i64x N");
    }

    #[test]
    fn problems_are_capped_and_described() {
        let schema = json!({"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"}}},"required":["xs"],"additionalProperties":false});
        let many: Vec<Value> = (0..50).map(|i| json!(format!("{i}"))).collect();
        let ps = problems(&schema, &json!({ "xs": many }));
        assert_eq!(ps.len(), MAX_PROBLEMS);
        let text = describe(&ps);
        assert!(text.starts_with("the reply does not match the schema (20 problems):\n- $.xs[0]: expected an integer, found the string \"0\""), "{text}");
        assert_eq!(
            describe(&ps[..1]),
            "the reply does not match the schema: $.xs[0]: expected an integer, found the string \"0\""
        );
    }

    #[test]
    fn a_check_stops_at_its_step_budget_and_says_so() {
        let schema = json!({"type":"object","properties":{"value":{"type":"array","items":{"type":"integer"}}},"required":["value"],"additionalProperties":false});
        // A bad item first, then more items than the budget has steps.
        let mut items = vec![json!("x")];
        items.extend(std::iter::repeat_n(json!(1), MAX_VISITS));
        let early = check(&schema, &json!({ "value": items }));
        assert!(!early.complete);
        assert_eq!(early.steps, MAX_VISITS);
        assert_eq!(
            early.describe(),
            "the reply does not match the schema: $.value[0]: expected an integer, found the \
             string \"x\"\n(the reply is too large to check in full; there may be more \
             problems after these)"
        );
        // The bad item last: nothing found before the budget ran out, and
        // the reply goes back with serde's message instead.
        items.swap(0, MAX_VISITS);
        let late = check(&schema, &json!({ "value": items }));
        assert!(!late.complete && late.is_empty(), "{late:?}");
        static OUT: crate::ai_function::OutputSchema = crate::ai_function::OutputSchema::new(
            "list[int]",
            r#"{"type":"object","properties":{"value":{"type":"array","items":{"type":"integer"}}},"required":["value"],"additionalProperties":false}"#,
            true,
        );
        let text = json!({ "value": items }).to_string();
        for repair in [true, false] {
            let message = crate::repair::parse_reply::<Vec<i64>>(&text, &OUT, repair).unwrap_err();
            assert!(
                message.starts_with("the reply does not match the schema: invalid type: string \"x\", expected an integer at line 1 column"),
                "{message}"
            );
        }
    }

    #[test]
    fn quotes_of_large_values_and_names_are_clipped() {
        let long = "k".repeat(100_000);
        let schema = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false});
        let ps = problems(
            &schema,
            &json!({"a": [long.clone(), long.clone()], long.clone(): 1}),
        );
        assert_eq!(ps.len(), 2, "{ps:?}");
        assert_eq!(ps[0].message, "expected an integer, found a list");
        assert!(ps[1].message.len() < 200, "{}", ps[1].message);
        assert!(ps[1].message.starts_with(r#"unexpected field "kkk"#));
        let sum = json!({"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["A"]}},"required":["kind"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["B"]}},"required":["kind"],"additionalProperties":false}]});
        let ps = problems(&sum, &json!({"kind": "C", "x": [long.clone(), long]}));
        let text = &ps[0].message;
        assert!(text.contains(r#"found {"kind":"C","x":["kkk"#), "{text}");
        assert!(text.ends_with('…') && text.chars().count() < 200, "{text}");
    }

    #[test]
    fn option_of_option_says_or_null_once() {
        let schema =
            json!({"anyOf":[{"anyOf":[{"type":"integer"},{"type":"null"}]},{"type":"null"}]});
        assert_eq!(
            texts(&problems(&schema, &json!("1"))),
            [r#"$: expected an integer or null, found the string "1""#]
        );
        assert!(problems(&schema, &Value::Null).is_empty());
    }

    #[test]
    fn a_result_picks_its_branch_by_keys() {
        let schema = json!({"type":"object","properties":{"value":{"anyOf":[
            {"type":"object","properties":{"Ok":{"type":"integer"}},"required":["Ok"],"additionalProperties":false},
            {"type":"object","properties":{"Err":{"type":"string"}},"required":["Err"],"additionalProperties":false}]}},
            "required":["value"],"additionalProperties":false});
        assert_eq!(
            texts(&problems(&schema, &json!({"value":{"Ok":"1"}}))),
            [r#"$.value.Ok: expected an integer, found the string "1""#]
        );
        assert!(problems(&schema, &json!({"value":{"Err":"no"}})).is_empty());
    }

    /// `{"type":"object", …}` with `fields` required, in order, and closed.
    fn record(fields: &[(&str, Value)]) -> Value {
        let props: Map<String, Value> = fields
            .iter()
            .map(|(n, s)| ((*n).to_owned(), s.clone()))
            .collect();
        let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
        json!({"type":"object","properties":props,"required":names,"additionalProperties":false})
    }

    fn option(inner: Value) -> Value {
        json!({"anyOf":[inner, {"type":"null"}]})
    }

    #[test]
    fn steps_count_values_and_fields() {
        // One value against one schema: one step.
        let one = check(&json!({"type":"integer"}), &json!(1));
        assert_eq!((one.steps, one.complete, one.is_empty()), (1, true, true));
        // A record of three fields: the record, its three declared
        // properties and its three fields, and the three field values.
        let rec = record(&[
            ("a", json!({"type":"string"})),
            ("b", json!({"type":"integer"})),
            ("c", json!({"type":"boolean"})),
        ]);
        let fits = check(&rec, &json!({"a":"x","b":1,"c":true}));
        assert_eq!(
            (fits.steps, fits.complete, fits.is_empty()),
            (10, true, true)
        );
        assert_eq!(fits.describe(), "the reply does not match the schema");
        // As an `Option`: one more for the `anyOf`; the yes/no walk counts alike.
        let fits = check(&option(rec.clone()), &json!({"a":"x","b":1,"c":true}));
        assert_eq!(
            (fits.steps, fits.complete, fits.is_empty()),
            (11, true, true)
        );
        // A complete check that found problems says nothing about size.
        let bad = check(&rec, &json!({"a":"x","b":"1","c":true}));
        assert!(bad.complete && !bad.is_empty());
        assert_eq!(
            bad.describe(),
            r#"the reply does not match the schema: $.b: expected an integer, found the string "1""#
        );
    }

    #[test]
    fn a_missing_option_field_is_none_unless_a_key_could_be_it_misnamed() {
        let schema = json!({"type":"object","properties":{
                "vendor":{"type":"string"},
                "due":{"anyOf":[{"type":"string"},{"type":"null"}]},
                "note":{"$ref":"#/$defs/Note"},
                "unit":{"type":"null"}
            },"required":["vendor","due","note","unit"],"additionalProperties":false,
            "$defs":{"Note":{"anyOf":[{"type":"string"},{"type":"null"}]}}});
        // Every `Option` field (and the field that can only be null) missing:
        // they read as `None`.
        assert_eq!(
            texts(&problems(&schema, &json!({"vendor":"A"}))),
            [] as [&str; 0]
        );
        // A required field that is not an `Option` is missing, alone.
        assert_eq!(
            texts(&problems(
                &schema,
                &json!({"due":null,"note":null,"unit":null})
            )),
            [r#"$: missing required field "vendor""#]
        );
        // Beside a key the type does not have, every missing field is named.
        assert_eq!(
            texts(&problems(&schema, &json!({"vendor":"A","due_date":"soon"}))),
            [
                r#"$: missing required field "due""#,
                r#"$: missing required field "note""#,
                r#"$: missing required field "unit""#,
                r#"$: unexpected field "due_date" (the fields are "vendor", "due", "note", "unit"; did you mean "due"?)"#,
            ]
        );
    }

    /// A `Date` that is not an ISO date, or not a real day, goes back to
    /// the model (`"31/12/2026"` where `"2026-12-31"` was meant).
    #[test]
    fn dates_that_are_not_iso_days_are_problems() {
        let schema = record(&[("due", json!({"type":"string","pattern":DATE_PATTERN}))]);
        assert!(problems(&schema, &json!({"due":"2026-12-31"})).is_empty());
        for bad in [
            "31/12/2026",
            "2026-02-30",
            "2026-12-31T10:00",
            "next friday",
        ] {
            assert_eq!(
                texts(&problems(&schema, &json!({ "due": bad }))),
                [format!("$.due: {NOT_A_DATE}, found the string \"{bad}\"")],
                "{bad}"
            );
        }
        // The schema's text says it has a date: every reply is checked.
        let out = crate::output::OutputSchema::new(
            "Bill",
            r#"{"type":"object","properties":{"due":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},"required":["due"],"additionalProperties":false}"#,
            false,
        );
        assert!(out.has_decimals());
    }

    #[test]
    fn enums_and_decimals_are_checked_where_they_are() {
        let schema = record(&[
            ("currency", json!({"type":"string","enum":["USD","EUR"]})),
            ("only", json!({"type":"string","enum":["Single"]})),
            ("total", json!({"type":"string","pattern":DECIMAL_PATTERN})),
            ("code", json!({"type":"string","pattern":"^[A-Z]{3}$"})),
        ]);
        let fine = json!({"currency":"EUR","only":"Single","total":"-12.50","code":"x"});
        assert!(
            problems(&schema, &fine).is_empty(),
            "{:?}",
            problems(&schema, &fine)
        );
        let bad = json!({"currency":"usd","only":"single","total":"twelve","code":"x"});
        assert_eq!(
            texts(&problems(&schema, &bad)),
            [
                r#"$.currency: expected one of "USD", "EUR", found "usd""#,
                r#"$.only: expected "Single", found "single""#,
                r#"$.total: expected a decimal number written as a string (such as "12.50" or "-3"), found the string "twelve""#,
            ]
        );
    }

    #[test]
    fn types_are_named_in_schema_terms() {
        let schema = record(&[
            ("a", json!({"type":"array","items":{"type":"integer"}})),
            ("b", json!({"type":"boolean"})),
            ("c", json!({"type":"null"})),
            (
                "d",
                json!({"type":"object","properties":{},"required":[],"additionalProperties":false}),
            ),
            ("e", json!({"type":"integer"})),
            ("f", json!({"type":"number"})),
            ("g", json!({"type":"string"})),
        ]);
        let reply = json!({"a":{},"b":"yes","c":[],"d":[1],"e":2.0,"f":true,"g":null});
        assert_eq!(
            texts(&problems(&schema, &reply)),
            [
                "$.a: expected a list, found an object",
                r#"$.b: expected true or false, found the string "yes""#,
                "$.c: expected null, found an empty list",
                "$.d: expected an object, found a list",
                // A whole number written as a float is not out of range.
                "$.e: expected an integer, found the number 2.0",
                "$.f: expected a number, found true",
                "$.g: expected a string, found null",
            ]
        );
        // And the values that fit each of them draw nothing.
        let fine = json!({"a":[1],"b":false,"c":null,"d":{},"e":-3,"f":2.5,"g":""});
        assert!(problems(&schema, &fine).is_empty());
        for big in [json!(u64::MAX), json!(-1e19)] {
            assert_eq!(
                texts(&problems(&json!({"type":"integer"}), &big))[0],
                format!(
                    "$: expected an integer (a whole number from {} to {}), found {}",
                    i64::MIN,
                    i64::MAX,
                    found(&big)
                )
            );
        }
    }

    #[test]
    fn an_open_object_takes_other_keys() {
        let open = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]});
        assert!(problems(&open, &json!({"a":1,"b":2})).is_empty());
        assert_eq!(
            texts(&problems(&open, &json!({"a":"1","b":2}))),
            [r#"$.a: expected an integer, found the string "1""#]
        );
    }

    #[test]
    fn fields_the_schema_does_not_require_are_still_its_fields() {
        // Not a strict schema: `required` leaves out `b`, or names `x`,
        // which has no property. The hint lists every declared field once.
        let schema = json!({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
            "required":["a"],"additionalProperties":false});
        assert_eq!(
            texts(&problems(&schema, &json!({"a":1,"b":2,"zzz":3}))),
            [r#"$: unexpected field "zzz" (the fields are "a", "b")"#]
        );
        let schema = json!({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
            "required":["a","x"],"additionalProperties":false});
        assert_eq!(
            texts(&problems(&schema, &json!({"a":1,"b":2,"x":3,"zzz":4}))),
            [r#"$: unexpected field "zzz" (the fields are "a", "x", "b")"#]
        );
        // `x` is one of its fields, not a key it lacks: the missing `Option`
        // field `b` is `None`.
        let schema = json!({"type":"object","properties":{"a":{"type":"integer"},"b":option(json!({"type":"integer"}))},
            "required":["a","x"],"additionalProperties":false});
        assert!(problems(&schema, &json!({"a":1,"x":3})).is_empty());
        assert_eq!(
            texts(&problems(&schema, &json!({"a":1,"x":3,"bb":2}))),
            [
                r#"$: missing required field "b""#,
                r#"$: unexpected field "bb" (the fields are "a", "x", "b"; did you mean "b"?)"#
            ]
        );
    }

    #[test]
    fn a_one_branch_any_of_is_not_an_option() {
        let schema = json!({"anyOf":[{"type":"integer"}]});
        assert_eq!(
            texts(&problems(&schema, &json!("1"))),
            [r#"$: expected an integer, found the string "1""#]
        );
    }

    /// `n` lists around `bottom`: `bottom` is `n` levels deep.
    fn nested_lists(n: usize, bottom: Value) -> Value {
        (0..n).fold(bottom, |v, _| json!([v]))
    }

    /// `n` records `{"r": …}` around `bottom`.
    fn nested_records(n: usize, bottom: Value) -> Value {
        (0..n).fold(bottom, |v, _| json!({ "r": v }))
    }

    #[test]
    fn values_are_followed_128_levels_deep_and_no_deeper() {
        let defs = json!({
            "L":{"type":"array","items":{"$ref":"#/$defs/L"}},
            "R":{"type":"object","properties":{"r":{"$ref":"#/$defs/R"}},"required":["r"],"additionalProperties":false}
        });
        let list = json!({"$ref":"#/$defs/L","$defs":defs});
        let rec = json!({"$ref":"#/$defs/R","$defs":defs});
        // An untagged union: which branch fits is decided by the yes/no
        // walk alone (the value names neither).
        let either_list = json!({"anyOf":[{"$ref":"#/$defs/L"},{"type":"integer"}],"$defs":defs});
        let twin_rec = json!({"anyOf":[{"$ref":"#/$defs/R"},{"$ref":"#/$defs/R"}],"$defs":defs});
        for (schema, value) in [
            (&list, nested_lists as fn(usize, Value) -> Value),
            (&rec, nested_records),
            (&either_list, nested_lists),
            (&twin_rec, nested_records),
        ] {
            let at_limit = check(schema, &value(MAX_DEPTH, json!("x")));
            assert_eq!(at_limit.problems.len(), 1, "{schema}: {at_limit:?}");
            assert!(at_limit.complete);
            let past = check(schema, &value(MAX_DEPTH + 1, json!("x")));
            assert!(past.is_empty() && past.complete, "{schema}: {past:?}");
        }
    }

    #[test]
    fn nested_any_ofs_are_followed_up_to_max_hops() {
        fn options(n: usize, inner: Value) -> Value {
            (0..n).fold(inner, |s, _| option(s))
        }
        // `Option[…Option[int]…]`: 32 `anyOf`s without going into the value.
        let int = json!({"type":"integer"});
        assert_eq!(
            texts(&problems(&options(MAX_HOPS, int.clone()), &json!("x"))),
            [r#"$: expected an integer or null, found the string "x""#]
        );
        assert!(problems(&options(MAX_HOPS + 1, int), &json!("x")).is_empty());
        // Around a sum type, its `anyOf` is one more.
        let sum = json!({"anyOf":[
            {"type":"object","properties":{"kind":{"type":"string","enum":["A"]},"n":{"type":"integer"}},"required":["kind","n"],"additionalProperties":false},
            {"type":"object","properties":{"kind":{"type":"string","enum":["B"]}},"required":["kind"],"additionalProperties":false}]});
        let value = json!({"kind":"A","n":"x"});
        assert_eq!(
            texts(&problems(&options(MAX_HOPS - 1, sum.clone()), &value)),
            [r#"$.n: expected an integer, found the string "x""#]
        );
        assert!(problems(&options(MAX_HOPS, sum), &value).is_empty());
    }

    #[test]
    fn after_the_budget_runs_out_nothing_more_is_said() {
        // The budget runs out in `items`; the unknown key after it is not
        // looked at.
        let schema = record(&[("items", json!({"type":"array","items":{"type":"integer"}}))]);
        let mut items = vec![json!(1); MAX_VISITS];
        items[0] = json!("x");
        let c = check(&schema, &json!({"items": items, "zzz": 1}));
        assert!(!c.complete);
        assert_eq!(
            texts(&c.problems),
            [r#"$.items[0]: expected an integer, found the string "x""#]
        );
    }

    /// The "did you mean" of an unexpected `key` among `fields`.
    fn guess(key: &str, fields: &[&str]) -> Option<String> {
        let schema = record(
            &fields
                .iter()
                .map(|f| (*f, json!({"type":"integer"})))
                .collect::<Vec<_>>(),
        );
        let mut value: Map<String, Value> =
            fields.iter().map(|f| ((*f).to_owned(), json!(1))).collect();
        value.insert(key.to_owned(), json!(1));
        let ps = problems(&schema, &Value::Object(value));
        assert_eq!(ps.len(), 1, "{ps:?}");
        let (_, rest) = ps[0].message.split_once("; did you mean ")?;
        Some(rest.trim_end_matches("?)").trim_matches('"').to_owned())
    }

    #[test]
    fn did_you_mean_names_the_one_closest_field() {
        let fields = ["vendor", "due_date", "total", "currency", "date"];
        // Same name ignoring case, `_`, `-` and spaces (before one that
        // only contains it).
        for key in ["Due-Date", "DUE DATE", "dueDate", "due__date"] {
            assert_eq!(guess(key, &fields).as_deref(), Some("due_date"), "{key}");
        }
        // Contained in a field (3 characters or more)...
        assert_eq!(guess("due", &fields).as_deref(), Some("due_date"));
        assert_eq!(guess("the_currency", &fields).as_deref(), Some("currency"));
        // ...or within a third of its length in edits (at least one).
        assert_eq!(guess("vendro", &fields).as_deref(), Some("vendor"));
        assert_eq!(guess("totl", &fields).as_deref(), Some("total"));
        assert_eq!(guess("curency", &fields).as_deref(), Some("currency"));
        // Not: too far, too short to be contained, or two equally close.
        assert_eq!(guess("amount", &fields), None);
        assert_eq!(guess("q", &["quantity", "price"]), None);
        assert_eq!(guess("line3", &["line1", "line2"]), None);
        assert_eq!(guess("line", &["line1", "line2"]), None);
        assert_eq!(guess("_", &fields), None);
        // Containment beats an edit.
        assert_eq!(
            guess("date", &["due_date", "data"]).as_deref(),
            Some("due_date")
        );
        // A missing field is guessed before one that is there.
        let schema = record(&[
            ("due_date", json!({"type":"string"})),
            ("due_time", json!({"type":"string"})),
        ]);
        assert_eq!(
            texts(&problems(&schema, &json!({"due_time":"9:00","due":"x"}))),
            [
                r#"$: missing required field "due_date""#,
                r#"$: unexpected field "due" (the fields are "due_date", "due_time"; did you mean "due_date"?)"#,
            ]
        );
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        for (a, b, d) in [
            ("kitten", "sitting", 3),
            ("flaw", "lawn", 2),
            ("", "abc", 3),
            ("abc", "", 3),
            ("abc", "abc", 0),
            ("ab", "ba", 2),
            ("é", "e", 1),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
            assert_eq!(edit_distance(b, a), d, "{b} {a}");
        }
        // Only the first 64 characters are compared.
        let a = format!("{}x", "k".repeat(64));
        let b = format!("{}y", "k".repeat(64));
        assert_eq!(edit_distance(&a, &b), 0);
    }

    /// `{"anyOf": [S, S]}` with both alternatives the one `$defs` entry
    /// `S`: a value names neither, so whether it fits is the yes/no walk's
    /// verdict alone.
    fn twin(schema: &Value) -> Value {
        json!({"anyOf":[{"$ref":"#/$defs/S"},{"$ref":"#/$defs/S"}],"$defs":{"S":schema}})
    }

    #[test]
    fn an_untagged_union_of_one_alternative_twice_accepts_what_the_alternative_accepts() {
        let rec = json!({"type":"object","properties":{
                "a":{"type":"integer"},
                "due":{"anyOf":[{"type":"string"},{"type":"null"}]},
                "total":{"type":"string","pattern":DECIMAL_PATTERN},
                "tags":{"type":"array","items":{"type":"string"}}
            },"required":["a","due","total","tags"],"additionalProperties":false});
        let open = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]});
        let enumerated = json!({"type":"string","enum":["USD","EUR"]});
        let cases = [
            (
                &rec,
                json!({"a":1,"due":"soon","total":"12.50","tags":["x"]}),
                true,
            ),
            (&rec, json!({"a":1,"due":null,"total":"-3","tags":[]}), true),
            // A missing `Option` field is `None`...
            (&rec, json!({"a":1,"total":"1","tags":[]}), true),
            // ...unless a key could be it misnamed.
            (
                &rec,
                json!({"a":1,"total":"1","tags":[],"due_date":"x"}),
                false,
            ),
            (&rec, json!({"due":null,"total":"1","tags":[]}), false),
            (
                &rec,
                json!({"a":1,"due":null,"total":"1","tags":[],"zzz":1}),
                false,
            ),
            (&rec, json!({"a":1,"due":5,"total":"1","tags":[]}), false),
            (
                &rec,
                json!({"a":1,"due":null,"total":"twelve","tags":[]}),
                false,
            ),
            (
                &rec,
                json!({"a":1,"due":null,"total":"1","tags":[1]}),
                false,
            ),
            (
                &rec,
                json!({"a":"1","due":null,"total":"1","tags":[]}),
                false,
            ),
            (&open, json!({"a":1,"zzz":1}), true),
            (&open, json!({"zzz":1}), false),
            (&enumerated, json!("EUR"), true),
            (&enumerated, json!("usd"), false),
        ];
        for (schema, value, fits) in cases {
            assert_eq!(
                problems(schema, &value).is_empty(),
                fits,
                "{schema} {value}"
            );
            let union = problems(&twin(schema), &value);
            assert_eq!(union.is_empty(), fits, "twin {schema} {value}: {union:?}");
        }
    }

    #[test]
    fn an_alternative_past_max_hops_is_not_claimed_wrong() {
        fn options(n: usize, inner: Value) -> Value {
            (0..n).fold(inner, |s, _| option(s))
        }
        let int = json!({"type":"integer"});
        // Inside an untagged union, the yes/no walk follows 32 `anyOf`s.
        let near = problems(&twin(&options(MAX_HOPS - 1, int.clone())), &json!(true));
        assert_eq!(near.len(), 1, "{near:?}");
        assert!(near[0].message.ends_with("found true"), "{near:?}");
        assert!(problems(&twin(&options(MAX_HOPS, int)), &json!(true)).is_empty());
    }

    #[test]
    fn a_sum_type_case_is_left_at_its_kind() {
        let case = |kind: &str| {
            json!({"type":"object","properties":{
                "kind":{"type":"string","enum":[kind]},
                "items":{"type":"array","items":{"type":"integer"}}
            },"required":["kind","items"],"additionalProperties":false})
        };
        let sum = json!({"anyOf":[case("A"), case("B")]});
        let value = json!({"kind":"B","items":vec![1; 1000]});
        let c = check(&sum, &value);
        assert!(c.is_empty() && c.complete);
        // Case `A` is left at its `kind`: the items are looked at once.
        assert!(c.steps < 1100, "{}", c.steps);
    }

    #[test]
    fn an_alternative_reached_twice_is_judged_once() {
        // Thirty nested untagged unions of twins: 2^30 routes, 30 verdicts.
        let mut defs = Map::new();
        defs.insert("T30".into(), json!({"type":"integer"}));
        for i in 0..30 {
            let inner = format!("#/$defs/T{}", i + 1);
            defs.insert(
                format!("T{i}"),
                json!({"anyOf":[{"$ref":inner},{"$ref":inner}]}),
            );
        }
        let schema = json!({"$ref":"#/$defs/T0","$defs":defs});
        let c = check(&schema, &json!("x"));
        assert!(c.complete, "{c:?}");
        assert!(c.steps < 200, "{}", c.steps);
        assert_eq!(c.problems.len(), 1);
        assert!(c.problems[0].message.ends_with(r#"found "x""#), "{c:?}");
    }

    #[test]
    fn alternatives_are_pictured_two_levels_deep() {
        let line = json!({"type":"object","properties":{"q":{"type":"integer"},"inner":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}},"required":["q","inner"],"additionalProperties":false});
        let sum = json!({"anyOf":[
            {"type":"object","properties":{
                "kind":{"type":"string","enum":["A"]},
                "line":line,
                "maybe":{"anyOf":[line,{"type":"null"}]},
                "tags":{"type":"array","items":{"type":"string"}},
                "grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},
                "any":{"type":"array"},
                "flag":{"type":"boolean"},
                "unit":{"type":"null"},
                "size":{"type":"string","enum":["S","M"]},
                "free":{},
                "deep":{"anyOf":[{"anyOf":[{"anyOf":[{"type":"integer"},{"type":"null"}]},{"type":"null"}]},{"type":"null"}]}
            },"required":["kind","line","maybe","tags","grid","any","flag","unit","size","free","deep"],"additionalProperties":false},
            {"type":"object","properties":{"kind":{"type":"string","enum":["B"]}},"required":["kind"],"additionalProperties":false}]});
        let ps = problems(&sum, &json!({"kind":"C"}));
        assert_eq!(
            texts(&ps),
            [concat!(
                r#"$: expected one of {"kind":"A","line":{"q":<integer>,"inner":<object>},"#,
                r#""maybe":<object or null>,"tags":[<string>, …],"#,
                r#""grid":[<list>, …],"any":<list>,"flag":<true or false>,"unit":null,"#,
                r#""size":<one of "S", "M">,"free":<value>,"deep":<integer or null or null or null>} "#,
                r#"or {"kind":"B"}, found {"kind":"C"}"#
            )]
        );
    }

    #[test]
    fn keys_that_are_not_identifiers_are_quoted_in_paths() {
        let schema = json!({"type":"object","properties":{
            "1st":{"type":"integer"},"_x":{"type":"integer"},"a-b":{"type":"integer"},"x1_y":{"type":"integer"}
        },"required":["1st","_x","a-b","x1_y"],"additionalProperties":false});
        let value = json!({"1st":"a","_x":"b","a-b":"c","x1_y":"d"});
        let paths: Vec<String> = problems(&schema, &value)
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(paths, [r#"$["1st"]"#, "$._x", r#"$["a-b"]"#, "$.x1_y"]);
    }

    #[test]
    fn quotes_are_cut_at_80_characters_whatever_their_bytes() {
        for c in ['k', 'é', '€', '😀'] {
            let long: String = std::iter::repeat_n(c, 100).collect();
            let ps = problems(&json!({"type":"integer"}), &json!(long));
            let quote: String = std::iter::repeat_n(c, 79).collect();
            assert_eq!(
                ps[0].message,
                format!("expected an integer, found the string \"{quote}…"),
                "{c}"
            );
            let short: String = std::iter::repeat_n(c, 78).collect();
            let ps = problems(&json!({"type":"integer"}), &json!(short));
            assert_eq!(
                ps[0].message,
                format!("expected an integer, found the string \"{short}\""),
                "{c}"
            );
        }
    }

    #[test]
    fn serde_type_names_become_json_ones() {
        for (serde, plain) in [
            (
                "invalid type: null, expected struct Line_Item at line 1 column 9",
                "invalid type: null, expected an object at line 1 column 9",
            ),
            (
                "invalid type: string \"x\", expected enum vox_gen::Status",
                "invalid type: string \"x\", expected one of the alternatives",
            ),
            (
                "invalid type: unit value, expected u8",
                "invalid type: null, expected an integer",
            ),
            (
                "invalid length 0, expected tuple variant Pair",
                "invalid length 0, expected a list",
            ),
            (
                "invalid type: map, expected a sequence",
                "invalid type: map, expected a list",
            ),
            (
                "invalid type: integer `1`, expected a string",
                "invalid type: integer `1`, expected a string",
            ),
        ] {
            assert_eq!(plain_serde_message(serde), plain);
        }
    }
}
