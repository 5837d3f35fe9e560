//! A tiny ordered JSON value, writer and reader, without dependencies.
//!
//! vox-codegen runs inside every user's build script, so it carries no
//! heavy dependencies; this is all the JSON it needs to *write*
//! (diagnostic payloads, schemas). vox-runtime *reads* the schemas
//! vox-codegen wrote with [`Json::parse`] where it must transform them the
//! same way the compiler does ([`crate::providers::gemini_schema`]), so both
//! produce the same bytes. Keys keep insertion order, which keeps output
//! deterministic and schemas in declaration order.

use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// Looks up a key of an object (first match).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Compact, single-line rendering.
    pub fn to_compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// Two-space indented rendering.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, depth: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Json::Num(x) => write_number(out, *x),
            Json::Str(s) => write_string(out, s),
            Json::Arr(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, depth + 1);
                    item.write(out, indent, depth + 1);
                }
                newline(out, indent, depth);
                out.push(']');
            }
            Json::Obj(pairs) => {
                if pairs.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, depth + 1);
                    write_string(out, k);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    v.write(out, indent, depth + 1);
                }
                newline(out, indent, depth);
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, depth: usize) {
    if let Some(width) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', width * depth));
    }
}

fn write_number(out: &mut String, x: f64) {
    if !x.is_finite() {
        // JSON has no NaN/inf; null is the conventional stand-in.
        out.push_str("null");
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        let _ = write!(out, "{x:.1}");
    } else {
        let _ = write!(out, "{x}");
    }
}

/// Writes `s` as a JSON string literal.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JSON text [`Json::parse`] could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong there.
    pub message: &'static str,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for JsonError {}

/// Deepest nesting [`Json::parse`] reads (arrays and objects); deeper text
/// is an error, not a stack overflow.
pub const MAX_PARSE_DEPTH: usize = 256;

