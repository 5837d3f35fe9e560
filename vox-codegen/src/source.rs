//! Source files of one Vox module and the spans that point into them.
//!
//! Every file is turned into text once, up front (invalid UTF-8 is replaced
//! and reported), so later stages work on `&str` and byte offsets only.

/// Identifies one file of a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: clamp_u32(start),
            end: clamp_u32(end.max(start)),
        }
    }

    /// The smallest span covering both (same file assumed; `self`'s file wins).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// An empty span at this span's start.
    pub fn shrink_to_start(self) -> Span {
        Span {
            end: self.start,
            ..self
        }
    }

    pub fn shrink_to_end(self) -> Span {
        Span {
            start: self.end,
            ..self
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

/// U+FEFF, the byte order mark some editors write at the start of a file.
const BOM: char = '\u{FEFF}';

/// One `.vox` file: its display name, text and line table.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
    /// The number of characters before every [`CHAR_MARK`]-th byte (at
    /// the char boundary at or before it), so a column on a long line is
    /// counted from the nearest mark, not from the line's start: 8,000
    /// diagnostics on one 87 KB line cost 8,000 short counts, not 8,000
    /// scans of the line.
    char_marks: Vec<usize>,
    /// Byte offset of the first invalid UTF-8 sequence in the original bytes,
    /// mapped into `text` (where it became U+FFFD).
    pub invalid_utf8_at: Option<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = line_starts(&text);
        let char_marks = char_marks(&text);
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            char_marks,
            invalid_utf8_at: None,
        }
    }

    /// Accepts any bytes; invalid UTF-8 is replaced by U+FFFD and remembered
    /// so the checker can report it.
    pub fn from_bytes(name: impl Into<String>, bytes: &[u8]) -> SourceFile {
        match std::str::from_utf8(bytes) {
            Ok(text) => SourceFile::new(name, text),
            Err(err) => {
                let valid = err.valid_up_to();
                let mut file = SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned());
                // The lossy text is identical up to the first invalid byte.
                file.invalid_utf8_at = Some(valid);
                file
            }
        }
    }

    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let mut start = self.line_starts.get(line).copied().unwrap_or(0);
        // Editors do not show a leading byte order mark, nor count it as a column.
        if start == 0 && offset >= BOM.len_utf8() && self.text.starts_with(BOM) {
            start = BOM.len_utf8();
        }
        let col = if self.text.is_char_boundary(offset) && self.text.is_char_boundary(start) {
            self.chars_before(offset) - self.chars_before(start)
        } else {
            offset - start
        };
        LineCol {
            line: line + 1,
            col: col + 1,
        }
    }

    /// The text of 1-based line `line`, without its line terminator.
    /// The number of characters in `text[..offset]` (`offset` a char
    /// boundary): from the mark at or before it, at most [`CHAR_MARK`]
    /// bytes counted.
    fn chars_before(&self, offset: usize) -> usize {
        let k = offset / CHAR_MARK;
        let Some(&before) = self.char_marks.get(k) else {
            return self.text[..offset].chars().count();
        };
        let mut from = k * CHAR_MARK;
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        before + self.text[from..offset].chars().count()
    }

    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        let text = self
            .text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r']);
        if start == 0 {
            // As in `line_col`: a leading byte order mark is not shown.
            text.strip_prefix(BOM).unwrap_or(text)
        } else {
            text
        }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }
}

/// Bytes between two entries of [`SourceFile::char_marks`].
const CHAR_MARK: usize = 1024;

fn char_marks(text: &str) -> Vec<usize> {
    let mut marks = Vec::with_capacity(text.len() / CHAR_MARK + 1);
    let mut count = 0;
    let mut at = 0;
    for k in 0..=text.len() / CHAR_MARK {
        let mut mark = k * CHAR_MARK;
        while !text.is_char_boundary(mark) {
            mark -= 1;
        }
        count += text[at..mark].chars().count();
        at = mark;
        marks.push(count);
    }
    marks
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    starts
}

/// All files of one module, addressed by [`FileId`].
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(clamp_u32(self.files.len() - 1))
    }

    /// Looks up a file. Ids only come from [`SourceMap::add`], so a miss is a
    /// caller bug; it yields an empty placeholder rather than a panic.
    pub fn get(&self, id: FileId) -> &SourceFile {
        static EMPTY: std::sync::OnceLock<SourceFile> = std::sync::OnceLock::new();
        self.files
            .get(id.0 as usize)
            .unwrap_or_else(|| EMPTY.get_or_init(|| SourceFile::new("<unknown>", "")))
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(clamp_u32(i)), f))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let f = SourceFile::new("a.vox", "ab\nçd x\n");
        assert_eq!(f.line_col(0), LineCol { line: 1, col: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, col: 1 });
        // 'ç' is two bytes; 'd' is the second character.
        assert_eq!(f.line_col(5), LineCol { line: 2, col: 2 });
        assert_eq!(f.line_text(2), "çd x");
        assert_eq!(f.line_text(99), "");
    }

    #[test]
    fn columns_on_long_lines_count_characters_from_the_marks() {
        // Multi-byte characters straddling the marks, a BOM, several lines.
        let mut text = String::from("\u{FEFF}");
        for i in 0..5000 {
            text.push(['a', 'ç', '€', '𝄞'][i % 4]);
            if i % 1777 == 0 {
                text.push('\n');
            }
        }
        let f = SourceFile::new("a.vox", text.clone());
        for (offset, _) in text.char_indices().step_by(7) {
            let line = text[..offset].matches('\n').count() + 1;
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let skip_bom = if line_start == 0 && offset >= 3 { 3 } else { 0 };
            let col = text[line_start + skip_bom.min(offset - line_start)..offset]
                .chars()
                .count()
                + 1;
            assert_eq!(f.line_col(offset), LineCol { line, col }, "at {offset}");
        }
    }

    #[test]
    fn invalid_utf8_is_remembered() {
        let f = SourceFile::from_bytes("a.vox", b"fn \xff x");
        assert_eq!(f.invalid_utf8_at, Some(3));
        assert!(f.text.contains('\u{FFFD}'));
    }
}
