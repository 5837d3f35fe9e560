//! Safe repair of a reply before re-prompting (docs/runtime.md, "Repairs").
//!
//! Only after the reply failed to deserialize into the return type — a
//! valid reply never comes here — the runtime tries repairs whose meaning
//! is unambiguous, and accepts the result only if it then fits the schema
//! and the return type exactly:
//!
//! 1. prose around **exactly one** top-level JSON value (code fences are
//!    stripped before any of this); two or more candidates are not guessed
//!    between;
//! 2. JSON5-style slips: trailing commas, `//` and `/* */` comments,
//!    single-quoted strings, unquoted object keys;
//! 3. guided by the schema: a number written as a string that is exactly a
//!    JSON number where a number is wanted (`"2"`, `"3.5"`; not `"$3.50"`);
//!    an integral float where an integer is wanted (`2.0`); a sum type's
//!    `kind` that matches exactly one case ignoring case; an object or list
//!    sent as a JSON-encoded string where that object or list is wanted;
//!    keys a record lacks beside every field it has, each with a value
//!    (nothing there can be a field misnamed), dropped.
//!
//! Nothing else is repaired: a cut-off reply, a refusal and empty content
//! never reach this module, and `null` for a required value, a missing
//! field or a value wrapped in an extra object still fail the schema, so
//! the model is asked again with every problem named by path
//! ([`crate::correction`]).
//!
//! The scanner is hand-written (no JSON5 crate): it only has to turn the
//! four slips above into strict JSON, and an unfamiliar construct — `NaN`,
//! hex numbers, an unterminated string — is left for serde_json to reject.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ai_function::OutputSchema;
use crate::correction::{self, kind_of, Doc};
use crate::reply::{parse_content, strip_code_fences};

/// One kind of repair applied to a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub(crate) enum Repair {
    /// Text before or after the one JSON value in the reply.
    ProseAroundJson,
    /// `,` before `}` or `]`.
    TrailingCommas,
    /// `//` or `/* */` comments.
    Comments,
    /// `'text'` strings.
    SingleQuotedStrings,
    /// `{key: …}`.
    UnquotedKeys,
    /// `"2"` where a number is wanted.
    NumberInString,
    /// `2.0` where an integer is wanted.
    IntegralFloat,
    /// A sum type's `kind` in another case (`"open"` for `"Open"`).
    KindCase,
    /// `"{\"a\":1}"` where an object (or list) is wanted.
    JsonInString,
    /// A bare value where the schema wraps it in `{"value": …}`.
    BareValue,
    /// A plain enum's case in another letter case (`"usd"` for `"USD"`),
    /// or its name written bare (`High` for `"High"`).
    EnumName,
    /// Python's `True`, `False`, `None` for `true`, `false`, `null`.
    PythonLiterals,
    /// Python's `"""text"""` (or `'''text'''`) strings.
    TripleQuotedStrings,
    /// `12.5` where a `Decimal` (a decimal number as a string) is wanted.
    NumberAsDecimal,
    /// Keys a record does not have beside every field it has, each with a
    /// value (so none can be a field misnamed): dropped.
    UnknownKeys,
}

