//! Vox `int` arithmetic for generated code: the same result in every build
//! profile (docs/language.md, "Numbers").
//!
//! Every `+ - * / %` and unary `-` on `int`, and `int(x)` of a `float`,
//! compiles to a call here. A result that does not fit in an `i64`, a
//! division or remainder by zero, and a `float` that has no `int` value are
//! run-time errors: a panic whose message names the Vox function, the
//! `.vox` file, line and column, and the operands — in debug and release
//! builds alike (Rust's own operators panic in debug and wrap in release).
//! `i64::MIN % -1` is `0`: the result fits, so it is not an error.
//!
//! The functions are `#[inline]` and the checks are one branch each; the
//! failure paths are `#[cold]` and out of line. Because they are calls,
//! rustc never folds a constant Vox expression into a compile-time
//! `arithmetic_overflow` or `unconditional_panic` error.

/// Vox `a + b` on `int`.
#[inline]
#[track_caller]
pub fn add(a: i64, b: i64, function: &str, at: &str) -> i64 {
    match a.checked_add(b) {
        Some(v) => v,
        None => overflow(function, at, format_args!("{a} + {b}")),
    }
}

/// Vox `a - b` on `int`.
#[inline]
#[track_caller]
pub fn sub(a: i64, b: i64, function: &str, at: &str) -> i64 {
    match a.checked_sub(b) {
        Some(v) => v,
        None => overflow(function, at, format_args!("{a} - {b}")),
    }
}

/// Vox `a * b` on `int`.
#[inline]
#[track_caller]
pub fn mul(a: i64, b: i64, function: &str, at: &str) -> i64 {
    match a.checked_mul(b) {
        Some(v) => v,
        None => overflow(function, at, format_args!("{a} * {b}")),
    }
}

/// Vox `a / b` on `int`: truncates toward zero. `b == 0` is a division by
/// zero, `i64::MIN / -1` an overflow.
#[inline]
#[track_caller]
pub fn div(a: i64, b: i64, function: &str, at: &str) -> i64 {
    match a.checked_div(b) {
        Some(v) => v,
        None if b == 0 => division_by_zero(function, at, format_args!("{a} / {b}")),
        None => overflow(function, at, format_args!("{a} / {b}")),
    }
}

/// Vox `a % b` on `int`: the remainder of [`div`], with the sign of `a`.
/// `b == 0` is a division by zero; `i64::MIN % -1` is `0`.
#[inline]
#[track_caller]
pub fn rem(a: i64, b: i64, function: &str, at: &str) -> i64 {
    if b == 0 {
        division_by_zero(function, at, format_args!("{a} % {b}"))
    } else {
        a.wrapping_rem(b)
    }
}

/// Vox `-a` on `int`: `-i64::MIN` is an overflow.
#[inline]
#[track_caller]
pub fn neg(a: i64, function: &str, at: &str) -> i64 {
    match a.checked_neg() {
        Some(v) => v,
        None => overflow(function, at, format_args!("-({a})")),
    }
}

/// Vox `int(x)` of a `float`: truncates toward zero. NaN, the infinities
/// and values whose integer part is outside `int`'s range are errors.
#[inline]
#[track_caller]
pub fn int_of_float(x: f64, function: &str, at: &str) -> i64 {
    // -2^63 and 2^63 are exact f64s; NaN fails both comparisons.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        fail_with(
            "float has no int value",
            function,
            at,
            format_args!("int({})", super::builtins::to_str(&x)),
        )
    }
}

/// The run-time error for an `int` result out of range.
#[cold]
#[inline(never)]
#[track_caller]
pub fn overflow(function: &str, at: &str, what: std::fmt::Arguments<'_>) -> ! {
    fail_with("integer overflow", function, at, what)
}

/// The run-time error for `/` or `%` by zero.
#[cold]
#[inline(never)]
#[track_caller]
pub fn division_by_zero(function: &str, at: &str, what: std::fmt::Arguments<'_>) -> ! {
    fail_with("division by zero", function, at, what)
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn fail_with(kind: &str, function: &str, at: &str, what: std::fmt::Arguments<'_>) -> ! {
    panic!("vox: {kind} in `{function}` ({at}): {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(f: impl FnOnce() -> i64 + std::panic::UnwindSafe) -> String {
        let err = std::panic::catch_unwind(f).expect_err("should fail");
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn in_range_results() {
        assert_eq!(add(i64::MAX - 1, 1, "f", "a.vox:1:1"), i64::MAX);
        assert_eq!(sub(i64::MIN + 1, 1, "f", "a.vox:1:1"), i64::MIN);
        assert_eq!(mul(i64::MIN, 1, "f", "a.vox:1:1"), i64::MIN);
        assert_eq!(div(-7, 2, "f", "a.vox:1:1"), -3);
        assert_eq!(rem(-7, 2, "f", "a.vox:1:1"), -1);
        assert_eq!(rem(i64::MIN, -1, "f", "a.vox:1:1"), 0);
        assert_eq!(neg(i64::MAX, "f", "a.vox:1:1"), -i64::MAX);
        assert_eq!(int_of_float(-2.9, "f", "a.vox:1:1"), -2);
        assert_eq!(
            int_of_float(-9_223_372_036_854_775_808.0, "f", "a.vox:1:1"),
            i64::MIN
        );
        assert_eq!(
            int_of_float(9_223_372_036_854_774_784.0, "f", "a.vox:1:1"),
            9_223_372_036_854_774_784
        );
    }

    #[test]
    fn errors_name_function_place_and_operands() {
        let at = "x.vox:12:9";
        assert_eq!(
            message(|| add(i64::MAX, 1, "f", at)),
            "vox: integer overflow in `f` (x.vox:12:9): 9223372036854775807 + 1"
        );
        assert_eq!(
            message(|| sub(i64::MIN, 1, "f", at)),
            "vox: integer overflow in `f` (x.vox:12:9): -9223372036854775808 - 1"
        );
        assert_eq!(
            message(|| mul(i64::MAX, 2, "f", at)),
            "vox: integer overflow in `f` (x.vox:12:9): 9223372036854775807 * 2"
        );
        assert_eq!(
            message(|| div(10, 0, "f", at)),
            "vox: division by zero in `f` (x.vox:12:9): 10 / 0"
        );
        assert_eq!(
            message(|| div(i64::MIN, -1, "f", at)),
            "vox: integer overflow in `f` (x.vox:12:9): -9223372036854775808 / -1"
        );
        assert_eq!(
            message(|| rem(10, 0, "f", at)),
            "vox: division by zero in `f` (x.vox:12:9): 10 % 0"
        );
        assert_eq!(
            message(|| neg(i64::MIN, "f", at)),
            "vox: integer overflow in `f` (x.vox:12:9): -(-9223372036854775808)"
        );
        for (x, shown) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (9_223_372_036_854_775_808.0, "9223372036854776000"),
            (-9_223_372_036_854_777_856.0, "-9223372036854778000"),
        ] {
            assert_eq!(
                message(move || int_of_float(x, "f", at)),
                format!("vox: float has no int value in `f` (x.vox:12:9): int({shown})")
            );
        }
    }
}
