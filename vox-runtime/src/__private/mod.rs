//! What generated code calls, and nothing a program should name itself.
//!
//! The code vox-build generates refers to these items by path
//! (`::vox_runtime::__private::…`); they are public only so that it can.
//! They are not part of vox-runtime's API: they change together with
//! vox-codegen's emitter, and [`crate::CONTRACT_VERSION`] (checked by the
//! generated `const _: () = ::vox_runtime::__private::assert_contract(N);`)
//! makes a mismatch a compile error with an explanation instead of a wrong
//! program (docs/runtime.md, "Generated code"). The same convention as
//! serde's and prost's `__private`.

use std::future::Future;

pub mod arith;
pub mod builtins;
pub mod decimal;
pub mod show;

pub use crate::ai_function::{AiFunction, Args, OutputSchema};
pub use crate::batch::{batch_ai, batch_ai_checked};
use crate::{default_client, Error, CONTRACT_VERSION};

/// Fails compilation when generated code was made for another contract
/// version. Generated code contains
/// `const _: () = ::vox_runtime::__private::assert_contract(N);`.
///
/// ```
/// const _: () = vox_runtime::__private::assert_contract(vox_runtime::CONTRACT_VERSION);
/// ```
///
/// ```compile_fail
/// const _: () = vox_runtime::__private::assert_contract(vox_runtime::CONTRACT_VERSION + 1);
/// ```
pub const fn assert_contract(version: u32) {
    if version != CONTRACT_VERSION {
        panic!(
            "vox-build and vox-runtime disagree on the generated-code contract version: \
             use versions of vox-build and vox-runtime that belong together \
             (`cargo vox doctor --diag vox.schema_drift` explains)"
        );
    }
}

/// Runs one `@ai` call through the process-wide default client (see
/// [`default_client`]). This is the entry point generated code calls.
///
/// Under the `fixture` provider it returns `fixture.await` (the function's
/// Vox body) and makes no request; otherwise it never polls `fixture`.
pub async fn call_ai<T, F>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + Send,
    F: Future<Output = Result<T, Error>>,
{
    default_client()?.call_ai(function, args, fixture).await
}

/// [`call_ai`] with a check of the value: what `@ai(check = f)` generates
/// (see [`crate::Client::call_ai_checked`]).
pub async fn call_ai_checked<T, F, C>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
    check: C,
) -> Result<T, Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Send,
    F: Future<Output = Result<T, Error>>,
    C: Fn(&T) -> Vec<String> + Sync,
{
    default_client()?
        .call_ai_checked(function, args, fixture, check)
        .await
}

/// `f_stream`: [`call_ai`] streamed, through the default client (see
/// [`crate::Client::call_ai_stream`]).
pub fn call_ai_stream<P, T, F>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
) -> crate::AiStream<P, T>
where
    P: serde::de::DeserializeOwned,
    T: serde::de::DeserializeOwned + serde::Serialize + Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
{
    match default_client() {
        Ok(client) => client.call_ai_stream(function, args, fixture),
        Err(e) => crate::AiStream::failed(e),
    }
}

/// `f_stream` of a function with `check = f`.
pub fn call_ai_stream_checked<P, T, F, C>(
    function: &'static AiFunction,
    args: Args,
    fixture: F,
    check: C,
) -> crate::AiStream<P, T>
where
    P: serde::de::DeserializeOwned,
    T: serde::de::DeserializeOwned + serde::Serialize + Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
    C: Fn(&T) -> Vec<String> + Send + Sync + 'static,
{
    match default_client() {
        Ok(client) => client.call_ai_stream_checked(function, args, fixture, check),
        Err(e) => crate::AiStream::failed(e),
    }
}

/// A partial type's `Option` field: absent is `None` (not seen yet),
/// `null` is `Some(None)`, a value `Some(Some(v))` (docs/runtime.md,
/// "Streaming").
pub fn seen<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// Judges one reply's content as a call does — parse, repair (when
/// `repair`), correction — for the `correction` bench.
pub fn judge_reply<T: serde::de::DeserializeOwned>(
    content: &str,
    output: &OutputSchema,
    repair: bool,
) -> Result<T, String> {
    crate::repair::parse_reply::<T>(content, output, repair).map(|(value, _)| value)
}

/// The loop of the check program `cargo vox batch` builds for an `@ai`
/// function with `check = f` (docs/runtime.md, "Bulk runs"): each line of
/// standard input is one value of the function's return type as JSON, and
/// each gets one line of standard output, `{"problems":[…]}` — the check's
/// problems (none: accepted), a value that is not of the type, or a panic
/// in the check, each as a problem. Returns when standard input ends.
pub fn serve_checks<T, C>(check: C)
where
    T: serde::de::DeserializeOwned,
    C: Fn(T) -> Vec<String>,
{
    use std::io::{BufRead as _, Write as _};
    // A panic in the check is reported as a problem, not printed.
    std::panic::set_hook(Box::new(|_| {}));
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let problems = match serde_json::from_str::<T>(&line) {
            Ok(value) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(value)))
                .unwrap_or_else(|panic| {
                    let text = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "it panicked".to_owned());
                    vec![format!("the check failed: {text}")]
                }),
            Err(e) => vec![format!("the value is not of the function's type: {e}")],
        };
        let reply = serde_json::json!({ "problems": problems });
        if writeln!(stdout, "{reply}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn contract_check_accepts_current_version() {
        const _: () = super::assert_contract(crate::CONTRACT_VERSION);
    }
}
