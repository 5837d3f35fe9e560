//! What a check reports, and the two ways it is written out: lines for
//! people and one JSON object for machines, over the same values.
//!
//! Everything a check reports may echo what a probed tool printed (a
//! banner, a line of stderr), a path or a setting: [`CheckResult::passed`]
//! and [`CheckResult::fired`] pass it through [`shown`], so neither output
//! carries a tool's escape sequences or line breaks raw.

use serde::Serialize;

use super::registry::{CheckKind, DiagId, DiagInfo, Severity};
use super::system::SystemInfo;

/// A fired diagnosis: the registry facts plus the fix for this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    pub id: DiagId,
    pub severity: Severity,
    pub heal: bool,
    pub fix: String,
}

/// The outcome of one check (a check may report several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    pub name: &'static str,
    pub pass: bool,
    /// For a passing check what was found; for a failing one
    /// `<cause> | FIX: <step> | [diag id=… sev=… heal=…]` (README, `cargo vox doctor`).
    pub detail: String,
    pub diag: Option<Diagnosis>,
}

impl CheckResult {
    /// A check that found nothing wrong.
    pub fn passed(check: CheckKind, detail: impl Into<String>) -> Self {
        CheckResult {
            name: check.name(),
            pass: true,
            detail: shown(&detail.into()),
            diag: None,
        }
    }

    /// A check that fired `id` because of `cause`; `fix` is the step to take.
    pub fn fired(id: DiagId, cause: impl Into<String>, fix: impl Into<String>) -> Self {
        let info: &DiagInfo = id.info();
        let fix = shown(&one_line(&fix.into()));
        CheckResult {
            name: info.check.name(),
            pass: false,
            detail: failure_detail(&cause.into(), &fix, info),
            diag: Some(Diagnosis {
                id,
                severity: info.severity,
                heal: info.heal,
                fix,
            }),
        }
    }

    pub fn fired_id(&self) -> Option<DiagId> {
        self.diag.as_ref().map(|d| d.id)
    }
}

/// `<cause> | FIX: <step> | [diag id=<id> sev=<sev> heal=<bool>]`, on one line.
pub fn failure_detail(cause: &str, fix: &str, info: &DiagInfo) -> String {
    format!(
        "{} | FIX: {} | [diag id={} sev={} heal={}]",
        shown(&one_line(cause)),
        shown(&one_line(fix)),
        info.id.as_str(),
        info.severity.as_str(),
        info.heal
    )
}

/// Collapses whitespace runs (including newlines) so a detail stays one line
/// and the `|` separators stay unambiguous.
pub fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "/")
}

/// Longest text shown for one value a check echoes.
const SHOWN_CHARS: usize = 2_000;

/// `text` — a tool's output, a path, an environment value — fit to print
/// to a terminal or a log: control characters (line breaks included), the
/// Unicode line separators and the bidirectional overrides written as
/// escapes (`\n`, `\u{1b}`), at most [`SHOWN_CHARS`] characters then
/// `… (N more bytes)`. Backslashes stay, so showing twice changes nothing.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(SHOWN_CHARS * 2));
    let mut chars = 0;
    for (at, c) in text.char_indices() {
        let escaped = match c {
            '\n' => Some("\\n".to_owned()),
            '\r' => Some("\\r".to_owned()),
            '\t' => Some("\\t".to_owned()),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{061c}'
                        | '\u{200e}'
                        | '\u{200f}'
                        | '\u{2028}'
                        | '\u{2029}'
                        | '\u{202a}'..='\u{202e}'
                        | '\u{2066}'..='\u{2069}'
                ) =>
            {
                Some(format!("\\u{{{:x}}}", u32::from(c)))
            }
            _ => None,
        };
        let width = escaped.as_ref().map_or(1, |e| e.chars().count());
        if chars + width > SHOWN_CHARS {
            out.push_str(&format!("… ({} more bytes)", text.len() - at));
            return out;
        }
        chars += width;
        match escaped {
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
    }
    out
}

/// The JSON document `--json` prints: one line on stdout.
#[derive(Debug, Serialize)]
pub struct DoctorReport<'a> {
    pub system: &'a SystemInfo,
    pub checks: &'a [CheckResult],
}

/// The status word shown in front of a check's line.
pub fn status_word(result: &CheckResult) -> &'static str {
    match &result.diag {
        None => "ok",
        Some(d) => d.severity.as_str(),
    }
}

/// The human line for one check result.
pub fn human_line(result: &CheckResult) -> String {
    format!(
        "{:<5} {:<18} {}",
        status_word(result),
        result.name,
        result.detail
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fired_detail_ends_in_the_machine_tag() {
        let r = CheckResult::fired(
            DiagId::DockerDaemonDown,
            "Cannot connect to the Docker daemon\nIs it running?",
            "start it: sudo systemctl start docker",
        );
        assert!(!r.pass);
        assert_eq!(
            r.detail,
            "Cannot connect to the Docker daemon Is it running? | FIX: start it: sudo systemctl start docker | [diag id=docker.daemon_down sev=warn heal=false]"
        );
        assert_eq!(r.name, "docker");
    }

    #[test]
    fn what_tools_print_is_shown_escaped_and_bounded() {
        assert_eq!(
            shown("rustc 1.0\u{1b}]0;t\u{7}\u{1b}[2J\r\n\t\u{202e}é\\n"),
            "rustc 1.0\\u{1b}]0;t\\u{7}\\u{1b}[2J\\r\\n\\t\\u{202e}é\\n"
        );
        assert_eq!(shown(&shown("a\u{1b}b")), shown("a\u{1b}b"));
        let long = shown(&"é".repeat(5_000));
        assert!(long.ends_with("… (6000 more bytes)"), "{long}");
        let r = CheckResult::passed(CheckKind::Rustc, "rustc 1.0\u{1b}[2J");
        assert_eq!(r.detail, "rustc 1.0\\u{1b}[2J");
        let r = CheckResult::fired(
            DiagId::RustcShadowed,
            "printed `\u{1b}]0;t\u{7}`",
            "rm /x\u{9b}y",
        );
        assert!(
            r.detail
                .starts_with("printed `\\u{1b}]0;t\\u{7}` | FIX: rm /x\\u{9b}y |"),
            "{}",
            r.detail
        );
        assert_eq!(r.diag.unwrap().fix, "rm /x\\u{9b}y");
    }

    #[test]
    fn json_shape_is_name_pass_detail_diag() {
        let r = CheckResult::fired(DiagId::SccachePathological, "c", "f");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["diag"]["id"], "sccache.pathological");
        assert_eq!(v["diag"]["severity"], "warn");
        assert_eq!(v["diag"]["heal"], true);
        assert_eq!(v["diag"]["fix"], "f");
        let ok = serde_json::to_value(CheckResult::passed(CheckKind::Docker, "fine")).unwrap();
        assert!(ok["diag"].is_null());
        assert_eq!(ok["pass"], true);
    }
}
