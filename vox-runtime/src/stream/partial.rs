//! Partial values of a reply that is still arriving.
//!
//! A [`PartialParser`] reads the text of one model reply, piece by piece as
//! it streams in, against the strict JSON Schema of the function's output,
//! and shows at every moment the *partial value* of the text received so
//! far. The rules of a partial value (the contract streaming callers rely
//! on):
//!
//! - A `str` grows: an unfinished string shows its prefix so far, decoded
//!   (escapes such as `\n`, `\"` and `\uXXXX`, surrogate pairs included, are
//!   applied). An unfinished escape, or the first half of a surrogate pair, is
//!   not shown until it is complete.
//! - `int`, `float`, `Decimal`, `bool`, `null` and plain enum values appear
//!   only when complete: a string with a `pattern` or an `enum` at its closing
//!   quote, a literal at its last letter, a number only when a delimiter
//!   follows it (`1` may still become `12`).
//! - A record appears with its first key, once that key is complete (as
//!   `{}` plus whatever of its fields are shown), or when it closes; a field
//!   appears when its value has started showing by these rules.
//! - A tagged case (an `anyOf` of records told apart by a `"kind"` enum)
//!   appears only once its `kind` is complete and names a case; its fields
//!   then follow that case's schema. Fields that came before the `kind` are
//!   read untyped, checked against the case when the `kind` arrives, and shown
//!   from then on.
//! - A list appears as `[]` at its opening bracket and grows: an element
//!   appears when it has something to show, and every element but the last is
//!   finished and never changes afterwards.
//! - A map (`additionalProperties: T`) is shown like a record: entries appear
//!   once their key is complete and their value has started showing.
//! - `Option[T]`: not seen yet is an absent key; `null` is shown only when the
//!   literal is complete.
//! - A partial depends only on the text received so far, never on how it was
//!   chunked, and never holds a value the final type would reject: atomic
//!   values are exactly as in the final value, strings are prefixes of the
//!   final ones, and each partial is a state of the next one.
//! - Before the root value, whitespace and an opening Markdown code fence
//!   (```` ```json ```` or ```` ``` ````, then a newline) are skipped; after
//!   it, whitespace and a closing ```` ``` ```` are fine, anything else breaks
//!   the reply.
//!
//! The parser is *broken* ([`PartialParser::broken`]) as soon as the text can
//! no longer become a value of the schema: invalid JSON, a value of the wrong
//! type, an enum value or `kind` no allowed value begins with (detected at the
//! first character that leaves every allowed value, not only at the closing
//! quote), a key not in the record (likewise detected at its first wrong
//! character), a duplicate key, a record closed without a required key, an
//! integer that is not an `i64`, a number serde_json cannot hold, a lone
//! surrogate escape, nesting deeper than [`MAX_DEPTH`], or trailing text.
//! Once broken it stays broken, reads nothing more, and [`PartialParser::value`]
//! keeps returning the partial of the text before the offending character.
//!
//! Patterns other than the `Decimal` one are not checked (the crate has no
//! regular expressions); such strings are still shown only when complete.
//!
//! Cost: [`PartialParser::push`] is a state machine over characters with an
//! explicit stack of open containers; each character is looked at once, in
//! constant time apart from schema-bounded work (key and enum prefix checks,
//! union dispatch) and the one-time check of fields read before a `kind`, so
//! the work over a whole reply is linear in its length, however it is
//! chunked. Inside a string, a run of characters up to the next quote,
//! backslash or control character is taken at once (a key or enum prefix
//! checked once at its end). Earlier text is never re-read, and no value
//! is built while reading: the parser keeps the text it was given and, for
//! each open container, where its last complete element ends.
//! [`PartialParser::partial_text`] gives the partial value as JSON text —
//! a prefix of the reply cut after what shows, plus the closing quote and
//! brackets it needs — in time linear in what is shown (a copy), for
//! serde to read the partial type from; [`PartialParser::version`] tells,
//! without building anything, whether it changed.

use std::collections::HashSet;

use serde_json::{Map, Number, Value};

/// Deepest nesting of arrays and objects accepted; deeper text is broken
/// (serde_json, which reads the partials and the final reply, reads no
/// deeper).
pub(crate) const MAX_DEPTH: usize = 127;

/// The pattern the code generator gives `Decimal` strings.
const DECIMAL_PATTERN: &str = r"^-?[0-9]+(\.[0-9]+)?$";

/// Deepest nesting of a schema that is compiled; deeper parts accept anything.
const MAX_SCHEMA_DEPTH: usize = 64;

type TyId = usize;

// Value classes, by the first character of a value.
const NULL: usize = 0;
const STRING: usize = 1;
const NUMBER: usize = 2;
const BOOL: usize = 3;
const ARRAY: usize = 4;
const OBJECT: usize = 5;

/// A compiled schema node.
#[derive(Debug)]
enum Ty {
    /// No constraint (an unknown schema form): any JSON, shown when complete.
    Any,
    /// A string that grows.
    Str,
    /// A `Decimal`: a string with the decimal pattern, atomic.
    Decimal,
    /// A string with another pattern or format: atomic, not checked.
    AtomStr,
    /// A plain enum: atomic.
    Enum(Vec<String>),
    Int,
    Num,
    Bool,
    Null,
    Record(Record),
    /// An object with only `additionalProperties: T`.
    Map(TyId),
    List(TyId),
    /// Records told apart by their `kind` (built from an `anyOf`).
    Tagged {
        cases: Vec<(String, TyId)>,
        /// An `Enum` of the case names: the type of the `kind` value.
        kind_ty: TyId,
    },
    /// `anyOf`/`oneOf`, an alias (`$ref`) or a `type` array: `table` is the
    /// concrete alternative for each value class, filled by `finalize`.
    AnyOf {
        alts: Vec<TyId>,
        table: [Option<TyId>; 6],
    },
    /// A `$defs` entry being compiled.
    Placeholder,
}

#[derive(Debug)]
struct Record {
    fields: Vec<(String, TyId)>,
    required: Vec<String>,
    /// The single `kind` value of a case of a sum type.
    tag: Option<String>,
    /// `additionalProperties: false`.
    closed: bool,
}

impl Record {
    fn field(&self, key: &str) -> Option<TyId> {
        self.index(key).map(|i| self.fields[i].1)
    }

    fn index(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|(k, _)| k == key)
    }
}

struct Compiler<'a> {
    root: &'a Value,
    tys: Vec<Ty>,
    defs: Vec<(String, TyId)>,
    any: TyId,
}

