//! Vox `Decimal` for generated code (docs/language.md, "Decimal").
//!
//! A `Decimal` is carried as its text (a Rust `String`, JSON string), such
//! as `"12.50"` or `"-3"`: an optional `-`, one or more ASCII digits, and
//! optionally `.` and one or more digits. The text is kept as written, so
//! `"12.50"` keeps its two decimal places. The builtins that read a
//! `Decimal` fail at run time — naming the Vox function and the `.vox`
//! position, like [`super::arith`] — when the text is not of that form
//! (a `Decimal` that came from a model or from Rust code may be anything).

/// Whether `text` is a decimal number as Vox writes one.
pub fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(int) && frac.is_none_or(all_digits)
}

/// Vox `decimal(s)` of a `str`: the text itself, once it is known to be a
/// decimal number.
#[track_caller]
pub fn parse(text: &str, function: &str, at: &str) -> String {
    if is_decimal(text) {
        text.to_owned()
    } else {
        not_a_decimal(function, at, "decimal", text)
    }
}

/// Vox `decimal(n)` of an `int`: exact.
pub fn from_int(n: i64) -> String {
    n.to_string()
}

/// Vox `float(d)`: the nearest `float`.
#[track_caller]
pub fn to_float(d: &str, function: &str, at: &str) -> f64 {
    match d.parse::<f64>() {
        Ok(x) if is_decimal(d) => x,
        _ => not_a_decimal(function, at, "float", d),
    }
}

/// Vox `int(d)`: truncates toward zero (drops the decimal places); a value
/// outside `int`'s range is an error.
#[track_caller]
pub fn to_int(d: &str, function: &str, at: &str) -> i64 {
    if !is_decimal(d) {
        not_a_decimal(function, at, "int", d);
    }
    let int_part = d.split_once('.').map_or(d, |(i, _)| i);
    match int_part.parse::<i64>() {
        Ok(n) => n,
        Err(_) => super::arith::fail_with(
            "decimal has no int value",
            function,
            at,
            format_args!("int({d:?})"),
        ),
    }
}

/// Vox `a + b` on `Decimal`: exact; the result has the larger number of
/// decimal places (`"1.5" + "2.25"` is `"3.75"`, `"1.50" + "1"` is `"2.50"`).
#[track_caller]
pub fn add(a: &str, b: &str, function: &str, at: &str) -> String {
    let what = || format!("{a:?} + {b:?}");
    let (x, y) = aligned(a, b, function, at, &what);
    render(x.0.checked_add(y.0), x.1, function, at, &what)
}

/// Vox `a - b` on `Decimal`: exact, like [`add`].
#[track_caller]
pub fn sub(a: &str, b: &str, function: &str, at: &str) -> String {
    let what = || format!("{a:?} - {b:?}");
    let (x, y) = aligned(a, b, function, at, &what);
    render(x.0.checked_sub(y.0), x.1, function, at, &what)
}

/// Vox `a * b` on `Decimal`: exact; the decimal places add up
/// (`"1.5" * "2.25"` is `"3.375"`).
#[track_caller]
pub fn mul(a: &str, b: &str, function: &str, at: &str) -> String {
    let what = || format!("{a:?} * {b:?}");
    let (x, y) = (
        number(a, function, at, &what),
        number(b, function, at, &what),
    );
    let scale = x.1.checked_add(y.1);
    match scale {
        Some(scale) => render(x.0.checked_mul(y.0), scale, function, at, &what),
        None => overflow(function, at, &what),
    }
}

/// Vox `-d` on `Decimal`.
#[track_caller]
pub fn neg(d: &str, function: &str, at: &str) -> String {
    let what = || format!("-({d:?})");
    let x = number(d, function, at, &what);
    render(x.0.checked_neg(), x.1, function, at, &what)
}

/// Vox `is`, `isnt`, `<`, `<=`, `>`, `>=` on `Decimal`: by value, so
/// `"1.0"` and `"1.00"` are equal. Never overflows, however long the text.
#[track_caller]
pub fn cmp(a: &str, b: &str, function: &str, at: &str) -> std::cmp::Ordering {
    if !is_decimal(a) || !is_decimal(b) {
        not_a_decimal_in(function, at, format_args!("{a:?} compared with {b:?}"));
    }
    let (an, ai, af) = value_parts(a);
    let (bn, bi, bf) = value_parts(b);
    let magnitude = ai.len().cmp(&bi.len()).then(ai.cmp(bi)).then(af.cmp(bf));
    match (an, bn) {
        (false, true) => std::cmp::Ordering::Greater,
        (true, false) => std::cmp::Ordering::Less,
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
    }
}

