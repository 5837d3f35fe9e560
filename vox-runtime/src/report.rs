//! What a call cost: every attempt, its tokens and latency, the transport
//! retries, and the price (docs/runtime.md, "Usage and cost").

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::config::Provider;

/// One attempt of a call: where it went, what it used, how long it took,
/// and why it was rejected (if it was).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AttemptReport {
    #[serde(serialize_with = "provider_name")]
    pub provider: Provider,
    pub model: String,
    /// The model the server says answered (`model`, Gemini's
    /// `modelVersion`), when it says (a streamed answer's events too).
    pub response_model: Option<String>,
    /// Why the model stopped, as the server said (`stop`, `length`,
    /// `end_turn`, `STOP`, …).
    pub finish_reason: Option<String>,
    /// Every input token (cached ones included), as the server reported.
    pub input_tokens: Option<u64>,
    /// Every output token (reasoning ones included).
    pub output_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    /// From sending the request to reading the whole answer (transport
    /// retries included).
    #[serde(serialize_with = "as_millis")]
    pub latency: Duration,
    /// Why the attempt was rejected; `None` for the accepted one (and for
    /// one that ended the call with an error).
    pub rejected: Option<String>,
    /// Whether the answer came from a cassette (nothing was spent).
    pub replayed: bool,
    /// The attempt's price in USD, when its model has one.
    pub cost_usd: Option<f64>,
}

fn provider_name<S: serde::Serializer>(p: &Provider, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

/// Token totals over a call's attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct UsageTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub reasoning_tokens: u64,
}

/// The report of one call ([`ReportHandle`]): its attempts in order
/// (across fallbacks), the transport retries under them, and the totals.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CallReport {
    pub attempts: Vec<AttemptReport>,
    /// Tries the transport made again (429, 5xx, …) under the attempts:
    /// they never count as attempts.
    pub transport_retries: u32,
    /// How many times the call moved to a fallback.
    pub fallbacks: u32,
}

impl CallReport {
    /// Tokens summed over the attempts.
    pub fn totals(&self) -> UsageTotals {
        let mut t = UsageTotals::default();
        for a in &self.attempts {
            t.input_tokens += a.input_tokens.unwrap_or(0);
            t.output_tokens += a.output_tokens.unwrap_or(0);
            t.cached_tokens += a.cached_tokens.unwrap_or(0);
            t.reasoning_tokens += a.reasoning_tokens.unwrap_or(0);
        }
        t
    }

    /// The call's price in USD: the sum of its attempts', `None` when an
    /// attempt that spent tokens has no known price.
    pub fn cost_usd(&self) -> Option<f64> {
        // A replay is priced 0 when recorded; an attempt without a price
        // costs nothing only when it spent nothing.
        self.attempts
            .iter()
            .map(|a| match a.cost_usd {
                Some(cost) => Some(cost),
                None if a.input_tokens.unwrap_or(0) + a.output_tokens.unwrap_or(0) == 0 => {
                    Some(0.0)
                }
                None => None,
            })
            .sum()
    }
}

/// Where a call writes its report: give a clone to
/// `CallOptions::report` and read it with [`ReportHandle::get`] once the
/// call is done (also after an error). One handle may collect several
/// calls: their attempts are appended.
#[derive(Debug, Clone, Default)]
pub struct ReportHandle(Arc<Mutex<CallReport>>);

impl PartialEq for ReportHandle {
    fn eq(&self, other: &ReportHandle) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ReportHandle {
    pub fn new() -> ReportHandle {
        ReportHandle::default()
    }

    /// The report so far.
    pub fn get(&self) -> CallReport {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn with(&self, f: impl FnOnce(&mut CallReport)) {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// Prices in USD per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cached input tokens (else the input price).
    pub cached_input: Option<f64>,
}

impl Price {
    pub const fn new(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cached_input: None,
        }
    }

    pub const fn with_cached_input(mut self, cached: f64) -> Price {
        self.cached_input = Some(cached);
        self
    }

    /// The price of `input` (of which `cached`) and `output` tokens.
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let fresh = (input - cached) as f64 * self.input;
        let cached = cached as f64 * self.cached_input.unwrap_or(self.input);
        (fresh + cached + output as f64 * self.output) / 1_000_000.0
    }
}

/// Prices the providers published for their models when this table was
/// written (USD per million tokens; model names match by prefix, the
/// longest first). `ConfigBuilder::price` and `VOX_LLM_PRICES` override.
pub(crate) const PRICES: &[(&str, Price)] = &[
    (
        "gpt-4o-mini",
        Price::new(0.15, 0.60).with_cached_input(0.075),
    ),
    ("gpt-4o", Price::new(2.50, 10.00).with_cached_input(1.25)),
    (
        "gpt-4.1-nano",
        Price::new(0.10, 0.40).with_cached_input(0.025),
    ),
    (
        "gpt-4.1-mini",
        Price::new(0.40, 1.60).with_cached_input(0.10),
    ),
    ("gpt-4.1", Price::new(2.00, 8.00).with_cached_input(0.50)),
    (
        "claude-haiku-4-5",
        Price::new(1.00, 5.00).with_cached_input(0.10),
    ),
    (
        "claude-3-5-haiku",
        Price::new(0.80, 4.00).with_cached_input(0.08),
    ),
    (
        "claude-sonnet-4",
        Price::new(3.00, 15.00).with_cached_input(0.30),
    ),
    (
        "claude-opus-4",
        Price::new(15.00, 75.00).with_cached_input(1.50),
    ),
    (
        "gemini-2.5-flash",
        Price::new(0.30, 2.50).with_cached_input(0.075),
    ),
    (
        "gemini-2.5-pro",
        Price::new(1.25, 10.00).with_cached_input(0.31),
    ),
];

/// The price of `model`: the configured ones first, then the table.
pub(crate) fn price_of(configured: &[(String, Price)], model: &str) -> Option<Price> {
    let best = |table: &mut dyn Iterator<Item = (&str, Price)>| {
        table
            .filter(|(prefix, _)| model.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, p)| p)
    };
    best(&mut configured.iter().map(|(m, p)| (m.as_str(), *p)))
        .or_else(|| best(&mut PRICES.iter().map(|(m, p)| (*m, *p))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_match_the_longest_prefix_and_configured_ones_win() {
        assert_eq!(price_of(&[], "gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(price_of(&[], "gpt-4o-2024-08-06").unwrap().input, 2.50);
        assert_eq!(price_of(&[], "llama3.2"), None);
        let mine = [("gpt-4o".to_owned(), Price::new(1.0, 2.0))];
        assert_eq!(price_of(&mine, "gpt-4o-mini").unwrap().input, 1.0);
        let p = Price::new(1.0, 4.0).with_cached_input(0.5);
        assert!((p.cost(1_000_000, 500_000, 250_000) - (0.5 + 0.25 + 1.0)).abs() < 1e-12);
    }
}