impl Compiler<'_> {
    fn add(&mut self, ty: Ty) -> TyId {
        self.tys.push(ty);
        self.tys.len() - 1
    }

    fn compile(&mut self, s: &Value, depth: usize) -> TyId {
        let Some(obj) = s.as_object() else {
            return self.any;
        };
        if depth > MAX_SCHEMA_DEPTH {
            return self.any;
        }
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return self.reference(r, depth);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = obj.get(key).and_then(Value::as_array) {
                let alts = alts.iter().map(|a| self.compile(a, depth + 1)).collect();
                return self.add(Ty::AnyOf {
                    alts,
                    table: [None; 6],
                });
            }
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            if values.iter().all(Value::is_string) {
                let names = values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect();
                return self.add(Ty::Enum(names));
            }
            return self.any;
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.typed(t, obj, depth),
            Some(Value::Array(types)) => {
                let alts = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, obj, depth))
                    .collect();
                self.add(Ty::AnyOf {
                    alts,
                    table: [None; 6],
                })
            }
            _ => self.any,
        }
    }

    fn typed(&mut self, t: &str, obj: &Map<String, Value>, depth: usize) -> TyId {
        match t {
            "string" => match obj.get("pattern").and_then(Value::as_str) {
                Some(DECIMAL_PATTERN) => self.add(Ty::Decimal),
                Some(_) => self.add(Ty::AtomStr),
                None if obj.contains_key("format") => self.add(Ty::AtomStr),
                None => self.add(Ty::Str),
            },
            "integer" => self.add(Ty::Int),
            "number" => self.add(Ty::Num),
            "boolean" => self.add(Ty::Bool),
            "null" => self.add(Ty::Null),
            "array" => {
                let items = match obj.get("items") {
                    Some(items) => self.compile(items, depth + 1),
                    None => self.any,
                };
                self.add(Ty::List(items))
            }
            "object" => match obj.get("properties").and_then(Value::as_object) {
                Some(props) => {
                    let tag = props
                        .get("kind")
                        .and_then(|k| k.get("enum"))
                        .and_then(Value::as_array)
                        .filter(|e| e.len() == 1)
                        .and_then(|e| e[0].as_str())
                        .map(str::to_owned);
                    let fields = props
                        .iter()
                        .map(|(k, v)| (k.clone(), self.compile(v, depth + 1)))
                        .collect();
                    let required = obj
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| {
                            r.iter()
                                .filter_map(|k| k.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                    let closed = obj.get("additionalProperties") == Some(&Value::Bool(false));
                    self.add(Ty::Record(Record {
                        fields,
                        required,
                        tag,
                        closed,
                    }))
                }
                None => match obj.get("additionalProperties") {
                    Some(v @ Value::Object(_)) => {
                        let t = self.compile(v, depth + 1);
                        self.add(Ty::Map(t))
                    }
                    _ => {
                        let any = self.any;
                        self.add(Ty::Map(any))
                    }
                },
            },
            _ => self.any,
        }
    }

    fn reference(&mut self, r: &str, depth: usize) -> TyId {
        let name = if r == "#" {
            Some("#")
        } else {
            r.strip_prefix("#/$defs/")
                .or_else(|| r.strip_prefix("#/definitions/"))
        };
        let Some(name) = name else {
            return self.any;
        };
        if let Some((_, id)) = self.defs.iter().find(|(n, _)| n == name) {
            return *id;
        }
        let id = self.add(Ty::Placeholder);
        self.defs.push((name.to_owned(), id));
        let root = self.root;
        let body = if name == "#" {
            Some(root)
        } else {
            root.get("$defs")
                .or_else(|| root.get("definitions"))
                .and_then(|d| d.get(name))
        };
        let body = match body {
            Some(body) => self.compile(body, depth + 1),
            None => self.any,
        };
        // The reference is an alias of its body, dispatched like a union of one.
        self.tys[id] = Ty::AnyOf {
            alts: vec![body],
            table: [None; 6],
        };
        id
    }

    /// Fills the dispatch table of every union.
    fn finalize(&mut self) {
        let n = self.tys.len();
        for i in 0..n {
            let Ty::AnyOf { alts, .. } = &self.tys[i] else {
                continue;
            };
            let mut flat = Vec::new();
            let mut visited = vec![false; n];
            visited[i] = true;
            flatten(&self.tys, alts, &mut flat, &mut visited);
            let mut table: [Option<TyId>; 6] = [None; 6];
            let mut objects = Vec::new();
            for &t in &flat {
                let class = match &self.tys[t] {
                    Ty::Any => {
                        for slot in table.iter_mut().take(OBJECT) {
                            slot.get_or_insert(t);
                        }
                        objects.push(t);
                        continue;
                    }
                    Ty::Null => NULL,
                    Ty::Str | Ty::Decimal | Ty::AtomStr | Ty::Enum(_) => STRING,
                    Ty::Int => NUMBER,
                    Ty::Num => {
                        // A float alternative takes any number, an integer one not.
                        if !matches!(table[NUMBER].map(|t| &self.tys[t]), Some(Ty::Num)) {
                            table[NUMBER] = Some(t);
                        }
                        continue;
                    }
                    Ty::Bool => BOOL,
                    Ty::List(_) => ARRAY,
                    Ty::Record(_) | Ty::Map(_) | Ty::Tagged { .. } => {
                        objects.push(t);
                        continue;
                    }
                    Ty::AnyOf { .. } | Ty::Placeholder => continue,
                };
                table[class].get_or_insert(t);
            }
            let tagged: Option<Vec<(String, TyId)>> = objects
                .iter()
                .map(|&t| match &self.tys[t] {
                    Ty::Record(Record { tag: Some(tag), .. }) => Some((tag.clone(), t)),
                    _ => None,
                })
                .collect();
            table[OBJECT] = match tagged {
                Some(cases) if !cases.is_empty() => {
                    let kind_ty = self.add(Ty::Enum(cases.iter().map(|c| c.0.clone()).collect()));
                    Some(self.add(Ty::Tagged { cases, kind_ty }))
                }
                _ => objects.first().copied(),
            };
            if let Ty::AnyOf { table: t, .. } = &mut self.tys[i] {
                *t = table;
            }
        }
    }
}

/// The concrete alternatives of a union, nested unions and aliases opened.
fn flatten(tys: &[Ty], alts: &[TyId], flat: &mut Vec<TyId>, visited: &mut [bool]) {
    for &a in alts {
        match &tys[a] {
            Ty::AnyOf { alts: inner, .. } => {
                if let Some(v) = visited.get_mut(a) {
                    if !*v {
                        *v = true;
                        flatten(tys, inner, flat, visited);
                    }
                }
            }
            Ty::Placeholder => {}
            _ => flat.push(a),
        }
    }
}

fn describe(tys: &[Ty], ty: TyId) -> String {
    match &tys[ty] {
        Ty::Any | Ty::Placeholder => "a value".into(),
        Ty::Str | Ty::AtomStr => "a string".into(),
        Ty::Decimal => "a decimal number in a string".into(),
        Ty::Enum(names) => format!("one of the strings {}", quoted_list(names)),
        Ty::Int => "an integer".into(),
        Ty::Num => "a number".into(),
        Ty::Bool => "true or false".into(),
        Ty::Null => "null".into(),
        Ty::Record(_) | Ty::Map(_) | Ty::Tagged { .. } => "an object".into(),
        Ty::List(_) => "a list".into(),
        Ty::AnyOf { table, .. } => {
            let names: Vec<String> = table.iter().flatten().map(|&t| describe(tys, t)).collect();
            if names.is_empty() {
                "nothing".into()
            } else {
                names.join(" or ")
            }
        }
    }
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn class_name(class: usize) -> &'static str {
    match class {
        NULL => "null",
        STRING => "a string",
        NUMBER => "a number",
        BOOL => "a boolean",
        ARRAY => "a list",
        _ => "an object",
    }
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn is_decimal(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && frac.is_none_or(digits)
}

/// Whether `value`, complete, is a value of `ty`.
fn check_value(tys: &[Ty], ty: TyId, value: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("nesting deeper than {MAX_DEPTH}"));
    }
    let class = match value {
        Value::Null => NULL,
        Value::String(_) => STRING,
        Value::Number(_) => NUMBER,
        Value::Bool(_) => BOOL,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    };
    let wrong = || {
        format!(
            "expected {}, found {}",
            describe(tys, ty),
            class_name(class)
        )
    };
    let ty = match &tys[ty] {
        Ty::AnyOf { table, .. } => table[class].ok_or_else(wrong)?,
        _ => ty,
    };
    match (&tys[ty], value) {
        (Ty::Any, _)
        | (Ty::Null, Value::Null)
        | (Ty::Str | Ty::AtomStr, Value::String(_))
        | (Ty::Num, Value::Number(_))
        | (Ty::Bool, Value::Bool(_)) => Ok(()),
        (Ty::Decimal, Value::String(s)) => check_decimal(s),
        (Ty::Enum(names), Value::String(s)) => check_enum(names, s),
        (Ty::Int, Value::Number(n)) => check_int(n, &n.to_string()),
        (Ty::List(item), Value::Array(items)) => items
            .iter()
            .try_for_each(|v| check_value(tys, *item, v, depth + 1)),
        (Ty::Map(t), Value::Object(m)) => m
            .values()
            .try_for_each(|v| check_value(tys, *t, v, depth + 1)),
        (Ty::Record(r), Value::Object(m)) => check_record(tys, r, m, depth),
        (Ty::Tagged { cases, .. }, Value::Object(m)) => {
            let kind = m
                .get("kind")
                .ok_or_else(|| "an object of a sum type without its \"kind\"".to_owned())?;
            let kind = kind.as_str().unwrap_or_default();
            let case = cases
                .iter()
                .find(|(name, _)| name == kind)
                .ok_or_else(|| format!("\"kind\" {kind:?} names no case"))?;
            match &tys[case.1] {
                Ty::Record(r) => check_record(tys, r, m, depth),
                _ => Ok(()),
            }
        }
        _ => Err(format!(
            "expected {}, found {}",
            describe(tys, ty),
            class_name(class)
        )),
    }
}

fn check_record(
    tys: &[Ty],
    r: &Record,
    m: &Map<String, Value>,
    depth: usize,
) -> Result<(), String> {
    for (k, v) in m {
        match r.field(k) {
            Some(t) => check_value(tys, t, v, depth + 1)?,
            None if r.closed => return Err(format!("the key {k:?} is not in the record")),
            None => {}
        }
    }
    missing_key(r, |k| m.contains_key(k))
}

fn missing_key(r: &Record, has: impl Fn(&str) -> bool) -> Result<(), String> {
    match r.required.iter().find(|k| !has(k)) {
        Some(k) => Err(format!("the object closed without its key {k:?}")),
        None => Ok(()),
    }
}

fn check_decimal(s: &str) -> Result<(), String> {
    if is_decimal(s) {
        Ok(())
    } else {
        Err(format!("{s:?} is not a decimal number"))
    }
}

fn check_enum(names: &[String], s: &str) -> Result<(), String> {
    if names.iter().any(|n| n == s) {
        Ok(())
    } else {
        Err(format!("{s:?} is not one of {}", quoted_list(names)))
    }
}

fn check_int(n: &Number, text: &str) -> Result<(), String> {
    if n.is_i64() {
        Ok(())
    } else {
        Err(format!("expected an integer, found {text}"))
    }
}