/// Vox `fixed(d, digits)`: `d` rounded to `digits` decimal places (half
/// away from zero, exactly), written with exactly that many; `digits` below
/// 0 counts as 0 and above 40 as 40. A result that is zero has no sign.
#[track_caller]
pub fn fixed(d: &str, digits: i64, function: &str, at: &str) -> String {
    if !is_decimal(d) {
        not_a_decimal(function, at, "fixed", d);
    }
    let places = digits.clamp(0, 40) as usize;
    let (neg, digits_text) = match d.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, d),
    };
    let (int, frac) = digits_text.split_once('.').unwrap_or((digits_text, ""));
    // All digits, as a number with `places` decimals, plus whether to round up.
    let mut kept: Vec<u8> = int.bytes().collect();
    let mut frac_bytes = frac.bytes();
    for _ in 0..places {
        kept.push(frac_bytes.next().unwrap_or(b'0'));
    }
    let round_up = frac_bytes.next().is_some_and(|b| b >= b'5');
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let split = kept.len() - places;
    let int_part = String::from_utf8_lossy(&kept[..split]);
    let int_part = int_part.trim_start_matches('0');
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    let frac_part = String::from_utf8_lossy(&kept[split..]);
    let zero = kept.iter().all(|&b| b == b'0');
    let sign = if neg && !zero { "-" } else { "" };
    if places == 0 {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    }
}

/// The rounding modes of Vox `div` and `round` (docs/language.md,
/// "Decimal"), by the names the source writes.
pub const ROUNDING_MODES: [&str; 6] = ["half_up", "half_even", "down", "up", "floor", "ceiling"];

/// The most decimal places `div` and `round` give.
pub const MAX_PLACES: i64 = 38;

/// Vox `div(a, b, places, mode)` on `Decimal`: `a / b` with exactly
/// `places` decimal places (0 to 38), rounded by `mode` (one of
/// [`ROUNDING_MODES`]; `half_up` rounds a half away from zero); exact, so
/// `div("10", "3", 2, "half_up")` is `"3.33"` and `div("2", "3", 0,
/// "half_up")` is `"1"`. A zero divisor is a run-time error, as is a
/// result with more digits than a 128-bit integer holds.
#[track_caller]
pub fn div(a: &str, b: &str, places: i64, mode: &str, function: &str, at: &str) -> String {
    let what = || format!("div({a:?}, {b:?}, {places})");
    let x = number(a, function, at, &what);
    let y = number(b, function, at, &what);
    if y.0 == 0 {
        super::arith::fail_with("division by zero", function, at, format_args!("{}", what()));
    }
    let places = places_of(places, function, at, &what);
    // a/b = (xm / 10^xs) / (ym / 10^ys); with `places` decimals its
    // integer is xm * 10^(ys + places) / (ym * 10^xs), rounded.
    let numerator = 10i128
        .checked_pow(y.1 + places)
        .and_then(|f| x.0.checked_mul(f));
    let denominator = 10i128.checked_pow(x.1).and_then(|f| y.0.checked_mul(f));
    let (Some(n), Some(d)) = (numerator, denominator) else {
        overflow(function, at, &what)
    };
    render(Some(divide(n, d, mode)), places, function, at, &what)
}

/// Vox `round(d, places, mode)` on `Decimal`: `d` with exactly `places`
/// decimal places (0 to 38), rounded by `mode` ([`div`] by one).
#[track_caller]
pub fn round(d: &str, places: i64, mode: &str, function: &str, at: &str) -> String {
    let what = || format!("round({d:?}, {places})");
    let x = number(d, function, at, &what);
    let places = places_of(places, function, at, &what);
    let m = if places >= x.1 {
        10i128
            .checked_pow(places - x.1)
            .and_then(|f| x.0.checked_mul(f))
    } else {
        10i128
            .checked_pow(x.1 - places)
            .map(|f| divide(x.0, f, mode))
    };
    render(m, places, function, at, &what)
}

/// `places` as a count of decimal places, or a run-time error when it is
/// outside 0 to [`MAX_PLACES`].
#[track_caller]
fn places_of(places: i64, function: &str, at: &str, what: &dyn Fn() -> String) -> u32 {
    match u32::try_from(places) {
        Ok(p) if i64::from(p) <= MAX_PLACES => p,
        _ => super::arith::fail_with(
            "decimal places outside 0 to 38",
            function,
            at,
            format_args!("{}", what()),
        ),
    }
}

