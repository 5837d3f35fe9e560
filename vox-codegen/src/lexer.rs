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
    pub diagnostics: Vec<Diagnostic>,
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

pub fn lex(file: FileId, src: &str) -> Lexed {
    let mut lx = Lexer {
        file,
        src: src.as_bytes(),
        text: src,
        pos: 0,
        out: Lexed::default(),
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
                }
            }
        }
        self.out.strings.push(value);
        self.push(TokenKind::Str, start, self.pos);
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
        // Swallow a whole run of junk as one diagnostic.
        let mut end = start;
        while end < self.src.len() {
            let len = self.text[end..].chars().next().map_or(1, char::len_utf8);
            let b = self.src[end];
            let starts_token = b.is_ascii_alphanumeric()
                || b.is_ascii_whitespace()
                || b"_\"/(){}[],:;.@|=!<>+-*%".contains(&b);
            if end > start && starts_token {
                break;
            }
            end += len;
        }
        self.pos = end;
        let shown: String = self.text[start..end].chars().take(16).collect();
        let printable = shown.chars().all(|c| !c.is_control());
        let what = if printable {
            format!(
                "unexpected character{} `{shown}`",
                if end - start > 1 { "s" } else { "" }
            )
        } else {
            "unexpected control character".to_string()
        };
        let mut d = Diagnostic::error(Code::UnexpectedChar, self.span(start, end), what);
        if shown.starts_with('\'') {
            d = d.hint("strings use double quotes: \"text\"");
        } else if shown.starts_with('&') || shown.starts_with('!') {
            d = d.hint("Vox writes `and`, `or` and `not` for boolean operators");
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
    fn junk_is_one_diagnostic() {
        let l = lex(FileId(0), "a $$$ b \0 c");
        assert_eq!(l.diagnostics.len(), 2);
        assert!(l.diagnostics.iter().all(|d| d.code == Code::UnexpectedChar));
    }
}