/// Where the parser is, outside the root value's containers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Before the root value: whitespace or an opening fence.
    Pre,
    /// Inside the backticks of an opening fence (how many seen).
    Fence(u8),
    /// The language tag of an opening fence.
    Tag,
    /// After the opening fence: whitespace, then the root value.
    PreValue,
    /// Inside the root value.
    Body,
    /// After the root value: whitespace or a closing fence.
    Post,
    PostFence(u8),
    /// After the closing fence: whitespace only.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ObjSt {
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,`: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: the value (in progress once started).
    Value,
    /// After a value: `,` or `}`.
    CommaOrClose,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ArrSt {
    ValueOrClose,
    Value,
    CommaOrClose,
}

/// The keys an object has had: duplicates break the reply, and a record
/// closes only with its required keys.
#[derive(Debug, Default)]
struct Seen {
    /// Fields of the object's record, by their index (the first 64).
    bits: u64,
    /// Every other key: a map's, an open record's extra ones, a record's
    /// past its 64th field, and those of a sum-type object read before its
    /// `kind` (when its record is not known yet).
    names: HashSet<String>,
}

impl Seen {
    fn has(&self, index: Option<usize>, key: &str) -> bool {
        matches!(index, Some(i) if i < 64 && self.bits & (1 << i) != 0)
            || (!self.names.is_empty() && self.names.contains(key))
    }

    fn add(&mut self, index: Option<usize>, key: &str) {
        match index {
            Some(i) if i < 64 => self.bits |= 1 << i,
            _ => {
                self.names.insert(key.to_owned());
            }
        }
    }
}

#[derive(Debug)]
struct ObjFrame {
    /// A concrete `Record`, `Map`, `Tagged` or `Any`.
    ty: TyId,
    /// The chosen case (a `Record`) of a `Tagged` object.
    case: Option<TyId>,
    seen: Seen,
    /// Fields of a `Tagged` object read before its `kind`: their keys and
    /// where their values' text is, checked once the `kind` is known.
    pending: Vec<(String, usize, usize)>,
    /// The key whose value is expected or in progress.
    key: String,
    key_ty: TyId,
    st: ObjSt,
    shown: bool,
    /// Where the text of the value in progress begins.
    value_start: usize,
    /// Where the text of the last complete field ends (just after the
    /// `{` while there is none).
    last_end: usize,
}

#[derive(Debug)]
struct ArrFrame {
    item: TyId,
    st: ArrSt,
    shown: bool,
    /// Where the text of the last complete element ends (just after the
    /// `[` while there is none).
    last_end: usize,
}

#[derive(Debug)]
enum Frame {
    Obj(ObjFrame),
    Arr(ArrFrame),
}

impl Frame {
    fn shown(&self) -> bool {
        match self {
            Frame::Obj(f) => f.shown,
            Frame::Arr(a) => a.shown,
        }
    }

    fn last_end(&self) -> usize {
        match self {
            Frame::Obj(f) => f.last_end,
            Frame::Arr(a) => a.last_end,
        }
    }

    fn closer(&self) -> char {
        match self {
            Frame::Obj(_) => '}',
            Frame::Arr(_) => ']',
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Esc {
    None,
    /// After `\`.
    Backslash,
    /// In `\uXXXX`: the high surrogate before it, digits read, code so far.
    Hex {
        high: Option<u32>,
        digits: u8,
        code: u32,
    },
    /// After a high surrogate: `\` then `u` (`stage` 0 or 1) of the low one.
    Low {
        high: u32,
        stage: u8,
    },
}

#[derive(Debug)]
struct StrTok {
    /// The string decoded so far, for a key and for values that are
    /// checked (an enum, a `Decimal`); empty for the others.
    buf: String,
    decode: bool,
    esc: Esc,
    /// An object key, or a value of `ty`.
    key: bool,
    ty: TyId,
    /// A growing `str` whose containers all show: the partial shows it.
    visible: bool,
    /// Where the text of its complete characters ends: before an escape in
    /// progress (and before the first half of a surrogate pair).
    safe: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum NumSt {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

impl NumSt {
    fn next(self, c: char) -> Option<NumSt> {
        use NumSt::*;
        let digit = c.is_ascii_digit();
        match (self, c) {
            (Minus, '0') => Some(Zero),
            (Minus, _) if digit => Some(Int),
            (Int, _) if digit => Some(Int),
            (Zero | Int, '.') => Some(Dot),
            (Zero | Int | Frac, 'e' | 'E') => Some(Exp),
            (Dot | Frac, _) if digit => Some(Frac),
            (Exp, '+' | '-') => Some(ExpSign),
            (Exp | ExpSign | ExpDigits, _) if digit => Some(ExpDigits),
            _ => None,
        }
    }

    fn terminal(self) -> bool {
        matches!(
            self,
            NumSt::Zero | NumSt::Int | NumSt::Frac | NumSt::ExpDigits
        )
    }
}

#[derive(Debug)]
enum Tok {
    Str(StrTok),
    Num {
        /// Where the number's text begins.
        start: usize,
        st: NumSt,
        ty: TyId,
    },
    Lit {
        word: &'static str,
        /// Bytes of `word` matched (all ASCII).
        pos: usize,
    },
}

/// Incremental parser of one reply against the function's strict JSON Schema.
#[derive(Debug)]
pub(crate) struct PartialParser {
    tys: Vec<Ty>,
    root: TyId,
    any: TyId,
    phase: Phase,
    stack: Vec<Frame>,
    tok: Option<Tok>,
    /// Every byte pushed: the partial's text is cut from it.
    text: String,
    /// How much of it has been read.
    read: usize,
    /// Where the root value's text begins.
    root_start: usize,
    /// Where it ends, once complete.
    root_end: Option<usize>,
    broken: Option<String>,
    /// Counts the changes of the partial value (docs: [`PartialParser::version`]).
    version: u64,
    /// An empty string with room, for the next key (keys are read into
    /// reused buffers, not a new allocation each).
    spare: String,
}

/// Whether `num` (complete, of the grammar's form `st`) is a value of `ty`.
fn check_number(ty: &Ty, num: &str, st: NumSt) -> Result<(), String> {
    if matches!(ty, Ty::Int)
        && matches!(st, NumSt::Zero | NumSt::Int)
        // serde_json reads `-0` as a float, so the final value would not
        // be an integer either.
        && num != "-0"
        && num.parse::<i64>().is_ok()
    {
        return Ok(());
    }
    if serde_json::from_str::<Number>(num).is_err() {
        return Err(format!("the number {num} cannot be represented"));
    }
    if matches!(ty, Ty::Int) {
        return Err(format!("expected an integer, found {num}"));
    }
    Ok(())
}

impl PartialParser {
    /// `schema`: the strict JSON Schema of the output (root object, may use
    /// `"$defs"` + `"$ref": "#/$defs/Name"`).
    pub(crate) fn new(schema: &serde_json::Value) -> PartialParser {
        let mut c = Compiler {
            root: schema,
            tys: vec![Ty::Any],
            defs: Vec::new(),
            any: 0,
        };
        let root = c.compile(schema, 0);
        c.finalize();
        PartialParser {
            tys: c.tys,
            root,
            any: 0,
            phase: Phase::Pre,
            stack: Vec::new(),
            tok: None,
            text: String::new(),
            read: 0,
            root_start: 0,
            root_end: None,
            broken: None,
            version: 0,
            spare: String::new(),
        }
    }

    /// Appends more reply text. Total work over a whole reply is linear in
    /// its length (no re-reading of earlier text).
    #[cfg(test)]
    pub(crate) fn push(&mut self, text: &str) {
        self.append(text);
        self.catch_up();
    }

    /// Appends more reply text, to be read by the next
    /// [`PartialParser::catch_up`].
    pub(crate) fn append(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Reads the text appended since the last call. Total work over a
    /// whole reply is linear in its length, however it is cut.
    pub(crate) fn catch_up(&mut self) {
        if self.broken.is_some() {
            return;
        }
        let mut off = self.read;
        let end = self.text.len();
        self.read = end;
        // Bytes to read one character at a time: a run that breaks a key or
        // an enum prefix somewhere, for `step` to find where.
        let mut slow = 0;
        while off < end {
            if slow == 0 {
                match self.string_run(off) {
                    Ok(0) => {}
                    Ok(taken) => {
                        off += taken;
                        continue;
                    }
                    Err(len) => slow = len,
                }
            }
            // `off` is a character boundary below `end`: it only ever moves
            // by whole characters and ASCII-delimited runs.
            let Some(c) = self.text[off..].chars().next() else {
                return;
            };
            slow = slow.saturating_sub(c.len_utf8());
            if let Err(e) = self.step(c, off) {
                let at = self.text[..off].chars().count();
                self.broken = Some(format!("{e} (at character {at})"));
                return;
            }
            off += c.len_utf8();
        }
    }

    /// Inside a string and outside an escape, the plain characters at
    /// `off` (up to a quote, a backslash or a control character) taken as
    /// one run, as [`PartialParser::step`] would take them one by one:
    /// `Ok` with how many bytes were taken (0: none), or `Err` with the
    /// length of a run that breaks a key or enum prefix somewhere, not
    /// taken (`step` finds the offending character).
    fn string_run(&mut self, off: usize) -> Result<usize, usize> {
        let Some(Tok::Str(t)) = &mut self.tok else {
            return Ok(0);
        };
        if t.esc != Esc::None {
            return Ok(0);
        }
        let rest = &self.text.as_bytes()[off..];
        let len = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
        if len == 0 {
            return Ok(0);
        }
        if t.decode {
            // Every byte stopped at is ASCII, so `off + len` is a character
            // boundary.
            let before = t.buf.len();
            t.buf.push_str(&self.text[off..off + len]);
            // A prefix that fits an enum or a key has every shorter prefix
            // fitting too, so checking the run's end checks each character.
            if prefix_ok(&self.tys, &self.stack, t).is_err() {
                t.buf.truncate(before);
                return Err(len);
            }
        }
        t.safe = off + len;
        if t.visible {
            self.version += 1;
        }
        Ok(len)
    }

    /// The partial value of all text pushed so far, by the rules of the
    /// module; `None` while there is nothing to show (before the root's
    /// first key).
    #[cfg(test)]
    pub(crate) fn value(&self) -> Option<serde_json::Value> {
        let mut text = String::new();
        if !self.partial_text(&mut text) {
            return None;
        }
        serde_json::from_str(&text).ok()
    }

    /// Appends the partial value as JSON text to `out` (a prefix of the
    /// root value's text, cut after what is shown, and the closing quote
    /// and brackets it needs); `false`, with nothing appended, while there
    /// is nothing to show. Its cost is a copy of what is shown.
    pub(crate) fn partial_text(&self, out: &mut String) -> bool {
        if let Some(end) = self.root_end {
            out.push_str(&self.text[self.root_start..end]);
            return true;
        }
        let shown = self.stack.iter().take_while(|f| f.shown()).count();
        let open = match &self.tok {
            Some(Tok::Str(t)) if t.visible && shown == self.stack.len() => Some(t.safe),
            _ => None,
        };
        let end = match (open, shown) {
            (Some(safe), _) => safe,
            (None, 0) => return false,
            (None, n) => self.stack[n - 1].last_end(),
        };
        out.push_str(&self.text[self.root_start..end]);
        if open.is_some() {
            out.push('"');
        }
        for frame in self.stack[..shown].iter().rev() {
            out.push(frame.closer());
        }
        true
    }

    /// A number that grows whenever the partial value changes and only
    /// then (so a partial of the same version is the same partial, without
    /// a comparison of the two).
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// `Some(reason)` once the text can no longer become a value of the
    /// schema; stays set.
    #[cfg(test)]
    pub(crate) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Whether the root value is complete (closing brace seen).
    #[cfg(test)]
    pub(crate) fn complete(&self) -> bool {
        self.root_end.is_some()
    }

    /// Whether every open container shows.
    fn all_shown(&self) -> bool {
        self.stack.iter().all(Frame::shown)
    }

    fn step(&mut self, c: char, off: usize) -> Result<(), String> {
        match self.phase {
            Phase::Pre | Phase::PreValue if is_ws(c) => Ok(()),
            Phase::Pre if c == '`' => {
                self.phase = Phase::Fence(1);
                Ok(())
            }
            Phase::Pre | Phase::PreValue => {
                self.phase = Phase::Body;
                self.root_start = off;
                self.start_value(self.root, c, off)
            }
            Phase::Fence(n) if c == '`' => {
                self.phase = if n >= 2 {
                    Phase::Tag
                } else {
                    Phase::Fence(n + 1)
                };
                Ok(())
            }
            Phase::Fence(_) => Err("invalid JSON: a stray backtick before the value".into()),
            Phase::Tag if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.') => Ok(()),
            Phase::Tag => {
                self.phase = Phase::PreValue;
                self.step(c, off)
            }
            Phase::Body => self.body(c, off),
            Phase::Post | Phase::End if is_ws(c) => Ok(()),
            Phase::Post if c == '`' => {
                self.phase = Phase::PostFence(1);
                Ok(())
            }
            Phase::PostFence(n) if c == '`' => {
                self.phase = if n >= 2 {
                    Phase::End
                } else {
                    Phase::PostFence(n + 1)
                };
                Ok(())
            }
            Phase::Post | Phase::PostFence(_) | Phase::End => {
                Err(format!("trailing text {c:?} after the value"))
            }
        }
    }

    fn body(&mut self, c: char, off: usize) -> Result<(), String> {
        match &mut self.tok {
            Some(Tok::Str(t)) => {
                if !str_char(t, c)? {
                    // Still open: check what the prefix can still become.
                    if t.esc == Esc::None {
                        t.safe = off + c.len_utf8();
                        if t.visible {
                            self.version += 1;
                        }
                        if t.decode {
                            prefix_ok(&self.tys, &self.stack, t)?;
                        }
                    }
                    return Ok(());
                }
                let Some(Tok::Str(t)) = self.tok.take() else {
                    return Err("internal: lost string".into());
                };
                if t.key {
                    return self.key_done(t.buf);
                }
                let v = match &self.tys[t.ty] {
                    Ty::Decimal => check_decimal(&t.buf),
                    Ty::Enum(names) => check_enum(names, &t.buf),
                    _ => Ok(()),
                };
                if let Err(e) = v {
                    // Keep the (unshown) token so that nothing changes.
                    self.tok = Some(Tok::Str(t));
                    return Err(e);
                }
                self.deliver(off + 1, &t.buf, t.visible)
            }
            Some(Tok::Num { start, st, ty }) => {
                if let Some(next) = st.next(c) {
                    *st = next;
                    return Ok(());
                }
                let (start, st, ty) = (*start, *st, *ty);
                let num = &self.text[start..off];
                if !st.terminal() {
                    return Err(format!("invalid JSON: the number {num}{c} is not complete"));
                }
                check_number(&self.tys[ty], num, st)?;
                self.check_after_value(c)?;
                self.tok = None;
                self.deliver(off, "", false)?;
                self.body(c, off)
            }
            Some(Tok::Lit { word, pos }) => {
                if word.as_bytes().get(*pos).copied() != Some(c as u8) || !c.is_ascii() {
                    return Err(format!("invalid JSON: expected {word}"));
                }
                *pos += 1;
                if *pos == word.len() {
                    self.tok = None;
                    self.deliver(off + 1, "", false)?;
                }
                Ok(())
            }
            None => self.structural(c, off),
        }
    }

    /// A key of the top object is complete.
    fn key_done(&mut self, key: String) -> Result<(), String> {
        let any = self.any;
        let below = self.stack.len().saturating_sub(1);
        let visible_below = self.stack[..below].iter().all(Frame::shown);
        let tys = &self.tys;
        let Some(Frame::Obj(f)) = self.stack.last_mut() else {
            return Err("internal: a key outside an object".into());
        };
        let field = |r: &Record| match r.index(&key) {
            Some(i) => Ok((Some(i), r.fields[i].1)),
            None if !r.closed => Ok((None, any)),
            None => Err(format!("the key {key:?} is not in the record")),
        };
        let (index, key_ty, shown) = match (&tys[f.ty], f.case) {
            (Ty::Record(r), _) => {
                let (i, t) = field(r)?;
                (i, t, true)
            }
            (Ty::Map(t), _) => (None, *t, true),
            (Ty::Tagged { .. }, Some(case)) => match &tys[case] {
                Ty::Record(r) => {
                    let (i, t) = field(r)?;
                    (i, t, true)
                }
                _ => (None, any, true),
            },
            (Ty::Tagged { cases, kind_ty }, None) => {
                if key == "kind" {
                    (None, *kind_ty, false)
                } else if cases.iter().any(|(_, c)| match &tys[*c] {
                    Ty::Record(r) => !r.closed || r.field(&key).is_some(),
                    _ => true,
                }) {
                    (None, any, false)
                } else {
                    return Err(format!("the key {key:?} is in no case of the sum type"));
                }
            }
            _ => (None, any, false),
        };
        if f.seen.has(index, &key) {
            return Err(format!("duplicate key {key:?}"));
        }
        f.seen.add(index, &key);
        self.spare = std::mem::replace(&mut f.key, key);
        self.spare.clear();
        f.key_ty = key_ty;
        f.st = ObjSt::Colon;
        if shown && !f.shown {
            f.shown = true;
            if visible_below {
                self.version += 1;
            }
        }
        Ok(())
    }

    /// A character between tokens, inside the root value.
    fn structural(&mut self, c: char, off: usize) -> Result<(), String> {
        if is_ws(c) {
            return Ok(());
        }
        let unexpected = || format!("invalid JSON: unexpected {c:?}");
        match self.stack.last_mut() {
            None => Err(unexpected()),
            Some(Frame::Obj(f)) => match (f.st, c) {
                (ObjSt::KeyOrClose | ObjSt::Key, '"') => {
                    self.tok = Some(Tok::Str(StrTok {
                        buf: std::mem::take(&mut self.spare),
                        decode: true,
                        esc: Esc::None,
                        key: true,
                        ty: self.any,
                        visible: false,
                        safe: off + 1,
                    }));
                    Ok(())
                }
                (ObjSt::Colon, ':') => {
                    f.st = ObjSt::Value;
                    Ok(())
                }
                (ObjSt::Value, _) => {
                    let ty = f.key_ty;
                    f.value_start = off;
                    self.start_value(ty, c, off)
                }
                (ObjSt::CommaOrClose, ',') => {
                    f.st = ObjSt::Key;
                    Ok(())
                }
                (ObjSt::KeyOrClose | ObjSt::CommaOrClose, '}') => {
                    close_check(&self.tys, f)?;
                    let Some(frame) = self.stack.pop() else {
                        return Err("internal: lost object".into());
                    };
                    let was_visible = frame.shown() && self.all_shown();
                    if let Frame::Obj(f) = frame {
                        if self.spare.capacity() < f.key.capacity() {
                            self.spare = f.key;
                            self.spare.clear();
                        }
                    }
                    self.deliver(off + 1, "", was_visible)
                }
                _ => Err(unexpected()),
            },
            Some(Frame::Arr(a)) => match (a.st, c) {
                (ArrSt::ValueOrClose | ArrSt::CommaOrClose, ']') => {
                    let Some(frame) = self.stack.pop() else {
                        return Err("internal: lost list".into());
                    };
                    let was_visible = frame.shown() && self.all_shown();
                    self.deliver(off + 1, "", was_visible)
                }
                (ArrSt::ValueOrClose | ArrSt::Value, _) => {
                    let ty = a.item;
                    self.start_value(ty, c, off)
                }
                (ArrSt::CommaOrClose, ',') => {
                    a.st = ArrSt::Value;
                    Ok(())
                }
                _ => Err(unexpected()),
            },
        }
    }

    /// Whether `c`, ending a number, may follow a value where it is.
    fn check_after_value(&self, c: char) -> Result<(), String> {
        let ok = is_ws(c)
            || match self.stack.last() {
                None => c == '`',
                Some(Frame::Arr(_)) => matches!(c, ',' | ']'),
                Some(Frame::Obj(f)) => match c {
                    ',' => true,
                    '}' => {
                        close_check(&self.tys, f)?;
                        true
                    }
                    _ => false,
                },
            };
        if ok {
            Ok(())
        } else if self.stack.is_empty() {
            Err(format!("trailing text {c:?} after the value"))
        } else {
            Err(format!("invalid JSON: unexpected {c:?} after a number"))
        }
    }

    /// The first character `c`, at `off`, of a value of `ty`.
    fn start_value(&mut self, ty: TyId, c: char, off: usize) -> Result<(), String> {
        let class = match c {
            'n' => NULL,
            '"' => STRING,
            '-' | '0'..='9' => NUMBER,
            't' | 'f' => BOOL,
            '[' => ARRAY,
            '{' => OBJECT,
            _ => {
                return Err(format!(
                    "invalid JSON: unexpected {c:?} where a value begins"
                ))
            }
        };
        let wrong = |tys: &[Ty]| {
            format!(
                "expected {}, found {}",
                describe(tys, ty),
                class_name(class)
            )
        };
        let cty = match &self.tys[ty] {
            Ty::AnyOf { table, .. } => table[class].ok_or_else(|| wrong(&self.tys))?,
            _ => ty,
        };
        let fits = match &self.tys[cty] {
            Ty::Any => true,
            Ty::Null => class == NULL,
            Ty::Str | Ty::Decimal | Ty::AtomStr | Ty::Enum(_) => class == STRING,
            Ty::Int | Ty::Num => class == NUMBER,
            Ty::Bool => class == BOOL,
            Ty::List(_) => class == ARRAY,
            Ty::Record(_) | Ty::Map(_) | Ty::Tagged { .. } => class == OBJECT,
            Ty::AnyOf { .. } | Ty::Placeholder => false,
        };
        if !fits {
            return Err(wrong(&self.tys));
        }
        if matches!(class, ARRAY | OBJECT) && self.stack.len() >= MAX_DEPTH {
            return Err(format!("nesting deeper than {MAX_DEPTH}"));
        }
        match class {
            NULL => {
                self.tok = Some(Tok::Lit {
                    word: "null",
                    pos: 1,
                })
            }
            BOOL => {
                let word = if c == 't' { "true" } else { "false" };
                self.tok = Some(Tok::Lit { word, pos: 1 })
            }
            STRING => {
                let grows = matches!(self.tys[cty], Ty::Str);
                let visible = grows && self.all_shown();
                if visible {
                    // The string shows from its opening quote, empty.
                    self.version += 1;
                }
                self.tok = Some(Tok::Str(StrTok {
                    buf: String::new(),
                    decode: matches!(self.tys[cty], Ty::Decimal | Ty::Enum(_)),
                    esc: Esc::None,
                    key: false,
                    ty: cty,
                    visible,
                    safe: off + 1,
                }))
            }
            NUMBER => {
                let st = match c {
                    '-' => NumSt::Minus,
                    '0' => NumSt::Zero,
                    _ => NumSt::Int,
                };
                self.tok = Some(Tok::Num {
                    start: off,
                    st,
                    ty: cty,
                })
            }
            ARRAY => {
                let (item, shown) = match &self.tys[cty] {
                    Ty::List(item) => (*item, true),
                    _ => (self.any, false),
                };
                if shown && self.all_shown() {
                    // The list shows from its opening bracket, empty.
                    self.version += 1;
                }
                self.stack.push(Frame::Arr(ArrFrame {
                    item,
                    st: ArrSt::ValueOrClose,
                    shown,
                    last_end: off + 1,
                }))
            }
            _ => self.stack.push(Frame::Obj(ObjFrame {
                ty: cty,
                case: None,
                seen: Seen::default(),
                pending: Vec::new(),
                key: String::new(),
                key_ty: self.any,
                st: ObjSt::KeyOrClose,
                shown: false,
                value_start: off,
                last_end: off + 1,
            })),
        }
        Ok(())
    }

    /// A complete value, whose text ends at `end`, goes to the container
    /// it is in, or is the root. `string`: its decoded text when it is a
    /// checked string (an enum: a `kind`); `was_shown`: it showed, as it
    /// is now, before it completed (a growing string, an open container).
    fn deliver(&mut self, end: usize, string: &str, was_shown: bool) -> Result<(), String> {
        let depth = self.stack.len();
        let visible_below = self.stack[..depth.saturating_sub(1)]
            .iter()
            .all(Frame::shown);
        let tys = &self.tys;
        let text = &self.text;
        let changed = match self.stack.last_mut() {
            None => {
                self.root_end = Some(end);
                self.phase = Phase::Post;
                !was_shown
            }
            Some(Frame::Arr(a)) => {
                a.last_end = end;
                a.st = ArrSt::CommaOrClose;
                visible_below && a.shown && !was_shown
            }
            Some(Frame::Obj(f)) => {
                let mut changed = visible_below && f.shown && !was_shown;
                match (&tys[f.ty], f.case) {
                    (Ty::Tagged { cases, .. }, None) if f.key == "kind" => {
                        let name = string;
                        let case = cases
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|c| c.1)
                            .ok_or_else(|| format!("\"kind\" {name:?} names no case"))?;
                        if let Ty::Record(r) = &tys[case] {
                            for (k, start, stop) in &f.pending {
                                match r.field(k) {
                                    Some(t) => {
                                        let value: Value = serde_json::from_str(
                                            &text[*start..*stop],
                                        )
                                        .map_err(|e| format!("in {k:?} of {name:?}: {e}"))?;
                                        check_value(tys, t, &value, depth)
                                            .map_err(|e| format!("in {k:?} of {name:?}: {e}"))?
                                    }
                                    None if r.closed => {
                                        return Err(format!(
                                            "the key {k:?} is not in the case {name:?}"
                                        ))
                                    }
                                    None => {}
                                }
                            }
                        }
                        f.case = Some(case);
                        f.pending.clear();
                        f.shown = true;
                        changed = visible_below;
                    }
                    (Ty::Tagged { .. }, None) => {
                        let key = std::mem::take(&mut f.key);
                        f.pending.push((key, f.value_start, end));
                    }
                    _ => {}
                }
                f.last_end = end;
                f.st = ObjSt::CommaOrClose;
                changed
            }
        };
        if changed {
            self.version += 1;
        }
        Ok(())
    }
}