impl Repair {
    /// The name used in the `vox.ai_reply_repaired` event.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Repair::ProseAroundJson => "prose_around_json",
            Repair::TrailingCommas => "trailing_commas",
            Repair::Comments => "comments",
            Repair::SingleQuotedStrings => "single_quoted_strings",
            Repair::UnquotedKeys => "unquoted_keys",
            Repair::NumberInString => "number_in_string",
            Repair::IntegralFloat => "integral_float",
            Repair::KindCase => "kind_case",
            Repair::JsonInString => "json_in_string",
            Repair::BareValue => "bare_value",
            Repair::EnumName => "enum_name",
            Repair::PythonLiterals => "python_literals",
            Repair::TripleQuotedStrings => "triple_quoted_strings",
            Repair::NumberAsDecimal => "number_as_decimal",
            Repair::UnknownKeys => "unknown_keys",
        }
    }

    /// How the slip is described to the model.
    fn described(self) -> &'static str {
        match self {
            Repair::ProseAroundJson => "text around the JSON value",
            Repair::TrailingCommas => "trailing commas",
            Repair::Comments => "comments",
            Repair::SingleQuotedStrings => "single-quoted strings",
            Repair::UnquotedKeys => "unquoted keys",
            Repair::NumberInString => "numbers written as strings",
            Repair::IntegralFloat => "integers written with a fraction",
            Repair::KindCase => "a \"kind\" in the wrong case",
            Repair::JsonInString => "JSON written inside a string",
            Repair::BareValue => "a value without its {\"value\": …} object",
            Repair::EnumName => "a name written in another case or without quotes",
            Repair::PythonLiterals => "Python's True, False or None",
            Repair::TripleQuotedStrings => "triple-quoted strings",
            Repair::NumberAsDecimal => "a decimal number not written as a string",
            Repair::UnknownKeys => "keys the type does not have, beside all of its fields",
        }
    }
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The repairs applied to one accepted reply (each kind once, in order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Repairs(Vec<Repair>);

impl Repairs {
    fn add(&mut self, repair: Repair) {
        if !self.0.contains(&repair) {
            self.0.push(repair);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    #[cfg(test)]
    pub fn kinds(&self) -> &[Repair] {
        &self.0
    }
}

impl fmt::Display for Repairs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Parses a reply's content as `T`: as is (after stripping code fences and
/// unwrapping `"value"`), else — when `repair` — after safe repairs. On
/// failure the text is the correction: every problem by JSON path.
pub(crate) fn parse_reply<T: DeserializeOwned>(
    content: &str,
    output: &OutputSchema,
    repair: bool,
) -> Result<(T, Repairs), String> {
    match parse_content::<T>(content, output.is_wrapped()) {
        // A `Decimal` is a `String` in Rust: its text is checked against the
        // schema's pattern here, for return types that have one.
        // A run-time category is a `String` too: its value is checked
        // against the call's values.
        Ok(_) if output.checks_strings() && !strings_fit(content, output) => recover(
            content,
            output,
            repair,
            "the reply does not match the schema".to_owned(),
        ),
        Ok(value) => Ok((value, Repairs::default())),
        Err(typed_error) => recover(content, output, repair, typed_error),
    }
}

/// Whether every `Decimal` and run-time category in a reply that
/// deserialized fits the schema.
#[cold]
fn strings_fit(content: &str, output: &OutputSchema) -> bool {
    let (Ok(schema), Ok(mut value)) = (
        output.try_value(),
        serde_json::from_str::<Value>(strip_code_fences(content)),
    ) else {
        return false;
    };
    if output.is_wrapped() && !value.as_object().is_some_and(|o| o.contains_key("value")) {
        let mut object = serde_json::Map::new();
        object.insert("value".to_owned(), value);
        value = Value::Object(object);
    }
    !correction::check(schema, &value)
        .problems
        .iter()
        .any(|p| p.atomic)
}

/// The slow path: a reply that did not deserialize as it was.
#[cold]
fn recover<T: DeserializeOwned>(
    content: &str,
    output: &OutputSchema,
    repair: bool,
    typed_error: String,
) -> Result<(T, Repairs), String> {
    let Ok(schema) = output.try_value() else {
        return Err(correction::plain_serde_message(&typed_error));
    };
    let json = strip_code_fences(content);
    if json.is_empty() {
        return Err("the reply was empty; answer with one JSON value".to_owned());
    }
    let doc = Doc::of(schema);
    let wrapped = output.is_wrapped();
    let (value, mut repairs) = match serde_json::from_str::<Value>(json) {
        Ok(value) => (value, Repairs::default()),
        Err(syntax) if repair => match extract(json, &|v| root_shape(doc, schema, wrapped, v)) {
            Extracted::One(value, repairs) => (value, repairs),
            Extracted::Several(n) => {
                return Err(format!(
                    "the reply holds {n} separate JSON values; answer with exactly one JSON value \
                     and nothing around it"
                ))
            }
            Extracted::None => match bare_enum_name(doc, schema, wrapped, json) {
                Some(name) => {
                    let mut r = Repairs::default();
                    r.add(Repair::EnumName);
                    (Value::String(name.to_owned()), r)
                }
                None => return Err(format!("the reply is not valid JSON: {syntax}")),
            },
        },
        Err(syntax) => return Err(format!("the reply is not valid JSON: {syntax}")),
    };
    let exact = numbers_are_exact(json);
    // A bare value (not an object) where the type is wrapped: its problems
    // under `$.value`, which also shows where it goes.
    let checked = if wrapped && !value.is_object() {
        let mut object = serde_json::Map::new();
        object.insert("value".to_owned(), value.clone());
        correction::check(schema, &Value::Object(object))
    } else {
        correction::check(schema, &value)
    };
    if repair {
        let mut fixed = value;
        // `7` for `{"value": 7}`: a bare value (not itself an object with
        // a `value` key) is wrapped, and kept only if it then fits.
        if wrapped && !fixed.as_object().is_some_and(|o| o.contains_key("value")) {
            let mut object = serde_json::Map::new();
            object.insert("value".to_owned(), fixed);
            fixed = Value::Object(object);
            repairs.add(Repair::BareValue);
        }
        fix_value(doc, schema, &mut fixed, &mut repairs, exact, 0);
        if !repairs.is_empty() && correction::check(schema, &fixed).is_empty() {
            if let Ok(value) = parse_content::<T>(&fixed.to_string(), output.is_wrapped()) {
                return Ok((value, repairs));
            }
        }
    }
    let mut message = if checked.is_empty() {
        // The schema and the type agree by construction; should they not
        // (or should the check have stopped at its step budget before
        // finding anything), serde's words, without Rust's type names.
        correction::plain_serde_message(&typed_error)
    } else {
        checked.describe()
    };
    let slips: Vec<&str> = repairs
        .0
        .iter()
        .filter(|r| {
            matches!(
                r,
                Repair::ProseAroundJson
                    | Repair::TrailingCommas
                    | Repair::Comments
                    | Repair::SingleQuotedStrings
                    | Repair::UnquotedKeys
                    | Repair::PythonLiterals
                    | Repair::TripleQuotedStrings
            )
        })
        .map(|r| r.described())
        .collect();
    if !slips.is_empty() {
        message.push_str(&format!(
            "\nAlso, answer with plain JSON only (the reply had {})",
            slips.join(", ")
        ));
    }
    Err(message)
}

enum Extracted {
    One(Value, Repairs),
    Several(usize),
    None,
}

/// The one JSON value in `text`: the whole text with JSON5 slips
/// repaired, else the only `{…}`/`[…]` in the prose that parses and has the
/// root's shape (`wanted`); fragments of another shape — `['amenities']` in
/// a line of code when an object is wanted — are not counted.
fn extract(text: &str, wanted: &dyn Fn(&Value) -> bool) -> Extracted {
    if let Some((value, repairs)) = parse_tolerant(text) {
        return Extracted::One(value, repairs);
    }
    let mut found: Vec<(Value, Repairs)> = Vec::new();
    let mut count = 0;
    let bytes = text.as_bytes();
    // A bracket that never closes is scanned to the end of the text; prose
    // full of them (`{ a { a …`) would make this quadratic. Past this many
    // bytes scanned no value is taken from the prose.
    let mut scan_left = bytes.len().saturating_mul(4).saturating_add(1 << 20);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' && bytes[i] != b'[' {
            i += 1;
            continue;
        }
        let end = balanced_end(text, i);
        match scan_left.checked_sub(end.unwrap_or(bytes.len()) - i) {
            Some(left) => scan_left = left,
            None => return Extracted::None,
        }
        let Some(end) = end else {
            if opens_prose(text, i) {
                // `{` in a sentence, never closed: look on after it.
                i += 1;
                continue;
            }
            // An unterminated value: nothing after this point is a whole
            // value (an inner one is not the answer).
            break;
        };
        let candidate = &text[i..end];
        let parsed = serde_json::from_str::<Value>(candidate)
            .ok()
            .map(|v| (v, Repairs::default()))
            .or_else(|| parse_tolerant(candidate));
        if let Some(one) = parsed.filter(|(v, _)| wanted(v)) {
            count += 1;
            if found.is_empty() {
                found.push(one);
            }
        }
        // Never look inside a balanced span: the inner value of a broken
        // outer one is not the answer.
        i = end;
    }
    match (count, found.pop()) {
        (1, Some((value, mut repairs))) => {
            let mut all = Repairs::default();
            all.add(Repair::ProseAroundJson);
            all.0.append(&mut repairs.0);
            Extracted::One(value, all)
        }
        (0, _) | (_, None) => Extracted::None,
        (n, _) => Extracted::Several(n),
    }
}

/// Whether the unclosed bracket at `i` is prose rather than the start of a
/// JSON value cut short: what follows it cannot begin an object's key (for
/// `{`) or a value (for `[`).
fn opens_prose(text: &str, i: usize) -> bool {
    let rest = text[i + 1..].trim_start();
    let Some(c) = rest.chars().next() else {
        return false;
    };
    if matches!(c, '"' | '\'' | '{' | '[' | '}' | ']') {
        return false;
    }
    if text.as_bytes()[i] == b'[' {
        return !(c.is_ascii_digit()
            || c == '-'
            || rest.starts_with("true")
            || rest.starts_with("false")
            || rest.starts_with("null"));
    }
    // `{key: …` (an unquoted key) is JSON-like; `{ like this` is not.
    let word_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(rest.len());
    word_end == 0 || !rest[word_end..].trim_start().starts_with(':')
}

/// Whether `value` has the shape the root takes: an object; or, when the
/// type is wrapped in `{"value": …}`, also the bare value's JSON type.
fn root_shape(doc: Doc<'_>, schema: &Value, wrapped: bool, value: &Value) -> bool {
    if value.is_object() {
        return true;
    }
    if !wrapped {
        return false;
    }
    let Some(inner) = schema.pointer("/properties/value") else {
        return false;
    };
    let inner = doc.resolve(inner);
    let mut types: Vec<&str> = inner
        .get("type")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    if let Some(branches) = inner.get("anyOf").and_then(Value::as_array) {
        types.extend(
            branches
                .iter()
                .filter_map(|b| doc.resolve(b).get("type").and_then(Value::as_str)),
        );
    }
    value.is_array() && types.contains(&"array")
}

/// A reply that is only the name of one case of the plain enum the root
/// wraps (`High`, `"high".`, `` `HIGH` ``), ignoring case; `None` unless
/// exactly one case matches.
fn bare_enum_name<'s>(
    doc: Doc<'s>,
    schema: &'s Value,
    wrapped: bool,
    text: &str,
) -> Option<&'s str> {
    if !wrapped {
        return None;
    }
    let inner = doc.resolve(schema.pointer("/properties/value")?);
    let cases = std::iter::once(inner)
        .chain(
            inner
                .get("anyOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|b| doc.resolve(b)),
        )
        .find_map(|s| {
            s.get("enum")
                .and_then(Value::as_array)
                .filter(|_| s.get("type").and_then(Value::as_str) == Some("string"))
        })?;
    let mut word = text.trim().trim_end_matches('.').trim();
    for q in ['"', '\'', '`'] {
        if let Some(inner) = word.strip_prefix(q).and_then(|w| w.strip_suffix(q)) {
            word = inner.trim();
            break;
        }
    }
    if word.is_empty() || word.chars().any(|c| c.is_whitespace() && c != ' ') {
        return None;
    }
    one_case(cases, word)
}

/// The end (exclusive) of the bracketed value starting at `start`,
/// skipping strings (both quotes) and comments.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            q @ (b'"' | b'\'') => {
                i = triple_end(text, i).map_or_else(|| string_end(bytes, i, q), |e| Some(e - 1))?
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = bytes[i..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(bytes.len(), |p| i + p);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map(|p| i + 2 + p + 1)?;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize, quote: u8) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index after the Python triple-quoted string (`"""…"""` or
/// `'''…'''`) opening at `start`, if one opens there and is closed.
fn triple_end(text: &str, start: usize) -> Option<usize> {
    let quote = text
        .get(start..start + 3)
        .filter(|q| *q == "\"\"\"" || *q == "'''")?;
    text[start + 3..].find(quote).map(|p| start + 3 + p + 3)
}

/// `text` parsed after turning JSON5 slips into strict JSON, if it then
/// parses and a slip was found.
fn parse_tolerant(text: &str) -> Option<(Value, Repairs)> {
    let (strict, repairs) = normalize(text)?;
    if repairs.is_empty() {
        return None;
    }
    let value = serde_json::from_str::<Value>(&strict).ok()?;
    Some((value, repairs))
}

/// Rewrites trailing commas, comments, single-quoted strings and unquoted
/// keys as strict JSON; `None` for an unterminated string or comment.
fn normalize(text: &str) -> Option<(String, Repairs)> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut repairs = Repairs::default();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'\'' if triple_end(text, i).is_some() => {
                let end = triple_end(text, i)?;
                // The body as a JSON string: quotes and line breaks escaped,
                // backslash escapes kept (an invalid one fails to parse).
                out.push('"');
                for c in text[i + 3..end - 3].chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c => out.push(c),
                    }
                }
                out.push('"');
                repairs.add(Repair::TripleQuotedStrings);
                i = end;
            }
            b'"' => {
                let end = string_end(bytes, i, b'"')?;
                out.push_str(&text[i..=end]);
                i = end + 1;
            }
            b'\'' => {
                let end = string_end(bytes, i, b'\'')?;
                out.push('"');
                let inner = &text[i + 1..end];
                let mut chars = inner.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some('\'') => out.push('\''),
                            Some(e) => {
                                out.push('\\');
                                out.push(e);
                            }
                            None => out.push('\\'),
                        },
                        '"' => out.push_str("\\\""),
                        c => out.push(c),
                    }
                }
                out.push('"');
                repairs.add(Repair::SingleQuotedStrings);
                i = end + 1;
            }
            b'/' if matches!(bytes.get(i + 1), Some(b'/') | Some(b'*')) => {
                i = skip_comment(text, i)?;
                out.push(' ');
                repairs.add(Repair::Comments);
            }
            b',' => {
                let next = skip_blank(text, i + 1)?;
                if matches!(bytes.get(next), Some(b'}') | Some(b']')) {
                    repairs.add(Repair::TrailingCommas);
                } else {
                    out.push(',');
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let end = bytes[i + 1..]
                    .iter()
                    .position(|c| !matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
                    .map_or(bytes.len(), |p| i + 1 + p);
                out.push_str(&text[i..end]);
                i = end;
            }
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let end = bytes[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$'))
                    .map_or(bytes.len(), |p| i + p);
                let word = &text[i..end];
                let next = skip_blank(text, end)?;
                let python = match word {
                    "True" => Some("true"),
                    "False" => Some("false"),
                    "None" => Some("null"),
                    _ => None,
                };
                if bytes.get(next) == Some(&b':') {
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                    repairs.add(Repair::UnquotedKeys);
                } else if let Some(literal) = python {
                    out.push_str(literal);
                    repairs.add(Repair::PythonLiterals);
                } else {
                    out.push_str(word);
                }
                i = end;
            }
            _ => {
                // Copy one whole character.
                let c = text[i..].chars().next()?;
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    Some((out, repairs))
}

/// The index after the comment starting at `i`; `None` if unterminated.
fn skip_comment(text: &str, i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(i + 1) == Some(&b'/') {
        Some(
            bytes[i..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |p| i + p),
        )
    } else {
        text[i + 2..].find("*/").map(|p| i + 2 + p + 2)
    }
}

/// The index of the next byte that is not whitespace or a comment.
fn skip_blank(text: &str, mut i: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    loop {
        match bytes.get(i) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => i += 1,
            Some(b'/') if matches!(bytes.get(i + 1), Some(b'/') | Some(b'*')) => {
                i = skip_comment(text, i)?
            }
            _ => return Some(i),
        }
    }
}

/// Deepest value nesting repaired.
const MAX_DEPTH: usize = 128;

/// Applies the schema-guided repairs to `value` in place.
fn fix_value<'s>(
    doc: Doc<'s>,
    schema: &'s Value,
    value: &mut Value,
    repairs: &mut Repairs,
    exact: bool,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = doc.resolve(schema);
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        return fix_any_of(doc, branches, value, repairs, exact, depth);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some(ty @ ("integer" | "number")) => fix_number(ty == "integer", value, repairs),
        Some("string") => fix_string(schema, value, repairs, exact),
        Some("object") => {
            decode_string(value, Value::is_object, repairs);
            if let (Some(props), Value::Object(fields)) =
                (schema.get("properties").and_then(Value::as_object), value)
            {
                for (name, field) in fields.iter_mut() {
                    if let Some(field_schema) = props.get(name) {
                        fix_value(doc, field_schema, field, repairs, exact, depth + 1);
                    }
                }
                drop_unknown_keys(schema, props, fields, repairs);
            }
        }
        Some("array") => {
            decode_string(value, Value::is_array, repairs);
            if let (Some(items), Value::Array(list)) = (schema.get("items"), value) {
                for item in list {
                    fix_value(doc, items, item, repairs, exact, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Removes the keys a closed object does not have when they cannot be a
/// field of it misnamed: every field it declares is there, with a value
/// (`null` in an `Option` field could be the misnamed key's value). Where
/// a field is absent or `null`, an unknown key is left for the correction
/// to name, so a misnamed optional field never becomes `None`
/// (docs/runtime.md, "Unknown and missing fields").
fn drop_unknown_keys(
    schema: &Value,
    props: &serde_json::Map<String, Value>,
    fields: &mut serde_json::Map<String, Value>,
    repairs: &mut Repairs,
) {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return;
    }
    let all_there = props
        .keys()
        .all(|name| fields.get(name).is_some_and(|v| !v.is_null()));
    if !all_there || fields.keys().all(|k| props.contains_key(k)) {
        return;
    }
    fields.retain(|k, _| props.contains_key(k));
    repairs.add(Repair::UnknownKeys);
}

fn fix_any_of<'s>(
    doc: Doc<'s>,
    branches: &'s [Value],
    value: &mut Value,
    repairs: &mut Repairs,
    exact: bool,
    depth: usize,
) {
    if value.is_null() {
        return;
    }
    let non_null: Vec<&'s Value> = branches
        .iter()
        .map(|b| doc.resolve(b))
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    if let [only] = non_null.as_slice() {
        return fix_value(doc, only, value, repairs, exact, depth + 1);
    }
    let all_objects = non_null
        .iter()
        .all(|b| b.get("type").and_then(Value::as_str) == Some("object"));
    if all_objects {
        decode_string(value, Value::is_object, repairs);
    }
    let Value::Object(fields) = value else {
        return;
    };
    // A sum type: the case its `kind` names, exactly or, if only one case
    // matches that way, ignoring case.
    let Some(Value::String(kind)) = fields.get("kind") else {
        return;
    };
    let named: Vec<&'s Value> = non_null
        .iter()
        .copied()
        .filter(|b| kind_of(b) == Some(kind.as_str()))
        .collect();
    let branch = match named.as_slice() {
        [one] => *one,
        [] => {
            let loose: Vec<&'s Value> = non_null
                .iter()
                .copied()
                .filter(|b| kind_of(b).is_some_and(|k| k.eq_ignore_ascii_case(kind)))
                .collect();
            let [one] = loose.as_slice() else { return };
            let Some(proper) = kind_of(one) else { return };
            fields.insert("kind".to_owned(), Value::String(proper.to_owned()));
            repairs.add(Repair::KindCase);
            *one
        }
        _ => return,
    };
    fix_value(doc, branch, value, repairs, exact, depth + 1);
}

/// `"2"` → `2` where a number is wanted (only a string that is exactly a
/// JSON number), and `2.0` → `2` where an integer is (only when integral).
fn fix_number(integer: bool, value: &mut Value, repairs: &mut Repairs) {
    if let Value::String(s) = value {
        if s.trim() != s {
            return;
        }
        match serde_json::from_str::<Value>(s) {
            Ok(n @ Value::Number(_)) => {
                *value = n;
                repairs.add(Repair::NumberInString);
            }
            _ => return,
        }
    }
    if !integer || value.is_i64() {
        return;
    }
    if let Some(f) = value.as_f64() {
        // Integral and exactly representable.
        if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
            *value = Value::from(f as i64);
            repairs.add(Repair::IntegralFloat);
        }
    }
}

/// Where a string is wanted: a plain enum's case in another letter case
/// (only when exactly one case matches ignoring case), and a JSON number
/// where a `Decimal` is (only when `exact`: every number in the reply had
/// few enough digits for its value to be read exactly).
fn fix_string(schema: &Value, value: &mut Value, repairs: &mut Repairs, exact: bool) {
    match value {
        Value::String(s) => {
            let Some(cases) = schema.get("enum").and_then(Value::as_array) else {
                return;
            };
            if cases.iter().any(|c| c.as_str() == Some(s.as_str())) {
                return;
            }
            if let Some(case) = one_case(cases, s) {
                *value = Value::String(case.to_owned());
                repairs.add(Repair::EnumName);
            }
        }
        Value::Number(n)
            if exact
                && schema.get("pattern").and_then(Value::as_str)
                    == Some(correction::DECIMAL_PATTERN) =>
        {
            let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(u), _) => u.to_string(),
                // Rust prints a float's shortest round-trip digits without
                // an exponent: `12.5`, `100000000000000000000`, `0.0000001`.
                (_, _, Some(f)) if f.is_finite() => format!("{f}"),
                _ => return,
            };
            if crate::__private::decimal::is_decimal(&text) {
                *value = Value::String(text);
                repairs.add(Repair::NumberAsDecimal);
            }
        }
        _ => {}
    }
}

