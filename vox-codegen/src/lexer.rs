//! Lexer: source text → tokens.
//!
//! Tokens carry only a kind and a span; the parser slices names out of the
//! source, which keeps lexing allocation-free for identifiers. Newlines are
//! tokens because they end statements (docs/language.md); the parser decides where
//! they are insignificant. Lexing never fails: bad input becomes a
//! diagnostic and lexing continues.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A name starting with a lowercase letter or `_` (`_` alone is [`TokenKind::Underscore`]).
    Ident,
    /// A name starting with an uppercase letter.
    TypeName,
    Int,
    Float,
    /// A string literal; its unescaped value is in [`Token::value`] order of the lexer's `strings`.
    Str,
    /// `/// text` (the span covers the text after `///`).
    Doc,
    /// `f"Total: {x}"`: its pieces are in [`Lexed::fstrings`], in order.
    FStr,
    Newline,
    Underscore,
    // Keywords.
    Type,
    Fn,
    Pub,
    Let,
    Mut,
    Return,
    If,
    Else,
    Match,
    For,
    While,
    Break,
    Continue,
    In,
    To,
    True,
    False,
    Is,
    Isnt,
    And,
    Or,
    Not,
    // Punctuation.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semi,
    Dot,
    At,
    Pipe,
    FatArrow,
    Eq,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eof,
}

impl TokenKind {
    /// How the token reads in "expected X, found Y" messages.
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Ident => "identifier",
            TypeName => "type name",
            Int => "integer literal",
            Float => "float literal",
            Str => "string literal",
            Doc => "doc comment",
            FStr => "f-string",
            Newline => "end of line",
            Underscore => "`_`",
            Type => "`type`",
            Fn => "`fn`",
            Pub => "`pub`",
            Let => "`let`",
            Mut => "`mut`",
            Return => "`return`",
            If => "`if`",
            Else => "`else`",
            Match => "`match`",
            For => "`for`",
            While => "`while`",
            Break => "`break`",
            Continue => "`continue`",
            In => "`in`",
            To => "`to`",
            True => "`true`",
            False => "`false`",
            Is => "`is`",
            Isnt => "`isnt`",
            And => "`and`",
            Or => "`or`",
            Not => "`not`",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Comma => "`,`",
            Colon => "`:`",
            Semi => "`;`",
            Dot => "`.`",
            At => "`@`",
            Pipe => "`|`",
            FatArrow => "`=>`",
            Eq => "`=`",
            EqEq => "`==`",
            NotEq => "`!=`",
            Lt => "`<`",
            Le => "`<=`",
            Gt => "`>`",
            Ge => "`>=`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Percent => "`%`",
            Eof => "end of file",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The lexer's output: tokens, the unescaped values of string literals (in
/// order of appearance), and diagnostics.
#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub strings: Vec<String>,
    /// The pieces of each `FStr` token, in token order.
    pub fstrings: Vec<Vec<FPiece>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A piece of an f-string: literal text, or the tokens of one `{…}`.
#[derive(Debug, Clone, Default)]
pub struct Interior {
    /// The expression's tokens, ending with an `Eof` at the closing `}`.
    pub tokens: Vec<Token>,
    pub strings: Vec<String>,
    pub fstrings: Vec<Vec<FPiece>>,
}

#[derive(Debug, Clone)]
pub enum FPiece {
    Lit(String),
    Code(Interior),
}

/// How deeply f-strings may nest inside each other's `{…}`.
const MAX_FSTRING_NESTING: usize = 8;

/// Whether `word` is a keyword.
pub(crate) fn is_keyword(word: &str) -> bool {
    keyword(word).is_some()
}

fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        "type" => Type,
        "fn" => Fn,
        "pub" => Pub,
        "let" => Let,
        "mut" => Mut,
        "return" => Return,
        "if" => If,
        "else" => Else,
        "match" => Match,
        "for" => For,
        "while" => While,
        "break" => Break,
        "continue" => Continue,
        "in" => In,
        "to" => To,
        "true" => True,
        "false" => False,
        "is" => Is,
        "isnt" => Isnt,
        "and" => And,
        "or" => Or,
        "not" => Not,
        "_" => Underscore,
        _ => return None,
    })
}

/// A byte order mark at the very start of a file is skipped (editors on
/// Windows write one); anywhere else it is an unexpected character.
pub fn lex(file: FileId, src: &str) -> Lexed {
    let mut lx = Lexer {
        file,
        src: src.as_bytes(),
        text: src,
        pos: if src.starts_with('\u{FEFF}') {
            '\u{FEFF}'.len_utf8()
        } else {
            0
        },
        out: Lexed::default(),
        fdepth: 0,
        single_line: false,
    };
    lx.run();
    lx.out
}

struct Lexer<'a> {
    file: FileId,
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    out: Lexed,
    /// f-strings open around the current position.
    fdepth: usize,
    /// f-string braces end with their line (a scan across lines failed).
    single_line: bool,
}

