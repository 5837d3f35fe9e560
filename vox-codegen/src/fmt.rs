//! The formatter behind `cargo vox fmt`: one canonical layout for Vox
//! source (docs/language.md, "Formatting").
//!
//! It works on the token stream, not the syntax tree, so nothing the tree
//! drops can be lost: every token is written back with its exact text
//! (`1_000`, escapes in strings), and comments are kept as trivia found in
//! the gaps between tokens. A `//` comment (or a `///` doc comment) runs to
//! the end of its line, so each source line is a run of tokens plus at most
//! one comment at its end; the formatter keeps that line structure, which
//! matters in Vox because newlines end statements. What it normalizes:
//!
//! - indentation: four spaces per open bracket (`{`, `(`, `[`) that a
//!   previous line left open; a line that starts by closing one goes back to
//!   the indentation of the line that opened it; a line starting with `.`
//!   (a continued field access), `|` (a variant) or `to` is indented once
//!   more; a comment line takes the indentation of the code after it;
//! - spacing inside a line: one space between tokens, none inside `( )` and
//!   `[ ]`, before `, ; : . ) ]`, after `. @` and a unary `-`, or before the
//!   `(` of a call or of a lambda's `fn(`, and the `[` of type arguments; `{ x }` has spaces,
//!   `{}` none; one space before a trailing comment;
//! - blank lines: at most one in a row, none at the start or end of the file
//!   or just inside a bracket, and one between two top-level items (with
//!   their doc comments, comments and decorators) when either of them spans
//!   several lines;
//! - a record pattern's `..` is spaced as a field is (`{ total, .. }`);
//! - `}` and `else` on separate lines are joined into `} else`;
//! - trailing whitespace is removed, line ends become `\n`, and the file
//!   ends with exactly one newline.
//!
//! Files with syntax errors are not formatted: [`format_source`] returns
//! their diagnostics. The result is checked before it is returned: its
//! tokens and comments must be exactly those of the input, in order, or the
//! input is returned unchanged. Work is linear in the size of the file and
//! nothing recurses, so no input can overflow the stack.

use crate::ast::Module;
use crate::diagnostic::Diagnostic;
use crate::lexer::{self, TokenKind as T};
use crate::source::FileId;

/// Formats one file's text. `file` is the id its diagnostics point into.
///
/// Returns the formatted text (equal to `text` when it is already
/// formatted), or, when the file has syntax errors, the diagnostics of
/// lexing and parsing it (errors and warnings), and the file must be left
/// as it is.
pub fn format_source(file: FileId, text: &str) -> Result<String, Vec<Diagnostic>> {
    let lexed = lexer::lex(file, text);
    let mut diagnostics = lexed.diagnostics.clone();
    let tokens = lexed.tokens.clone();
    let mut module = Module::default();
    crate::parser::parse_into(&mut module, lexed, text, &mut diagnostics);
    if diagnostics.iter().any(Diagnostic::is_error) {
        crate::diagnostic::sort(&mut diagnostics);
        return Err(diagnostics);
    }
    let lines = split_lines(text, &tokens);
    let mut out = render(&lines);
    // A leading byte order mark is not layout: it stays (the lexer skips it).
    if text.starts_with('\u{FEFF}') {
        out.insert(0, '\u{FEFF}');
    }
    // Never change meaning: the output must hold the same tokens and
    // comments in the same order.
    let relexed = lexer::lex(file, &out);
    if !relexed.diagnostics.is_empty() || !same_content(&lines, &split_lines(&out, &relexed.tokens))
    {
        return Ok(text.to_string());
    }
    Ok(out)
}

/// True when formatting would change `text` (and it has no syntax errors).
pub fn needs_formatting(text: &str) -> bool {
    format_source(FileId(0), text).is_ok_and(|f| f != text)
}

#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    kind: T,
    text: &'a str,
}

/// One source line: its tokens and the comment at its end, if any.
#[derive(Debug, Clone, Default)]
struct Line<'a> {
    toks: Vec<Tok<'a>>,
    comment: Option<&'a str>,
}

