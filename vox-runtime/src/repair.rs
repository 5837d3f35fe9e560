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
//!    sent as a JSON-encoded string where that object or list is wanted.
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
            f.write_str(r.name())?;
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
        Ok(value) => Ok((value, Repairs::default())),
        Err(typed_error) => recover(content, output, repair, typed_error),
    }
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
    let (value, mut repairs) = match serde_json::from_str::<Value>(json) {
        Ok(value) => (value, Repairs::default()),
        Err(syntax) if repair => match extract(json) {
            Extracted::One(value, repairs) => (value, repairs),
            Extracted::Several(n) => {
                return Err(format!(
                    "the reply holds {n} separate JSON values; answer with exactly one JSON value \
                     and nothing around it"
                ))
            }
            Extracted::None => return Err(format!("the reply is not valid JSON: {syntax}")),
        },
        Err(syntax) => return Err(format!("the reply is not valid JSON: {syntax}")),
    };
    let doc = Doc::of(schema);
    let checked = correction::check(schema, &value);
    if repair {
        let mut fixed = value;
        fix_value(doc, schema, &mut fixed, &mut repairs, 0);
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
/// repaired, else the only `{…}`/`[…]` in the prose that parses.
fn extract(text: &str) -> Extracted {
    if let Some((value, repairs)) = parse_tolerant(text) {
        return Extracted::One(value, repairs);
    }
    let mut found: Vec<(Value, Repairs)> = Vec::new();
    let mut count = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' && bytes[i] != b'[' {
            i += 1;
            continue;
        }
        let Some(end) = balanced_end(text, i) else {
            // Unterminated: nothing after this point is a whole value.
            break;
        };
        let candidate = &text[i..end];
        let parsed = serde_json::from_str::<Value>(candidate)
            .ok()
            .map(|v| (v, Repairs::default()))
            .or_else(|| parse_tolerant(candidate));
        if let Some(one) = parsed {
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
            q @ (b'"' | b'\'') => i = string_end(bytes, i, q)?,
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
                if bytes.get(next) == Some(&b':') {
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                    repairs.add(Repair::UnquotedKeys);
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
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = doc.resolve(schema);
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        return fix_any_of(doc, branches, value, repairs, depth);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some(ty @ ("integer" | "number")) => fix_number(ty == "integer", value, repairs),
        Some("object") => {
            decode_string(value, Value::is_object, repairs);
            if let (Some(props), Value::Object(fields)) =
                (schema.get("properties").and_then(Value::as_object), value)
            {
                for (name, field) in fields.iter_mut() {
                    if let Some(field_schema) = props.get(name) {
                        fix_value(doc, field_schema, field, repairs, depth + 1);
                    }
                }
            }
        }
        Some("array") => {
            decode_string(value, Value::is_array, repairs);
            if let (Some(items), Value::Array(list)) = (schema.get("items"), value) {
                for item in list {
                    fix_value(doc, items, item, repairs, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn fix_any_of<'s>(
    doc: Doc<'s>,
    branches: &'s [Value],
    value: &mut Value,
    repairs: &mut Repairs,
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
        return fix_value(doc, only, value, repairs, depth + 1);
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
    let exact: Vec<&'s Value> = non_null
        .iter()
        .copied()
        .filter(|b| kind_of(b) == Some(kind.as_str()))
        .collect();
    let branch = match exact.as_slice() {
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
    fix_value(doc, branch, value, repairs, depth + 1);
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

    #[test]
    fn one_value_in_prose_is_taken_several_are_not() {
        let one = extract("Sure! Here it is:\n```json\n{\"a\": [1]}\n```\nAnything else?");
        let Extracted::One(v, r) = one else { panic!() };
        assert_eq!(v, serde_json::json!({"a": [1]}));
        assert_eq!(r.kinds(), [Repair::ProseAroundJson]);
        let Extracted::One(_, r) = extract("Result: {a: 'x',} done") else {
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
            extract(r#"Either {"a": 1} or {"a": 2}."#),
            Extracted::Several(2)
        ));
        assert!(matches!(
            extract(r#"{"a": 1}{"a": 2}"#),
            Extracted::Several(2)
        ));
        assert!(matches!(extract("no JSON here"), Extracted::None));
        // A broken outer value is not searched for an inner one.
        assert!(matches!(
            extract(r#"{"a": {"b": 1}, oops}"#),
            Extracted::None
        ));
        // A bracket in prose that is not JSON does not count.
        let Extracted::One(v, _) = extract(r#"See [note] {"a": 1}"#) else {
            panic!()
        };
        assert_eq!(v["a"], 1);
        assert!(matches!(extract(r#"It's {"a": "#), Extracted::None));
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