/// `n / d` (`d` not zero) rounded to an integer by `mode`.
fn divide(n: i128, d: i128, mode: &str) -> i128 {
    // Truncated quotient and remainder; `d` may be negative.
    let (q, r) = (n / d, n % d);
    if r == 0 {
        return q;
    }
    // The exact quotient is q + r/d; its sign is that of n/d.
    let negative = (n < 0) != (d < 0);
    let away = if negative { q - 1 } else { q + 1 };
    // Twice the remainder against the divisor, in magnitude: below, at or
    // above a half. `unsigned_abs` cannot overflow; doubling a magnitude
    // below |d| fits in u128.
    let twice = r.unsigned_abs() * 2;
    let half = twice.cmp(&d.unsigned_abs());
    let round_away = match mode {
        "down" => false,
        "up" => true,
        "floor" => negative,
        "ceiling" => !negative,
        "half_even" => match half {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => q % 2 != 0,
        },
        // "half_up": a half goes away from zero.
        _ => half != std::cmp::Ordering::Less,
    };
    if round_away {
        away
    } else {
        q
    }
}

/// The sign (false for zero), the integer digits without leading zeros and
/// the decimal places without trailing zeros of a decimal number's text.
fn value_parts(d: &str) -> (bool, &str, &str) {
    let (neg, digits) = match d.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, d),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let zero = int.is_empty() && frac.is_empty();
    (neg && !zero, int, frac)
}

/// `d` as an integer and a number of decimal places.
#[track_caller]
fn number(d: &str, function: &str, at: &str, what: &dyn Fn() -> String) -> (i128, u32) {
    if !is_decimal(d) {
        not_a_decimal_in(function, at, format_args!("{}", what()));
    }
    let (neg, digits) = match d.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, d),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let mut m: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        let digit = i128::from(b - b'0');
        match m.checked_mul(10).and_then(|m| m.checked_add(digit)) {
            Some(v) => m = v,
            None => overflow(function, at, what),
        }
    }
    match u32::try_from(frac.len()) {
        Ok(scale) => (if neg { -m } else { m }, scale),
        Err(_) => overflow(function, at, what),
    }
}

/// Both numbers with the same (the larger) number of decimal places.
#[track_caller]
fn aligned(
    a: &str,
    b: &str,
    function: &str,
    at: &str,
    what: &dyn Fn() -> String,
) -> ((i128, u32), (i128, u32)) {
    let x = number(a, function, at, what);
    let y = number(b, function, at, what);
    let scale = x.1.max(y.1);
    let widen = |n: (i128, u32)| {
        10i128
            .checked_pow(scale - n.1)
            .and_then(|f| n.0.checked_mul(f))
            .map(|m| (m, scale))
    };
    match (widen(x), widen(y)) {
        (Some(x), Some(y)) => (x, y),
        _ => overflow(function, at, what),
    }
}