impl Line<'_> {
    fn is_blank(&self) -> bool {
        self.toks.is_empty() && self.comment.is_none()
    }

    fn first(&self) -> Option<T> {
        self.toks.first().map(|t| t.kind)
    }

    fn last(&self) -> Option<T> {
        self.toks.last().map(|t| t.kind)
    }
}

fn is_open(k: T) -> bool {
    matches!(k, T::LBrace | T::LParen | T::LBracket)
}

fn is_close(k: T) -> bool {
    matches!(k, T::RBrace | T::RParen | T::RBracket)
}

/// Splits the token stream into source lines. Doc comments are tokens, but
/// like plain comments they are taken from the gap text (`///` included).
fn split_lines<'a>(text: &'a str, tokens: &[lexer::Token]) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    let mut cur = Line::default();
    let mut prev_end = 0usize;
    for t in tokens {
        if t.kind == T::Doc {
            continue;
        }
        let r = t.span.range();
        if let Some(gap) = text.get(prev_end..r.start) {
            if let Some(at) = gap.find("//") {
                cur.comment = Some(gap[at..].trim_end());
            }
        }
        prev_end = r.end.max(prev_end);
        match t.kind {
            T::Newline => lines.push(std::mem::take(&mut cur)),
            T::Eof => {
                if !cur.is_blank() {
                    lines.push(std::mem::take(&mut cur));
                }
                break;
            }
            kind => cur.toks.push(Tok {
                kind,
                text: text.get(r).unwrap_or(""),
            }),
        }
    }
    lines
}