/// Whether the string `t`, still open in the top frame of `stack`, can
/// become an allowed enum value or key.
fn prefix_ok(tys: &[Ty], stack: &[Frame], t: &StrTok) -> Result<(), String> {
    let prefix = t.buf.as_str();
    if !t.key {
        if let Ty::Enum(names) = &tys[t.ty] {
            if !names.iter().any(|n| n.starts_with(prefix)) {
                return Err(format!(
                    "no value of {} begins with {prefix:?}",
                    quoted_list(names)
                ));
            }
        }
        return Ok(());
    }
    let Some(Frame::Obj(f)) = stack.last() else {
        return Ok(());
    };
    let fits = |r: &Record| !r.closed || r.fields.iter().any(|(k, _)| k.starts_with(prefix));
    let ok = match (&tys[f.ty], f.case) {
        (Ty::Record(r), _) => fits(r),
        (Ty::Tagged { .. }, Some(case)) => match &tys[case] {
            Ty::Record(r) => fits(r),
            _ => true,
        },
        (Ty::Tagged { cases, .. }, None) => {
            "kind".starts_with(prefix)
                || cases.iter().any(|(_, c)| match &tys[*c] {
                    Ty::Record(r) => fits(r),
                    _ => true,
                })
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("no key of the object begins with {prefix:?}"))
    }
}

