//! Per-call options: what one call of an `@ai` function changes from its
//! compiled settings (docs/runtime.md, "Options").

use std::time::Duration;

/// Settings for one call of an `@ai` function, from Rust, without a
/// rebuild: generated code takes them in `f_with(&options, args…)` (and
/// `f_stream_with`). Whatever is left unset keeps the function's compiled
/// value (`@ai(model = …)`, …), else the configured one.
///
/// ```
/// use vox_runtime::CallOptions;
/// let cheap = CallOptions::new()
///     .model("openai:gpt-4o-mini")
///     .temperature(0.0)
///     .max_iterations(2)
///     .token_budget(2_000);
/// # let _ = cheap;
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallOptions {
    pub(crate) model: Option<String>,
    pub(crate) fallback: Option<Vec<String>>,
    pub(crate) temperature: Option<f64>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) max_iterations: Option<u32>,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) token_budget: Option<u64>,
    pub(crate) report: Option<crate::ReportHandle>,
    pub(crate) categories: Option<crate::categories::Categories>,
    pub(crate) instruction: Option<String>,
    pub(crate) max_steps: Option<u32>,
    pub(crate) tool_timeout: Option<Duration>,
}

impl CallOptions {
    /// No change: the compiled and configured settings.
    pub const DEFAULT: CallOptions = CallOptions {
        model: None,
        fallback: None,
        temperature: None,
        max_tokens: None,
        max_iterations: None,
        request_timeout: None,
        token_budget: None,
        report: None,
        categories: None,
        instruction: None,
        max_steps: None,
        tool_timeout: None,
    };

    /// No change yet (the same as [`CallOptions::DEFAULT`]).
    pub fn new() -> CallOptions {
        CallOptions::DEFAULT
    }

    /// The model, with an optional `provider:` prefix
    /// (`"anthropic:claude-sonnet-4-5"` sends the call to Anthropic).
    pub fn model(mut self, model: impl Into<String>) -> CallOptions {
        self.model = Some(model.into());
        self
    }

    /// The fallbacks (`provider:model`, tried in order); an empty list means
    /// none.
    pub fn fallback<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> CallOptions {
        self.fallback = Some(models.into_iter().map(Into::into).collect());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> CallOptions {
        self.temperature = Some(temperature);
        self
    }

    /// The completion limit of each request.
    pub fn max_tokens(mut self, tokens: u32) -> CallOptions {
        self.max_tokens = Some(tokens);
        self
    }

    /// Attempts before giving up (0 counts as 1).
    pub fn max_iterations(mut self, attempts: u32) -> CallOptions {
        self.max_iterations = Some(attempts);
        self
    }

    /// The model requests a call with tools makes at most, tool turns and
    /// corrections together (0 counts as 1; docs/runtime.md, "Tools").
    pub fn max_steps(mut self, steps: u32) -> CallOptions {
        self.max_steps = Some(steps);
        self
    }

    /// The time one tool call may run (default 60 s); one that takes
    /// longer is answered with an error result.
    pub fn tool_timeout(mut self, timeout: Duration) -> CallOptions {
        self.tool_timeout = Some(timeout);
        self
    }

    /// The time one try may take (sending, waiting, reading).
    pub fn request_timeout(mut self, timeout: Duration) -> CallOptions {
        self.request_timeout = Some(timeout);
        self
    }

    /// At most this many tokens (input and output, over every attempt of
    /// the call): an attempt that could cross it is not sent, and the call
    /// ends with `Error::BudgetExceeded` (docs/runtime.md, "Budgets").
    pub fn token_budget(mut self, tokens: u64) -> CallOptions {
        self.token_budget = Some(tokens);
        self
    }

    /// Writes the call's report — each attempt's provider, model, tokens,
    /// latency and rejection, the transport retries, the cost — to
    /// `handle`, read with `ReportHandle::get` once the call is done
    /// (docs/runtime.md, "Usage and cost").
    pub fn report(mut self, handle: &crate::ReportHandle) -> CallOptions {
        self.report = Some(handle.clone());
        self
    }

    /// The values of the run-time category type `type_name`
    /// (`type Category = dynamic` in Vox) for this call: the schema sent
    /// lists exactly these, a reply outside them is corrected with them
    /// listed, and the cassette key includes them (docs/runtime.md,
    /// "Categories at run time"). A call whose return type has such a type
    /// without values for it fails with `Error::Categories` before anything
    /// is sent; values for a type the function does not use are ignored.
    ///
    /// ```
    /// use vox_runtime::CallOptions;
    /// let queues = ["billing", "shipping", "returns"];
    /// let options = CallOptions::new().categories("Category", queues);
    /// # let _ = options;
    /// ```
    pub fn categories<S: Into<String>>(
        mut self,
        type_name: &str,
        values: impl IntoIterator<Item = S>,
    ) -> CallOptions {
        self.categories.get_or_insert_with(Default::default).set(
            type_name.to_owned(),
            values.into_iter().map(Into::into).collect(),
        );
        self
    }

    /// The task the model is given instead of the function's doc comment,
    /// for this call (to try a rewording without a rebuild; `cargo vox eval
    /// --instruction`). The cassette key includes it, so a reworded call
    /// never replays the old wording's reply.
    pub fn instruction(mut self, text: impl Into<String>) -> CallOptions {
        self.instruction = Some(text.into());
        self
    }

    /// The run-time categories given (none: empty).
    pub(crate) fn categories_given(&self) -> &crate::categories::Categories {
        static NONE: crate::categories::Categories = crate::categories::Categories::NONE;
        self.categories.as_ref().unwrap_or(&NONE)
    }
}