/// Tokens and comments, in order, ignoring layout (also the layout of the
/// lines inside an f-string's braces).
fn same_content(a: &[Line<'_>], b: &[Line<'_>]) -> bool {
    fn flat<'a>(lines: &'a [Line<'a>]) -> impl Iterator<Item = (Option<T>, String)> + 'a {
        lines.iter().flat_map(|l| {
            l.toks
                .iter()
                .map(|t| {
                    let text = if t.kind == T::FStr {
                        t.text.lines().map(str::trim).collect::<Vec<_>>().join("\n")
                    } else {
                        t.text.to_string()
                    };
                    (Some(t.kind), text)
                })
                .chain(l.comment.map(|c| (None, c.to_string())))
        })
    }
    flat(a).eq(flat(b))
}

/// An f-string whose braces span lines, with the lines after its first
/// indented as code is (docs/language.md, "Formatting"): four spaces per
/// bracket (`{`, `(`, `[`, an interpolation's braces included) that an
/// earlier line left open, one level less for a line that starts by closing
/// one, from `base`, the indentation of the line the f-string starts on.
/// A line break inside an f-string is always inside braces, between tokens
/// of code, so the spaces around it are layout.
fn reindent_fstring(text: &str, base: usize) -> String {
    // Where a character is: f-string text, code in braces, or a string
    // literal in code. `Code(n)` counts the brackets open in these braces.
    enum At {
        Text,
        Code(usize),
        Str,
    }
    let mut at: Vec<At> = Vec::new();
    // The indentation each open bracket was opened at.
    let mut stack: Vec<usize> = Vec::new();
    let mut out = String::new();
    for (li, raw) in text.split('\n').enumerate() {
        let line = if li == 0 { raw.trim_end() } else { raw.trim() };
        let ind = if li == 0 {
            base
        } else {
            let inside = stack.last().map_or(base, |d| d + 1);
            if line.starts_with(['}', ')', ']']) {
                stack.last().copied().unwrap_or(base)
            } else {
                inside
            }
        };
        if li > 0 {
            out.push('\n');
            for _ in 0..ind {
                out.push_str("    ");
            }
        }
        out.push_str(line);
        let mut chars = line.chars().peekable();
        let mut prev = ' ';
        while let Some(c) = chars.next() {
            let word_f = c == 'f' && !(prev.is_alphanumeric() || prev == '_');
            prev = c;
            match (at.last_mut(), c) {
                (None, 'f') if word_f && chars.peek() == Some(&'"') => {
                    chars.next();
                    at.push(At::Text);
                }
                (None, _) => {}
                (Some(At::Text), '\\') | (Some(At::Str), '\\') => {
                    chars.next();
                }
                (Some(At::Text), '{') if chars.peek() == Some(&'{') => {
                    chars.next();
                }
                (Some(At::Text), '}') if chars.peek() == Some(&'}') => {
                    chars.next();
                }
                (Some(At::Text), '{') => {
                    at.push(At::Code(0));
                    stack.push(ind);
                }
                (Some(At::Text), '"') | (Some(At::Str), '"') => {
                    at.pop();
                }
                (Some(At::Text), _) | (Some(At::Str), _) => {}
                (Some(At::Code(n)), '(' | '[' | '{') => {
                    *n += 1;
                    stack.push(ind);
                }
                (Some(At::Code(0)), '}') => {
                    at.pop();
                    stack.pop();
                }
                (Some(At::Code(n)), ')' | ']' | '}') => {
                    *n = n.saturating_sub(1);
                    stack.pop();
                }
                (Some(At::Code(_)), 'f') if word_f && chars.peek() == Some(&'"') => {
                    chars.next();
                    at.push(At::Text);
                }
                (Some(At::Code(_)), '"') => at.push(At::Str),
                (Some(At::Code(_)), _) => {}
            }
        }
    }
    out
}

/// A token that can end an operand: a `-` after one is binary.
fn ends_operand(k: T) -> bool {
    matches!(
        k,
        T::Ident
            | T::TypeName
            | T::Int
            | T::Float
            | T::Str
            | T::FStr
            | T::True
            | T::False
            | T::Underscore
            | T::RParen
            | T::RBracket
            | T::RBrace
    )
}

/// Whether a space goes between `a` and `b` (`before` is the token before `a`).
fn space_between(before: Option<T>, a: T, b: T) -> bool {
    // The `..` of a record pattern: `{ total, .. }`, `{ .. }`.
    if matches!(a, T::Comma | T::LBrace) && b == T::Dot {
        return true;
    }
    if a == T::Dot && before == Some(T::Dot) && b == T::RBrace {
        return true;
    }
    if matches!(
        b,
        T::Comma | T::Semi | T::RParen | T::RBracket | T::Dot | T::Colon
    ) {
        return false;
    }
    if matches!(a, T::LParen | T::LBracket | T::Dot | T::At) {
        return false;
    }
    if matches!(b, T::LParen | T::LBracket) && matches!(a, T::Ident | T::TypeName) {
        return false;
    }
    // A lambda, `fn(x) => …` (a declaration's `fn` is followed by its name).
    if a == T::Fn && b == T::LParen {
        return false;
    }
    if a == T::Minus && !before.is_some_and(ends_operand) {
        return false;
    }
    !(a == T::LBrace && b == T::RBrace)
}

/// Joins `}` and an `else` on the next line (no comment between them):
/// the parser reads both layouts the same way.
fn join_else(lines: Vec<Line<'_>>) -> Vec<Line<'_>> {
    let mut out: Vec<Line<'_>> = Vec::with_capacity(lines.len());
    for line in lines {
        if line.first() == Some(T::Else) {
            // Blank lines between the two go too.
            let mut blanks = 0;
            while out.len() > blanks && out[out.len() - 1 - blanks].is_blank() {
                blanks += 1;
            }
            let prev = out.len().checked_sub(blanks + 1);
            if let Some(p) = prev {
                if out[p].last() == Some(T::RBrace) && out[p].comment.is_none() {
                    out.truncate(p + 1);
                    let Line { toks, comment } = line;
                    out[p].toks.extend(toks);
                    out[p].comment = comment;
                    continue;
                }
            }
        }
        out.push(line);
    }
    out
}

fn render(lines: &[Line<'_>]) -> String {
    let lines = join_else(lines.to_vec());
    let n = lines.len();
    // Pass 1: indentation of each code line and the indentation inside the
    // brackets open at its start.
    let mut indent = vec![0usize; n];
    let mut inner = vec![0usize; n];
    let mut stack: Vec<usize> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let inside = stack.last().map_or(0, |d| d + 1);
        inner[i] = inside;
        let Some(first) = line.first() else {
            continue;
        };
        let mut ind = if is_close(first) {
            stack.last().copied().unwrap_or(0)
        } else {
            inside
        };
        if matches!(first, T::Dot | T::Pipe | T::To) {
            ind += 1;
        }
        indent[i] = ind;
        for t in &line.toks {
            if is_open(t.kind) {
                stack.push(ind);
            } else if is_close(t.kind) {
                stack.pop();
            }
        }
    }
    // Comment lines take the indentation of the next code line (the inside
    // of the block when that line closes it).
    let mut next_code: Option<usize> = None;
    for i in (0..n).rev() {
        if !lines[i].toks.is_empty() {
            next_code = Some(i);
        } else if lines[i].comment.is_some() {
            indent[i] = match next_code {
                Some(j) if lines[j].first().is_some_and(is_close) => inner[j],
                Some(j) => indent[j],
                None => inner[i],
            };
        }
    }
    // Pass 2: top-level items. An item's head is the comments and
    // decorators before its `fn` or `type` line; a group is a head and its
    // item. `group[i]` is the group of line `i`, `starts[g]` its first line.
    let mut group = vec![0usize; n];
    let mut starts: Vec<usize> = Vec::new();
    let mut body_lines: Vec<usize> = Vec::new();
    let mut in_head = false;
    for (i, line) in lines.iter().enumerate() {
        if line.is_blank() {
            group[i] = starts.len().saturating_sub(1);
            continue;
        }
        let top = inner[i] == 0 && indent[i] == 0;
        let starts_item = top
            && match line.first() {
                None => true,
                Some(k) => matches!(k, T::At | T::Fn | T::Type | T::Pub),
            };
        if starts_item && !in_head {
            starts.push(i);
            body_lines.push(0);
        }
        let is_head = if inner[i] == 0 {
            in_head = starts_item && matches!(line.first(), None | Some(T::At));
            in_head
        } else {
            in_head
        };
        if let Some(b) = body_lines.last_mut() {
            if !is_head && !line.toks.is_empty() {
                *b += 1;
            }
        }
        group[i] = starts.len().saturating_sub(1);
    }
    // Pass 3: write. Blank lines: the author's (at most one in a row, none
    // just inside brackets), and one between two groups when either spans
    // several lines (one-line items, such as short types, may stay together).
    let mut out = String::with_capacity(lines.iter().map(|l| l.toks.len() * 6 + 8).sum());
    let mut prev: Option<usize> = None; // last non-blank line written
    let mut pending_blank = false;
    for (i, line) in lines.iter().enumerate() {
        if line.is_blank() {
            pending_blank = true;
            continue;
        }
        if let Some(p) = prev {
            let after_open = lines[p].last().is_some_and(is_open);
            let before_close = line.first().is_some_and(is_close);
            let g = group[i];
            let item_gap =
                starts.get(g) == Some(&i) && g > 0 && (body_lines[g] > 1 || body_lines[g - 1] > 1);
            if (pending_blank || item_gap) && !after_open && !before_close {
                out.push('\n');
            }
        }
        pending_blank = false;
        prev = Some(i);
        for _ in 0..indent[i] {
            out.push_str("    ");
        }
        let mut before: Option<T> = None;
        let mut last: Option<T> = None;
        for t in &line.toks {
            if let Some(a) = last {
                if space_between(before, a, t.kind) {
                    out.push(' ');
                }
            }
            if t.kind == T::FStr && t.text.contains('\n') {
                out.push_str(&reindent_fstring(t.text, indent[i]));
            } else {
                out.push_str(t.text);
            }
            before = last;
            last = Some(t.kind);
        }
        if let Some(c) = line.comment {
            if !line.toks.is_empty() {
                out.push(' ');
            }
            out.push_str(c);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod corpus_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(src: &str) -> String {
        format_source(FileId(0), src).unwrap_or_else(|d| panic!("{src:?}: {d:?}"))
    }

    #[test]
    fn a_leading_byte_order_mark_stays() {
        assert_eq!(fmt("\u{FEFF}fn  f() {\n}\n"), "\u{FEFF}fn f() {\n}\n");
        assert_eq!(fmt("\u{FEFF}fn f() {\n}\n"), "\u{FEFF}fn f() {\n}\n");
        assert!(!needs_formatting("\u{FEFF}// only a comment\n"));
        // Anywhere else it is an error, and nothing is formatted.
        assert!(format_source(FileId(0), "fn f() {\n}\n\u{FEFF}").is_err());
    }

    #[test]
    fn indents_and_spaces_a_function() {
        let src = "fn  f( a :int,b: list [ int ] )to int{\nlet x=-1\n  if a>0{\nreturn a+x\n}\nelse {\n return  -a\n}\n}\n";
        assert_eq!(
            fmt(src),
            "fn f(a: int, b: list[int]) to int {\n    let x = -1\n    if a > 0 {\n        return a + x\n    } else {\n        return -a\n    }\n}\n"
        );
    }

    #[test]
    fn keeps_comments_docs_and_paragraphs() {
        let src = "\n\n// head\n\n\n/// Doc.\ntype A {\n   x: int,   // trailing\n\n\n  // own line\n   y: str\n\n}\ntype B =\n| P\n/// doc of Q\n| Q(n: int)\nfn g() {\n}\n//end";
        assert_eq!(
            fmt(src),
            "// head\n\n/// Doc.\ntype A {\n    x: int, // trailing\n\n    // own line\n    y: str\n}\n\ntype B =\n    | P\n    /// doc of Q\n    | Q(n: int)\n\nfn g() {\n}\n\n//end\n"
        );
    }

    #[test]
    fn is_idempotent_and_keeps_literal_text() {
        let src = "fn f() {\n    let s = \"a  //  b\\n\"\n    let n = 1_000 - - 2\n    print(Invoice {   })\n    g(xs.len)\n        .x\n}\n";
        let once = fmt(src);
        assert!(once.contains("\"a  //  b\\n\""), "{once}");
        assert!(once.contains("1_000 - -2"), "{once}");
        assert!(once.contains("Invoice {}"), "{once}");
        assert!(once.contains("\n        .x\n"), "{once}");
        assert_eq!(fmt(&once), once);
    }

    #[test]
    fn one_line_items_may_stay_together_longer_ones_are_separated() {
        let src = "type A { x: int }\n/// B.\ntype B = | P | Q\n@test\nfn t() {\n    assert(true)\n}\n@ai(\n    model = \"m\"\n)\n@uses(net)\nfn g() to int { 1 }\ntype C { y: int }\n";
        assert_eq!(
            fmt(src),
            "type A { x: int }\n/// B.\ntype B = | P | Q\n\n@test\nfn t() {\n    assert(true)\n}\n\n@ai(\n    model = \"m\"\n)\n@uses(net)\nfn g() to int { 1 }\ntype C { y: int }\n"
        );
    }

    #[test]
    fn syntax_errors_are_reported_not_formatted() {
        let d = format_source(FileId(0), "fn f( {\n").unwrap_err();
        assert!(d.iter().any(Diagnostic::is_error));
        assert!(!needs_formatting("fn f( {\n"));
    }

    #[test]
    fn fstring_braces_across_lines_are_indented_as_code() {
        let src = "fn f(xs: list[int]) to str {\n  return f\"a {  \r\n sum(xs) \n   } b {join(\n[f\"{\nxs\n}\", \"}\"],\n\"; \",\n)}\"\n}\n";
        assert_eq!(
            fmt(src),
            "fn f(xs: list[int]) to str {\n    return f\"a {\n        sum(xs)\n    } b {join(\n        [f\"{\n            xs\n        }\", \"}\"],\n        \"; \",\n    )}\"\n}\n"
        );
    }

    #[test]
    fn crlf_and_tabs_become_canonical() {
        assert_eq!(
            fmt("fn f() {\r\n\tlet x = 1\r\n}\r\n"),
            "fn f() {\n    let x = 1\n}\n"
        );
    }
}
