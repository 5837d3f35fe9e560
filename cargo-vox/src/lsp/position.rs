//! LSP positions and URIs ↔ byte offsets and paths.
//!
//! LSP counts columns in UTF-16 code units unless client and server agree
//! on UTF-8 at initialization; the compiler counts bytes. Every conversion
//! clamps: a position past a line's end or the file's end is taken as that
//! end, never an error (clients send stale positions while typing).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, Uri};
use vox_codegen::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Byte offsets of line starts.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1))
}

/// The byte offset of `pos` in `text`.
pub fn offset(text: &str, pos: Position, enc: Encoding) -> usize {
    let Some(start) = line_starts(text).nth(pos.line as usize) else {
        return text.len();
    };
    let line = &text[start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= pos.character {
            return start + i;
        }
        units += match enc {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
        };
    }
    start + line.len()
}

/// The position of byte offset `at` in `text`.
pub fn position(text: &str, at: usize, enc: Encoding) -> Position {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = &text[start..at];
    let character = match enc {
        Encoding::Utf8 => col.len() as u32,
        Encoding::Utf16 => col.chars().map(|c| c.len_utf16() as u32).sum(),
    };
    Position { line, character }
}

/// The line table of one text: where each line starts and whether it is
/// all ASCII (then a column is a byte count in either encoding, so even a
/// megabyte-long line converts in constant time).
#[derive(Debug, Clone, Default)]
pub struct Lines {
    starts: Vec<usize>,
    ascii: Vec<bool>,
}

impl Lines {
    /// The table of an empty text.
    pub const EMPTY: Lines = Lines {
        starts: Vec::new(),
        ascii: Vec::new(),
    };

    pub fn new(text: &str) -> Lines {
        let starts: Vec<usize> = line_starts(text).collect();
        let ascii = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let end = starts.get(i + 1).copied().unwrap_or(text.len());
                text.as_bytes()[s..end].is_ascii()
            })
            .collect();
        Lines { starts, ascii }
    }
}

/// Converts positions of one text quickly: line table computed once.
pub struct LineIndex<'t> {
    text: &'t str,
    lines: std::borrow::Cow<'t, Lines>,
    enc: Encoding,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str, enc: Encoding) -> LineIndex<'t> {
        LineIndex {
            text,
            lines: std::borrow::Cow::Owned(Lines::new(text)),
            enc,
        }
    }

    /// Over a line table already computed for `text`.
    pub fn with(text: &'t str, lines: &'t Lines, enc: Encoding) -> LineIndex<'t> {
        LineIndex {
            text,
            lines: std::borrow::Cow::Borrowed(lines),
            enc,
        }
    }

    pub fn position(&self, at: usize) -> Position {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        let starts = &self.lines.starts;
        let line = starts.partition_point(|&s| s <= at).saturating_sub(1);
        let start = starts.get(line).copied().unwrap_or(0);
        let ascii = self.lines.ascii.get(line).copied().unwrap_or(false);
        let character = if ascii || self.enc == Encoding::Utf8 {
            (at - start) as u32
        } else {
            self.text[start..at]
                .chars()
                .map(|c| c.len_utf16() as u32)
                .sum()
        };
        Position {
            line: line as u32,
            character,
        }
    }

    pub fn range(&self, span: Span) -> Range {
        Range {
            start: self.position(span.start as usize),
            end: self.position(span.end as usize),
        }
    }

    /// The byte offset of `pos` (clamped to its line and to the text).
    pub fn offset(&self, pos: Position) -> usize {
        let starts = &self.lines.starts;
        let Some(&start) = starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |&e| e.saturating_sub(1));
        let ascii = self
            .lines
            .ascii
            .get(pos.line as usize)
            .copied()
            .unwrap_or(false);
        if ascii {
            return (start + pos.character as usize).min(end);
        }
        offset(
            &self.text[start..],
            Position::new(0, pos.character),
            self.enc,
        ) + start
    }
}

/// The range of `span` in `text`.
pub fn range(text: &str, span: Span, enc: Encoding) -> Range {
    Range {
        start: position(text, span.start as usize, enc),
        end: position(text, span.end as usize, enc),
    }
}

/// The path a `file:` URI names (percent-decoded); `None` for other schemes.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = PathBuf::from(String::from_utf8(out).ok()?);
    // The same file, however the editor spelt its path.
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The `file:` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    let text = path.to_str()?;
    if !text.starts_with('/') {
        s.push('/');
    }
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                s.push(b as char)
            }
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    Uri::from_str(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_in_both_encodings() {
        let text = "ab\nçd 😀x\n";
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            for (at, _) in text.char_indices() {
                let p = position(text, at, enc);
                assert_eq!(offset(text, p, enc), at, "{enc:?} {at}");
                assert_eq!(LineIndex::new(text, enc).position(at), p);
                assert_eq!(LineIndex::new(text, enc).offset(p), at);
            }
        }
        let x = text.find('x').unwrap();
        assert_eq!(position(text, x, Encoding::Utf16).character, 5);
        assert_eq!(position(text, x, Encoding::Utf8).character, 8);
        // Past the end of a line or the file: clamped.
        let far = Position {
            line: 0,
            character: 99,
        };
        assert_eq!(offset(text, far, Encoding::Utf16), 2);
        let beyond = Position {
            line: 99,
            character: 0,
        };
        assert_eq!(offset(text, beyond, Encoding::Utf16), text.len());
    }

    #[test]
    fn uris_round_trip() {
        let p = Path::new("/no such dir/a b%.vox");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///no%20such%20dir/a%20b%25.vox");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
    }
}
