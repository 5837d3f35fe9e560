//! Vox builtins that generated code calls as functions.
//!
//! Most builtins (`len`, `int`, `float`, `assert`, `assert_eq`) compile to
//! plain Rust expressions; the ones here need a shared definition of how a
//! Vox value looks as text (`str`, `print`), or of the text a number is
//! read from (`parse_int`, `parse_float`, `parse_decimal`).

use std::fmt::Display;

use serde::ser::{Impossible, Serialize, Serializer};

/// Vox `str(v)`: strings as they are, booleans and integers plainly, floats
/// as Rust's `Display` prints them (`1.5`, `2`, `NaN`), everything else
/// (records, lists, options, unit) as compact JSON.
pub fn to_str<T: Serialize + ?Sized>(value: &T) -> String {
    match value.serialize(ScalarText) {
        Ok(text) => text,
        Err(NotScalar) => serde_json::to_string(value)
            .unwrap_or_else(|e| format!("<value that cannot be shown: {e}>")),
    }
}

/// Vox `fixed(x, digits)` of a `float` (or an `int`): `x` with exactly
/// `digits` decimal places, rounded from its exact binary value (so `2.675`,
/// stored as 2.67499…, gives `"2.67"`: use a `Decimal` for exact money);
/// `digits` below 0 counts as 0 and above 40 as 40. A result that is zero
/// has no sign; infinities and NaN read `inf`, `-inf`, `NaN`.
pub fn fixed(x: f64, digits: i64) -> String {
    let places = digits.clamp(0, 40) as usize;
    let text = format!("{x:.places$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_owned(),
        _ => text,
    }
}

/// `s` without the ASCII whitespace around it (space, tab, line feed,
/// form feed, carriage return): what the `parse_*` builtins ignore.
fn trim_ascii_space(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// `s` without one leading `+` or `-`, and whether it was a `-`.
fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// One or more ASCII digits.
fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Vox `parse_int(s)` (docs/language.md, "Reading numbers from text"):
/// after trimming ASCII whitespace, an optional `+` or `-` and one or more
/// ASCII digits whose value fits an `int`; anything else is `None`.
pub fn parse_int(s: &str) -> Option<i64> {
    let t = trim_ascii_space(s);
    let (_, digits) = split_sign(t);
    if !all_digits(digits) {
        return None;
    }
    // The sign and digits are what `i64::from_str` reads; too large is `None`.
    t.parse::<i64>().ok()
}

/// Vox `parse_float(s)`: after trimming ASCII whitespace, an optional `+`
/// or `-`, digits with an optional `.` and fraction (`1.5`, `.5`, `2.`;
/// at least one digit), and an optional exponent (`e` or `E`, an optional
/// sign, digits). The nearest `float`; a value too large for one
/// (`1e999`) is `None`, and so are `inf`, `nan` and `1_000`.
pub fn parse_float(s: &str) -> Option<f64> {
    let t = trim_ascii_space(s);
    let (_, rest) = split_sign(t);
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
        return None;
    }
    if let Some(e) = exponent {
        if !all_digits(split_sign(e).1) {
            return None;
        }
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Some(x),
        _ => None,
    }
}

/// Vox `parse_decimal(s)`: after trimming ASCII whitespace, an optional `+`
/// or `-`, one or more ASCII digits, and optionally `.` and one or more
/// digits (the text [`super::decimal::is_decimal`] takes, and a `+`). The
/// `Decimal` is that text as written, without a `+`: `" +12.50 "` is
/// `"12.50"`.
pub fn parse_decimal(s: &str) -> Option<String> {
    let t = trim_ascii_space(s);
    let t = match t.strip_prefix('+') {
        // One sign: `+-1` is not a number.
        Some(rest) if rest.starts_with('-') => return None,
        Some(rest) => rest,
        None => t,
    };
    super::decimal::is_decimal(t).then(|| t.to_owned())
}

/// Renders scalars; refuses everything else so the caller falls back to JSON.
struct ScalarText;

#[derive(Debug)]
struct NotScalar;

impl Display for NotScalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a scalar")
    }
}
impl std::error::Error for NotScalar {}
impl serde::ser::Error for NotScalar {
    fn custom<M: Display>(_msg: M) -> Self {
        NotScalar
    }
}

impl Serializer for ScalarText {
    type Ok = String;
    type Error = NotScalar;
    type SerializeSeq = Impossible<String, NotScalar>;
    type SerializeTuple = Impossible<String, NotScalar>;
    type SerializeTupleStruct = Impossible<String, NotScalar>;
    type SerializeTupleVariant = Impossible<String, NotScalar>;
    type SerializeMap = Impossible<String, NotScalar>;
    type SerializeStruct = Impossible<String, NotScalar>;
    type SerializeStructVariant = Impossible<String, NotScalar>;

