//! The one-line total of what a run's or a test's model requests used
//! (docs/runtime.md, "Usage and cost"): the runtime appends a line per
//! request to the file `VOX_LLM_USAGE_EVENTS` names; once the programs are
//! done, `cargo vox run` and `test` sum it and say it on stderr — only when
//! any model was asked (a fixture run or a replay says nothing).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable the runtime reads.
pub const VAR: &str = "VOX_LLM_USAGE_EVENTS";

/// The file one run's requests are counted in.
pub struct UsageEvents(PathBuf);

impl UsageEvents {
    /// A fresh file name under `dir` (created if missing).
    pub fn new(dir: &Path) -> UsageEvents {
        let _ = std::fs::create_dir_all(dir);
        UsageEvents(dir.join(format!(
            "usage-events-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        )))
    }

    pub fn env(&self) -> (&'static str, OsString) {
        (VAR, self.0.as_os_str().to_owned())
    }

    /// The total so far, and the file removed.
    pub fn finish(self) -> Option<UsageTotal> {
        let text = std::fs::read_to_string(&self.0).ok();
        let _ = std::fs::remove_file(&self.0);
        UsageTotal::parse(&text?)
    }
}

/// The sums over the requests.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct UsageTotal {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub reasoning_tokens: u64,
    /// `None` when a request's model has no known price.
    pub cost_usd: Option<f64>,
}

impl UsageTotal {
    /// Sums the lines `usage FUNCTION MODEL IN OUT CACHED REASONING COST`;
    /// `None` when there are none. Lines that do not read so are skipped.
    pub fn parse(text: &str) -> Option<UsageTotal> {
        let mut total = UsageTotal {
            cost_usd: Some(0.0),
            ..UsageTotal::default()
        };
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            let ["usage", _function, _model, input, output, cached, reasoning, cost] =
                fields.as_slice()
            else {
                continue;
            };
            let n = |s: &str| s.parse::<u64>().unwrap_or(0);
            total.requests += 1;
            total.input_tokens += n(input);
            total.output_tokens += n(output);
            total.cached_tokens += n(cached);
            total.reasoning_tokens += n(reasoning);
            total.cost_usd = match (total.cost_usd, cost.parse::<f64>()) {
                (Some(sum), Ok(c)) if c.is_finite() => Some(sum + c),
                _ => None,
            };
        }
        (total.requests > 0).then_some(total)
    }

    /// `vox: 2 model requests, 220 input tokens (50 cached), 50 output
    /// tokens (10 reasoning), $0.000205`.
    pub fn line(&self) -> String {
        let plural = if self.requests == 1 { "" } else { "s" };
        let cost = match self.cost_usd {
            Some(c) => format!("${c:.6}"),
            None => {
                "cost unknown (a model without a price; see docs/runtime.md, \"Usage and cost\")"
                    .to_owned()
            }
        };
        format!(
            "vox: {} model request{plural}, {} input tokens ({} cached), {} output tokens ({} reasoning), {cost}",
            self.requests,
            self.input_tokens,
            self.cached_tokens,
            self.output_tokens,
            self.reasoning_tokens
        )
    }
}

/// Says `events`' total on stderr, if any model was asked.
pub fn report(events: UsageEvents) {
    if let Some(total) = events.finish() {
        eprintln!("{}", total.line());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_requests_and_knows_when_a_price_is_missing() {
        let text = "usage\tread\tgpt-4o-mini\t100\t20\t50\t-\t0.000023750\n\
                    garbage line\n\
                    usage\tread\tbackup\t120\t30\t-\t10\t0.000180000\n";
        let total = UsageTotal::parse(text).unwrap();
        assert_eq!(
            (total.requests, total.input_tokens, total.output_tokens),
            (2, 220, 50)
        );
        assert_eq!((total.cached_tokens, total.reasoning_tokens), (50, 10));
        assert!((total.cost_usd.unwrap() - 0.00020375).abs() < 1e-12);
        assert_eq!(
            total.line(),
            "vox: 2 model requests, 220 input tokens (50 cached), 50 output tokens (10 reasoning), $0.000204"
        );
        let unpriced = UsageTotal::parse("usage\tf\tm\t1\t1\t-\t-\t-\n").unwrap();
        assert_eq!(unpriced.cost_usd, None);
        assert!(unpriced.line().contains("cost unknown"));
        assert_eq!(UsageTotal::parse("no requests\n"), None);
    }
}