impl Lexer<'_> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn push(&mut self, kind: TokenKind, start: usize, end: usize) {
        let span = self.span(start, end);
        self.out.tokens.push(Token { kind, span });
    }

    fn peek(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        while self.pos < self.src.len() {
            let start = self.pos;
            let b = self.src[start];
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    self.push(TokenKind::Newline, start, start + 1);
                }
                b'/' if self.peek(1) == b'/' => self.comment(),
                b'"' => self.string(),
                b'0'..=b'9' => self.number(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(),
                _ => self.punct(),
            }
        }
        let end = self.src.len();
        self.push(TokenKind::Eof, end, end);
    }

    fn comment(&mut self) {
        let start = self.pos;
        let end = memchr_newline(self.src, start);
        self.flow_controls(start, end, false);
        let is_doc = self.peek(2) == b'/' && self.peek(3) != b'/';
        if is_doc {
            let mut text_start = start + 3;
            if self.src.get(text_start) == Some(&b' ') {
                text_start += 1;
            }
            let text_end = if end > text_start && self.src[end - 1] == b'\r' {
                end - 1
            } else {
                end
            };
            self.push(TokenKind::Doc, text_start.min(text_end), text_end);
        }
        self.pos = end;
    }

    fn word(&mut self) {
        let start = self.pos;
        while matches!(self.peek(0), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        // `f` and three quotes (0x22): a multi-line f-string, which Vox has not.
        if word == "f" && self.peek(0) == 0x22 && self.peek(1) == 0x22 && self.peek(2) == 0x22 {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::MultilineString,
                    self.span(start, self.pos),
                    "a multi-line string cannot be an f-string",
                )
                .hint("join an f-string to it with `+`, or build the text with `join`"),
            );
            return self.triple_string();
        }
        if word == "f" && self.peek(0) == b'"' && self.fdepth < MAX_FSTRING_NESTING {
            return self.fstring(start);
        }
        let kind = keyword(word).unwrap_or(if word.as_bytes()[0].is_ascii_uppercase() {
            TokenKind::TypeName
        } else {
            TokenKind::Ident
        });
        self.push(kind, start, self.pos);
    }

    fn number(&mut self) {
        let start = self.pos;
        let digits = |lx: &mut Self| {
            while matches!(lx.peek(0), b'0'..=b'9' | b'_') {
                lx.pos += 1;
            }
        };
        digits(self);
        let mut is_float = false;
        if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
            is_float = true;
            self.pos += 1;
            digits(self);
        }
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit()
                || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
        {
            is_float = true;
            self.pos += 2;
            digits(self);
        }
        // A number glued to letters (`12abc`) is one malformed literal.
        let glued_start = self.pos;
        while matches!(self.peek(0), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            self.pos += 1;
        }
        if self.pos > glued_start {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::InvalidNumber,
                    self.span(start, self.pos),
                    "invalid number literal",
                )
                .hint("numbers are written like `42`, `1_000`, `3.5` or `2.5e3`"),
            );
        }
        self.push(
            if is_float {
                TokenKind::Float
            } else {
                TokenKind::Int
            },
            start,
            self.pos,
        );
    }

    fn string(&mut self) {
        if self.peek(1) == b'"' && self.peek(2) == b'"' {
            return self.triple_string();
        }
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return self.unterminated(start, value);
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\n' => return self.unterminated(start, value),
                b'\\' => self.escape(&mut value),
                _ => {
                    // Copy a run of plain bytes at once (always whole chars:
                    // the run stops only at ASCII bytes).
                    let run_start = self.pos;
                    while let Some(&c) = self.src.get(self.pos) {
                        if matches!(c, b'"' | b'\n' | b'\\') {
                            break;
                        }
                        self.pos += 1;
                    }
                    value.push_str(&self.text[run_start..self.pos]);
                    self.flow_controls(run_start, self.pos, true);
                }
            }
        }
        self.out.strings.push(value);
        self.push(TokenKind::Str, start, self.pos);
    }

    /// A multi-line string (docs/language.md, "Multi-line strings"): the
    /// lines between opening triple quotes that end their line and closing
    /// triple quotes that start one, each without the closing line's
    /// indentation, joined by newlines, with the escapes of strings. A line
    /// of spaces and tabs only is an empty line.
    fn triple_string(&mut self) {
        let start = self.pos;
        self.pos += 3;
        let text = self.text;
        let len = self.src.len();
        let line_end = |from: usize| text[from..].find('\n').map_or(len, |i| from + i);
        let first_end = line_end(self.pos);
        let rest = &text[self.pos..first_end];
        // Content lines as byte ranges.
        let mut lines: Vec<(usize, usize)> = Vec::new();
        if !rest.trim().is_empty() {
            if let Some(close) = rest.find("\"\"\"") {
                // `"""text"""` on one line, as Python writes a string.
                let inner = &rest[..close];
                let end = self.pos + close + 3;
                let mut d = Diagnostic::error(
                    Code::MultilineString,
                    self.span(start, end),
                    "a `\"\"\"` string starts on the line after its opening quotes",
                )
                .hint("for one line, write a plain string: \"text\"; a multi-line string puts its text on the lines between `\"\"\"` and `\"\"\"`");
                // No quote (0x22) or backslash: the text reads the same in `"…"`.
                if !inner.bytes().any(|b| b == 0x22 || b == b'\\') {
                    d = d.fix(
                        "write a plain string",
                        self.span(start, end),
                        format!("\"{inner}\""),
                    );
                }
                self.out.diagnostics.push(d);
                self.out.strings.push(inner.to_string());
                self.pos = end;
                self.push(TokenKind::Str, start, end);
                return;
            }
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::MultilineString,
                    self.span(self.pos, first_end),
                    "a `\"\"\"` string starts on the line after its opening quotes",
                )
                .label("text on the opening line")
                .hint("move the text to the next line; the closing `\"\"\"`'s indentation is removed from every line"),
            );
            lines.push((self.pos, first_end));
        }
        let mut pos = first_end + 1;
        let (indent, close_end) = loop {
            if pos > len {
                self.out.diagnostics.push(
                    Diagnostic::error(
                        Code::UnterminatedString,
                        self.span(start, start + 3),
                        "unterminated multi-line string",
                    )
                    .label("this string is never closed")
                    .hint("end it with `\"\"\"` at the start of a line of its own"),
                );
                let value: Vec<&str> = lines.iter().map(|&(a, b)| &text[a..b]).collect();
                self.out.strings.push(value.join("\n"));
                self.pos = len;
                self.push(TokenKind::Str, start, len);
                return;
            }
            let end = line_end(pos);
            let line = &text[pos..end];
            let trimmed = line.trim_start_matches([' ', '\t']);
            if trimmed.starts_with("\"\"\"") {
                let indent = &line[..line.len() - trimmed.len()];
                break (indent, pos + indent.len() + 3);
            }
            lines.push((pos, end));
            pos = end + 1;
        };
        let mut value = String::new();
        for (k, &(ls, le)) in lines.iter().enumerate() {
            if k > 0 {
                value.push('\n');
            }
            let le = if text[ls..le].ends_with('\r') {
                le - 1
            } else {
                le
            };
            let line = &text[ls..le];
            if line.trim_matches([' ', '\t']).is_empty() {
                continue;
            }
            let from = if k == 0 && ls < first_end + 1 {
                // Text on the opening line (reported): taken as it is.
                ls
            } else if let Some(stripped) = line.strip_prefix(indent) {
                le - stripped.len()
            } else {
                let shown = line.len() - line.trim_start_matches([' ', '\t']).len();
                self.out.diagnostics.push(
                    Diagnostic::error(
                        Code::MultilineString,
                        self.span(ls, ls + shown.max(1).min(line.len())),
                        "this line of a multi-line string is indented less than its closing `\"\"\"`",
                    )
                    .hint("indent every line at least as far as the closing `\"\"\"`, whose indentation is removed from each"),
                );
                ls + shown
            };
            self.pos = from;
            while self.pos < le {
                if self.src[self.pos] == b'\\' {
                    self.escape(&mut value);
                    continue;
                }
                let run_start = self.pos;
                while self.pos < le && self.src[self.pos] != b'\\' {
                    self.pos += 1;
                }
                value.push_str(&text[run_start..self.pos]);
                self.flow_controls(run_start, self.pos, true);
            }
        }
        self.out.strings.push(value);
        self.pos = close_end;
        self.push(TokenKind::Str, start, close_end);
    }

    /// `f"…{expr}…"` from its `f` at `start`: literal pieces (with the
    /// escapes of strings, and `{{`/`}}` for braces) and the tokens of each
    /// `{…}`, lexed as code (a string inside is a nested literal).
    fn fstring(&mut self, start: usize) {
        let rewind = (
            self.out.tokens.len(),
            self.out.strings.len(),
            self.out.fstrings.len(),
            self.out.diagnostics.len(),
        );
        let idx = self.out.fstrings.len();
        self.out.fstrings.push(Vec::new());
        self.fdepth += 1;
        self.pos += 1; // the `"`
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let terminated = loop {
            let Some(&b) = self.src.get(self.pos) else {
                break false;
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    break true;
                }
                b'\n' => break false,
                b'\\' => self.escape(&mut lit),
                b'{' if self.peek(1) == b'{' => {
                    lit.push('{');
                    self.pos += 2;
                }
                b'}' if self.peek(1) == b'}' => {
                    lit.push('}');
                    self.pos += 2;
                }
                b'}' => {
                    self.out.diagnostics.push(
                        Diagnostic::error(
                            Code::UnexpectedToken,
                            self.span(self.pos, self.pos + 1),
                            "a single `}` in an f-string",
                        )
                        .hint("write `}}` for a literal `}`")
                        .fix(
                            "double it",
                            self.span(self.pos, self.pos + 1),
                            "}}",
                        ),
                    );
                    lit.push('}');
                    self.pos += 1;
                }
                b'{' => {
                    if !lit.is_empty() {
                        pieces.push(FPiece::Lit(std::mem::take(&mut lit)));
                    }
                    let open = self.pos;
                    self.pos += 1;
                    match self.interpolation(open) {
                        Some(code) => pieces.push(FPiece::Code(code)),
                        None => break false,
                    }
                }
                _ => {
                    let run_start = self.pos;
                    while let Some(&c) = self.src.get(self.pos) {
                        if matches!(c, b'"' | b'\n' | b'\\' | b'{' | b'}') {
                            break;
                        }
                        self.pos += 1;
                    }
                    lit.push_str(&self.text[run_start..self.pos]);
                    self.flow_controls(run_start, self.pos, true);
                }
            }
        };
        self.fdepth -= 1;
        // Braces read across lines, and then the string does not end: read
        // the whole f-string again as one line, so the error is where the
        // author left the line (and the code after it stays code).
        if !terminated
            && self.fdepth == 0
            && !self.single_line
            && self.src[start..self.pos].contains(&b'\n')
        {
            self.out.tokens.truncate(rewind.0);
            self.out.strings.truncate(rewind.1);
            self.out.fstrings.truncate(rewind.2);
            self.out.diagnostics.truncate(rewind.3);
            self.pos = start + 1;
            self.single_line = true;
            self.fstring(start);
            self.single_line = false;
            return;
        }
        if !lit.is_empty() {
            pieces.push(FPiece::Lit(lit));
        }
        if !terminated {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::UnterminatedString,
                    self.span(start, self.pos),
                    "unterminated f-string",
                )
                .label("this f-string is never closed")
                .hint(
                    "close each `{` with `}` and the string with `\"` before the end of the line",
                ),
            );
        }
        self.out.fstrings[idx] = pieces;
        self.push(TokenKind::FStr, start, self.pos);
    }

    /// The tokens of one `{…}` of an f-string, after its `{` (at `open`),
    /// up to its `}` (consumed). The braces may span lines (newlines inside
    /// are tokens, as in code); when they are not closed cleanly that way —
    /// the file ends first, or something inside is an error — they are read
    /// again up to the end of the line, as a single-line f-string, so that a
    /// missing `}` or `"` does not swallow the code after it. `None` when
    /// the line ends first then.
    fn interpolation(&mut self, open: usize) -> Option<Interior> {
        let (t0, s0, f0, d0) = (
            self.out.tokens.len(),
            self.out.strings.len(),
            self.out.fstrings.len(),
            self.out.diagnostics.len(),
        );
        let start = self.pos;
        if self.single_line {
            return self.interior_tokens(open, t0, s0, f0, false);
        }
        if let Some(code) = self.interior_tokens(open, t0, s0, f0, true) {
            let spans_lines = self.src[start..self.pos].contains(&b'\n');
            if !spans_lines || self.out.diagnostics.len() == d0 {
                return Some(code);
            }
        }
        self.out.tokens.truncate(t0);
        self.out.strings.truncate(s0);
        self.out.fstrings.truncate(f0);
        self.out.diagnostics.truncate(d0);
        self.pos = start;
        self.single_line = true;
        let code = self.interior_tokens(open, t0, s0, f0, false);
        self.single_line = false;
        code
    }

    /// [`Self::interpolation`]'s scan, across lines when `multiline`.
    fn interior_tokens(
        &mut self,
        open: usize,
        t0: usize,
        s0: usize,
        f0: usize,
        multiline: bool,
    ) -> Option<Interior> {
        let mut depth = 0usize;
        let closed = loop {
            let Some(&b) = self.src.get(self.pos) else {
                break false;
            };
            match b {
                b'\n' if multiline => {
                    self.push(TokenKind::Newline, self.pos, self.pos + 1);
                    self.pos += 1;
                    continue;
                }
                b'\n' => break false,
                b'}' if depth == 0 => break true,
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'/' if self.peek(1) == b'/' => break false,
                b'"' => self.string(),
                b'0'..=b'9' => self.number(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(),
                _ => self.punct(),
            }
        };
        let mut code = Interior {
            tokens: self.out.tokens.split_off(t0),
            strings: self.out.strings.split_off(s0),
            fstrings: self.out.fstrings.split_off(f0),
        };
        let end = self.pos;
        code.tokens.push(Token {
            kind: TokenKind::Eof,
            span: self.span(end, end),
        });
        if closed {
            self.pos += 1;
            Some(code)
        } else {
            let _ = open;
            None
        }
    }

    /// Reports each character of `start..end` (inside a string literal when
    /// `in_string`, else a comment) that reorders how text is displayed.
    fn flow_controls(&mut self, start: usize, end: usize, in_string: bool) {
        // All of them are encoded as E2 80 xx or E2 81 xx.
        if !self.src[start..end].contains(&0xE2) {
            return;
        }
        for (i, c) in self.text[start..end].char_indices() {
            if !crate::chars::is_text_flow_control(c) {
                continue;
            }
            let at = start + i;
            let span = self.span(at, at + c.len_utf8());
            let name = crate::chars::describe(c);
            let (place, fix, replacement) = if in_string {
                (
                    "string literal",
                    format!("write it as the escape `\\u{{{:X}}}`", c as u32),
                    format!("\\u{{{:X}}}", c as u32),
                )
            } else {
                ("comment", format!("remove {name}"), String::new())
            };
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::BidiControl,
                    span,
                    format!("invisible {name} in a {place}"),
                )
                .hint("it changes the order in which the text after it is displayed, so the code can read differently from how it runs")
                .fix(fix, span, replacement),
            );
        }
    }

    fn unterminated(&mut self, start: usize, value: String) {
        self.out.diagnostics.push(
            Diagnostic::error(Code::UnterminatedString, self.span(start, self.pos), "unterminated string literal")
                .label("this string is never closed")
                .hint("add a closing `\"` before the end of the line; write `\\n` for a newline inside a string"),
        );
        self.out.strings.push(value);
        self.push(TokenKind::Str, start, self.pos);
    }

    fn escape(&mut self, value: &mut String) {
        let start = self.pos;
        self.pos += 1; // the backslash
        let c = self.peek(0);
        let simple = match c {
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'0' => Some('\0'),
            b'\\' => Some('\\'),
            b'"' => Some('"'),
            b'\'' => Some('\''),
            _ => None,
        };
        if let Some(ch) = simple {
            self.pos += 1;
            value.push(ch);
            return;
        }
        if c == b'u' && self.peek(1) == b'{' {
            let body_start = self.pos + 2;
            let mut end = body_start;
            while end < self.src.len() && end - body_start <= 6 && self.src[end].is_ascii_hexdigit()
            {
                end += 1;
            }
            if self.src.get(end) == Some(&b'}') {
                let hex = &self.text[body_start..end];
                if let Some(ch) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                    value.push(ch);
                    self.pos = end + 1;
                    return;
                }
            }
        }
        // Unknown escape: report it and keep the character literally.
        let len = self.text[self.pos..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        if c == b'\n' || len == 0 {
            self.out.diagnostics.push(Diagnostic::error(
                Code::InvalidEscape,
                self.span(start, start + 1),
                "a `\\` at the end of a line is not an escape",
            ));
            return;
        }
        self.out.diagnostics.push(
            Diagnostic::error(
                Code::InvalidEscape,
                self.span(start, self.pos + len),
                format!(
                    "unknown escape `\\{}`",
                    &self.text[self.pos..self.pos + len]
                ),
            )
            .hint("known escapes: \\n \\t \\r \\0 \\\\ \\\" \\u{XXXX}"),
        );
        value.push_str(&self.text[self.pos..self.pos + len]);
        self.pos += len;
    }

    fn punct(&mut self) {
        use TokenKind::*;
        let start = self.pos;
        let (kind, len) = match (self.peek(0), self.peek(1)) {
            (b'&', b'&') | (b'|', b'|') => {
                return self.c_style_logic(
                    start,
                    if self.peek(0) == b'&' { And } else { Or },
                    "and_or",
                )
            }
            (b'!', b) if b != b'=' => return self.c_style_logic(start, Not, "not"),
            (b'=', b'>') => (FatArrow, 2),
            (b'=', b'=') => (EqEq, 2),
            (b'!', b'=') => (NotEq, 2),
            (b'<', b'=') => (Le, 2),
            (b'>', b'=') => (Ge, 2),
            (b'(', _) => (LParen, 1),
            (b')', _) => (RParen, 1),
            (b'[', _) => (LBracket, 1),
            (b']', _) => (RBracket, 1),
            (b'{', _) => (LBrace, 1),
            (b'}', _) => (RBrace, 1),
            (b',', _) => (Comma, 1),
            (b':', _) => (Colon, 1),
            (b';', _) => (Semi, 1),
            (b'.', _) => (Dot, 1),
            (b'@', _) => (At, 1),
            (b'|', _) => (Pipe, 1),
            (b'=', _) => (Eq, 1),
            (b'<', _) => (Lt, 1),
            (b'>', _) => (Gt, 1),
            (b'+', _) => (Plus, 1),
            (b'-', _) => (Minus, 1),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'%', _) => (Percent, 1),
            _ => return self.unexpected_char(),
        };
        self.pos += len;
        self.push(kind, start, self.pos);
    }

    /// `&&`, `||` and `!`: reported with a fix, then lexed as `and`/`or`/`not`
    /// so parsing continues as the user meant.
    fn c_style_logic(&mut self, start: usize, kind: TokenKind, _what: &str) {
        let len = if kind == TokenKind::Not { 1 } else { 2 };
        let word = match kind {
            TokenKind::And => "and",
            TokenKind::Or => "or",
            _ => "not",
        };
        let op = &self.text[start..start + len];
        let span = self.span(start, start + len);
        let replacement = if kind == TokenKind::Not {
            "not ".to_string()
        } else {
            word.to_string()
        };
        self.out.diagnostics.push(
            Diagnostic::error(
                Code::UnexpectedChar,
                span,
                format!("Vox writes `{word}`, not `{op}`"),
            )
            .fix(format!("replace `{op}` with `{word}`"), span, replacement),
        );
        self.pos = start + len;
        self.push(kind, start, self.pos);
    }

    fn unexpected_char(&mut self) {
        let start = self.pos;
        let Some(first) = self.text[start..].chars().next() else {
            self.pos += 1;
            return;
        };
        if let Some(info) = crate::chars::notable(first) {
            return self.notable_char(start, first, info);
        }
        // Swallow a whole run of junk as one diagnostic; a notable
        // character gets its own.
        let mut end = start;
        while let Some(c) = self.text[end..].chars().next() {
            let starts_token = c.is_ascii_alphanumeric()
                || c.is_ascii_whitespace()
                || "_\"/(){}[],:;.@|=!<>+-*%".contains(c)
                || crate::chars::notable(c).is_some();
            if end > start && starts_token {
                break;
            }
            end += c.len_utf8();
        }
        self.pos = end;
        let run = &self.text[start..end];
        let shown: String = run.chars().take(16).collect();
        let printable = shown.chars().all(|c| !c.is_control());
        // Non-ASCII characters by code point too: what is quoted may be
        // hard to read or to tell from another character.
        let mut points: Vec<String> = Vec::new();
        for c in shown.chars().filter(|c| !c.is_ascii()) {
            let p = crate::chars::describe(c);
            if !points.contains(&p) && points.len() < 4 {
                points.push(p);
            }
        }
        let what = if printable {
            let mut m = format!(
                "unexpected character{} `{shown}`",
                if run.chars().count() > 1 { "s" } else { "" }
            );
            if !points.is_empty() {
                m.push_str(&format!(" ({})", points.join(", ")));
            }
            m
        } else {
            let controls: Vec<String> = shown
                .chars()
                .filter(|c| c.is_control())
                .map(crate::chars::code_point)
                .take(4)
                .collect();
            format!("unexpected control character {}", controls.join(", "))
        };
        let mut d = Diagnostic::error(Code::UnexpectedChar, self.span(start, end), what);
        if shown.starts_with('\'') {
            d = d.hint("strings use double quotes: \"text\"");
        } else if shown.starts_with('&') || shown.starts_with('!') {
            d = d.hint("Vox writes `and`, `or` and `not` for boolean operators");
        } else if !points.is_empty() {
            d = d.hint(
                "names and operators are ASCII; other characters belong in strings and comments",
            );
        }
        self.out.diagnostics.push(d);
    }

    /// An invisible or look-alike character (a run of the same one): named
    /// by code point and name, with what to write instead.
    fn notable_char(&mut self, start: usize, c: char, info: crate::chars::CharInfo) {
        let mut end = start;
        let mut count = 0;
        while self.text[end..].starts_with(c) {
            end += c.len_utf8();
            count += 1;
        }
        self.pos = end;
        let name = format!("{} {}", crate::chars::code_point(c), info.name);
        let times = if count > 1 {
            format!("{count} × ")
        } else {
            String::new()
        };
        let message = if info.invisible {
            format!(
                "unexpected invisible character{}: {times}{name}",
                if count > 1 { "s" } else { "" }
            )
        } else {
            format!(
                "unexpected character{} `{}` ({times}{name})",
                if count > 1 { "s" } else { "" },
                &self.text[start..end]
            )
        };
        let span = self.span(start, end);
        // Parse on as meant: a look-alike of punctuation (not `"`) becomes
        // that token, as `&&` becomes `and`; invisible ones are skipped.
        if let Some(ascii) = info.instead.filter(|a| {
            count == 1
                && !info.invisible
                && a.bytes().all(|b| b.is_ascii_punctuation() && b != b'"')
        }) {
            let meant = lex(self.file, ascii);
            if let [token, _eof] = meant.tokens.as_slice() {
                if meant.diagnostics.is_empty() {
                    self.push(token.kind, start, end);
                }
            }
        }
        let mut d = Diagnostic::error(Code::UnexpectedChar, span, message);
        if c == '\u{FEFF}' {
            d = d.hint("a byte order mark is accepted only at the very start of a file");
        } else if crate::chars::is_bidi_control(c) {
            d = d.hint("it changes the order in which the text around it is displayed");
        }
        match info.instead {
            Some("") => {
                d = d.hint("it is invisible in most editors").fix(
                    format!("remove {name}"),
                    span,
                    "",
                );
            }
            Some(" ") if info.invisible => {
                d = d
                    .hint("it looks like a space, but only U+0020 and tabs separate code")
                    .fix(
                        format!("replace {name} with an ordinary space"),
                        span,
                        " ".repeat(count),
                    );
            }
            Some(ascii) => {
                d = d
                    .hint(format!("it looks like `{ascii}`, which Vox uses"))
                    .fix_with(
                        crate::diagnostic::Applicability::MaybeIncorrect,
                        format!("replace {name} with `{ascii}`"),
                        vec![crate::diagnostic::Edit {
                            span,
                            replacement: ascii.repeat(count),
                        }],
                    );
            }
            None => {
                d = d.hint("use an ordinary line break");
            }
        }
        self.out.diagnostics.push(d);
    }
}