/// The text of `m / 10^scale`, or a decimal overflow when `m` is `None`.
#[track_caller]
fn render(
    m: Option<i128>,
    scale: u32,
    function: &str,
    at: &str,
    what: &dyn Fn() -> String,
) -> String {
    let Some(m) = m else {
        overflow(function, at, what)
    };
    let digits = m.unsigned_abs().to_string();
    let scale = scale as usize;
    let digits = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = digits.split_at(digits.len() - scale);
    let sign = if m < 0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn overflow(function: &str, at: &str, what: &dyn Fn() -> String) -> ! {
    super::arith::fail_with("decimal overflow", function, at, format_args!("{}", what()))
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_a_decimal_in(function: &str, at: &str, what: std::fmt::Arguments<'_>) -> ! {
    super::arith::fail_with("not a decimal number", function, at, what)
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_a_decimal(function: &str, at: &str, builtin: &str, text: &str) -> ! {
    super::arith::fail_with(
        "not a decimal number",
        function,
        at,
        format_args!("{builtin}({text:?})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rounds_half_away_from_zero_exactly() {
        let f = |d: &str, n: i64| fixed(d, n, "f", "t.vox:1:1");
        assert_eq!(f("12.5", 2), "12.50");
        assert_eq!(f("2.675", 2), "2.68");
        assert_eq!(f("-2.675", 2), "-2.68");
        assert_eq!(f("9.995", 2), "10.00");
        assert_eq!(f("-0.004", 2), "0.00");
        assert_eq!(f("0.5", 0), "1");
        assert_eq!(f("007", 1), "7.0");
        assert_eq!(f("1.23", -3), "1");
        assert_eq!(f("99", 2), "99.00");
    }

    fn message<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> String {
        let err = std::panic::catch_unwind(f).err().expect("should fail");
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn decimal_text() {
        for ok in [
            "0",
            "-0",
            "12.50",
            "-3",
            "007.5",
            "0.000001",
            "123456789012345678901234567890.5",
        ] {
            assert!(is_decimal(ok), "{ok}");
        }
        for bad in [
            "", "-", ".5", "5.", "1.2.3", "+1", " 1", "1 ", "1e3", "12,50", "NaN", "inf", "--1",
            "١",
        ] {
            assert!(!is_decimal(bad), "{bad}");
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(parse("12.50", "f", "a.vox:1:1"), "12.50");
        assert_eq!(from_int(i64::MIN), "-9223372036854775808");
        assert_eq!(to_float("12.50", "f", "a.vox:1:1"), 12.5);
        assert_eq!(to_float("-0.1", "f", "a.vox:1:1"), -0.1);
        assert_eq!(to_int("-12.99", "f", "a.vox:1:1"), -12);
        assert_eq!(to_int("-9223372036854775808.9", "f", "a.vox:1:1"), i64::MIN);
        assert_eq!(to_int("0009", "f", "a.vox:1:1"), 9);
    }

    #[test]
    fn arithmetic_is_exact() {
        let at = "a.vox:1:1";
        assert_eq!(add("1.5", "2.25", "f", at), "3.75");
        assert_eq!(add("1.50", "1", "f", at), "2.50");
        assert_eq!(add("0.1", "0.2", "f", at), "0.3");
        assert_eq!(sub("1", "1.25", "f", at), "-0.25");
        assert_eq!(sub("-0.5", "-0.5", "f", at), "0.0");
        assert_eq!(mul("1.5", "2.25", "f", at), "3.375");
        assert_eq!(mul("-0.01", "0.1", "f", at), "-0.001");
        assert_eq!(mul("12.50", "3", "f", at), "37.50");
        assert_eq!(neg("12.50", "f", at), "-12.50");
        assert_eq!(neg("-0", "f", at), "0");
        assert_eq!(add("007.5", "0", "f", at), "7.5");
        let big = "99999999999999999999999999999999999999"; // 38 nines fit
        assert_eq!(sub(big, big, "f", at), "0");
    }

    #[test]
    fn comparison_is_by_value() {
        use std::cmp::Ordering::*;
        let at = "a.vox:1:1";
        for (a, b, want) in [
            ("1.0", "1.00", Equal),
            ("-0", "0.000", Equal),
            ("0.5", "0.25", Greater),
            ("0.2", "0.25", Less),
            ("-1", "0", Less),
            ("-1.5", "-1.25", Less),
            ("10", "9.99", Greater),
            ("007", "7", Equal),
        ] {
            assert_eq!(cmp(a, b, "f", at), want, "{a} vs {b}");
            assert_eq!(cmp(b, a, "f", at), want.reverse(), "{b} vs {a}");
        }
        let long = format!("0.{}1", "0".repeat(500));
        assert_eq!(cmp(&long, "0", "f", at), Greater);
    }

    #[test]
    fn errors_name_function_place_and_text() {
        let at = "x.vox:3:9";
        assert_eq!(
            message(|| parse("12,50", "f", at)),
            "vox: not a decimal number in `f` (x.vox:3:9): decimal(\"12,50\")"
        );
        assert_eq!(
            message(|| to_float("NaN", "f", at)),
            "vox: not a decimal number in `f` (x.vox:3:9): float(\"NaN\")"
        );
        assert_eq!(
            message(|| to_int("ten", "f", at)),
            "vox: not a decimal number in `f` (x.vox:3:9): int(\"ten\")"
        );
        assert_eq!(
            message(|| add("170141183460469231731687303715884105727", "1", "f", at)),
            "vox: decimal overflow in `f` (x.vox:3:9): \"170141183460469231731687303715884105727\" + \"1\""
        );
        assert_eq!(
            message(|| add(&format!("0.{}1", "0".repeat(40)), "1", "f", at)),
            format!(
                "vox: decimal overflow in `f` (x.vox:3:9): \"0.{}1\" + \"1\"",
                "0".repeat(40)
            )
        );
        assert_eq!(
            message(|| mul("x", "1", "f", at)),
            "vox: not a decimal number in `f` (x.vox:3:9): \"x\" * \"1\""
        );
        assert_eq!(
            message(|| cmp("1", "1,0", "f", at)),
            "vox: not a decimal number in `f` (x.vox:3:9): \"1\" compared with \"1,0\""
        );
        assert_eq!(
            message(|| to_int("9223372036854775808", "f", at)),
            "vox: decimal has no int value in `f` (x.vox:3:9): int(\"9223372036854775808\")"
        );
    }
}

#[cfg(test)]
mod division_tests {
    use super::*;

    fn d(a: &str, b: &str, places: i64, mode: &str) -> String {
        div(a, b, places, mode, "t", "t.vox:1:1")
    }

    #[test]
    fn division_rounds_as_its_mode_says() {
        assert_eq!(d("10", "3", 2, "half_up"), "3.33");
        assert_eq!(d("2", "3", 0, "half_up"), "1");
        assert_eq!(d("100.00", "3", 2, "down"), "33.33");
        assert_eq!(d("100.00", "3", 2, "up"), "33.34");
        assert_eq!(d("1", "8", 2, "half_up"), "0.13");
        assert_eq!(d("1", "8", 2, "half_even"), "0.12");
        assert_eq!(d("3", "8", 2, "half_even"), "0.38");
        assert_eq!(d("-1", "8", 2, "half_up"), "-0.13");
        assert_eq!(d("-1", "8", 2, "floor"), "-0.13");
        assert_eq!(d("-1", "8", 2, "ceiling"), "-0.12");
        assert_eq!(d("1", "-8", 2, "floor"), "-0.13");
        assert_eq!(d("-1", "-8", 2, "floor"), "0.12");
        assert_eq!(d("7.5", "2.5", 0, "down"), "3");
        assert_eq!(d("7.5", "2.5", 3, "down"), "3.000");
        assert_eq!(d("0", "7", 2, "up"), "0.00");
        assert_eq!(round("2.675", 2, "half_up", "t", "t"), "2.68");
        assert_eq!(round("2.665", 2, "half_even", "t", "t"), "2.66");
        assert_eq!(round("-2.5", 0, "half_up", "t", "t"), "-3");
        assert_eq!(round("-2.5", 0, "half_even", "t", "t"), "-2");
        assert_eq!(round("1.2", 3, "half_up", "t", "t"), "1.200");
        assert_eq!(round("-0.004", 2, "half_up", "t", "t"), "0.00");
    }

    /// Every mode against an exact reference (the quotient's rational
    /// value, compared by cross-multiplication) over a grid of operands.
    #[test]
    fn division_matches_a_rational_reference() {
        let values = [
            "0", "1", "-1", "2.5", "-2.5", "7", "-7", "0.3", "10.00", "-0.125", "999.99",
        ];
        for a in values {
            for b in values.iter().filter(|b| **b != "0" && **b != "-0") {
                for places in 0..4 {
                    for mode in ROUNDING_MODES {
                        let got = d(a, b, places, mode);
                        let (x, y, g) = (
                            number(a, "t", "t", &String::new),
                            number(b, "t", "t", &String::new),
                            number(&got, "t", "t", &String::new),
                        );
                        assert_eq!(g.1, places as u32, "{a}/{b} {places} {mode}: {got}");
                        // q = x/y exactly, as a fraction p/r with r > 0.
                        let (mut p, mut r) = (x.0 * 10i128.pow(y.1), y.0 * 10i128.pow(x.1));
                        if r < 0 {
                            (p, r) = (-p, -r);
                        }
                        // The result g = gm / 10^places must be within one
                        // unit of q, on the side the mode says.
                        let unit = 10i128.pow(places as u32);
                        let diff = g.0 * r - p * unit; // (g - q) * r * unit
                        assert!(diff.abs() < r, "{a}/{b} {places} {mode}: {got}");
                        let positive = p > 0;
                        match mode {
                            "down" => assert!(
                                if positive { diff <= 0 } else { diff >= 0 },
                                "{a}/{b} {mode} {got}"
                            ),
                            "up" => assert!(
                                if positive { diff >= 0 } else { diff <= 0 } || p == 0,
                                "{a}/{b} {mode} {got}"
                            ),
                            "floor" => assert!(diff <= 0, "{a}/{b} {mode} {got}"),
                            "ceiling" => assert!(diff >= 0, "{a}/{b} {mode} {got}"),
                            _ => assert!(2 * diff.abs() <= r, "{a}/{b} {mode} {got}"),
                        }
                    }
                }
            }
        }
    }
}
