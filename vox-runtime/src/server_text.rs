//! Text a server sent us, made fit to show.
//!
//! A server — or a model — decides what its refusals, finish reasons, error
//! bodies and replies say, and how long they are: a 6 MiB refusal, a
//! `finishReason` holding a line break and a forged log line, an error body
//! of escape sequences that retitle and clear a terminal. Every such text
//! passes through [`server_text`] (after the client's redaction, see
//! `redact`) before it is stored in an [`crate::Error`] or a tracing field:
//!
//! - control characters (line breaks and tabs included), Unicode's line and
//!   paragraph separators and the bidirectional overrides and isolates are
//!   written as escapes (`\n`, `\r`, `\t`, `\u{1b}`), so a text is one line
//!   of visible characters;
//! - the result has at most `max_chars` characters, cut on a character
//!   boundary and followed by `… (N more bytes)`.
//!
//! A message of the runtime's own that quotes server text (a correction:
//! one problem per line) goes through [`message_text`], which keeps its
//! line breaks — the quoted parts were escaped when they were quoted.
//!
//! Backslashes are left alone, so escaping twice changes nothing.

use std::fmt::Write;

/// Longest refusal text quoted in a rejection.
pub(crate) const REFUSAL_CHARS: usize = 500;
/// Longest finish, stop or block reason quoted in a rejection (they are
/// short enum names when the server is honest).
pub(crate) const REASON_CHARS: usize = 64;

/// `text`, from a server, as one line of at most `max_chars` visible
/// characters (see the module documentation).
pub(crate) fn server_text(text: &str, max_chars: usize) -> String {
    shown(text, max_chars, false)
}

/// Like [`server_text`] for a message of the runtime's own whose line
/// breaks (`\n`) are its own: they are kept; any other control character is
/// escaped.
pub(crate) fn message_text(text: &str, max_chars: usize) -> String {
    shown(text, max_chars, true)
}

fn shown(text: &str, max_chars: usize, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars.saturating_mul(2)) + 24);
    let mut chars = 0usize;
    for (at, c) in text.char_indices() {
        let escape = needs_escape(c) && !(keep_newlines && c == '\n');
        let width = if escape { escaped_width(c) } else { 1 };
        if chars + width > max_chars {
            // `at` is a char boundary: it came from `char_indices`.
            let rest = text.len() - at;
            let unit = if rest == 1 { "byte" } else { "bytes" };
            let _ = write!(out, "… ({rest} more {unit})");
            return out;
        }
        chars += width;
        if escape {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that must not reach a log line or a terminal as they are.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// How many characters [`push_escaped`] writes for `c`.
fn escaped_width(c: char) -> usize {
    match c {
        '\n' | '\r' | '\t' => 2,
        // `\u{` + hex digits + `}`.
        _ => 4 + (32 - (c as u32 | 1).leading_zeros() as usize).div_ceil(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            server_text("a\nb\r\tc\u{1b}]0;x\u{7}\u{9b}\u{202e}\u{2028}é🦀\\n", 100),
            "a\\nb\\r\\tc\\u{1b}]0;x\\u{7}\\u{9b}\\u{202e}\\u{2028}é🦀\\n"
        );
        assert_eq!(message_text("a\nb\r", 100), "a\nb\\r");
        assert_eq!(server_text("", 0), "");
        assert_eq!(server_text("plain", 5), "plain");
    }

    #[test]
    fn escaping_twice_changes_nothing() {
        let once = server_text("x\n\u{1b}[2J\u{0}", 100);
        assert_eq!(server_text(&once, 100), once);
        assert_eq!(message_text(&once, 100), once);
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_with_a_marker() {
        assert_eq!(server_text("ééééé", 2), "éé… (6 more bytes)");
        assert_eq!(server_text("abc", 0), "… (3 more bytes)");
        // An escape is not split: it is shown whole or not at all.
        assert_eq!(server_text("ab\u{1b}", 4), "ab… (1 more byte)");
        assert_eq!(server_text("ab\u{1b}", 8), "ab\\u{1b}");
        let huge = "🦀".repeat(1_000_000);
        let cut = server_text(&huge, 300);
        assert!(cut.ends_with("… (3998800 more bytes)"), "{cut}");
        assert_eq!(cut.chars().filter(|&c| c == '🦀').count(), 300);
    }

    #[test]
    fn escaped_widths_match_what_is_written() {
        for c in [
            '\0', '\n', '\u{7}', '\u{1b}', '\u{7f}', '\u{9b}', '\u{202e}', '\u{2069}',
        ] {
            let mut out = String::new();
            push_escaped(&mut out, c);
            assert_eq!(out.chars().count(), escaped_width(c), "{out}");
        }
    }

    /// Whatever the input and the bound: one line, no control character,
    /// within the bound plus the marker.
    #[test]
    fn arbitrary_text_is_always_fit_to_show() {
        let pieces = [
            "a", "\n", "\r", "\u{1b}", "\u{0}", "é", "🦀", "\u{202e}", "\\", "\u{85}", " ", "\t",
        ];
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..5_000 {
            let mut text = String::new();
            for _ in 0..next() % 40 {
                text.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let max = (next() % 30) as usize;
            let out = server_text(&text, max);
            assert!(!out.chars().any(needs_escape), "{text:?} -> {out:?}");
            let body = out.split("… (").next().unwrap_or_default();
            assert!(body.chars().count() <= max, "{text:?} -> {out:?}");
            if body.len() == out.len() {
                assert_eq!(out, server_text(&text, usize::MAX), "not cut");
            }
        }
    }
}