fn memchr_newline(src: &[u8], from: usize) -> usize {
    src[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(FileId(0), src).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_keywords_names_and_punctuation() {
        use TokenKind::*;
        assert_eq!(
            kinds("fn total(inv: Invoice) to float {\n}"),
            vec![
                Fn, Ident, LParen, Ident, Colon, TypeName, RParen, To, Ident, LBrace, Newline,
                RBrace, Eof
            ]
        );
        assert_eq!(
            kinds("a => b == c != d <= e"),
            vec![Ident, FatArrow, Ident, EqEq, Ident, NotEq, Ident, Le, Ident, Eof]
        );
        assert_eq!(kinds("_ _x"), vec![Underscore, Ident, Eof]);
    }

    #[test]
    fn numbers() {
        use TokenKind::*;
        assert_eq!(
            kinds("1_000 3.5 2e3 1.x"),
            vec![Int, Float, Float, Int, Dot, Ident, Eof]
        );
        let l = lex(FileId(0), "12abc");
        assert_eq!(l.diagnostics[0].code, Code::InvalidNumber);
    }

    #[test]
    fn strings_and_escapes() {
        let l = lex(FileId(0), r#""a\n\"b\u{e9}" "x\q""#);
        assert_eq!(l.strings, vec!["a\n\"bé".to_string(), "xq".to_string()]);
        assert_eq!(l.diagnostics.len(), 1);
        assert_eq!(l.diagnostics[0].code, Code::InvalidEscape);
    }

    /// The code of the `n`th `{…}` of the only f-string in `l`, as token kinds.
    fn interior_kinds(l: &Lexed, n: usize) -> Vec<TokenKind> {
        let codes: Vec<&Interior> = l.fstrings[0]
            .iter()
            .filter_map(|p| match p {
                FPiece::Code(c) => Some(c),
                FPiece::Lit(_) => None,
            })
            .collect();
        codes[n].tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn fstring_braces_may_span_lines() {
        use TokenKind::*;
        let l = lex(
            FileId(0),
            "let s = f\"a {\n  x +\n  1\n} b {y}\"\nlet t = 1",
        );
        assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
        assert_eq!(
            interior_kinds(&l, 0),
            vec![Newline, Ident, Plus, Newline, Int, Newline, Eof]
        );
        assert_eq!(interior_kinds(&l, 1), vec![Ident, Eof]);
        // One f-string token, then the next line's code.
        assert_eq!(
            kinds("let s = f\"{\n x }\"\nlet t = 1"),
            vec![Let, Ident, Eq, FStr, Newline, Let, Ident, Eq, Int, Eof]
        );
        // Nested: an f-string inside braces that span lines, itself across lines.
        let l = lex(FileId(0), "f\"{f\"{\n x\n}\" +\n \"!\"}\"");
        assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    }

    #[test]
    fn an_unclosed_fstring_brace_ends_with_its_line() {
        use TokenKind::*;
        // The `}` two lines down would close the brace, but the string then
        // never ends: the f-string is read as one line, and the code after it
        // stays code.
        let src = "fn f() {\n    let s = f\"total {x\n    print(s)\n}\n";
        let l = lex(FileId(0), src);
        assert_eq!(l.diagnostics.len(), 1, "{:?}", l.diagnostics);
        assert_eq!(l.diagnostics[0].code, Code::UnterminatedString);
        assert_eq!(
            l.diagnostics[0].span.end as usize,
            src.find("x\n").unwrap() + 1
        );
        assert!(kinds(src)
            .ends_with(&[Newline, Ident, LParen, Ident, RParen, Newline, RBrace, Newline, Eof]));
        // A string left open inside braces that a later line closes.
        let src = "let s = f\"{x\")\nlet t = \"}\"\n";
        let l = lex(FileId(0), src);
        assert!(
            l.diagnostics.iter().all(|d| d.span.start < 15),
            "{:?}",
            l.diagnostics
        );
        assert!(kinds(src).contains(&Let));
        assert_eq!(kinds(src).iter().filter(|k| **k == Let).count(), 2);
        // Unclosed at the end of the file.
        let l = lex(FileId(0), "f\"{x\n\n");
        assert_eq!(l.diagnostics[0].code, Code::UnterminatedString);
    }

    #[test]
    fn unterminated_string_stops_at_line_end() {
        let l = lex(FileId(0), "let s = \"abc\nlet t = 1");
        assert_eq!(l.diagnostics[0].code, Code::UnterminatedString);
        assert!(l
            .tokens
            .iter()
            .any(|t| t.kind == TokenKind::Let && t.span.start > 10));
    }

    #[test]
    fn doc_comments_are_tokens_plain_comments_are_not() {
        let l = lex(FileId(0), "// plain\n/// doc text\n//// not doc\n");
        let docs: Vec<_> = l
            .tokens
            .iter()
            .filter(|t| t.kind == TokenKind::Doc)
            .collect();
        assert_eq!(docs.len(), 1);
        assert_eq!(
            &"// plain\n/// doc text\n"[docs[0].span.range()],
            "doc text"
        );
    }

    #[test]
    fn a_leading_byte_order_mark_is_skipped() {
        let plain = "fn f() {\n}\n";
        let with_bom = format!("\u{FEFF}{plain}");
        let l = lex(FileId(0), &with_bom);
        assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
        assert_eq!(kinds(&with_bom), kinds(plain));
        // Spans stay byte offsets into the file as it is on disk.
        assert_eq!(l.tokens[0].span.start, 3);
        let f = crate::SourceFile::new("a.vox", with_bom.clone());
        assert_eq!(f.line_col(3).col, 1, "the BOM is not a column");
        assert_eq!(f.line_text(1), "fn f() {");
    }

    /// A notable character placed where code goes, for every character
    /// `chars::notable` knows, in several places (alone, in a run of three,
    /// between two names, after junk): one diagnostic naming it by code
    /// point and name, covering exactly the run, never quoting an invisible
    /// one, and a fix whose result lexes without that diagnostic.
    #[test]
    fn every_invisible_or_look_alike_character_is_named_and_fixable() {
        let mut seen = 0;
        for cp in 0..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let Some(info) = crate::chars::notable(c) else {
                continue;
            };
            seen += 1;
            let name = format!("U+{cp:04X} {}", info.name);
            for (before, run, after) in [
                ("let x = 1", 1, "\n"),
                ("let x = a", 3, " b\n"),
                ("let x = $$", 1, "\n"),
            ] {
                let body: String = std::iter::repeat_n(c, run).collect();
                let src = format!("fn f() {{\n    {before}{body}{after}}}\n");
                let l = lex(FileId(0), &src);
                let at = src.find(c).unwrap();
                let ds: Vec<_> = l
                    .diagnostics
                    .iter()
                    .filter(|d| d.span.start as usize >= at)
                    .collect();
                assert_eq!(ds.len(), 1, "{name}: {ds:?}");
                let d = ds[0];
                assert_eq!(d.code, Code::UnexpectedChar);
                assert!(d.message.contains(&name), "{name}: {}", d.message);
                assert_eq!(
                    (d.span.start as usize, d.span.end as usize),
                    (at, at + body.len()),
                    "{name}"
                );
                if info.invisible {
                    assert!(!d.message.contains(c), "{name} quoted: {}", d.message);
                    assert!(!d.hints.is_empty(), "{name}");
                }
                if run > 1 {
                    assert!(d.message.contains("3 × "), "{}", d.message);
                }
                let Some(fix) = d.fixes.first() else {
                    assert!(info.instead.is_none(), "{name}: no fix");
                    continue;
                };
                let e = &fix.edits[0];
                let fixed = format!(
                    "{}{}{}",
                    &src[..e.span.start as usize],
                    e.replacement,
                    &src[e.span.end as usize..]
                );
                // The fix puts ASCII there (a look-alike's fix is only
                // "maybe incorrect": a lone `"` opens a string, and a
                // fullwidth `$` becomes a `$`, still no Vox).
                let relexed = lex(FileId(0), &fixed);
                assert!(
                    relexed
                        .diagnostics
                        .iter()
                        .all(|d| !d.message.contains("U+") || (d.span.start as usize) < at),
                    "{name}: {fixed:?} {:?}",
                    relexed.diagnostics
                );
                assert_eq!(
                    fix.applicability == crate::diagnostic::Applicability::MachineApplicable,
                    info.invisible,
                    "{name}"
                );
            }
        }
        assert!(seen > 150, "{seen}");
    }

    /// Every non-ASCII character where code goes — named in the table or
    /// not — is reported with its code point, and a control or whitespace
    /// character is never quoted raw.
    #[test]
    fn every_non_ascii_character_in_code_is_reported_by_code_point() {
        for cp in (0x80..=0x10FFFF_u32).step_by(7).chain(0x80..0x3000) {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let src = format!("a {c} b");
            let l = lex(FileId(0), &src);
            assert_eq!(l.diagnostics.len(), 1, "U+{cp:04X}");
            let m = &l.diagnostics[0].message;
            assert!(m.contains(&format!("U+{cp:04X}")), "U+{cp:04X}: {m}");
            if c.is_control() || c.is_whitespace() {
                assert!(!m.contains(c), "U+{cp:04X} quoted raw: {m}");
            }
        }
        for c in ['\0', '\u{1}', '\u{1b}', '\u{7f}'] {
            let l = lex(FileId(0), &format!("a {c} b"));
            let m = &l.diagnostics[0].message;
            assert!(
                m.starts_with("unexpected control character U+00") && !m.contains(c),
                "{m}"
            );
        }
    }

    /// "Trojan Source": a flow control written as itself in a string or a
    /// comment is an error whose fix keeps the string's value (an escape)
    /// or drops it from the comment; the escape and the marks are fine.
    #[test]
    fn text_flow_controls_in_strings_and_comments_are_errors() {
        for cp in (0x202A..=0x202E).chain(0x2066..=0x2069) {
            let c = char::from_u32(cp).unwrap();
            let name = crate::chars::describe(c);
            for (src, place) in [
                (format!("let s = \"admin{c} \"\n"), "string literal"),
                (format!("// check{c} access\nlet s = 1\n"), "comment"),
                (format!("/// doc{c}\nfn f() {{\n}}\n"), "comment"),
            ] {
                let l = lex(FileId(0), &src);
                assert_eq!(l.diagnostics.len(), 1, "{src:?}: {:?}", l.diagnostics);
                let d = &l.diagnostics[0];
                assert_eq!(d.code, Code::BidiControl);
                assert_eq!(d.message, format!("invisible {name} in a {place}"));
                let e = &d.fixes[0].edits[0];
                let fixed = format!(
                    "{}{}{}",
                    &src[..e.span.start as usize],
                    e.replacement,
                    &src[e.span.end as usize..]
                );
                let relexed = lex(FileId(0), &fixed);
                assert!(relexed.diagnostics.is_empty(), "{fixed:?}");
                if place == "string literal" {
                    assert_eq!(relexed.strings, l.strings, "the value is kept");
                }
            }
        }
        for fine in [
            "let s = \"\\u{202E}\"\n",
            "// \u{200F}שלום\n",
            "let s = \"\u{200E}\"\n",
        ] {
            assert!(lex(FileId(0), fine).diagnostics.is_empty(), "{fine:?}");
        }
    }

    #[test]
    fn junk_is_one_diagnostic() {
        let l = lex(FileId(0), "a $$$ b \0 c");
        assert_eq!(l.diagnostics.len(), 2);
        assert!(l.diagnostics.iter().all(|d| d.code == Code::UnexpectedChar));
    }
}