/// The one case of `cases` equal to `name` ignoring ASCII case.
fn one_case<'c>(cases: &'c [Value], name: &str) -> Option<&'c str> {
    let mut matching = cases
        .iter()
        .filter_map(Value::as_str)
        .filter(|c| c.eq_ignore_ascii_case(name));
    match (matching.next(), matching.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Whether every number in `text` (outside strings) has at most 15
/// significant digits, so a float holds its exact decimal value and prints
/// it back.
fn numbers_are_exact(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'"' | b'\'') => match string_end(bytes, i, q) {
                Some(end) => i = end + 1,
                None => return true,
            },
            b'0'..=b'9' => {
                let end = bytes[i..]
                    .iter()
                    .position(|c| !matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
                    .map_or(bytes.len(), |p| i + p);
                let mantissa = text[i..end].split(['e', 'E']).next().unwrap_or_default();
                let digits = mantissa
                    .bytes()
                    .filter(u8::is_ascii_digit)
                    .skip_while(|d| *d == b'0')
                    .count();
                if digits > 15 {
                    return false;
                }
                i = end;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                // A word (`e` inside it is not an exponent).
                i += bytes[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .unwrap_or(bytes.len() - i);
            }
            _ => i += 1,
        }
    }
    true
}

/// A string holding the JSON of an object (or list) where one is wanted.
fn decode_string(value: &mut Value, wanted: fn(&Value) -> bool, repairs: &mut Repairs) {
    let Value::String(s) = value else { return };
    match serde_json::from_str::<Value>(s) {
        Ok(inner) if wanted(&inner) => {
            *value = inner;
            repairs.add(Repair::JsonInString);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_rewrites_each_slip_and_nothing_else() {
        let cases = [
            (r#"{"a": 1,}"#, r#"{"a": 1}"#, Repair::TrailingCommas),
            ("[1, 2, ]", "[1, 2 ]", Repair::TrailingCommas),
            ("{\"a\": 1 // one\n}", "{\"a\": 1  \n}", Repair::Comments),
            (r#"{"a": /* x */ 1}"#, r#"{"a":   1}"#, Repair::Comments),
            (
                r#"{'a': 'it\'s "q"'}"#,
                r#"{"a": "it's \"q\""}"#,
                Repair::SingleQuotedStrings,
            ),
            (
                r#"{a: 1, b_2: true}"#,
                r#"{"a": 1, "b_2": true}"#,
                Repair::UnquotedKeys,
            ),
        ];
        for (input, strict, repair) in cases {
            let (out, repairs) = normalize(input).unwrap();
            assert_eq!(out, strict, "{input}");
            assert_eq!(repairs.kinds(), [repair], "{input}");
            serde_json::from_str::<Value>(&out).unwrap();
        }
        // Strings, numbers and literals pass through untouched.
        let plain = r#"{"a//b": "x, ]", "n": -1.5e3, "t": [true, false, null]}"#;
        let (out, repairs) = normalize(plain).unwrap();
        assert_eq!(out, plain);
        assert!(repairs.is_empty());
        assert!(normalize(r#"{"a": "open"#).is_none());
        assert!(normalize("{'a: 1}").is_none());
        assert!(normalize("{\"a\": 1 /* open").is_none());
        // Not JSON5 slips: left for serde_json to reject.
        assert!(parse_tolerant("{a: NaN}").is_none());
        assert!(parse_tolerant("{a: 0x10}").is_none());
    }

    /// [`extract`] where the root is an object.
    fn objects(text: &str) -> Extracted {
        extract(text, &Value::is_object)
    }

    #[test]
    fn python_literals_and_triple_quoted_strings() {
        let (out, repairs) = normalize(r#"{"a": True, "b": [False, None], "c": "True"}"#).unwrap();
        assert_eq!(out, r#"{"a": true, "b": [false, null], "c": "True"}"#);
        assert_eq!(repairs.kinds(), [Repair::PythonLiterals]);
        let (out, repairs) = normalize("{\"a\": \"\"\"line \"one\"\nline {two}\"\"\"}").unwrap();
        assert_eq!(out, r#"{"a": "line \"one\"\nline {two}"}"#);
        assert_eq!(repairs.kinds(), [Repair::TripleQuotedStrings]);
        assert_eq!(
            parse_tolerant("{'a': '''x'''}").unwrap().0,
            serde_json::json!({"a": "x"})
        );
        // `Nonesuch`, `TRUE`: words, left for serde_json to reject.
        assert!(parse_tolerant("{\"a\": TRUE}").is_none());
        assert!(parse_tolerant("{\"a\": Nonesuch}").is_none());
    }

    #[test]
    fn only_values_of_the_root_shape_are_counted_and_prose_braces_are_passed() {
        let code = "data = json.loads(text)\nprint(data['amenities'])\n{\"a\": 1}";
        let Extracted::One(v, _) = objects(code) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
        let Extracted::One(v, _) = objects("I'd write it { like this. {\"a\": 2}") else {
            panic!()
        };
        assert_eq!(v["a"], 2);
        // A value cut short is not searched for an inner one.
        assert!(matches!(
            objects(r#"Here: {"a": {"b": 1}"#),
            Extracted::None
        ));
        assert!(matches!(objects("Here: {a: {b: 1}"), Extracted::None));
        assert!(opens_prose("a { b", 2));
        assert!(!opens_prose("{ \"a\"", 0));
        assert!(!opens_prose("[1, 2", 0));
        assert!(opens_prose("json_data[key", 9));
    }

    #[test]
    fn numbers_are_exact_up_to_fifteen_digits() {
        assert!(numbers_are_exact(
            r#"{"a": 12.5, "b": -0.000123456789012345, "c": "1234567890123456789"}"#
        ));
        assert!(numbers_are_exact("{a1234567890123456789: 1e300}"));
        assert!(!numbers_are_exact(r#"{"a": 0.10000000000000001}"#));
        assert!(!numbers_are_exact(r#"[12345678901234567]"#));
    }

    #[test]
    fn one_value_in_prose_is_taken_several_are_not() {
        let one = objects("Sure! Here it is:\n```json\n{\"a\": [1]}\n```\nAnything else?");
        let Extracted::One(v, r) = one else { panic!() };
        assert_eq!(v, serde_json::json!({"a": [1]}));
        assert_eq!(r.kinds(), [Repair::ProseAroundJson]);
        let Extracted::One(_, r) = objects("Result: {a: 'x',} done") else {
            panic!()
        };
        assert_eq!(
            r.kinds(),
            [
                Repair::ProseAroundJson,
                Repair::UnquotedKeys,
                Repair::SingleQuotedStrings,
                Repair::TrailingCommas
            ]
        );
        assert!(matches!(
            objects(r#"Either {"a": 1} or {"a": 2}."#),
            Extracted::Several(2)
        ));
        assert!(matches!(
            objects(r#"{"a": 1}{"a": 2}"#),
            Extracted::Several(2)
        ));
        assert!(matches!(objects("no JSON here"), Extracted::None));
        // A broken outer value is not searched for an inner one.
        assert!(matches!(
            objects(r#"{"a": {"b": 1}, oops}"#),
            Extracted::None
        ));
        // A bracket in prose that is not JSON does not count.
        let Extracted::One(v, _) = objects(r#"See [note] {"a": 1}"#) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
        assert!(matches!(objects(r#"It's {"a": "#), Extracted::None));
    }

    #[test]
    fn numbers_are_repaired_only_when_exact() {
        let fixed = |v: Value, integer: bool| {
            let mut v = v;
            let mut r = Repairs::default();
            fix_number(integer, &mut v, &mut r);
            (v, r.len())
        };
        assert_eq!(fixed("2".into(), true), (2.into(), 1));
        assert_eq!(fixed("3.5".into(), false), (3.5.into(), 1));
        assert_eq!(fixed("2.0".into(), true), (2.into(), 2));
        assert_eq!(fixed(2.0.into(), true), (2.into(), 1));
        for s in [
            "$3.50", "2 pcs", " 2", "0x10", "", "1,000", "NaN", "+1", "01",
        ] {
            assert_eq!(fixed(s.into(), false), (s.into(), 0), "{s:?}");
        }
        assert_eq!(fixed("3.5".into(), true), (3.5.into(), 1), "stays invalid");
        assert_eq!(fixed(2.5.into(), true), (2.5.into(), 0));
        assert_eq!(fixed(1e30.into(), true), (1e30.into(), 0));
    }

    /// A `{"value": …}`-wrapped output whose value has this schema.
    fn wrapped(value_schema: &str) -> &'static OutputSchema {
        let json = format!(
            r#"{{"type":"object","properties":{{"value":{value_schema}}},"required":["value"],"additionalProperties":false}}"#
        );
        Box::leak(Box::new(OutputSchema::new(
            "wrapped",
            Box::leak(json.into_boxed_str()),
            true,
        )))
    }

    /// `{"a": <integer>}`.
    static OBJECT: OutputSchema = OutputSchema::new(
        "object",
        r#"{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#,
        false,
    );

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct A {
        a: i64,
    }

    #[test]
    fn with_repairs_off_a_reply_is_judged_as_it_is() {
        // Not searched for the JSON value inside, nor for how many there
        // are, and no request to drop slips that were not looked for: the
        // reply is not JSON.
        for reply in [
            r#"Here it is: {"a": 1}"#,
            r#"Either {"a": 1} or {"a": 2}."#,
            r#"{"a": 1,}"#,
        ] {
            let message = parse_reply::<A>(reply, &OBJECT, false).unwrap_err();
            let syntax = serde_json::from_str::<Value>(reply).unwrap_err();
            assert_eq!(message, format!("the reply is not valid JSON: {syntax}"));
        }
        let (a, repairs) = parse_reply::<A>(r#"Here it is: {"a": 1}"#, &OBJECT, true).unwrap();
        assert_eq!(
            (a, repairs.kinds()),
            (A { a: 1 }, &[Repair::ProseAroundJson][..])
        );
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_end_a_value_in_prose() {
        for (reply, want, kinds) in [
            (
                r#"Here: {"a": "x } ] y"} done"#,
                serde_json::json!({"a": "x } ] y"}),
                &[][..],
            ),
            (
                "Here: {'a': 'x } ] y'} done",
                serde_json::json!({"a": "x } ] y"}),
                &[Repair::SingleQuotedStrings][..],
            ),
            (
                "Here:\n{\"a\": 1 // the } is not the end\n}\nDone.",
                serde_json::json!({"a": 1}),
                &[Repair::Comments][..],
            ),
            (
                r#"Here: {"a": 1 /* } */} done"#,
                serde_json::json!({"a": 1}),
                &[Repair::Comments][..],
            ),
            // Two comments side by side, the second right before the `}`.
            (
                r#"Here: {"a": 1 /* one *//* two */} done"#,
                serde_json::json!({"a": 1}),
                &[Repair::Comments][..],
            ),
            (
                r#"Here: {"a": """x"""} done"#,
                serde_json::json!({"a": "x"}),
                &[Repair::TripleQuotedStrings][..],
            ),
            (
                r#"Here: {"a": '''x'''} done"#,
                serde_json::json!({"a": "x"}),
                &[Repair::TripleQuotedStrings][..],
            ),
        ] {
            let Extracted::One(v, r) = objects(reply) else {
                panic!("{reply}")
            };
            assert_eq!(v, want, "{reply}");
            assert_eq!(r.kinds()[0], Repair::ProseAroundJson, "{reply}");
            assert_eq!(&r.kinds()[1..], kinds, "{reply}");
        }
    }

    #[test]
    fn a_value_cut_short_is_not_searched_whatever_it_starts_with() {
        // `[` then the start of any JSON value, `{` then a key (quoted or
        // not): a value cut short, so the object inside is not the answer.
        for start in [
            "[1", "[-1", "[true", "[false", "[null", "[\"x\"", "['x'", "[{}", "[[]", "{\"k\":",
            "{key:", "{_key:", "{$key:", "{key2 :",
        ] {
            let reply = format!(r#"Here: {start} {{"a": 1}}"#);
            assert!(matches!(objects(&reply), Extracted::None), "{reply}");
        }
        // Prose: a word that is not followed by `:`, or no word at all.
        for start in ["{key", "{ like", "[see", "{-", "[+"] {
            let reply = format!(r#"Here: {start} {{"a": 1}}"#);
            assert!(matches!(objects(&reply), Extracted::One(..)), "{reply}");
        }
        // A closed fragment that is not JSON is passed over, whatever it
        // holds (a `/` that starts no comment).
        let Extracted::One(v, _) = objects(r#"Dates as {date: YYYY/MM/DD}. Here: {"a": 1}"#) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn prose_with_a_few_unclosed_braces_or_many_brackets_is_searched() {
        // Ten braces that never close, each scanned to the end: more than
        // four times the reply's length, well within the extra MiB.
        let reply = r#"Fill {a {b {c {d {e {f {g {h {i {j in. Here: {"a": 1}"#;
        let Extracted::One(v, _) = objects(reply) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
        // A long answer with a citation in every sentence: each `[n]` is
        // scanned once, a few bytes, however far into the reply it is.
        let mut reply = String::new();
        for n in 1..=400 {
            reply.push_str(&format!(
                "Sentence {n} of a long answer, as a source says [{n}]. "
            ));
        }
        reply.push_str(r#"So: {"a": 1}"#);
        let Extracted::One(v, _) = objects(&reply) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn lists_in_prose_count_only_where_the_root_takes_a_list() {
        let int = wrapped(r#"{"type":"integer"}"#);
        let (n, repairs) =
            parse_reply::<i64>(r#"As note [1] says: {"value": 7}"#, int, true).unwrap();
        assert_eq!((n, repairs.kinds()), (7, &[Repair::ProseAroundJson][..]));
        let list = wrapped(r#"{"type":"array","items":{"type":"integer"}}"#);
        let (v, _) = parse_reply::<Vec<i64>>("The list: [1, 2].", list, true).unwrap();
        assert_eq!(v, [1, 2]);
        let optional =
            wrapped(r#"{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"null"}]}"#);
        let (v, _) = parse_reply::<Option<Vec<i64>>>("The list: [1, 2].", optional, true).unwrap();
        assert_eq!(v, Some(vec![1, 2]));
    }

    #[test]
    fn a_slash_that_starts_no_comment_is_not_skipped() {
        // `1 / 2` is no JSON value: asked again, never read as `1`.
        for reply in [
            r#"{"a": 1 / 2 /* half */}"#,
            r#"Here: {"a": 1 / 2 /* half */}"#,
        ] {
            let message = parse_reply::<A>(reply, &OBJECT, true).unwrap_err();
            assert!(
                message.starts_with("the reply is not valid JSON"),
                "{reply}: {message}"
            );
        }
    }

    #[test]
    fn a_reply_may_start_with_a_number() {
        let int = wrapped(r#"{"type":"integer"}"#);
        let (n, r) = parse_reply::<i64>("7 // seven", int, true).unwrap();
        assert_eq!(
            (n, r.kinds()),
            (7, &[Repair::Comments, Repair::BareValue][..])
        );
        let (n, r) = parse_reply::<i64>("-7.0 /* minus seven */", int, true).unwrap();
        assert_eq!(
            (n, r.kinds()),
            (
                -7,
                &[Repair::Comments, Repair::BareValue, Repair::IntegralFloat][..]
            )
        );
    }

    #[test]
    fn unquoted_keys_may_start_with_an_underscore_or_a_dollar() {
        let (out, repairs) = normalize(r#"{_id: 1, $ref: "x", a_1: 2}"#).unwrap();
        assert_eq!(out, r#"{"_id": 1, "$ref": "x", "a_1": 2}"#);
        assert_eq!(repairs.kinds(), [Repair::UnquotedKeys]);
    }

    #[test]
    fn only_an_object_or_list_is_read_out_of_a_string() {
        // The string "null" for an optional object is not the object's
        // JSON: asked again, never read as `None`.
        let optional = wrapped(
            r#"{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false},{"type":"null"}]}"#,
        );
        assert!(parse_reply::<Option<A>>(r#"{"value": "null"}"#, optional, true).is_err());
        let (v, r) =
            parse_reply::<Option<A>>(r#"{"value": "{\"a\": 1}"}"#, optional, true).unwrap();
        assert_eq!(
            (v, r.kinds()),
            (Some(A { a: 1 }), &[Repair::JsonInString][..])
        );
        let list = wrapped(r#"{"type":"array","items":{"type":"integer"}}"#);
        assert!(parse_reply::<Vec<i64>>(r#"{"value": "7"}"#, list, true).is_err());
    }

    #[test]
    fn comments_between_a_slip_and_what_makes_it_one_are_skipped() {
        // A trailing comma before a comment and the `}`; a key before a
        // comment and its `:`.
        let (out, repairs) = normalize("{\"a\": 1, // the last\n}").unwrap();
        assert_eq!(out, "{\"a\": 1  \n}");
        assert_eq!(repairs.kinds(), [Repair::TrailingCommas, Repair::Comments]);
        let (out, repairs) = normalize("{a /* the key */: [1, /* x */]}").unwrap();
        assert_eq!(out, r#"{"a"  : [1  ]}"#);
        assert_eq!(
            repairs.kinds(),
            [
                Repair::UnquotedKeys,
                Repair::Comments,
                Repair::TrailingCommas
            ]
        );
    }

    /// `type R { n: int, next: Option[R], kids: list[R] }`.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct R {
        n: i64,
        next: Option<Box<R>>,
        kids: Vec<R>,
    }

    static R_SCHEMA: OutputSchema = OutputSchema::new(
        "R",
        r##"{"$ref":"#/$defs/R","$defs":{"R":{"type":"object","properties":{"n":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/R"},{"type":"null"}]},"kids":{"type":"array","items":{"$ref":"#/$defs/R"}}},"required":["n","next","kids"],"additionalProperties":false}}}"##,
        false,
    );

    /// `type S = | Leaf(n: int) | Node(next: S)`, wrapped like every sum type.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(tag = "kind", deny_unknown_fields)]
    enum S {
        Leaf { n: i64 },
        Node { next: Box<S> },
    }

    static S_SCHEMA: OutputSchema = OutputSchema::new(
        "S",
        r##"{"type":"object","properties":{"value":{"$ref":"#/$defs/S"}},"required":["value"],"additionalProperties":false,"$defs":{"S":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Leaf"]},"n":{"type":"integer"}},"required":["kind","n"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Node"]},"next":{"$ref":"#/$defs/S"}},"required":["kind","next"],"additionalProperties":false}]}}}"##,
        true,
    );

    /// `inner` as the `next` of `levels` records (`kids` empty).
    fn nested_r(levels: usize, inner: &str) -> String {
        let mut json = inner.to_owned();
        for _ in 0..levels {
            json = format!(r#"{{"n": 0, "next": {json}, "kids": []}}"#);
        }
        json
    }

    #[test]
    fn repairs_reach_down_to_max_depth_and_no_deeper() {
        // Each step down — into a field, a list's item, an `Option`'s value
        // or a sum type's case — is one level; the value at level
        // `MAX_DEPTH` is still repaired, anything below it is not (the
        // reply is asked again).
        let leaf = r#"{"n": "1", "next": null, "kids": []}"#;
        let as_string = serde_json::to_string(r#"{"n": 1, "next": null, "kids": []}"#).unwrap();
        let kid = format!(r#"{{"n": 0, "next": null, "kids": [{leaf}]}}"#);
        for (what, reply, level) in [
            // A record `next` records down is at level 2 × next; its `n`
            // one more.
            ("n", nested_r(63, leaf), 2 * 63 + 1),
            ("n", nested_r(64, leaf), 2 * 64 + 1),
            ("record in a string", nested_r(64, &as_string), 2 * 64),
            ("record in a string", nested_r(65, &as_string), 2 * 65),
            // A kid: its record's `kids` field, the item, its `n`.
            ("kid's n", nested_r(62, &kid), 2 * 62 + 3),
            ("kid's n", nested_r(63, &kid), 2 * 63 + 3),
        ] {
            let result = parse_reply::<R>(&reply, &R_SCHEMA, true);
            assert_eq!(
                result.is_ok(),
                level <= MAX_DEPTH,
                "{what} at level {level}: {:?}",
                result.err()
            );
        }
        for (cases, level) in [(62, 2 * 62 + 3), (63, 2 * 63 + 3)] {
            // The wrapper, `value`, then per `Node` the case and its `next`.
            let mut json = r#"{"kind": "Leaf", "n": "1"}"#.to_owned();
            for _ in 0..cases {
                json = format!(r#"{{"kind": "Node", "next": {json}}}"#);
            }
            let result = parse_reply::<S>(&format!(r#"{{"value": {json}}}"#), &S_SCHEMA, true);
            assert_eq!(
                result.is_ok(),
                level <= MAX_DEPTH,
                "n at level {level}: {:?}",
                result.err()
            );
        }
    }

    #[test]
    fn a_bare_case_name_may_hold_spaces_but_not_line_breaks() {
        let status = wrapped(r#"{"type":"string","enum":["Open","In progress"]}"#);
        let (v, r) = parse_reply::<String>("in progress.", status, true).unwrap();
        assert_eq!(
            (v.as_str(), r.kinds()),
            ("In progress", &[Repair::EnumName, Repair::BareValue][..])
        );
        assert!(parse_reply::<String>("in\nprogress", status, true).is_err());
    }
}

#[cfg(test)]
mod switch_tests {
    use crate::Config;

    #[test]
    fn vox_llm_repair_is_on_or_off() {
        let with = |value: &'static str| {
            Config::from_lookup(&move |name| (name == "VOX_LLM_REPAIR").then(|| value.to_owned()))
        };
        assert!(with("").unwrap().repair(), "on by default");
        assert!(with("on").unwrap().repair());
        assert!(!with(" off ").unwrap().repair());
        let err = with("no").unwrap_err().to_string();
        assert!(
            err.contains("VOX_LLM_REPAIR must be `on` or `off`"),
            "{err}"
        );
        let builder = Config::builder(crate::Provider::Fixture);
        assert!(!builder.repair(false).build().unwrap().repair());
    }
}