/// Whether the object `f` may close now.
fn close_check(tys: &[Ty], f: &ObjFrame) -> Result<(), String> {
    let missing = |r: &Record| missing_key(r, |k| f.seen.has(r.index(k), k));
    match (&tys[f.ty], f.case) {
        (Ty::Record(r), _) => missing(r),
        (Ty::Tagged { .. }, None) => Err("the object closed without its \"kind\"".into()),
        (Ty::Tagged { .. }, Some(case)) => match &tys[case] {
            Ty::Record(r) => missing(r),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Reads one character `c` of a string; `Ok(true)` at its closing quote.
/// Decoded characters go to `t.buf` only when `t.decode`.
fn str_char(t: &mut StrTok, c: char) -> Result<bool, String> {
    let decoded = match t.esc {
        Esc::None => match c {
            '"' => return Ok(true),
            '\\' => {
                t.esc = Esc::Backslash;
                return Ok(false);
            }
            c if (c as u32) < 0x20 => {
                return Err(format!(
                    "invalid JSON: the control character U+{:04X} inside a string",
                    c as u32
                ))
            }
            c => c,
        },
        Esc::Backslash => {
            let decoded = match c {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => {
                    t.esc = Esc::Hex {
                        high: None,
                        digits: 0,
                        code: 0,
                    };
                    return Ok(false);
                }
                _ => return Err(format!("invalid JSON: the escape \\{c}")),
            };
            t.esc = Esc::None;
            decoded
        }
        Esc::Hex { high, digits, code } => {
            let d = c
                .to_digit(16)
                .ok_or_else(|| format!("invalid JSON: {c:?} in a \\u escape"))?;
            let code = code * 16 + d;
            if digits < 3 {
                t.esc = Esc::Hex {
                    high,
                    digits: digits + 1,
                    code,
                };
                return Ok(false);
            }
            let is_low = (0xDC00..=0xDFFF).contains(&code);
            let decoded = match high {
                None if (0xD800..=0xDBFF).contains(&code) => {
                    t.esc = Esc::Low {
                        high: code,
                        stage: 0,
                    };
                    return Ok(false);
                }
                None if is_low => return Err("invalid JSON: a lone low surrogate escape".into()),
                Some(h) if is_low => {
                    let cp = 0x10000 + ((h - 0xD800) << 10) + (code - 0xDC00);
                    char::from_u32(cp).ok_or("invalid JSON: a bad surrogate pair")?
                }
                Some(_) => return Err("invalid JSON: a lone high surrogate escape".into()),
                None => char::from_u32(code).ok_or("invalid JSON: a bad \\u escape")?,
            };
            t.esc = Esc::None;
            decoded
        }
        Esc::Low { high, stage } => {
            match (stage, c) {
                (0, '\\') => t.esc = Esc::Low { high, stage: 1 },
                (1, 'u') => {
                    t.esc = Esc::Hex {
                        high: Some(high),
                        digits: 0,
                        code: 0,
                    }
                }
                _ => return Err("invalid JSON: a lone high surrogate escape".into()),
            }
            return Ok(false);
        }
    };
    if t.decode {
        t.buf.push(decoded);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // ---- helpers -------------------------------------------------------

    /// Whether `partial` is a state of `full`: objects have a subset of the
    /// keys, each a state of the full one; strings are prefixes; arrays are
    /// not longer, all but their last element equal and the last a state of
    /// its counterpart; anything else is equal.
    fn is_state_of(partial: &Value, full: &Value) -> bool {
        match (partial, full) {
            (Value::Object(p), Value::Object(f)) => p
                .iter()
                .all(|(k, v)| f.get(k).is_some_and(|w| is_state_of(v, w))),
            (Value::String(p), Value::String(f)) => f.starts_with(p.as_str()),
            (Value::Array(p), Value::Array(f)) => {
                p.len() <= f.len()
                    && match p.split_last() {
                        None => true,
                        Some((last, init)) => {
                            init.iter().zip(f).all(|(a, b)| a == b)
                                && is_state_of(last, &f[p.len() - 1])
                        }
                    }
            }
            _ => partial == full,
        }
    }

    /// Feeds `chunks` and returns the parser and its distinct partials, in
    /// order (a partial is recorded after each chunk when it changed).
    fn run<'a>(
        schema: &Value,
        chunks: impl IntoIterator<Item = &'a str>,
    ) -> (PartialParser, Vec<Value>) {
        let mut p = PartialParser::new(schema);
        let mut seen: Vec<Value> = Vec::new();
        let mut last_version = 0;
        for chunk in chunks {
            p.push(chunk);
            let mut text = String::new();
            let shows = p.partial_text(&mut text);
            // The partial's text is JSON whenever there is one.
            assert_eq!(
                shows.then(|| serde_json::from_str::<Value>(&text).unwrap()),
                p.value(),
                "{chunk:?}: {text}"
            );
            let version = p.version();
            if let Some(v) = p.value() {
                // A new partial has a new version, the same one the same.
                if seen.last() != Some(&v) {
                    assert!(
                        version > last_version,
                        "{v}: {version} after {last_version}"
                    );
                    seen.push(v);
                } else {
                    assert_eq!(version, last_version, "{v}");
                }
                last_version = version;
            }
        }
        (p, seen)
    }

    /// `text` cut into pieces of `n` characters.
    fn chunks(text: &str, n: usize) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(n).map(|c| c.iter().collect()).collect()
    }

    fn partial_of(schema: &Value, text: &str) -> Option<Value> {
        let mut p = PartialParser::new(schema);
        p.push(text);
        assert_eq!(p.broken(), None, "{text}");
        p.value()
    }

    fn is_subsequence(small: &[Value], big: &[Value]) -> bool {
        let mut it = big.iter();
        small.iter().all(|s| it.any(|b| b == s))
    }

    /// Each partial is a state of the next and of the final value.
    fn assert_chain(partials: &[Value], last: &Value, text: &str) {
        for w in partials.windows(2) {
            assert!(
                is_state_of(&w[0], &w[1]),
                "{} is not a state of {} ({text})",
                w[0],
                w[1]
            );
        }
        for p in partials {
            assert!(
                is_state_of(p, last),
                "{p} is not a state of {last} ({text})"
            );
        }
    }

    /// Test-only check of `v` against a JSON Schema, written apart from the
    /// parser; `partial`: required keys may be missing, but an object of a
    /// tagged case has its `kind`.
    fn conforms(root: &Value, s: &Value, v: &Value, partial: bool) -> bool {
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            return conforms(root, &root["$defs"][name], v, partial);
        }
        if let Some(alts) = s.get("anyOf").and_then(Value::as_array) {
            return alts.iter().any(|a| conforms(root, a, v, partial));
        }
        match s["type"].as_str() {
            Some("string") => v.as_str().is_some_and(|x| {
                s.get("enum")
                    .and_then(Value::as_array)
                    .is_none_or(|e| e.contains(v))
                    && (s.get("pattern").is_none() || decimal_text(x))
            }),
            Some("integer") => v.is_i64(),
            Some("number") => v.is_number(),
            Some("boolean") => v.is_boolean(),
            Some("null") => v.is_null(),
            Some("array") => v
                .as_array()
                .is_some_and(|a| a.iter().all(|x| conforms(root, &s["items"], x, partial))),
            Some("object") => v.as_object().is_some_and(|m| {
                let props = &s["properties"];
                m.iter()
                    .all(|(k, x)| props.get(k).is_some_and(|p| conforms(root, p, x, partial)))
                    && if partial {
                        props.get("kind").is_none() || m.contains_key("kind")
                    } else {
                        s["required"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .all(|k| m.contains_key(k.as_str().unwrap()))
                    }
            }),
            _ => false,
        }
    }

    fn decimal_text(x: &str) -> bool {
        let body = x.strip_prefix('-').unwrap_or(x);
        let mut parts = body.split('.');
        let whole = parts.next().unwrap_or("");
        let frac = parts.next();
        parts.next().is_none()
            && !whole.is_empty()
            && whole.chars().all(|c| c.is_ascii_digit())
            && frac.is_none_or(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()))
    }

    // ---- the fixed reply ---------------------------------------------

    fn decimal() -> Value {
        json!({"type":"string","pattern":"^-?[0-9]+(\\.[0-9]+)?$","description":"A decimal."})
    }

    /// The schema `cargo vox schema` gives such a module (plus some fields).
    fn out_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "lines": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "qty": {"type": "integer"},
                        "price": {"anyOf": [decimal(), {"type": "null"}]}
                    },
                    "required": ["name", "qty", "price"],
                    "additionalProperties": false
                }},
                "p": {"type": "string", "enum": ["Low", "High"]},
                "s": {"$ref": "#/$defs/Shape"},
                "t": {"$ref": "#/$defs/Tree"},
                "os": {"anyOf": [{"$ref": "#/$defs/Shape"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "ok": {"type": "boolean"},
                "n": {"type": "integer"}
            },
            "required": ["title", "lines", "p", "s", "t", "os", "tags", "ok", "n"],
            "additionalProperties": false,
            "$defs": {
                "Shape": {"anyOf": [
                    {"type": "object", "properties": {"kind": {"type": "string", "enum": ["Circle"]}, "r": {"type": "number"}}, "required": ["kind", "r"], "additionalProperties": false},
                    {"type": "object", "properties": {"kind": {"type": "string", "enum": ["Square"]}, "side": {"type": "number"}}, "required": ["kind", "side"], "additionalProperties": false}
                ]},
                "Tree": {"type": "object", "properties": {
                    "label": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                    "shape": {"anyOf": [{"$ref": "#/$defs/Shape"}, {"type": "null"}]}
                }, "required": ["label", "kids", "shape"], "additionalProperties": false}
            }
        })
    }

    const REPLY: &str = r#"{"title": "Caf\u00e9 \"best\" é 日本 😀 \ud83d\ude00 line\nbreak\\ tab\t/\/",
 "lines": [{"name": "wid\u0067et", "qty": 2, "price": "12.50"}, {"name": "日本", "qty": -3, "price": null}],
 "p": "High",
 "s": {"kind": "Circle", "r": 1.5e0},
 "t": {"label": "root", "kids": [{"label": "a", "kids": [], "shape": null},
   {"label": "b😀", "kids": [{"label": "c", "kids": [], "shape": {"kind": "Square", "side": 2}}], "shape": null}],
   "shape": {"kind": "Circle", "r": -0.25}},
 "os": {"kind": "Square", "side": 10},
 "tags": ["x", "", "y\u00e9"],
 "ok": true,
 "n": 1234567890123
}"#;

    #[test]
    fn fixed_reply_in_every_chunking() {
        let schema = out_schema();
        let expected: Value = serde_json::from_str(REPLY).unwrap();
        assert!(conforms(&schema, &schema, &expected, false));
        let (_, fine) = run(&schema, chunks(REPLY, 1).iter().map(String::as_str));
        for n in [1, 3, 7, 16, usize::MAX] {
            let pieces = if n == usize::MAX {
                vec![REPLY.to_owned()]
            } else {
                chunks(REPLY, n)
            };
            let (p, partials) = run(&schema, pieces.iter().map(String::as_str));
            assert_eq!(p.broken(), None, "chunks of {n}");
            assert!(p.complete(), "chunks of {n}");
            assert_eq!(p.value().as_ref(), Some(&expected), "chunks of {n}");
            if n <= 16 {
                assert!(
                    partials.len() >= 4,
                    "{} partials in chunks of {n}",
                    partials.len()
                );
            }
            assert_chain(&partials, &expected, REPLY);
            for partial in &partials {
                assert!(conforms(&schema, &schema, partial, true), "{partial}");
            }
            assert!(is_subsequence(&partials, &fine), "chunks of {n}");
        }
        // The 1-character chunking shows many steps.
        assert!(fine.len() > 60, "{}", fine.len());
    }

    #[test]
    fn fenced_reply() {
        let schema = out_schema();
        let expected: Value = serde_json::from_str(REPLY).unwrap();
        for text in [
            format!("```json\n{REPLY}\n```\n"),
            format!("\n  ```\n{REPLY}```"),
            format!(" {REPLY} \n"),
        ] {
            let (p, _) = run(&schema, chunks(&text, 5).iter().map(String::as_str));
            assert_eq!(p.broken(), None, "{text}");
            assert!(p.complete());
            assert_eq!(p.value(), Some(expected.clone()));
        }
        let mut p = PartialParser::new(&schema);
        p.push(&format!("```json\n{REPLY}\n```\nThat is all."));
        assert!(
            p.broken().unwrap().contains("trailing text"),
            "{:?}",
            p.broken()
        );
        assert_eq!(p.value(), Some(expected));
    }

    #[test]
    fn partials_of_prefixes() {
        let schema = out_schema();
        assert_eq!(partial_of(&schema, ""), None);
        assert_eq!(partial_of(&schema, "  {"), None);
        assert_eq!(partial_of(&schema, "{\"tit"), None);
        assert_eq!(partial_of(&schema, "{\"title\""), Some(json!({})));
        assert_eq!(partial_of(&schema, "{\"title\": "), Some(json!({})));
        assert_eq!(
            partial_of(&schema, "{\"title\": \""),
            Some(json!({"title": ""}))
        );
        // Unfinished escapes and half surrogate pairs are not shown.
        for (text, shown) in [
            (r#"{"title": "Caf\"#, "Caf"),
            (r#"{"title": "Caf\u00"#, "Caf"),
            (r#"{"title": "Caf\u00e9"#, "Café"),
            (r#"{"title": "a\ud83d"#, "a"),
            (r#"{"title": "a\ud83d\"#, "a"),
            (r#"{"title": "a\ud83d\ude0"#, "a"),
            (r#"{"title": "a\ud83d\ude00"#, "a😀"),
            (r#"{"title": "a\n\""#, "a\n\""),
        ] {
            assert_eq!(
                partial_of(&schema, text),
                Some(json!({ "title": shown })),
                "{text}"
            );
        }
        // Numbers wait for a delimiter, literals for their last letter.
        assert_eq!(partial_of(&schema, r#"{"n": 12"#), Some(json!({})));
        assert_eq!(partial_of(&schema, r#"{"n": 12 "#), Some(json!({"n": 12})));
        assert_eq!(partial_of(&schema, r#"{"ok": tru"#), Some(json!({})));
        assert_eq!(
            partial_of(&schema, r#"{"ok": true"#),
            Some(json!({"ok": true}))
        );
        assert_eq!(partial_of(&schema, r#"{"os": nul"#), Some(json!({})));
        assert_eq!(
            partial_of(&schema, r#"{"os": null"#),
            Some(json!({"os": null}))
        );
        // Enums and decimals appear whole.
        assert_eq!(partial_of(&schema, r#"{"p": "Hi"#), Some(json!({})));
        assert_eq!(
            partial_of(&schema, r#"{"p": "High""#),
            Some(json!({"p": "High"}))
        );
        let line = r#"{"lines": [{"name": "w", "qty": 2, "price": "12.5"#;
        assert_eq!(
            partial_of(&schema, line),
            Some(json!({"lines": [{"name": "w", "qty": 2}]}))
        );
        assert_eq!(
            partial_of(&schema, &format!("{line}\"")),
            Some(json!({"lines": [{"name": "w", "qty": 2, "price": "12.5"}]}))
        );
        // Lists show at their bracket; an element when it shows something.
        assert_eq!(
            partial_of(&schema, r#"{"lines": ["#),
            Some(json!({"lines": []}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"lines": [{"#),
            Some(json!({"lines": []}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"lines": [{"name""#),
            Some(json!({"lines": [{}]}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"tags": ["a", "b"#),
            Some(json!({"tags": ["a", "b"]}))
        );
        // A tagged case shows once its kind is complete.
        assert_eq!(
            partial_of(&schema, r#"{"s": {"kind": "Circ"#),
            Some(json!({}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"s": {"kind": "Circle""#),
            Some(json!({"s": {"kind": "Circle"}}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"s": {"kind": "Circle", "r": 2}"#),
            Some(json!({"s": {"kind": "Circle", "r": 2}}))
        );
    }

    #[test]
    fn kind_after_other_fields() {
        let schema = out_schema();
        let text = r#"{"s": {"r": 2.5, "kind": "Circle"}, "os": {"side": 1, "kind": "Square"}"#;
        let (p, partials) = run(&schema, chunks(text, 1).iter().map(String::as_str));
        assert_eq!(p.broken(), None);
        assert_eq!(
            p.value(),
            Some(json!({"s": {"kind": "Circle", "r": 2.5}, "os": {"kind": "Square", "side": 1}}))
        );
        assert_eq!(
            partial_of(&schema, r#"{"s": {"r": 2.5, "kind": "C"#),
            Some(json!({}))
        );
        assert_chain(&partials, &p.value().unwrap(), text);
        // Fields before the kind are checked against the case it names.
        assert_breaks(&schema, r#"{"s": {"r": "x", "kind": "Circle§"}"#);
        assert_breaks(&schema, r#"{"s": {"side": 1, "kind": "Circle§"}"#);
        // A key in no case breaks at once.
        assert_breaks(&schema, r#"{"s": {"§q": 1}"#);
    }

    #[test]
    fn maps_and_root_refs() {
        let schema = json!({
            "$ref": "#/$defs/R",
            "$defs": {"R": {"type": "object", "properties": {
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "next": {"anyOf": [{"$ref": "#/$defs/R"}, {"type": "null"}]}
            }, "required": ["m", "next"], "additionalProperties": false}}
        });
        assert_eq!(partial_of(&schema, r#"{"m": {"a"#), Some(json!({})));
        assert_eq!(partial_of(&schema, r#"{"m": {"a""#), Some(json!({"m": {}})));
        assert_eq!(
            partial_of(&schema, r#"{"m": {"a": 1,"#),
            Some(json!({"m": {"a": 1}}))
        );
        let text = r#"{"m": {"a": 1, "b": 2}, "next": {"m": {}, "next": null}}"#;
        let (p, partials) = run(&schema, chunks(text, 1).iter().map(String::as_str));
        assert_eq!(p.broken(), None);
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(p.value(), Some(expected.clone()));
        assert_chain(&partials, &expected, text);
        assert_breaks(&schema, r#"{"m": {"a": §"1"}"#);
    }

    #[test]
    fn option_of_sum_flattened_and_single_case() {
        let circle = json!({"type": "object", "properties": {"kind": {"type": "string", "enum": ["Circle"]}, "r": {"type": "number"}}, "required": ["kind", "r"], "additionalProperties": false});
        let schema = json!({"type": "object", "properties": {
            "o": {"anyOf": [circle, {"type": "object", "properties": {"kind": {"type": "string", "enum": ["Dot"]}}, "required": ["kind"], "additionalProperties": false}, {"type": "null"}]},
            "one": {"anyOf": [circle]}
        }, "required": ["o", "one"], "additionalProperties": false});
        assert_eq!(
            partial_of(&schema, r#"{"o": null"#),
            Some(json!({"o": null}))
        );
        assert_eq!(partial_of(&schema, r#"{"o": {"kind": "D"#), Some(json!({})));
        assert_eq!(
            partial_of(&schema, r#"{"o": {"kind": "Dot""#),
            Some(json!({"o": {"kind": "Dot"}}))
        );
        assert_eq!(partial_of(&schema, r#"{"one": {"kind""#), Some(json!({})));
        assert_eq!(
            partial_of(&schema, r#"{"one": {"kind": "Circle""#),
            Some(json!({"one": {"kind": "Circle"}}))
        );
        assert_breaks(&schema, r#"{"o": {"kind": "Dot", "§r": 1}"#);
        assert_breaks(&schema, r#"{"o": §1}"#);
    }

    // ---- broken replies ------------------------------------------------

    /// Feeds `marked`, without its `§`, a character at a time: not broken
    /// before the character after the `§`, broken by it, the partial
    /// unchanged by it, and both kept after more text. Returns the reason.
    fn assert_breaks(schema: &Value, marked: &str) -> String {
        let at = marked
            .chars()
            .position(|c| c == '§')
            .expect("a § marks the break");
        let text = marked.replacen('§', "", 1);
        let text = text.as_str();
        let mut p = PartialParser::new(schema);
        let chars: Vec<char> = text.chars().collect();
        assert!(at < chars.len(), "{marked}");
        for (i, c) in chars.iter().enumerate() {
            let before = p.value();
            p.push(&c.to_string());
            if i < at {
                assert_eq!(p.broken(), None, "{text}: broken at {i}, not {at}");
            } else if i == at {
                assert!(p.broken().is_some(), "{text}: not broken at {at}");
                assert_eq!(
                    p.value(),
                    before,
                    "{text}: the partial changed at the break"
                );
            }
        }
        let (reason, last) = (p.broken().unwrap().to_owned(), p.value());
        p.push("\"}]} more");
        assert_eq!(p.broken(), Some(reason.as_str()));
        assert_eq!(p.value(), last);
        // The same in one piece.
        let mut whole = PartialParser::new(schema);
        whole.push(text);
        assert_eq!(whole.broken(), Some(reason.as_str()));
        assert_eq!(whole.value(), last);
        reason
    }

    fn small_schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "p": {"type": "string", "enum": ["Low", "Lowest", "High"]},
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "d": decimal(),
            "s": {"$ref": "#/$defs/Shape"},
            "any": {},
            "kids": {"type": "array", "items": {"$ref": "#"}}
        }, "required": ["name"], "additionalProperties": false,
        "$defs": out_schema()["$defs"].clone()})
    }

    #[test]
    fn wrong_types_break() {
        let s = small_schema();
        let r = assert_breaks(&s, r#"{"name": §5}"#);
        assert!(r.contains("expected a string, found a number"), "{r}");
        assert_breaks(&s, r#"{"name": §["a"]}"#);
        assert_breaks(&s, r#"{"name": §null}"#);
        assert_breaks(&s, r#"{"n": §"1"}"#);
        assert_breaks(&s, r#"{"s": §[1]}"#);
        let r = assert_breaks(&s, r#"{"name": "a", "n": 1.5§}"#);
        assert!(r.contains("integer"), "{r}");
        assert_breaks(&s, r#"{"name": "a", "n": 1e2§,"#);
        assert_breaks(&s, r#"{"name": "a", "n": 99999999999999999999§,"#);
        // A float field takes any number, huge ones included.
        assert_eq!(
            partial_of(&s, r#"{"x": 123456789012345678901234567890,"#),
            Some(json!({"x": 123456789012345678901234567890.0}))
        );
        assert_breaks(&s, r#"{"x": 1e999§,"#);
        let r = assert_breaks(&s, r#"{"d": "1.2.3§"}"#);
        assert!(r.contains("decimal"), "{r}");
        assert_breaks(&s, r#"{"d": §1.5}"#);
        assert_eq!(
            partial_of(&s, r#"{"d": "-12.50""#),
            Some(json!({"d": "-12.50"}))
        );
    }

    #[test]
    fn unknown_enum_values_break_at_the_first_impossible_character() {
        let s = small_schema();
        // "Lo" may still become "Low" or "Lowest".
        assert_eq!(partial_of(&s, r#"{"p": "Lo"#), Some(json!({})));
        let r = assert_breaks(&s, r#"{"p": "L§x"}"#);
        assert!(r.contains("begins with \"Lx\""), "{r}");
        // A prefix of a value is not a value.
        let r = assert_breaks(&s, r#"{"p": "Lo§"}"#);
        assert!(r.contains("is not one of"), "{r}");
        assert_breaks(&s, r#"{"p": "Lowest§t"}"#);
        assert_eq!(
            partial_of(&s, r#"{"p": "Lowest""#),
            Some(json!({"p": "Lowest"}))
        );
        // Escapes are decoded before the check.
        assert_eq!(
            partial_of(&s, r#"{"p": "\u004cow""#),
            Some(json!({"p": "Low"}))
        );
        // Unknown kinds, likewise.
        let r = assert_breaks(&s, r#"{"s": {"kind": "§Tri"}}"#);
        assert!(r.contains("\"Circle\", \"Square\""), "{r}");
        assert_breaks(&s, r#"{"s": {"kind": "Circ§"}}"#);
        assert_breaks(&s, r#"{"s": {"kind": §1}}"#);
    }

    #[test]
    fn unknown_missing_and_duplicate_keys_break() {
        let s = small_schema();
        let r = assert_breaks(&s, r#"{"§zz": 1}"#);
        assert!(r.contains("no key"), "{r}");
        // "nam" is a prefix of "name" but not a key.
        let r = assert_breaks(&s, r#"{"nam§": 1}"#);
        assert!(r.contains("not in the record"), "{r}");
        assert_breaks(&s, r#"{"s": {"kind": "Circle", "§side": 1}}"#);
        let r = assert_breaks(&s, r#"{"name": "a", "name§": "b"}"#);
        assert!(r.contains("duplicate"), "{r}");
        // A record closed without a required key, after a string or a number.
        let r = assert_breaks(&s, r#"{"p": "Low"§}"#);
        assert!(r.contains("\"name\""), "{r}");
        assert_breaks(&s, r#"{"n": 1§}"#);
        assert_breaks(&s, r#"{"name": "a", "s": {"kind": "Circle"§}}"#);
        assert_breaks(&s, r#"{"name": "a", "s": {"r": 1§}}"#);
        assert_breaks(&s, r#"{"name": "a", "s": {§}}"#);
    }

    #[test]
    fn invalid_json_breaks() {
        let s = small_schema();
        for text in [
            r#"§x"#,
            r#"§["#,
            r#"{"name" §"a"}"#,
            r#"{"name": "a",§}"#,
            r#"{"name": "a" §"n": 1}"#,
            r#"{§,"#,
            r#"{§name: 1}"#,
            r#"{"name": §'a'}"#,
            r#"{"name": "a", "n": 0§1}"#,
            r#"{"name": "a", "n": -§}"#,
            r#"{"name": "a", "n": 1.§}"#,
            r#"{"name": "a", "x": 1e§}"#,
            r#"{"name": "a", "n": 12§a}"#,
            r#"{"name": "a", "n": 1§]}"#,
            r#"{"name": "a", "any": tru§}"#,
            r#"{"name": "a", "any": nul§1}"#,
            r#"{"name": "a\§q"}"#,
            r#"{"name": "a\u12§g4"}"#,
            r#"{"name": "a\ud800§x"}"#,
            r#"{"name": "a\ud800\u004§1"}"#,
            r#"{"name": "a\udc0§0"}"#,
            "{\"name\": \"a§\nb\"}",
            "`§{}",
            "``§{}",
            r#"{"kids": [§}"#,
            r#"{"kids": [{"name": "a"},§]}"#,
        ] {
            assert_breaks(&s, text);
            // Not JSON for serde_json either.
            let text = text.replacen('§', "", 1);
            assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
        }
    }

    #[test]
    fn trailing_text_breaks() {
        let s = small_schema();
        let r = assert_breaks(&s, r#"{"name": "a"} §x"#);
        assert!(r.contains("trailing text"), "{r}");
        assert_breaks(&s, r#"{"name": "a"}§}"#);
        assert_breaks(&s, r#"{"name": "a"}§{"name": "b"}"#);
        assert_breaks(&s, "{\"name\": \"a\"}\n```\n§ok");
        assert_breaks(&s, "{\"name\": \"a\"}\n``§x");
        let mut p = PartialParser::new(&s);
        p.push("{\"name\": \"a\"}\n```\n \n");
        assert_eq!(p.broken(), None);
        assert!(p.complete());
        assert_eq!(p.value(), Some(json!({"name": "a"})));
    }

    #[test]
    fn deep_nesting_breaks_beyond_the_cap() {
        let s = small_schema();
        // The root object is level 1: 126 more lists fit, the 127th does not.
        let text = format!("{{\"any\": {}§[", "[".repeat(MAX_DEPTH - 1));
        assert_breaks(&s, &text);
        let ok = format!(
            "{{\"name\": \"a\", \"any\": {}1{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        let mut p = PartialParser::new(&s);
        p.push(&ok);
        assert_eq!(p.broken(), None);
        assert!(p.complete());
        // Typed recursion is capped the same way; the partial stays showable.
        let mut text = String::new();
        for _ in 0..200 {
            text.push_str(r#"{"name": "a", "kids": ["#);
        }
        let mut p = PartialParser::new(&s);
        p.push(&text);
        assert!(p
            .broken()
            .unwrap()
            .contains(&format!("nesting deeper than {MAX_DEPTH}")));
        assert!(p.value().is_some());
        let mut p = PartialParser::new(&s);
        p.push(&"[".repeat(100_000));
        assert!(p.broken().is_some());
    }

    #[test]
    fn hostile_schemas_do_not_loop() {
        for schema in [
            json!({"$ref": "#"}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}}),
            json!({"$ref": "#/$defs/Missing"}),
            json!(true),
            json!({"type": ["object", "null"], "properties": {}}),
        ] {
            let mut p = PartialParser::new(&schema);
            p.push(r#"{"a": [1, {"b": null}]} "#);
            let _ = (p.value(), p.broken(), p.complete());
        }
    }

    // ---- generated schemas, values and chunkings -------------------------

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            // xorshift64
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, one_in: usize) -> bool {
            self.below(one_in) == 0
        }
        fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len())].clone()
        }
    }

    #[derive(Clone, Debug)]
    enum G {
        Str,
        Int,
        Float,
        Bool,
        Dec,
        Enum(Vec<&'static str>),
        Rec(Vec<(&'static str, G)>),
        Sum(Vec<(&'static str, Vec<(&'static str, G)>)>),
        Opt(Box<G>),
        List(Box<G>),
    }

    const KEYS: [&str; 6] = ["a", "ab", "name", "names", "é_k", "x"];
    const VARIANTS: [&str; 4] = ["Low", "Lowest", "High", "Mid"];
    const CASES: [&str; 4] = ["Circle", "Sq", "Square", "Empty"];

    fn distinct(rng: &mut Rng, pool: &[&'static str], n: usize) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        while out.len() < n {
            let x = rng.pick(pool);
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    }

    fn gen_fields(rng: &mut Rng, depth: usize, max: usize) -> Vec<(&'static str, G)> {
        let n = if depth < 2 {
            1 + rng.below(max)
        } else {
            rng.below(max + 1)
        };
        distinct(rng, &KEYS, n)
            .into_iter()
            .map(|k| (k, gen_ty(rng, depth + 1)))
            .collect()
    }

    fn gen_ty(rng: &mut Rng, depth: usize) -> G {
        let pick = match depth {
            3.. => rng.below(6),
            // Near the root, mostly containers.
            0 | 1 if rng.chance(2) => 6 + rng.below(4),
            _ => rng.below(10),
        };
        match pick {
            0 => G::Str,
            1 => G::Int,
            2 => G::Float,
            3 => G::Bool,
            4 => G::Dec,
            5 => {
                let n = 1 + rng.below(3);
                G::Enum(distinct(rng, &VARIANTS, n))
            }
            6 => G::Rec(gen_fields(rng, depth, 3)),
            7 => {
                let n = 1 + rng.below(3);
                G::Sum(
                    distinct(rng, &CASES, n)
                        .into_iter()
                        .map(|c| (c, gen_fields(rng, depth, 2)))
                        .collect(),
                )
            }
            8 => G::Opt(Box::new(gen_ty(rng, depth + 1))),
            _ => G::List(Box::new(gen_ty(rng, depth + 1))),
        }
    }

    fn record_schema(fields: &[(&str, G)], defs: &mut Map<String, Value>, rng: &mut Rng) -> Value {
        let mut props = Map::new();
        for (k, g) in fields {
            props.insert((*k).to_owned(), to_schema(g, defs, rng));
        }
        let required: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }

    fn case_schemas(
        cases: &[(&str, Vec<(&str, G)>)],
        defs: &mut Map<String, Value>,
        rng: &mut Rng,
    ) -> Vec<Value> {
        cases
            .iter()
            .map(|(name, fields)| {
                let mut s = record_schema(fields, defs, rng);
                let mut props = Map::new();
                props.insert("kind".into(), json!({"type": "string", "enum": [name]}));
                props.extend(s["properties"].as_object().unwrap().clone());
                s["properties"] = Value::Object(props);
                s["required"]
                    .as_array_mut()
                    .unwrap()
                    .insert(0, json!("kind"));
                s
            })
            .collect()
    }

    fn to_schema(g: &G, defs: &mut Map<String, Value>, rng: &mut Rng) -> Value {
        match g {
            G::Str => json!({"type": "string"}),
            G::Int => json!({"type": "integer"}),
            G::Float => json!({"type": "number"}),
            G::Bool => json!({"type": "boolean"}),
            G::Dec => decimal(),
            G::Enum(vs) => json!({"type": "string", "enum": vs}),
            G::Rec(fields) => {
                let s = record_schema(fields, defs, rng);
                if rng.chance(3) {
                    let name = format!("R{}", defs.len());
                    defs.insert(name.clone(), s);
                    json!({"$ref": format!("#/$defs/{name}")})
                } else {
                    s
                }
            }
            G::Sum(cases) => {
                let s = json!({"anyOf": case_schemas(cases, defs, rng)});
                if rng.chance(2) {
                    let name = format!("S{}", defs.len());
                    defs.insert(name.clone(), s);
                    json!({"$ref": format!("#/$defs/{name}")})
                } else {
                    s
                }
            }
            G::Opt(inner) => match &**inner {
                // An Option of a sum type may list the cases and null.
                G::Sum(cases) if rng.chance(2) => {
                    let mut alts = case_schemas(cases, defs, rng);
                    alts.push(json!({"type": "null"}));
                    json!({ "anyOf": alts })
                }
                _ => json!({"anyOf": [to_schema(inner, defs, rng), {"type": "null"}]}),
            },
            G::List(inner) => json!({"type": "array", "items": to_schema(inner, defs, rng)}),
        }
    }

    fn gen_fields_value(fields: &[(&str, G)], rng: &mut Rng, m: &mut Map<String, Value>) {
        for (k, g) in fields {
            m.insert((*k).to_owned(), gen_value(g, rng));
        }
    }

    fn gen_value(g: &G, rng: &mut Rng) -> Value {
        match g {
            G::Str => {
                let pool = [
                    'a', 'b', ' ', '"', '\\', '\n', '\t', '/', 'é', '日', '本', '😀', '\u{1}',
                    '\u{7f}', 'Z', '\u{2028}',
                ];
                let n = rng.below(8);
                Value::String((0..n).map(|_| rng.pick(&pool)).collect())
            }
            G::Int => json!(rng.pick(&[0, 7, -3, 42, i64::MAX, i64::MIN, 1_234_567_890_123])),
            G::Float => serde_json::from_str(rng.pick(&[
                "0.5",
                "-2.25",
                "1e3",
                "2.5E-2",
                "-0.0",
                "3",
                "1.0e+2",
                "0",
                "123456789.125",
            ]))
            .unwrap(),
            G::Bool => Value::Bool(rng.chance(2)),
            G::Dec => json!(rng.pick(&["12.50", "-3", "0", "7.125"])),
            G::Enum(vs) => json!(rng.pick(vs)),
            G::Rec(fields) => {
                let mut m = Map::new();
                gen_fields_value(fields, rng, &mut m);
                Value::Object(m)
            }
            G::Sum(cases) => {
                let (name, fields) = rng.pick(cases);
                let mut m = Map::new();
                m.insert("kind".into(), json!(name));
                gen_fields_value(&fields, rng, &mut m);
                Value::Object(m)
            }
            G::Opt(inner) => {
                if rng.chance(3) {
                    Value::Null
                } else {
                    gen_value(inner, rng)
                }
            }
            G::List(inner) => {
                Value::Array((0..rng.below(4)).map(|_| gen_value(inner, rng)).collect())
            }
        }
    }

    fn ws(rng: &mut Rng, out: &mut String) {
        out.push_str(rng.pick(&["", "", "", " ", "\n  ", "\t", "\r\n"]));
    }

    /// JSON text of `v` with random spacing, key order and escapes.
    fn render(v: &Value, rng: &mut Rng, out: &mut String) {
        match v {
            Value::String(s) => render_str(s, rng, out),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    render(item, rng, out);
                    ws(rng, out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                // Usually the kind first, as models write it; sometimes not.
                entries.sort_by_key(|(k, _)| *k != "kind");
                if rng.chance(3) {
                    for i in (1..entries.len()).rev() {
                        let j = rng.below(i + 1);
                        entries.swap(i, j);
                    }
                }
                out.push('{');
                for (i, (k, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    render_str(k, rng, out);
                    ws(rng, out);
                    out.push(':');
                    ws(rng, out);
                    render(item, rng, out);
                    ws(rng, out);
                }
                out.push('}');
            }
            Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() && rng.chance(2) => out.push_str(&format!("{f:e}")),
                _ => out.push_str(&n.to_string()),
            },
            other => out.push_str(&other.to_string()),
        }
    }

    fn render_str(s: &str, rng: &mut Rng, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' if rng.chance(2) => out.push_str("\\n"),
                '/' if rng.chance(2) => out.push_str("\\/"),
                c if (c as u32) < 0x20 || rng.chance(8) => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        if rng.chance(2) {
                            out.push_str(&format!("\\u{u:04x}"));
                        } else {
                            out.push_str(&format!("\\u{u:04X}"));
                        }
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// How many `"kind"` keys of `json` come after another key.
    fn kinds_after_other_keys(json: &str) -> usize {
        json.match_indices("\"kind\"")
            .filter(|(i, _)| json[..*i].trim_end().ends_with(','))
            .count()
    }

    #[test]
    fn generated_schemas_values_and_chunkings() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut cases = 0;
        let mut partial_total = 0;
        let (mut chars_total, mut late) = (0, 0);
        while cases < 320 {
            let mut fields = gen_fields(&mut rng, 0, 4);
            while fields.is_empty() {
                fields.push(("value", gen_ty(&mut rng, 1)));
            }
            let root = G::Rec(fields);
            let mut defs = Map::new();
            let mut schema = match to_schema(&root, &mut defs, &mut rng) {
                // The root itself is not a reference here.
                Value::Object(m) if m.contains_key("$ref") => {
                    let name = m["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
                    defs[name].clone()
                }
                s => s,
            };
            schema["$defs"] = Value::Object(defs);
            for _ in 0..3 {
                let value = gen_value(&root, &mut rng);
                let mut json = String::new();
                ws(&mut rng, &mut json);
                render(&value, &mut rng, &mut json);
                ws(&mut rng, &mut json);
                if json.chars().count() > 1200 {
                    continue;
                }
                cases += 1;
                chars_total += json.len();
                late += kinds_after_other_keys(&json);
                let expected: Value = serde_json::from_str(&json).unwrap();
                assert!(
                    conforms(&schema, &schema, &expected, false),
                    "{schema} {json}"
                );
                let reply = if rng.chance(4) {
                    format!("```json\n{json}\n```")
                } else {
                    json.clone()
                };
                let what = format!("schema {schema}\nreply {reply}");
                let (p, fine) = run(&schema, chunks(&reply, 1).iter().map(String::as_str));
                assert_eq!(p.broken(), None, "{what}");
                assert!(p.complete(), "{what}");
                assert_eq!(p.value().as_ref(), Some(&expected), "{what}");
                assert_chain(&fine, &expected, &what);
                for partial in &fine {
                    assert!(
                        conforms(&schema, &schema, partial, true),
                        "{partial}\n{what}"
                    );
                }
                partial_total += fine.len();
                // A random chunking shows a subsequence of the same partials.
                let chars: Vec<char> = reply.chars().collect();
                let mut pieces = Vec::new();
                let mut i = 0;
                while i < chars.len() {
                    let n = 1 + rng.below(12);
                    pieces.push(
                        chars[i..(i + n).min(chars.len())]
                            .iter()
                            .collect::<String>(),
                    );
                    i += n;
                }
                let (q, coarse) = run(&schema, pieces.iter().map(String::as_str));
                assert_eq!(q.broken(), None, "{what}");
                assert_eq!(q.value().as_ref(), Some(&expected), "{what}");
                assert!(is_subsequence(&coarse, &fine), "{what}");
                // Every prefix of the reply is a reply still arriving.
                let cut = rng.below(chars.len() + 1);
                let prefix: String = chars[..cut].iter().collect();
                let mut r = PartialParser::new(&schema);
                r.push(&prefix);
                assert_eq!(r.broken(), None, "{what}\nprefix {prefix}");
                if let Some(v) = r.value() {
                    assert!(is_state_of(&v, &expected), "{v}\n{what}");
                }
            }
        }
        // The generator reaches the cases that matter.
        assert!(late >= 5, "{late} kinds after other keys");
        assert!(chars_total > cases * 50, "{chars_total} characters");
        assert!(partial_total > cases * 4, "{partial_total} partials");
    }

    #[test]
    fn is_state_of_judges() {
        assert!(is_state_of(&json!({}), &json!({"a": 1})));
        assert!(is_state_of(&json!({"a": "x"}), &json!({"a": "xy"})));
        assert!(!is_state_of(&json!({"a": "y"}), &json!({"a": "xy"})));
        assert!(!is_state_of(&json!({"b": 1}), &json!({"a": 1})));
        assert!(!is_state_of(&json!({"a": 2}), &json!({"a": 1})));
        assert!(is_state_of(&json!([1, "a"]), &json!([1, "ab", 3])));
        assert!(!is_state_of(&json!(["a", 1]), &json!(["ab", 1])));
        assert!(!is_state_of(&json!([1, 2, 3]), &json!([1, 2])));
        assert!(!is_state_of(&json!(null), &json!({})));
    }
}