impl Json {
    /// Reads one JSON value (RFC 8259) from `text`, keeping the order of
    /// object keys. Integers that fit an `i64` are [`Json::Int`], other
    /// numbers [`Json::Num`]. Never panics; nesting deeper than
    /// [`MAX_PARSE_DEPTH`] is an error.
    pub fn parse(text: &str) -> Result<Json, JsonError> {
        let mut p = Parser {
            bytes: text.as_bytes(),
            text,
            at: 0,
        };
        p.skip_space();
        let value = p.value(0)?;
        p.skip_space();
        if p.at != p.bytes.len() {
            return Err(p.error("trailing characters after the value"));
        }
        Ok(value)
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> JsonError {
        JsonError {
            offset: self.at,
            message,
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, literal: &str, value: Json) -> Result<Json, JsonError> {
        if self.bytes[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            Ok(value)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        match self.bytes.get(self.at) {
            None => Err(self.error("unexpected end of input")),
            Some(b'n') => self.eat("null", Json::Null),
            Some(b't') => self.eat("true", Json::Bool(true)),
            Some(b'f') => self.eat("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                if depth >= MAX_PARSE_DEPTH {
                    return Err(self.error("nested too deeply"));
                }
                self.at += 1;
                let mut items = Vec::new();
                self.skip_space();
                if self.bytes.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Ok(Json::Arr(items));
                }
                loop {
                    self.skip_space();
                    items.push(self.value(depth + 1)?);
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Arr(items));
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'{') => {
                if depth >= MAX_PARSE_DEPTH {
                    return Err(self.error("nested too deeply"));
                }
                self.at += 1;
                let mut pairs = Vec::new();
                self.skip_space();
                if self.bytes.get(self.at) == Some(&b'}') {
                    self.at += 1;
                    return Ok(Json::Obj(pairs));
                }
                loop {
                    self.skip_space();
                    if self.bytes.get(self.at) != Some(&b'"') {
                        return Err(self.error("expected a key"));
                    }
                    let key = self.string()?;
                    self.skip_space();
                    if self.bytes.get(self.at) != Some(&b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.at += 1;
                    self.skip_space();
                    let value = self.value(depth + 1)?;
                    pairs.push((key, value));
                    self.skip_space();
                    match self.bytes.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Obj(pairs));
                        }
                        _ => return Err(self.error("expected `,` or `}`")),
                    }
                }
            }
            Some(_) => Err(self.error("expected a JSON value")),
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.bytes.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at > from
        };
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let int_start = self.at;
        if !digits(self) {
            return Err(self.error("expected digits"));
        }
        if self.bytes[int_start] == b'0' && self.at - int_start > 1 {
            return Err(self.error("leading zero in a number"));
        }
        let mut integer = true;
        if self.bytes.get(self.at) == Some(&b'.') {
            integer = false;
            self.at += 1;
            if !digits(self) {
                return Err(self.error("expected digits after `.`"));
            }
        }
        if matches!(self.bytes.get(self.at), Some(b'e' | b'E')) {
            integer = false;
            self.at += 1;
            if matches!(self.bytes.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("expected digits in the exponent"));
            }
        }
        let text = &self.text[start..self.at];
        if integer {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Json::Int(n));
            }
        }
        text.parse::<f64>().map(Json::Num).map_err(|_| JsonError {
            offset: start,
            message: "invalid number",
        })
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run = self.at;
            while self
                .bytes
                .get(self.at)
                .is_some_and(|b| *b != b'"' && *b != b'\\' && *b >= 0x20)
            {
                self.at += 1;
            }
            // `text` is a `str` and the run stops only at ASCII bytes, so
            // both ends are character boundaries.
            out.push_str(&self.text[run..self.at]);
            match self.bytes.get(self.at) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = match self.bytes.get(self.at) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 1;
                            let unit = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&unit) {
                                if !self.bytes[self.at..].starts_with(b"\\u") {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                self.at += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return Err(self.error("unpaired surrogate"));
                                }
                                char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                            } else {
                                char::from_u32(unit)
                            };
                            out.push(c.ok_or_else(|| self.error("unpaired surrogate"))?);
                            continue;
                        }
                        _ => return Err(self.error("invalid escape")),
                    };
                    out.push(escaped);
                    self.at += 1;
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("expected four hex digits"))?;
        let mut unit = 0;
        for d in digits {
            let v = char::from(*d)
                .to_digit(16)
                .ok_or_else(|| self.error("expected four hex digits"))?;
            unit = unit * 16 + v;
        }
        self.at += 4;
        Ok(unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_compact_and_pretty() {
        let v = Json::obj([
            ("a", Json::Int(1)),
            ("b", Json::Arr(vec![Json::str("x\"\n\u{1}"), Json::Null])),
            ("c", Json::Num(0.5)),
            ("d", Json::Obj(vec![])),
        ]);
        assert_eq!(
            v.to_compact(),
            r#"{"a":1,"b":["x\"\n\u0001",null],"c":0.5,"d":{}}"#
        );
        assert_eq!(
            v.to_pretty(),
            "{\n  \"a\": 1,\n  \"b\": [\n    \"x\\\"\\n\\u0001\",\n    null\n  ],\n  \"c\": 0.5,\n  \"d\": {}\n}"
        );
        assert_eq!(Json::Num(2.0).to_compact(), "2.0");
        assert_eq!(Json::Num(f64::NAN).to_compact(), "null");
    }
    #[test]
    fn parses_what_it_writes_and_keeps_key_order() {
        let v = Json::obj([
            ("z", Json::Int(-3)),
            (
                "a",
                Json::Arr(vec![Json::str("q\"\\\n\u{1}é😀/"), Json::Null]),
            ),
            ("m", Json::Num(0.5)),
            ("e", Json::Obj(vec![])),
            ("t", Json::Bool(true)),
            ("f", Json::Bool(false)),
        ]);
        assert_eq!(Json::parse(&v.to_compact()), Ok(v.clone()));
        assert_eq!(Json::parse(&v.to_pretty()), Ok(v));
        assert_eq!(
            Json::parse(r#" {"s":"\u00e9\ud83d\ude00\/\b\f","n":1e2,"big":99999999999999999999} "#),
            Ok(Json::obj([
                ("s", Json::str("é😀/\u{8}\u{c}")),
                ("n", Json::Num(100.0)),
                ("big", Json::Num(1e20)),
            ]))
        );
    }

    #[test]
    fn refuses_malformed_text_without_panicking() {
        for bad in [
            "",
            "{",
            "[1,",
            "{\"a\"}",
            "{\"a\":1,}",
            "[1 2]",
            "01",
            "-",
            "1.",
            "1e",
            "\"abc",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud800\"",
            "\"\\ud800\\u0041\"",
            "\"\u{1}\"",
            "nul",
            "tru",
            "{1:2}",
            "1 2",
            "\"\\",
            "[\"\\u",
        ] {
            assert!(Json::parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_PARSE_DEPTH + 1) + &"]".repeat(MAX_PARSE_DEPTH + 1);
        assert!(Json::parse(&deep).is_err());
        let ok = "[".repeat(MAX_PARSE_DEPTH) + &"]".repeat(MAX_PARSE_DEPTH);
        assert!(Json::parse(&ok).is_ok());
        // Every prefix of a valid document is handled without a panic.
        let doc = r#"{"a":[1,-2.5e3,"\u00e9\ud83d\ude00",true,null,{"b":"x"}]}"#;
        for end in 0..doc.len() {
            if doc.is_char_boundary(end) {
                let _ = Json::parse(&doc[..end]);
            }
        }
    }
}