    fn serialize_bool(self, v: bool) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_f64(self, v: f64) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_char(self, v: char) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, NotScalar> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_none(self) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_unit(self) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    /// A case of a plain enum (`type Currency = USD | EUR`) prints as its
    /// name.
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, NotScalar> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, NotScalar> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotScalar> {
        Err(NotScalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[test]
    fn fixed_writes_exactly_the_places_asked() {
        assert_eq!(fixed(12.5, 2), "12.50");
        assert_eq!(fixed(2.675, 2), "2.67");
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(-1.6, 0), "-2");
        assert_eq!(fixed(3.0, -1), "3");
        assert_eq!(fixed(f64::NEG_INFINITY, 2), "-inf");
        assert_eq!(fixed(f64::NAN, 2), "NaN");
    }

    #[test]
    fn parse_int_reads_a_signed_whole_number() {
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("  -7\n"), Some(-7));
        assert_eq!(parse_int("+007"), Some(7));
        assert_eq!(parse_int("-0"), Some(0));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            " ",
            "+",
            "-",
            "+-1",
            "--1",
            "1_000",
            "1.0",
            "1e3",
            "0x10",
            "١٢",
            "１２",
            "9223372036854775808",
            "-9223372036854775809",
            "12a",
            "1 2",
            "\u{a0}1",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_float_reads_decimal_and_exponent_forms_only() {
        assert_eq!(parse_float("1.5"), Some(1.5));
        assert_eq!(parse_float(" .5 "), Some(0.5));
        assert_eq!(parse_float("2."), Some(2.0));
        assert_eq!(parse_float("-3"), Some(-3.0));
        assert_eq!(parse_float("+1e3"), Some(1000.0));
        assert_eq!(parse_float("1E-2"), Some(0.01));
        assert_eq!(parse_float("1e-999"), Some(0.0));
        for bad in [
            "", ".", "-", "+.", "e3", "1e", "1e+", "1.5.2", "inf", "-inf", "NaN", "nan",
            "infinity", "1_000.0", "1e999", "-1e999", "0x1p3", "１.５", "1,5",
        ] {
            assert_eq!(parse_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_decimal_keeps_the_text_as_written() {
        assert_eq!(parse_decimal("12.50").as_deref(), Some("12.50"));
        assert_eq!(parse_decimal(" +3 ").as_deref(), Some("3"));
        assert_eq!(parse_decimal("-0.001").as_deref(), Some("-0.001"));
        for bad in [
            "", "+", "-", ".5", "5.", "1e3", "1_000", "+-1", "١", "12.5.0", "NaN",
        ] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parsing_never_panics_on_hostile_text() {
        let huge = "9".repeat(100_000);
        let mut hostile = vec![
            huge.clone(),
            format!("-{huge}"),
            format!("{huge}.{huge}"),
            format!("1e{huge}"),
            format!("1e-{huge}"),
            format!("0.{huge}e-{huge}"),
            "+".repeat(1000),
            "-".repeat(1000),
            "\u{0}".into(),
            "\u{660}\u{661}".into(),
            "\u{FF11}".into(),
            "1\u{301}".into(),
            "\u{FEFF}1".into(),
            "𝟙𝟚".into(),
        ];
        for sign in ["", "+", "-"] {
            for tail in ["", ".", "e", "E+", ".e", " "] {
                hostile.push(format!("{sign}{tail}"));
            }
        }
        for s in &hostile {
            let _ = parse_int(s);
            let _ = parse_float(s);
            let _ = parse_decimal(s);
        }
        assert_eq!(parse_int(&huge), None);
        assert_eq!(parse_float(&huge), None);
        assert_eq!(parse_float(&format!("1e-{huge}")), Some(0.0));
        assert_eq!(parse_decimal(&huge).as_deref(), Some(huge.as_str()));
    }

    #[derive(Serialize)]
    struct Item {
        name: String,
        qty: i64,
    }

    #[derive(Serialize)]
    #[serde(tag = "kind")]
    enum Status {
        Paid,
        Open { days_overdue: i64 },
    }

    #[test]
    fn scalars_print_plainly() {
        assert_eq!(to_str("héllo \"q\""), "héllo \"q\"");
        assert_eq!(to_str(&String::from("s")), "s");
        assert_eq!(to_str(&42i64), "42");
        assert_eq!(to_str(&-7i64), "-7");
        assert_eq!(to_str(&true), "true");
        assert_eq!(to_str(&1.5f64), "1.5");
        assert_eq!(to_str(&2.0f64), "2");
        assert_eq!(to_str(&0.1f64), "0.1");
        assert_eq!(to_str(&f64::NAN), "NaN");
        assert_eq!(to_str(&f64::INFINITY), "inf");
    }

    #[derive(Serialize)]
    #[allow(clippy::upper_case_acronyms)]
    enum Currency {
        #[serde(rename = "USD")]
        Usd,
        EUR,
    }

    #[test]
    fn plain_enums_print_their_case_name() {
        assert_eq!(to_str(&Currency::Usd), "USD");
        assert_eq!(to_str(&Currency::EUR), "EUR");
        assert_eq!(to_str(&vec![Currency::EUR]), r#"["EUR"]"#);
        assert_eq!(to_str(&Some(Currency::EUR)), r#""EUR""#);
    }

    #[test]
    fn compound_values_print_as_compact_json() {
        let item = Item {
            name: "widget".into(),
            qty: 2,
        };
        assert_eq!(to_str(&item), r#"{"name":"widget","qty":2}"#);
        assert_eq!(to_str(&vec![1, 2]), "[1,2]");
        assert_eq!(to_str(&vec!["a"]), r#"["a"]"#);
        assert_eq!(to_str(&Some(3)), "3");
        assert_eq!(to_str(&None::<i64>), "null");
        assert_eq!(to_str(&()), "null");
        assert_eq!(to_str(&Status::Paid), r#"{"kind":"Paid"}"#);
        assert_eq!(
            to_str(&Status::Open { days_overdue: 3 }),
            r#"{"kind":"Open","days_overdue":3}"#
        );
    }
}
