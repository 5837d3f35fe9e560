//! Validator functions: `@ai(…, check = invoice_ok)` in Vox, or a closure
//! given to [`crate::Client::call_ai_checked`] in Rust (docs/runtime.md,
//! "Checks").
//!
//! After a reply parses into the return type, the check looks at the value
//! and returns the problems it finds; any problem rejects the attempt and
//! the problems are the correction. Under the `fixture` provider the check
//! runs on the fixture body's value too. Functions without a check go
//! through [`NoCheck`], which compiles to nothing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::Serialize;

use crate::ai_function::AiFunction;
use crate::error::{Error, LAST_REPLY_CHARS};
use crate::server_text::server_text;

/// What a call does with a parsed value before accepting it.
pub(crate) trait ValueCheck<T>: Sync {
    /// `Err(correction)` when the value is rejected.
    fn check(&self, value: &T) -> Result<(), String>;

    /// The fixture body's value, checked the same way; a rejected one is
    /// `Error::InvalidOutput` after one attempt.
    fn check_fixture(&self, function: &AiFunction, value: T) -> Result<T, Error>;
}

/// No check: every parsed value is accepted.
pub(crate) struct NoCheck;

impl<T> ValueCheck<T> for NoCheck {
    #[inline(always)]
    fn check(&self, _: &T) -> Result<(), String> {
        Ok(())
    }

    #[inline(always)]
    fn check_fixture(&self, _: &AiFunction, value: T) -> Result<T, Error> {
        Ok(value)
    }
}

/// `C`, and a fixture body's value held to the strings the schema
/// constrains — run-time categories (the call's values) and `Decimal`s —
/// as a reply is: what generated code calls with, whose values serialize.
pub(crate) struct FixtureFits<C>(pub C);

impl<T, C> ValueCheck<T> for FixtureFits<C>
where
    T: Serialize + serde::de::DeserializeOwned,
    C: ValueCheck<T>,
{
    #[inline(always)]
    fn check(&self, value: &T) -> Result<(), String> {
        self.0.check(value)
    }

    fn check_fixture(&self, function: &AiFunction, value: T) -> Result<T, Error> {
        let output = function.output();
        if output.checks_strings() {
            let text = serde_json::to_string(&value).unwrap_or_default();
            let text = if output.is_wrapped() {
                format!("{{\"value\":{text}}}")
            } else {
                text
            };
            if let Err(correction) = crate::repair::parse_reply::<T>(&text, output, false) {
                return Err(Error::InvalidOutput {
                    function: function.name().to_owned(),
                    attempts: 1,
                    last_error: format!(
                        "the fixture body's value is not of the schema: {correction}"
                    ),
                    last_reply: server_text(&text, LAST_REPLY_CHARS),
                });
            }
        }
        self.0.check_fixture(function, value)
    }
}

/// A check function: the problems it finds (none: accepted).
pub(crate) struct FnCheck<C>(pub C);

impl<T, C> ValueCheck<T> for FnCheck<C>
where
    T: Serialize,
    C: Fn(&T) -> Vec<String> + Sync,
{
    fn check(&self, value: &T) -> Result<(), String> {
        // A check is user code: a panic in it (an overflow in Vox
        // arithmetic, say) rejects the value instead of unwinding through
        // the runtime.
        let problems = catch_unwind(AssertUnwindSafe(|| (self.0)(value)))
            .unwrap_or_else(|panic| vec![format!("the check failed: {}", panic_text(&*panic))]);
        let problems: Vec<&str> = problems
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let mut text =
            String::from("the reply fits the schema, but the function's check rejected it:");
        for p in problems {
            // One line per problem: a problem may quote the reply, whose
            // line breaks and escapes are the server's.
            text.push_str("\n- ");
            text.push_str(&server_text(p, usize::MAX));
        }
        Err(text)
    }

    fn check_fixture(&self, function: &AiFunction, value: T) -> Result<T, Error> {
        match self.check(&value) {
            Ok(()) => Ok(value),
            Err(last_error) => Err(Error::InvalidOutput {
                function: function.name().to_owned(),
                attempts: 1,
                last_error,
                last_reply: server_text(
                    &serde_json::to_string(&value).unwrap_or_default(),
                    LAST_REPLY_CHARS,
                ),
            }),
        }
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai_function::OutputSchema;

    static OUT: OutputSchema = OutputSchema::new("int", "{}", true);
    static F: AiFunction = AiFunction::new("count", "", &OUT);

    #[test]
    fn problems_reject_and_are_listed() {
        let check = FnCheck(|n: &i64| {
            let mut problems = Vec::new();
            if *n < 0 {
                problems.push("the count cannot be negative".to_owned());
            }
            if *n > 100 {
                problems.push("  more than 100 items?  ".to_owned());
                problems.push(String::new());
            }
            problems
        });
        assert_eq!(check.check(&5), Ok(()));
        assert_eq!(
            check.check(&-1).unwrap_err(),
            "the reply fits the schema, but the function's check rejected it:\n- the count cannot be negative"
        );
        assert!(check
            .check(&101)
            .unwrap_err()
            .ends_with("\n- more than 100 items?"));
        let err = check.check_fixture(&F, -3).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidOutput { function, attempts: 1, last_reply, .. }
                if function == "count" && last_reply == "-3"),
            "{err:?}"
        );
        assert_eq!(check.check_fixture(&F, 3), Ok(3));
        assert_eq!(ValueCheck::<i64>::check(&NoCheck, &-1), Ok(()));
    }

    #[test]
    fn a_panicking_check_rejects_instead_of_unwinding() {
        let check = FnCheck(|n: &i64| {
            let doubled = n.checked_mul(2).expect("int overflow in invoice_ok");
            vec![format!("{doubled}")]
        });
        let text = check.check(&i64::MAX).unwrap_err();
        assert!(
            text.ends_with("- the check failed: int overflow in invoice_ok"),
            "{text}"
        );
    }
}
