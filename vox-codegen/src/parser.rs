//! Parser: tokens → [`ast::Module`] items, with error recovery.
//!
//! Recursive descent over the informal grammar in docs/language.md. Errors are
//! reported and parsing resumes at the next statement or item, so one run
//! finds as many problems as it can. Nesting is bounded ([`MAX_DEPTH`]) and
//! every loop consumes a token or stops, so no input can overflow the stack
//! or hang the parser.

use crate::ast::*;
use crate::diagnostic::{Applicability, Code, Diagnostic, Edit};
use crate::lexer::{Lexed, Token, TokenKind as T};
use crate::source::Span;

/// Deepest nesting of expressions, blocks, types and patterns accepted.
pub const MAX_DEPTH: u32 = 96;

/// How many levels of [`MAX_DEPTH`] a lambda's body takes.
const LAMBDA_LEVELS: u32 = 3;

/// Why a parse function gave up; the diagnostic is already recorded.
#[derive(Debug)]
struct Abort;

type PResult<T> = Result<T, Abort>;

/// Parses one file's tokens, appending its items to `module`.
pub fn parse_into(
    module: &mut Module,
    lexed: Lexed,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut p = Parser::new(lexed, text, module.expr_count, diagnostics);
    p.module(&mut module.items);
    module.expr_count = p.next_expr;
}

/// Parses a standalone type expression such as `list[Invoice]` (as given on
/// the command line to `cargo vox schema`).
pub fn parse_type(text: &str) -> Result<TypeExpr, Vec<Diagnostic>> {
    let file = crate::source::FileId(0);
    let lexed = crate::lexer::lex(file, text);
    let mut diagnostics = lexed.diagnostics.clone();
    let mut p = Parser::new(lexed, text, 0, &mut diagnostics);
    let ty = p.type_expr();
    let trailing = p.peek() != T::Eof;
    if trailing {
        let _ = p.unexpected("expected the end of the type");
    }
    match ty {
        Ok(t) if diagnostics.is_empty() => Ok(t),
        _ => Err(diagnostics),
    }
}

struct Parser<'a> {
    tokens: Vec<Token>,
    strings: Vec<String>,
    text: &'a str,
    pos: usize,
    /// Index into `strings` of the next string literal token.
    string_pos: usize,
    /// The pieces of each f-string token, and the index of the next one.
    fstrings: Vec<Vec<crate::lexer::FPiece>>,
    fstring_pos: usize,
    next_expr: u32,
    depth: u32,
    too_deep: bool,
    /// Span of the first `///` taken by the last `take_docs`.
    doc_span: Option<Span>,
    /// Set when a statement in the current function body needed recovery.
    body_recovered: bool,
    /// Stack: are newlines statement terminators here? (blocks: yes; inside
    /// parentheses, brackets, record literals and item headers: no).
    newline_significant: Vec<bool>,
    /// In the head of `if`/`match`/`for`, `Name {` starts the block, not a record literal.
    no_record_literal: bool,
    diags: &'a mut Vec<Diagnostic>,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `lexed` (from `text`), numbering expressions
    /// from `next_expr`.
    fn new(
        lexed: Lexed,
        text: &'a str,
        next_expr: u32,
        diags: &'a mut Vec<Diagnostic>,
    ) -> Parser<'a> {
        Parser {
            tokens: lexed.tokens,
            strings: lexed.strings,
            fstrings: lexed.fstrings,
            fstring_pos: 0,
            text,
            pos: 0,
            string_pos: 0,
            next_expr,
            depth: 0,
            too_deep: false,
            doc_span: None,
            body_recovered: false,
            newline_significant: vec![false],
            no_record_literal: false,
            diags,
        }
    }
}

impl Parser<'_> {
    // ---- token access -------------------------------------------------

    fn nl_significant(&self) -> bool {
        self.newline_significant.last().copied().unwrap_or(false)
    }

    fn raw(&self, i: usize) -> Token {
        // The lexer always ends the stream with Eof; clamp to it.
        let last = self.tokens.len().saturating_sub(1);
        self.tokens.get(i.min(last)).copied().unwrap_or(Token {
            kind: T::Eof,
            span: Span::new(crate::source::FileId(0), 0, 0),
        })
    }

    /// Index of the next meaningful token at or after `i`.
    fn skip_trivia_from(&self, mut i: usize, skip_newlines: bool) -> usize {
        loop {
            let t = self.raw(i);
            match t.kind {
                T::Doc => i += 1,
                T::Newline if skip_newlines => i += 1,
                _ => return i,
            }
        }
    }

    fn peek_tok(&self) -> Token {
        self.raw(self.skip_trivia_from(self.pos, !self.nl_significant()))
    }

    fn peek(&self) -> T {
        self.peek_tok().kind
    }

    fn peek_nth(&self, n: usize) -> T {
        let skip = !self.nl_significant();
        let mut i = self.skip_trivia_from(self.pos, skip);
        for _ in 0..n {
            i = self.skip_trivia_from(i + 1, skip);
        }
        self.raw(i).kind
    }

    /// The next token kind, looking past newlines even where they matter.
    fn peek_past_newlines(&self) -> T {
        self.raw(self.skip_trivia_from(self.pos, true)).kind
    }

    fn skip_newlines(&mut self) {
        self.pos = self.skip_trivia_from(self.pos, true);
    }

    fn bump(&mut self) -> Token {
        let i = self.skip_trivia_from(self.pos, !self.nl_significant());
        let t = self.raw(i);
        self.track_strings(self.pos, i + 1);
        if t.kind != T::Eof {
            self.pos = i + 1;
        } else {
            self.pos = i;
        }
        t
    }

    /// Keeps `string_pos` in step when tokens in `from..to` are consumed or skipped.
    fn track_strings(&mut self, from: usize, to: usize) {
        for i in from..to.min(self.tokens.len()) {
            match self.tokens[i].kind {
                T::Str => self.string_pos += 1,
                T::FStr => self.fstring_pos += 1,
                _ => {}
            }
        }
    }

    fn advance_to(&mut self, i: usize) {
        let i = i.min(self.tokens.len().saturating_sub(1));
        if i > self.pos {
            self.track_strings(self.pos, i);
            self.pos = i;
        }
    }

    fn eat(&mut self, kind: T) -> Option<Token> {
        if self.peek() == kind {
            Some(self.bump())
        } else {
            None
        }
    }

    fn expect(&mut self, kind: T, context: &str) -> PResult<Token> {
        if self.peek() == kind {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("expected {} {context}", kind.describe())))
        }
    }

    /// Expects a closing delimiter; when a statement keyword shows up
    /// instead, the real problem is the unclosed opener.
    fn expect_close(&mut self, close: T, open: Span, context: &str) -> PResult<Token> {
        if self.peek() == close {
            return Ok(self.bump());
        }
        if matches!(
            self.peek(),
            T::Let | T::Return | T::For | T::While | T::Fn | T::Type | T::RBrace | T::Eof
        ) {
            let d = Diagnostic::error(
                Code::UnclosedDelimiter,
                open,
                format!("unclosed {}", self.text(open)),
            )
            .label("this delimiter is never closed")
            .hint(format!("add {} {context}", close.describe()));
            self.report(d);
            return Err(Abort);
        }
        self.expect(close, context)
    }

    fn unexpected(&mut self, message: &str) -> Abort {
        let t = self.peek_tok();
        let d = Diagnostic::error(Code::UnexpectedToken, t.span, message.to_string())
            .label(format!("found {}", t.kind.describe()));
        self.report(d);
        Abort
    }

    fn report(&mut self, d: Diagnostic) {
        // One syntax error per position is enough; recovery can revisit a spot.
        if self
            .diags
            .last()
            .is_some_and(|last| last.span == d.span && last.code == d.code)
        {
            return;
        }
        self.diags.push(d);
    }

    fn text(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }

    fn ident(&self, t: Token) -> Ident {
        Ident {
            name: self.text(t.span).to_string(),
            span: t.span,
        }
    }

    fn bump_ident(&mut self) -> Ident {
        let t = self.bump();
        self.ident(t)
    }

    fn string_value(&self) -> String {
        // `bump` already counted this token, so it is the previous string.
        self.strings
            .get(self.string_pos.wrapping_sub(1))
            .cloned()
            .unwrap_or_default()
    }

    fn prev_span(&self) -> Span {
        let mut i = self.pos;
        while i > 0 {
            i -= 1;
            let t = self.raw(i);
            if !matches!(t.kind, T::Newline | T::Doc) {
                return t.span;
            }
        }
        self.raw(0).span.shrink_to_start()
    }

    /// The f-string token just bumped (at `span`), as the concatenation it
    /// means: `f"Total: {x}"` is `"Total: " + str(x)` (docs/language.md,
    /// "Text"). The `str` calls are marked by an empty name span, so a local
    /// named `str` cannot capture them.
    fn fstring(&mut self, span: Span) -> PResult<Expr> {
        let pieces = self
            .fstrings
            .get(self.fstring_pos.wrapping_sub(1))
            .cloned()
            .unwrap_or_default();
        let mut parts = Vec::new();
        for piece in pieces {
            match piece {
                crate::lexer::FPiece::Lit(s) => parts.push(self.new_expr(ExprKind::Str(s), span)),
                crate::lexer::FPiece::Code(code) => {
                    let e = self.interior(code)?;
                    let at = Span::new(e.span.file, e.span.start as usize, e.span.start as usize);
                    let espan = e.span;
                    parts.push(self.new_expr(
                        ExprKind::Call {
                            callee: Ident {
                                name: "str".into(),
                                span: at,
                            },
                            args: vec![Arg {
                                name: None,
                                value: e,
                            }],
                        },
                        espan,
                    ));
                }
            }
        }
        let mut it = parts.into_iter();
        let Some(mut acc) = it.next() else {
            return Ok(self.new_expr(ExprKind::Str(String::new()), span));
        };
        for p in it {
            acc = self.new_expr(
                ExprKind::Binary {
                    op: BinaryOp::Add,
                    lhs: Box::new(acc),
                    rhs: Box::new(p),
                },
                span,
            );
        }
        Ok(acc)
    }

    /// Parses one `{…}` of an f-string: an expression filling its tokens.
    fn interior(&mut self, code: crate::lexer::Interior) -> PResult<Expr> {
        let saved = (
            std::mem::replace(&mut self.tokens, code.tokens),
            std::mem::replace(&mut self.strings, code.strings),
            std::mem::replace(&mut self.fstrings, code.fstrings),
            std::mem::replace(&mut self.pos, 0),
            std::mem::replace(&mut self.string_pos, 0),
            std::mem::replace(&mut self.fstring_pos, 0),
        );
        self.newline_significant.push(false);
        let r = self.expr().and_then(|e| {
            if self.peek() == T::Eof {
                Ok(e)
            } else {
                Err(self.unexpected("expected `}` to end the f-string's expression"))
            }
        });
        self.newline_significant.pop();
        self.tokens = saved.0;
        self.strings = saved.1;
        self.fstrings = saved.2;
        self.pos = saved.3;
        self.string_pos = saved.4;
        self.fstring_pos = saved.5;
        r
    }

    fn new_expr(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr = self.next_expr.saturating_add(1);
        Expr { id, kind, span }
    }

    /// Items separated by commas (a trailing one allowed) up to `close`,
    /// the opening bracket already eaten; newlines do not matter inside.
    /// A missing `close` is reported with `context`, and pointing at the
    /// opening bracket `open` when given.
    fn comma_list<X>(
        &mut self,
        close: T,
        open: Option<Span>,
        context: &str,
        mut item: impl FnMut(&mut Self) -> PResult<X>,
    ) -> PResult<Vec<X>> {
        self.with_newlines(false, |p| {
            let mut items = Vec::new();
            loop {
                if p.eat(close).is_some() {
                    return Ok(items);
                }
                items.push(item(p)?);
                if p.eat(T::Comma).is_none() {
                    match open {
                        Some(open) => p.expect_close(close, open, context)?,
                        None => p.expect(close, context)?,
                    };
                    return Ok(items);
                }
            }
        })
    }

    fn with_newlines<R>(&mut self, significant: bool, f: impl FnOnce(&mut Self) -> R) -> R {
        self.newline_significant.push(significant);
        let saved = std::mem::replace(&mut self.no_record_literal, false);
        let r = f(self);
        self.no_record_literal = saved;
        self.newline_significant.pop();
        r
    }

    fn enter(&mut self, span: Span) -> PResult<()> {
        if self.too_deep {
            return Err(Abort);
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.too_deep = true;
            self.diags.push(
                Diagnostic::error(
                    Code::TooDeep,
                    span,
                    format!("nesting deeper than {MAX_DEPTH} levels"),
                )
                .hint("split the expression into `let` bindings or smaller functions"),
            );
            self.depth -= 1;
            return Err(Abort);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn nested<R>(&mut self, f: impl FnOnce(&mut Self) -> PResult<R>) -> PResult<R> {
        let span = self.peek_tok().span;
        self.enter(span)?;
        let r = f(self);
        self.leave();
        r
    }

    // ---- items --------------------------------------------------------

    fn module(&mut self, items: &mut Vec<Item>) {
        loop {
            self.skip_newlines_and_semis_at_item_level();
            if self.raw(self.pos).kind == T::Eof {
                break;
            }
            let before = self.pos;
            self.too_deep = false;
            self.depth = 0;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Abort) => self.recover_item(),
            }
            if self.pos == before {
                // Guarantee progress whatever went wrong.
                self.bump_raw();
            }
        }
    }

    fn bump_raw(&mut self) {
        if self.raw(self.pos).kind != T::Eof {
            self.advance_to(self.pos + 1);
        }
    }

    fn skip_newlines_and_semis_at_item_level(&mut self) {
        loop {
            match self.raw(self.pos).kind {
                T::Newline | T::Semi => self.bump_raw(),
                _ => return,
            }
        }
    }

    /// Skips to the next token that starts an item at the start of a line.
    fn recover_item(&mut self) {
        self.bump_raw();
        loop {
            let t = self.raw(self.pos);
            if t.kind == T::Eof {
                return;
            }
            let at_line_start = self.pos == 0 || self.raw(self.pos - 1).kind == T::Newline;
            let is_const = t.kind == T::Ident && self.text(t.span) == "const";
            if at_line_start
                && (is_const || matches!(t.kind, T::Fn | T::Type | T::Pub | T::At | T::Doc))
            {
                return;
            }
            self.bump_raw();
        }
    }

    /// Leading doc comments at position `pos` (raw tokens).
    fn take_docs(&mut self) -> Vec<String> {
        let mut docs = Vec::new();
        self.doc_span = None;
        loop {
            let t = self.raw(self.pos);
            match t.kind {
                T::Doc => {
                    if self.doc_span.is_none() {
                        // The `///` itself, three bytes before the text.
                        let start = (t.span.start as usize).saturating_sub(4);
                        let start = if self.text.get(start..start + 3) == Some("///") {
                            start
                        } else {
                            start + 1
                        };
                        self.doc_span = Some(Span::new(t.span.file, start, t.span.end as usize));
                    }
                    docs.push(self.text(t.span).to_string());
                    self.pos += 1;
                }
                T::Newline => self.pos += 1,
                _ => return docs,
            }
        }
    }

    fn item(&mut self) -> PResult<Item> {
        let start = self.raw(self.skip_trivia_from(self.pos, true)).span;
        let docs = self.take_docs();
        let mut decorators = Vec::new();
        while self.peek() == T::At {
            decorators.push(self.decorator()?);
            let extra_docs = self.take_docs();
            if !extra_docs.is_empty() {
                let span = self.doc_span.unwrap_or_else(|| self.prev_span());
                self.diags.push(
                    Diagnostic::warning(
                        Code::DanglingDoc,
                        span,
                        "doc comment between decorators is ignored",
                    )
                    .hint("put doc comments above the decorators"),
                );
            }
        }
        let head = self.peek_tok().span;
        let is_pub = self.eat(T::Pub).is_some();
        if self.peek() == T::Ident
            && self.text(self.peek_tok().span) == "const"
            && matches!(self.peek_nth(1), T::TypeName | T::Ident)
        {
            for d in &decorators {
                self.diags.push(
                    Diagnostic::error(
                        Code::MisplacedDecorator,
                        d.span,
                        format!("`@{}` does not apply to a constant", d.name.name),
                    )
                    .hint("decorators go on functions (`@ai`, `@uses`, `@test`)"),
                );
            }
            return self.const_decl(docs, is_pub, start).map(Item::Const);
        }
        if self.peek() == T::Ident
            && self.text(self.peek_tok().span) == "example"
            && self.peek_nth(1) == T::Ident
            && self.peek_nth(2) == T::LParen
        {
            for d in &decorators {
                self.diags.push(Diagnostic::error(
                    Code::MisplacedDecorator,
                    d.span,
                    format!("`@{}` does not apply to an example", d.name.name),
                ));
            }
            return self.example_decl(start).map(Item::Example);
        }
        match self.peek() {
            T::Type => self
                .type_decl(docs, decorators, is_pub, start)
                .map(Item::Type),
            T::Fn => self
                .fn_decl(docs, decorators, is_pub, start, head)
                .map(Item::Fn),
            T::Eof if !docs.is_empty() && decorators.is_empty() && !is_pub => {
                let span = self.doc_span.unwrap_or(start);
                self.diags.push(Diagnostic::warning(
                    Code::DanglingDoc,
                    span,
                    "doc comment documents nothing",
                ));
                Err(Abort)
            }
            _ => Err(self.unexpected("expected `type`, `fn` or `const`")),
        }
    }

    /// `example f(args) => value` (the `example` word next).
    fn example_decl(&mut self, start: Span) -> PResult<ExampleDecl> {
        self.bump();
        let call = self.with_newlines(true, |p| p.expr())?;
        self.expect(
            T::FatArrow,
            "after the example's call: `example f(…) => answer`",
        )?;
        let output = self.with_newlines(true, |p| p.expr())?;
        Ok(ExampleDecl {
            span: start.to(output.span),
            call,
            output,
        })
    }

    /// `const NAME = expr`, `const NAME: T = expr` (the `const` word next).
    fn const_decl(&mut self, docs: Vec<String>, is_pub: bool, start: Span) -> PResult<ConstDecl> {
        self.bump();
        let t = self.bump();
        let name = self.ident(t);
        let screaming = |n: &str| {
            n.starts_with(|c: char| c.is_ascii_uppercase())
                && n.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        };
        if !screaming(&name.name) {
            let mut fixed = String::new();
            for (i, c) in name.name.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 && !fixed.ends_with('_') {
                    let prev = name.name.chars().nth(i - 1).unwrap_or('_');
                    if prev.is_ascii_lowercase() || prev.is_ascii_digit() {
                        fixed.push('_');
                    }
                }
                fixed.push(c.to_ascii_uppercase());
            }
            let fixed = fixed.trim_start_matches('_').to_string();
            let mut d = Diagnostic::error(
                Code::Naming,
                name.span,
                "constant names are written in capitals, like `MAX_TOTAL`",
            )
            .hint("uppercase letters, digits and `_`, starting with a letter");
            if screaming(&fixed) {
                // The uses still have the old name: a person renames them.
                d = d.fix_with(
                    Applicability::MaybeIncorrect,
                    format!("rename to `{fixed}`"),
                    vec![Edit {
                        span: name.span,
                        replacement: fixed,
                    }],
                );
            }
            self.diags.push(d);
        }
        let ty = match self.eat(T::Colon) {
            Some(_) => Some(self.type_expr()?),
            None => None,
        };
        self.expect(T::Eq, "after the constant's name: `const NAME = value`")?;
        let value = self.with_newlines(true, |p| p.expr())?;
        Ok(ConstDecl {
            docs,
            is_pub,
            span: start.to(value.span),
            name,
            ty,
            value,
        })
    }

    fn decorator(&mut self) -> PResult<Decorator> {
        let at = self.expect(T::At, "")?;
        let name_tok = self.peek_tok();
        let name = match name_tok.kind {
            T::Ident | T::TypeName => self.bump_ident(),
            _ => return Err(self.unexpected("expected a decorator name after `@`")),
        };
        let mut args = Vec::new();
        // Only a `(` on the same line belongs to the decorator.
        if self.raw(self.pos).kind == T::LParen {
            self.bump();
            args = self.comma_list(T::RParen, None, "to close the decorator arguments", |p| {
                p.decorator_arg()
            })?;
        }
        Ok(Decorator {
            span: at.span.to(self.prev_span()),
            name,
            args,
        })
    }

    fn decorator_arg(&mut self) -> PResult<DecoratorArg> {
        let t = self.peek_tok();
        let name = match t.kind {
            T::Ident | T::TypeName => self.bump_ident(),
            _ => return Err(self.unexpected("expected an argument name")),
        };
        if self.eat(T::Eq).is_none() && self.eat(T::Colon).is_none() {
            return Ok(DecoratorArg {
                span: name.span,
                name,
                value: None,
            });
        }
        let value = self.decorator_value()?;
        Ok(DecoratorArg {
            span: name.span.to(value.span),
            name,
            value: Some(value),
        })
    }

    /// A decorator argument's value: a type, a number, a string, a
    /// boolean, or a list of values in `[…]`.
    fn decorator_value(&mut self) -> PResult<DecoratorValue> {
        let vt = self.peek_tok();
        let kind = match vt.kind {
            T::Str => {
                self.bump();
                DecoratorValueKind::Str(self.string_value())
            }
            T::Int | T::Float | T::Minus => self.signed_number()?,
            T::True | T::False => {
                self.bump();
                DecoratorValueKind::Bool(vt.kind == T::True)
            }
            T::Ident | T::TypeName => DecoratorValueKind::Type(self.type_expr()?),
            T::LBracket => {
                self.bump();
                // Nesting is bounded like expressions' (`MAX_DEPTH`).
                self.enter(vt.span)?;
                let items = self.decorator_list();
                self.leave();
                DecoratorValueKind::List(items?)
            }
            _ => {
                return Err(self.unexpected(
                    "expected a value: a type, a number, a string, a boolean or a list",
                ))
            }
        };
        Ok(DecoratorValue {
            kind,
            span: vt.span.to(self.prev_span()),
        })
    }

    /// The items of a decorator list value, after its `[`, through its `]`.
    fn decorator_list(&mut self) -> PResult<Vec<DecoratorValue>> {
        let mut items = Vec::new();
        while self.eat(T::RBracket).is_none() {
            items.push(self.decorator_value()?);
            if self.eat(T::Comma).is_none() {
                self.expect(T::RBracket, "to close the list")?;
                break;
            }
        }
        Ok(items)
    }

    fn signed_number(&mut self) -> PResult<DecoratorValueKind> {
        let neg = self.eat(T::Minus).is_some();
        let t = self.peek_tok();
        match t.kind {
            T::Int => {
                self.bump();
                Ok(match self.int_value(t.span, neg) {
                    Some(v) => DecoratorValueKind::Int(v),
                    None => DecoratorValueKind::Invalid,
                })
            }
            T::Float => {
                self.bump();
                let v = self.float_value(t.span);
                Ok(DecoratorValueKind::Float(if neg { -v } else { v }))
            }
            _ => Err(self.unexpected("expected a number after `-`")),
        }
    }

    fn int_value(&mut self, span: Span, negative: bool) -> Option<i64> {
        let digits: String = self.text(span).chars().filter(|c| *c != '_').collect();
        let parsed = if negative {
            format!("-{digits}").parse::<i64>()
        } else {
            digits.parse::<i64>()
        };
        match parsed {
            Ok(v) => Some(v),
            Err(_) => {
                // A glued literal like `12abc` was already reported by the lexer.
                if digits.bytes().all(|b| b.is_ascii_digit()) {
                    self.diags.push(
                        Diagnostic::error(
                            Code::InvalidNumber,
                            span,
                            "integer literal out of range",
                        )
                        .hint("`int` is a 64-bit signed integer, from -9223372036854775808 to 9223372036854775807"),
                    );
                }
                None
            }
        }
    }

    fn float_value(&mut self, span: Span) -> f64 {
        let digits: String = self.text(span).chars().filter(|c| *c != '_').collect();
        match digits.parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            Ok(_) => {
                self.diags.push(Diagnostic::error(
                    Code::InvalidNumber,
                    span,
                    "float literal out of range",
                ));
                0.0
            }
            Err(_) => 0.0,
        }
    }

    fn type_decl(
        &mut self,
        docs: Vec<String>,
        decorators: Vec<Decorator>,
        is_pub: bool,
        start: Span,
    ) -> PResult<TypeDecl> {
        self.expect(T::Type, "")?;
        let name = self.decl_name(true, "type")?;
        let kind = match self.peek() {
            T::LBrace => TypeDeclKind::Record(self.record_fields()?),
            T::Eq => {
                self.bump();
                // `type Category = dynamic`: `dynamic` is a keyword only here.
                let next = self.raw(self.skip_trivia_from(self.pos, true));
                if next.kind == T::Ident && self.text(next.span) == "dynamic" {
                    self.skip_newlines();
                    let word = self.bump();
                    return Ok(TypeDecl {
                        docs,
                        decorators,
                        is_pub,
                        name,
                        kind: TypeDeclKind::Dynamic(word.span),
                        span: start.to(word.span),
                    });
                }
                let mut variants = Vec::new();
                loop {
                    let before_docs = self.pos;
                    let docs = self.take_docs();
                    if self.peek_past_newlines() != T::Pipe {
                        // Those docs belong to the next item.
                        self.pos = before_docs;
                        if variants.is_empty() {
                            return Err(self.unexpected(
                                "expected `|` to start the first variant, or `dynamic`",
                            ));
                        }
                        break;
                    }
                    self.skip_newlines();
                    let pipe = self.bump();
                    let vname = self.decl_name(true, "variant")?;
                    let mut fields = Vec::new();
                    if self.raw(self.pos).kind == T::LParen {
                        self.bump();
                        fields = self.comma_list(
                            T::RParen,
                            None,
                            "to close the variant's fields",
                            |p| p.field(Vec::new()),
                        )?;
                    }
                    variants.push(Variant {
                        docs,
                        span: pipe.span.to(self.prev_span()),
                        name: vname,
                        fields,
                    });
                }
                TypeDeclKind::Sum(variants)
            }
            _ => {
                return Err(self
                    .unexpected("expected `{` (a record) or `=` (a sum type) after the type name"))
            }
        };
        Ok(TypeDecl {
            docs,
            decorators,
            is_pub,
            name,
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// A declared name; `upper` says it must start with an uppercase letter.
    fn decl_name(&mut self, upper: bool, what: &str) -> PResult<Ident> {
        let t = self.peek_tok();
        let ok_kind = if upper { T::TypeName } else { T::Ident };
        let other = if upper { T::Ident } else { T::TypeName };
        if t.kind == ok_kind {
            return Ok(self.bump_ident());
        }
        if is_keyword(t.kind)
            && matches!(
                self.peek_nth(1),
                T::Colon | T::Eq | T::LParen | T::Comma | T::RParen
            )
        {
            let id = self.bump_ident();
            self.diags.push(
                Diagnostic::error(
                    Code::Naming,
                    id.span,
                    format!("`{}` is a Vox keyword and cannot be a {what} name", id.name),
                )
                .hint(format!("rename it, e.g. `{}_`", id.name))
                .fix(
                    format!("rename to `{}_`", id.name),
                    id.span,
                    format!("{}_", id.name),
                ),
            );
            return Ok(id);
        }
        if t.kind == other {
            let id = self.bump_ident();
            let fixed = if upper {
                upper_first(&id.name)
            } else {
                lower_first(&id.name)
            };
            let rule = if upper {
                "start with an uppercase letter"
            } else {
                "start with a lowercase letter or `_`"
            };
            self.diags.push(
                Diagnostic::error(Code::Naming, id.span, format!("{what} names must {rule}")).fix(
                    format!("rename to `{fixed}`"),
                    id.span,
                    fixed.clone(),
                ),
            );
            return Ok(id);
        }
        Err(self.unexpected(&format!("expected a {what} name")))
    }

    fn record_fields(&mut self) -> PResult<Vec<Field>> {
        let open = self.expect(T::LBrace, "")?;
        self.with_newlines(false, |p| {
            let mut fields = Vec::new();
            loop {
                let docs = p.take_docs();
                match p.peek() {
                    T::RBrace => {
                        if !docs.is_empty() {
                            let span = p.doc_span.unwrap_or_else(|| p.peek_tok().span);
                            p.diags.push(Diagnostic::warning(
                                Code::DanglingDoc,
                                span,
                                "doc comment documents no field",
                            ));
                        }
                        p.bump();
                        return Ok(fields);
                    }
                    // The end of input, or the next declaration (not a
                    // field that happens to be named like a keyword).
                    kind if kind == T::Eof
                        || (matches!(kind, T::Fn | T::Type | T::Pub | T::At)
                            && p.peek_nth(1) != T::Colon) =>
                    {
                        p.diags.push(
                            Diagnostic::error(
                                Code::UnclosedDelimiter,
                                open.span,
                                "unclosed `{` of this record type",
                            )
                            .label("never closed"),
                        );
                        return Err(Abort);
                    }
                    _ => {}
                }
                let before = p.pos;
                match p.field(docs) {
                    Ok(f) => fields.push(f),
                    Err(Abort) => {
                        if p.too_deep {
                            return Err(Abort);
                        }
                        // Skip to the next line or the closing brace.
                        p.recover_in_braces();
                        if p.pos == before {
                            // A stray `)`/`]` or a keyword: step over it.
                            p.bump_raw();
                        }
                        continue;
                    }
                }
                p.eat(T::Comma);
            }
        })
    }

    /// Within newline-insensitive braces: skip to just after the next
    /// newline, or to the `}` that closes them.
    fn recover_in_braces(&mut self) {
        let mut depth = 0i32;
        loop {
            let t = self.raw(self.pos);
            match t.kind {
                T::Eof => return,
                T::Newline if depth == 0 => {
                    self.bump_raw();
                    return;
                }
                T::RBrace | T::RParen | T::RBracket if depth == 0 => return,
                T::LBrace | T::LParen | T::LBracket => depth += 1,
                T::RBrace | T::RParen | T::RBracket => depth -= 1,
                T::Fn | T::Type if self.pos > 0 && self.raw(self.pos - 1).kind == T::Newline => {
                    return
                }
                _ => {}
            }
            self.bump_raw();
        }
    }

    fn field(&mut self, docs: Vec<String>) -> PResult<Field> {
        let name = self.value_name("field")?;
        self.expect(T::Colon, "between the field name and its type")?;
        let ty = self.type_expr()?;
        Ok(Field {
            docs,
            span: name.span.to(ty.span),
            name,
            ty,
        })
    }

    /// A lowercase name (field, parameter, variable).
    fn value_name(&mut self, what: &str) -> PResult<Ident> {
        self.decl_name(false, what)
    }

    fn type_expr(&mut self) -> PResult<TypeExpr> {
        self.nested(|p| {
            let t = p.peek_tok();
            let name = match t.kind {
                T::Ident | T::TypeName => p.bump_ident(),
                _ => return Err(p.unexpected("expected a type")),
            };
            let mut args = Vec::new();
            if p.raw(p.pos).kind == T::LBracket {
                p.bump();
                args = p.comma_list(T::RBracket, None, "to close the type arguments", |p| {
                    p.type_expr()
                })?;
            }
            Ok(TypeExpr {
                span: name.span.to(p.prev_span()),
                name,
                args,
            })
        })
    }

    fn fn_decl(
        &mut self,
        docs: Vec<String>,
        decorators: Vec<Decorator>,
        is_pub: bool,
        start: Span,
        head: Span,
    ) -> PResult<FnDecl> {
        self.expect(T::Fn, "")?;
        let name = self.value_name("function")?;
        self.expect(T::LParen, "to start the parameter list")?;
        let params = self.comma_list(T::RParen, None, "to close the parameter list", |p| {
            let pname = p.value_name("parameter")?;
            p.expect(T::Colon, "between the parameter name and its type")?;
            let ty = p.type_expr()?;
            Ok(Param {
                span: pname.span.to(ty.span),
                name: pname,
                ty,
            })
        })?;
        let ret = if self.eat(T::To).is_some() {
            Some(self.type_expr()?)
        } else {
            if self.peek() == T::Minus && self.peek_nth(1) == T::Gt {
                let span = self.peek_tok().span.to(self.raw(self.pos + 1).span);
                self.diags.push(
                    Diagnostic::error(
                        Code::UnexpectedToken,
                        span,
                        "Vox writes the return type with `to`",
                    )
                    .fix("replace `->` with `to`", span, "to"),
                );
                self.bump();
                self.bump();
                Some(self.type_expr()?)
            } else {
                None
            }
        };
        self.body_recovered = false;
        // A `@rust` tool has no body (docs/language.md, "Tools").
        // Other spellings of it (`@extern`) without a body are read the
        // same way, so the checker can offer `@rust`.
        let external = decorators.iter().any(|d| d.name.name == "rust")
            || (self.peek() != T::LBrace
                && decorators.iter().any(|d| {
                    matches!(
                        d.name.name.as_str(),
                        "extern" | "external" | "native" | "ffi" | "rust_fn"
                    )
                }));
        let body = if external && self.peek() != T::LBrace {
            let at = self.prev_span().shrink_to_end();
            Block {
                stmts: Vec::new(),
                span: at,
            }
        } else {
            self.block()?
        };
        Ok(FnDecl {
            external,
            recovered: self.body_recovered,
            docs,
            decorators,
            is_pub,
            name,
            params,
            ret,
            span: start.to(body.span),
            head,
            body,
        })
    }

    // ---- statements ---------------------------------------------------

    fn block(&mut self) -> PResult<Block> {
        let open = self.expect(T::LBrace, "to start a block")?;
        // Statements nest through `expr`, which counts the levels.
        let (stmts, close) = self.line_items(open, LineItems::Statements, Self::stmt)?;
        Ok(Block {
            stmts,
            span: open.span.to(close.span),
        })
    }

    /// The items of a `{ … }` whose newlines end items (a block's statements,
    /// a match's arms), with recovery per item; returns them and the `}`.
    fn line_items<I>(
        &mut self,
        open: Token,
        kind: LineItems,
        mut item: impl FnMut(&mut Self) -> PResult<I>,
    ) -> PResult<(Vec<I>, Token)> {
        self.with_newlines(true, |p| {
            let mut items = Vec::new();
            loop {
                // Separators, and doc comments (which document nothing here).
                loop {
                    match p.raw(p.pos).kind {
                        T::Newline | T::Semi => p.bump_raw(),
                        T::Comma if kind == LineItems::Arms => p.bump_raw(),
                        T::Doc => {
                            if kind == LineItems::Statements {
                                let span = p.raw(p.pos).span;
                                p.diags.push(
                                    Diagnostic::warning(
                                        Code::DanglingDoc,
                                        span,
                                        "doc comments inside a function body document nothing",
                                    )
                                    .hint("use `//` for comments inside functions"),
                                );
                            }
                            p.bump_raw();
                        }
                        _ => break,
                    }
                }
                match p.peek() {
                    T::RBrace => {
                        let close = p.bump();
                        return Ok((items, close));
                    }
                    T::Eof | T::Fn | T::Type => {
                        let (message, label) = kind.unclosed();
                        p.diags.push(
                            Diagnostic::error(Code::UnclosedDelimiter, open.span, message)
                                .label(label),
                        );
                        return Err(Abort);
                    }
                    _ => {}
                }
                let before = p.pos;
                match item(p) {
                    Ok(x) => {
                        items.push(x);
                        let ended = match p.peek() {
                            T::Newline | T::Semi | T::RBrace | T::Eof => true,
                            T::Comma => kind == LineItems::Arms,
                            _ => false,
                        };
                        if !ended {
                            let _ = p.unexpected(kind.end_message());
                            p.body_recovered = true;
                            p.recover_stmt();
                        }
                    }
                    Err(Abort) => {
                        if p.too_deep {
                            return Err(Abort);
                        }
                        p.body_recovered = true;
                        p.recover_stmt();
                    }
                }
                if p.pos == before {
                    p.bump_raw();
                }
            }
        })
    }

    /// Skips to the end of the current statement: a newline or `;` outside
    /// brackets, or just before the `}` closing the enclosing block.
    fn recover_stmt(&mut self) {
        let mut depth = 0i32;
        loop {
            let t = self.raw(self.pos);
            match t.kind {
                T::Eof => return,
                T::Newline | T::Semi if depth <= 0 => return,
                T::RBrace if depth <= 0 => return,
                T::Fn | T::Type if self.pos > 0 && self.raw(self.pos - 1).kind == T::Newline => {
                    return
                }
                T::LBrace | T::LParen | T::LBracket => depth += 1,
                T::RBrace | T::RParen | T::RBracket => depth -= 1,
                _ => {}
            }
            self.bump_raw();
        }
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.peek_tok().span;
        match self.peek() {
            T::Let if self.peek_nth(1) == T::TypeName && self.peek_nth(2) == T::LBrace => {
                // `let Invoice { vendor, total, .. } = inv`.
                self.bump();
                let pattern = self.pattern()?;
                self.expect(T::Eq, "after the pattern")?;
                self.skip_newlines();
                let value = self.expr()?;
                Ok(Stmt::LetPattern {
                    span: start.to(value.span),
                    pattern,
                    value,
                })
            }
            T::Let => {
                self.bump();
                let mutable = self.eat(T::Mut).is_some();
                let name = self.value_name("variable")?;
                let ty = if self.eat(T::Colon).is_some() {
                    Some(self.type_expr()?)
                } else {
                    None
                };
                self.expect(T::Eq, "after the variable name")?;
                self.skip_newlines();
                let value = match self.expr() {
                    Ok(v) => v,
                    Err(Abort) if !self.too_deep => {
                        // Keep the binding so later uses resolve.
                        self.body_recovered = true;
                        self.recover_stmt();
                        let span = name.span;
                        self.new_expr(ExprKind::Error, span)
                    }
                    Err(Abort) => return Err(Abort),
                };
                Ok(Stmt::Let {
                    span: start.to(value.span),
                    mutable,
                    name,
                    ty,
                    value,
                })
            }
            T::Return => {
                self.bump();
                let value = match self.peek() {
                    // A comma ends it too: `_ => return, …` in a match's arms.
                    T::Newline | T::Semi | T::RBrace | T::Eof | T::Comma => None,
                    _ => Some(self.expr()?),
                };
                let span = value.as_ref().map_or(start, |v| start.to(v.span));
                Ok(Stmt::Return { value, span })
            }
            T::For => {
                self.bump();
                let var = self.value_name("loop variable")?;
                self.expect(T::In, "after the loop variable")?;
                let iter = self.head_expr()?;
                let body = self.block()?;
                Ok(Stmt::For {
                    span: start.to(body.span),
                    var,
                    iter,
                    body,
                })
            }
            T::While => {
                self.bump();
                let cond = self.head_expr()?;
                let body = self.block()?;
                Ok(Stmt::While {
                    span: start.to(body.span),
                    cond,
                    body,
                })
            }
            T::Break => {
                self.bump();
                Ok(Stmt::Break(start))
            }
            T::Continue => {
                self.bump();
                Ok(Stmt::Continue(start))
            }
            _ => {
                let e = self.expr()?;
                if self.peek() == T::Eq {
                    self.bump();
                    self.skip_newlines();
                    let value = self.expr()?;
                    return Ok(Stmt::Assign {
                        span: e.span.to(value.span),
                        target: e,
                        value,
                    });
                }
                Ok(Stmt::Expr(e))
            }
        }
    }

    // ---- expressions --------------------------------------------------

    /// An expression in the head of `if`/`match`/`for`, where `Name {`
    /// starts the body rather than a record literal.
    fn head_expr(&mut self) -> PResult<Expr> {
        let saved = std::mem::replace(&mut self.no_record_literal, true);
        let r = self.expr();
        self.no_record_literal = saved;
        r
    }

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.nested(|p| match p.peek() {
            T::If => p.if_expr(),
            T::Match => p.match_expr(),
            _ => p.binary(0),
        })
    }

    fn if_expr(&mut self) -> PResult<Expr> {
        let start = self.expect(T::If, "")?.span;
        let cond = self.head_expr()?;
        let then = self.block()?;
        let els = if self.peek_past_newlines() == T::Else {
            self.skip_newlines();
            self.bump();
            if self.peek() == T::If {
                let nested = self.nested(|p| p.if_expr())?;
                Some(Block {
                    span: nested.span,
                    stmts: vec![Stmt::Expr(nested)],
                })
            } else {
                Some(self.block()?)
            }
        } else {
            None
        };
        let end = els.as_ref().map_or(then.span, |b| b.span);
        Ok(self.new_expr(
            ExprKind::If {
                cond: Box::new(cond),
                then,
                els,
            },
            start.to(end),
        ))
    }

    fn match_expr(&mut self) -> PResult<Expr> {
        let start = self.expect(T::Match, "")?.span;
        let scrutinee = self.head_expr()?;
        let open = self.expect(T::LBrace, "to start the match arms")?;
        let errors = |p: &Self| p.diags.iter().filter(|d| d.is_error()).count();
        let before = errors(self);
        let (arms, _) = self.line_items(open, LineItems::Arms, Self::arm)?;
        // An arm that did not parse is missing from `arms`: the match is not
        // judged for exhaustiveness (its "missing" patterns may be there).
        let recovered = errors(self) > before;
        let end = self.prev_span();
        Ok(self.new_expr(
            ExprKind::Match {
                scrutinee: Box::new(scrutinee),
                arms,
                recovered,
            },
            start.to(end),
        ))
    }

    fn arm(&mut self) -> PResult<Arm> {
        let pattern = self.pattern()?;
        let guard = if self.peek() == T::If {
            self.bump();
            Some(self.expr()?)
        } else {
            None
        };
        self.expect(T::FatArrow, "after the pattern")?;
        self.skip_newlines();
        let body = if self.peek() == T::LBrace {
            let b = self.block()?;
            let span = b.span;
            self.new_expr(ExprKind::Block(b), span)
        } else if matches!(self.peek(), T::Break | T::Continue | T::Return) {
            // `None => break`, `_ => return 0`: a jump is an arm of one
            // statement, a block that never completes (type never).
            let stmt = self.stmt()?;
            let span = stmt.span();
            self.new_expr(
                ExprKind::Block(Block {
                    stmts: vec![stmt],
                    span,
                }),
                span,
            )
        } else if matches!(self.peek(), T::Let | T::For | T::While) {
            // Another statement: reported, with the braces that make it an
            // arm, and read as that block.
            let word = self.peek_tok().kind.describe();
            let stmt = self.stmt()?;
            let span = stmt.span();
            let written = self.text(span).to_string();
            let d = Diagnostic::error(
                Code::UnexpectedToken,
                span,
                format!("{word} cannot be a match arm's value"),
            )
            .label("a statement")
            .hint("an arm is an expression, `break`, `continue`, `return`, or a block of statements: `pattern => { … }`");
            // Braces around one line; a statement over several lines is the
            // reader's to wrap.
            let d = if written.contains('\n') {
                d
            } else {
                d.fix("wrap it in `{ }`", span, format!("{{ {written} }}"))
            };
            self.diags.push(d);
            self.new_expr(
                ExprKind::Block(Block {
                    stmts: vec![stmt],
                    span,
                }),
                span,
            )
        } else {
            let e = self.expr()?;
            if self.peek() == T::Eq {
                // `Some(v) => total = v`: an assignment is a statement, and an
                // arm of statements is a block.
                self.bump();
                let value = self.expr()?;
                let span = e.span.to(value.span);
                let written = self.text(span).to_string();
                self.diags.push(
                    Diagnostic::error(
                        Code::UnexpectedToken,
                        span,
                        "an assignment cannot be a match arm's value",
                    )
                    .hint("wrap the assignment in braces: `pattern => { x = value }`")
                    .fix("wrap it in `{ }`", span, format!("{{ {written} }}")),
                );
                let stmt = Stmt::Assign {
                    span,
                    target: e,
                    value,
                };
                self.new_expr(
                    ExprKind::Block(Block {
                        stmts: vec![stmt],
                        span,
                    }),
                    span,
                )
            } else {
                e
            }
        };
        Ok(Arm {
            span: pattern.span.to(body.span),
            pattern,
            guard,
            body,
        })
    }

    /// A pattern, or several separated by `|` (an or-pattern).
    fn pattern(&mut self) -> PResult<Pattern> {
        let first = self.one_pattern()?;
        if self.peek() != T::Pipe {
            return Ok(first);
        }
        let mut alts = vec![first];
        while self.eat(T::Pipe).is_some() {
            self.skip_newlines();
            alts.push(self.one_pattern()?);
        }
        let span = alts[0].span.to(self.prev_span());
        Ok(Pattern {
            kind: PatternKind::Or(alts),
            span,
        })
    }

    fn one_pattern(&mut self) -> PResult<Pattern> {
        self.nested(|p| {
            let t = p.peek_tok();
            let kind = match t.kind {
                T::Underscore => {
                    p.bump();
                    PatternKind::Wildcard
                }
                T::Ident => {
                    p.bump();
                    PatternKind::Binding(p.text(t.span).to_string())
                }
                T::Int | T::Minus => {
                    let neg = p.eat(T::Minus).is_some();
                    let it = p.expect(T::Int, "in the pattern")?;
                    match p.int_value(it.span, neg) {
                        Some(v) => PatternKind::Int(v),
                        None => PatternKind::Invalid,
                    }
                }
                T::Str => {
                    p.bump();
                    PatternKind::Str(p.string_value())
                }
                T::True | T::False => {
                    p.bump();
                    PatternKind::Bool(t.kind == T::True)
                }
                T::TypeName if p.peek_nth(1) == T::LBrace => {
                    let name = p.bump_ident();
                    p.record_pattern(name)?
                }
                T::TypeName => {
                    let name = p.bump_ident();
                    let args = if p.raw(p.pos).kind == T::LParen {
                        p.bump();
                        Some(
                            p.comma_list(T::RParen, None, "to close the pattern", |p| p.pattern())?,
                        )
                    } else {
                        None
                    };
                    PatternKind::Ctor { name, args }
                }
                T::Float => {
                    p.bump();
                    p.diags.push(
                        Diagnostic::error(
                            Code::InvalidPattern,
                            t.span,
                            "float literals cannot be patterns",
                        )
                        .hint("compare with `if` instead"),
                    );
                    PatternKind::Invalid
                }
                _ => return Err(p.unexpected("expected a pattern")),
            };
            Ok(Pattern {
                span: t.span.to(p.prev_span()),
                kind,
            })
        })
    }

    /// `{ field: pattern, field, .. }` after a record pattern's type name.
    fn record_pattern(&mut self, name: Ident) -> PResult<PatternKind> {
        let open = self.expect(T::LBrace, "")?;
        enum Item {
            Field(FieldPattern),
            Rest(Span),
        }
        let items = self.comma_list(
            T::RBrace,
            Some(open.span),
            "to close the record pattern",
            |p| {
                if p.peek() == T::Dot && p.peek_nth(1) == T::Dot {
                    let a = p.bump();
                    let b = p.bump();
                    return Ok(Item::Rest(a.span.to(b.span)));
                }
                let field = p.value_name("a field")?;
                let pattern = if p.eat(T::Colon).is_some() {
                    p.pattern()?
                } else {
                    Pattern {
                        kind: PatternKind::Binding(field.name.clone()),
                        span: field.span,
                    }
                };
                Ok(Item::Field(FieldPattern {
                    name: field,
                    pattern,
                }))
            },
        )?;
        let mut fields = Vec::new();
        let mut rest = None;
        let count = items.len();
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Item::Field(f) => fields.push(f),
                Item::Rest(span) => {
                    if i + 1 != count {
                        self.diags.push(
                            Diagnostic::error(
                                Code::InvalidPattern,
                                span,
                                "`..` comes last in a record pattern",
                            )
                            .hint("it stands for every field not written before it"),
                        );
                    }
                    rest = Some(span);
                }
            }
        }
        Ok(PatternKind::Record { name, fields, rest })
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let lhs = self.unary_or_not(min_prec)?;
        // Each operator of a chain deepens the (left-leaning) tree by one
        // level; count them against the nesting limit too.
        let mut levels = 0;
        let r = self.binary_chain(lhs, min_prec, &mut levels);
        for _ in 0..levels {
            self.leave();
        }
        r
    }

    fn binary_chain(&mut self, mut lhs: Expr, min_prec: u8, levels: &mut u32) -> PResult<Expr> {
        let mut last_cmp: Option<Span> = None;
        let mut chained = false;
        loop {
            let Some((op, prec)) = binary_op(self.peek()) else {
                return Ok(lhs);
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            let op_tok = self.bump();
            // `s--` / `s++` at the end of a line would read on into the next
            // line as `s - -…`: it is the C increment, which Vox spells
            // `s = s - 1` (the slip table offers that fix).
            if matches!(op, BinaryOp::Add | BinaryOp::Sub)
                && self.raw(self.pos).kind == op_tok.kind
                && matches!(
                    self.raw(self.pos + 1).kind,
                    T::Newline | T::Semi | T::RBrace | T::Eof
                )
            {
                let second = self.bump();
                let sym = op.symbol();
                self.diags.push(
                    Diagnostic::error(
                        Code::UnexpectedToken,
                        op_tok.span.to(second.span),
                        format!("`{sym}{sym}` is not an operator in Vox"),
                    )
                    .hint(format!("write `x = x {sym} 1`")),
                );
                self.body_recovered = true;
                return Ok(lhs);
            }
            self.enter(op_tok.span)?;
            *levels += 1;
            if prec == CMP_PREC {
                if let Some(prev) = last_cmp {
                    chained = true;
                    self.diags.push(
                        Diagnostic::error(
                            Code::UnexpectedToken,
                            op_tok.span,
                            "comparison operators cannot be chained",
                        )
                        .related(prev, "first comparison here")
                        .hint("combine comparisons with `and`: `a < b and b < c`"),
                    );
                }
                last_cmp = Some(op_tok.span);
            }
            self.skip_newlines();
            // Left-associative: the right side binds tighter.
            let rhs = self.nested(|p| p.binary(prec + 1))?;
            let span = lhs.span.to(rhs.span);
            let kind = if chained {
                // Already reported; keep the operands for name resolution only.
                ExprKind::Poison(vec![lhs, rhs])
            } else {
                ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                }
            };
            lhs = self.new_expr(kind, span);
        }
    }

    /// `not` sits between `and` and the comparisons in precedence.
    fn unary_or_not(&mut self, min_prec: u8) -> PResult<Expr> {
        if self.peek() == T::Not && min_prec <= NOT_PREC {
            let t = self.bump();
            let inner = self.nested(|p| p.binary(NOT_PREC))?;
            let span = t.span.to(inner.span);
            return Ok(self.new_expr(
                ExprKind::Unary {
                    op: UnaryOp::Not,
                    expr: Box::new(inner),
                },
                span,
            ));
        }
        self.unary()
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.peek() {
            // `try f(x)`: `try` is a word only there (a name followed by a
            // name is no other expression), so `try` stays usable as a
            // field or variable name.
            T::Ident
                if self.text(self.peek_tok().span) == "try"
                    && matches!(self.peek_nth(1), T::Ident | T::TypeName) =>
            {
                let t = self.bump();
                let inner = self.nested(|p| p.unary())?;
                let span = t.span.to(inner.span);
                Ok(self.new_expr(ExprKind::Try(Box::new(inner)), span))
            }
            T::Minus if self.peek_nth(1) == T::Int => {
                // `-literal` is one negative literal, so `-9223372036854775808`
                // (the least `int`) is representable (docs/language.md, "Numbers").
                let minus = self.bump();
                let t = self.bump();
                let v = self.int_value(t.span, true).unwrap_or(0);
                let lit = self.new_expr(ExprKind::Int(v), minus.span.to(t.span));
                let mut levels = 0;
                let r = self.postfix_chain(lit, &mut levels);
                for _ in 0..levels {
                    self.leave();
                }
                r
            }
            T::Minus => {
                let t = self.bump();
                let inner = self.nested(|p| p.unary())?;
                let span = t.span.to(inner.span);
                Ok(self.new_expr(
                    ExprKind::Unary {
                        op: UnaryOp::Neg,
                        expr: Box::new(inner),
                    },
                    span,
                ))
            }
            T::Not => {
                let t = self.bump();
                let inner = self.nested(|p| p.unary())?;
                let span = t.span.to(inner.span);
                Ok(self.new_expr(
                    ExprKind::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(inner),
                    },
                    span,
                ))
            }
            _ => self.postfix(),
        }
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let e = self.primary()?;
        let mut levels = 0;
        let r = self.postfix_chain(e, &mut levels);
        for _ in 0..levels {
            self.leave();
        }
        r
    }

    /// `.field` and call suffixes; each one deepens the tree and counts
    /// against the nesting limit.
    fn postfix_chain(&mut self, mut e: Expr, levels: &mut u32) -> PResult<Expr> {
        loop {
            let next = if self.nl_significant()
                && self.peek() == T::Newline
                && self.peek_past_newlines() == T::Dot
            {
                // A `.field` continuing on the next line.
                self.skip_newlines();
                T::Dot
            } else {
                self.peek()
            };
            match next {
                T::Dot => {
                    let dot = self.bump();
                    self.enter(dot.span)?;
                    *levels += 1;
                    let t = self.peek_tok();
                    let name = match t.kind {
                        T::Ident | T::TypeName => self.bump_ident(),
                        _ => return Err(self.unexpected("expected a field name after `.`")),
                    };
                    let span = e.span.to(name.span);
                    e = self.new_expr(
                        ExprKind::Field {
                            base: Box::new(e),
                            name,
                        },
                        span,
                    );
                }
                T::LParen if self.raw(self.pos).kind == T::LParen => {
                    let open = self.bump();
                    self.enter(open.span)?;
                    *levels += 1;
                    let args = self.args(T::RParen)?;
                    let span = e.span.to(self.prev_span());
                    let callee_span = e.span;
                    let hint = if let ExprKind::Field { name, .. } = &e.kind {
                        method_hint(&name.name)
                    } else {
                        "only functions, builtins and variants can be called".to_string()
                    };
                    self.diags.push(
                        Diagnostic::error(
                            Code::NotCallable,
                            callee_span,
                            "this expression cannot be called",
                        )
                        .related(open.span, "call here")
                        .hint(hint),
                    );
                    let mut parts = vec![e];
                    parts.extend(args.into_iter().map(|a| a.value));
                    e = self.new_expr(ExprKind::Poison(parts), span);
                }
                _ => return Ok(e),
            }
        }
    }

    /// Call or constructor arguments after `(`: `[name:] expr, …` up to `close`.
    fn args(&mut self, close: T) -> PResult<Vec<Arg>> {
        let open = self.prev_span();
        self.comma_list(close, Some(open), "to close the argument list", |p| {
            if let Some(value) = p.foreign_lambda()? {
                return Ok(Arg { name: None, value });
            }
            let name = if p.peek() == T::Ident && p.peek_nth(1) == T::Colon {
                let n = p.bump_ident();
                p.bump();
                Some(n)
            } else {
                None
            };
            let value = p.expr()?;
            Ok(Arg { name, value })
        })
    }

    /// `fn(x) => expr`, `fn(x: T) => expr` or `fn(x) { … }`
    /// (docs/language.md, "Functions as arguments").
    fn lambda(&mut self) -> PResult<Expr> {
        let start = self.expect(T::Fn, "")?.span;
        let open = self.expect(T::LParen, "after `fn`")?;
        let params =
            self.comma_list(T::RParen, Some(open.span), "to close the parameters", |p| {
                let name = p.value_name("a lambda parameter")?;
                let ty = match p.eat(T::Colon) {
                    Some(_) => Some(p.type_expr()?),
                    None => None,
                };
                Ok(LambdaParam { name, ty })
            })?;
        let head = start.to(self.prev_span());
        self.lambda_body(params, head, false)
    }

    /// After a lambda's parameters: `=> expr` or `{ … }` (`=> { … }`, as
    /// TypeScript writes a block body, is reported and read as the block).
    fn lambda_body(
        &mut self,
        params: Vec<LambdaParam>,
        head: Span,
        arrow_eaten: bool,
    ) -> PResult<Expr> {
        // A lambda's body is checked and emitted through more (and larger)
        // frames than other nesting: it counts as several levels.
        for entered in 0..LAMBDA_LEVELS {
            if let Err(a) = self.enter(head) {
                for _ in 0..entered {
                    self.leave();
                }
                return Err(a);
            }
        }
        let r = self.lambda_body_inner(params, head, arrow_eaten);
        for _ in 0..LAMBDA_LEVELS {
            self.leave();
        }
        r
    }

    fn lambda_body_inner(
        &mut self,
        params: Vec<LambdaParam>,
        head: Span,
        arrow_eaten: bool,
    ) -> PResult<Expr> {
        let (body, block) = if self.peek() == T::LBrace {
            let b = self.with_newlines(true, |p| p.block())?;
            let span = b.span;
            (self.new_expr(ExprKind::Block(b), span), true)
        } else if arrow_eaten {
            (self.expr()?, false)
        } else {
            let arrow = self.expect(
                T::FatArrow,
                "after a lambda's parameters: `fn(x) => …` or `fn(x) { … }`",
            )?;
            if self.peek() == T::LBrace {
                self.report(
                    Diagnostic::error(
                        Code::UnexpectedToken,
                        arrow.span,
                        "a lambda with a block body is written without `=>`: `fn(x) { … }`",
                    )
                    .hint("`fn(x) => value` takes one expression; `fn(x) { statements; value }` a block")
                    .fix_with(
                        Applicability::MachineApplicable,
                        "remove the `=>`",
                        vec![Edit {
                            span: Span { end: self.peek_tok().span.start, ..arrow.span },
                            replacement: String::new(),
                        }],
                    ),
                );
                let b = self.with_newlines(true, |p| p.block())?;
                let span = b.span;
                (self.new_expr(ExprKind::Block(b), span), true)
            } else {
                (self.expr()?, false)
            }
        };
        let span = head.to(body.span);
        Ok(self.new_expr(
            ExprKind::Lambda(Box::new(Lambda {
                params,
                body,
                block,
                head,
            })),
            span,
        ))
    }

    /// A lambda as another language writes it, as a call's argument:
    /// `x => …` and `(x, y) => …` (TypeScript), `|x| …` (Rust), `lambda x: …`
    /// (Python). Reported with the Vox head, `fn(x) =>` (or `fn(x)` before
    /// a block), which is what was meant, and read as that lambda.
    fn foreign_lambda(&mut self) -> PResult<Option<Expr>> {
        let k = |p: &Self, n: usize| p.peek_nth(n);
        // How many tokens the foreign head has, and its parameter names.
        let (len, names, lang): (usize, Vec<usize>, &str) = match k(self, 0) {
            T::Ident if k(self, 1) == T::FatArrow => (2, vec![0], "TypeScript's `x => …`"),
            T::Ident
                if self.text(self.peek_tok().span) == "lambda"
                    && k(self, 1) == T::Ident
                    && k(self, 2) == T::Colon =>
            {
                (3, vec![1], "Python's `lambda x: …`")
            }
            T::Pipe if k(self, 1) == T::Ident && k(self, 2) == T::Pipe => {
                (3, vec![1], "Rust's `|x| …`")
            }
            T::LParen => {
                // `(x) =>`, `(x, y) =>`, `() =>`.
                let mut n = 1;
                let mut names = Vec::new();
                loop {
                    match k(self, n) {
                        T::Ident => {
                            names.push(n);
                            n += 1;
                            match k(self, n) {
                                T::Comma => n += 1,
                                T::RParen => break,
                                _ => return Ok(None),
                            }
                        }
                        T::RParen if names.is_empty() => break,
                        _ => return Ok(None),
                    }
                }
                if k(self, n + 1) != T::FatArrow {
                    return Ok(None);
                }
                (n + 2, names, "TypeScript's `(x) => …`")
            }
            _ => return Ok(None),
        };
        let start = self.peek_tok().span;
        let mut params = Vec::new();
        let mut end = start;
        for i in 0..len {
            let t = self.bump();
            if names.contains(&i) {
                params.push(LambdaParam {
                    name: self.ident(t),
                    ty: None,
                });
            }
            end = t.span;
        }
        let written = start.to(end);
        let list: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        let block = self.peek() == T::LBrace;
        let vox = if block {
            format!("fn({})", list.join(", "))
        } else {
            format!("fn({}) =>", list.join(", "))
        };
        self.report(
            Diagnostic::error(
                Code::UnexpectedToken,
                written,
                if block {
                    format!("a lambda is written `{vox} {{ … }}` in Vox")
                } else {
                    format!("a lambda is written `{vox} …` in Vox")
                },
            )
            .label(lang)
            .hint("`fn(x) => value`, or `fn(x) { statements; value }` for a block body")
            .fix_with(
                Applicability::MachineApplicable,
                format!("write `{vox}`"),
                vec![Edit {
                    span: written,
                    replacement: vox.clone(),
                }],
            ),
        );
        self.lambda_body(params, written, true).map(Some)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek_tok();
        match t.kind {
            T::Int => {
                self.bump();
                let v = self.int_value(t.span, false).unwrap_or(0);
                Ok(self.new_expr(ExprKind::Int(v), t.span))
            }
            T::Float => {
                self.bump();
                let v = self.float_value(t.span);
                Ok(self.new_expr(ExprKind::Float(v), t.span))
            }
            T::Str => {
                self.bump();
                let v = self.string_value();
                Ok(self.new_expr(ExprKind::Str(v), t.span))
            }
            T::FStr => {
                self.bump();
                self.fstring(t.span)
            }
            T::True | T::False => {
                self.bump();
                Ok(self.new_expr(ExprKind::Bool(t.kind == T::True), t.span))
            }
            T::Ident => {
                let name = self.bump_ident();
                if self.raw(self.pos).kind == T::LParen {
                    self.bump();
                    let args = self.args(T::RParen)?;
                    let span = name.span.to(self.prev_span());
                    return Ok(self.new_expr(ExprKind::Call { callee: name, args }, span));
                }
                Ok(self.new_expr(ExprKind::Var(name.name), t.span))
            }
            T::TypeName => {
                let name = self.bump_ident();
                if self.raw(self.pos).kind == T::LParen {
                    self.bump();
                    let args = self.args(T::RParen)?;
                    let span = name.span.to(self.prev_span());
                    return Ok(self.new_expr(
                        ExprKind::Ctor {
                            name,
                            args: Some(args),
                        },
                        span,
                    ));
                }
                if self.peek() == T::LBrace && !self.no_record_literal {
                    return self.record_literal(name);
                }
                if self.peek() == T::LBrace
                    && self.peek_nth(1) == T::Ident
                    && self.peek_nth(2) == T::Colon
                {
                    // `if x is P { a: 1 } {`: a record literal where a block is
                    // expected. Report once, with the fix, and parse it as meant.
                    let start = name.span;
                    let lit = self.with_newlines(false, |p| p.record_literal(name))?;
                    self.report(
                        Diagnostic::error(
                            Code::UnexpectedToken,
                            lit.span,
                            "a record literal in the head of `if`, `match` or `for` needs parentheses",
                        )
                        .hint("otherwise its `{` would start the block")
                        .fix("wrap it in parentheses", lit.span, format!("({})", self.text(Span { start: start.start, end: lit.span.end, ..start }))),
                    );
                    return Ok(lit);
                }
                let span = name.span;
                Ok(self.new_expr(ExprKind::Ctor { name, args: None }, span))
            }
            T::LBracket => {
                self.bump();
                // `[:]`: the empty map.
                if self.peek_past_newlines() == T::Colon {
                    self.with_newlines(false, |p| -> PResult<()> {
                        p.bump();
                        p.expect_close(T::RBracket, t.span, "to close the empty map `[:]`")?;
                        Ok(())
                    })?;
                    let span = t.span.to(self.prev_span());
                    return Ok(self.new_expr(ExprKind::Map(Vec::new()), span));
                }
                let items =
                    self.comma_list(T::RBracket, Some(t.span), "to close the list", |p| {
                        let e = p.expr()?;
                        let value = match p.eat(T::Colon) {
                            Some(_) => Some(p.expr()?),
                            None => None,
                        };
                        Ok((e, value))
                    })?;
                let span = t.span.to(self.prev_span());
                self.list_or_map(items, span)
            }
            // `{}` or `{"k": v}`, a map as Python, TypeScript or Go writes
            // it: reported with the Vox spelling and read as that map.
            T::LBrace
                if self.peek_nth(1) == T::RBrace
                    || (self.peek_nth(1) == T::Str && self.peek_nth(2) == T::Colon) =>
            {
                self.bump();
                let items = self.comma_list(T::RBrace, Some(t.span), "to close the map", |p| {
                    let key = p.expr()?;
                    p.expect(T::Colon, "between a map key and its value")?;
                    let value = p.expr()?;
                    Ok((key, Some(value)))
                })?;
                let close = self.prev_span();
                let span = t.span.to(close);
                let (message, edits) = if items.is_empty() {
                    (
                        "the empty map is written `[:]`",
                        vec![Edit {
                            span,
                            replacement: "[:]".into(),
                        }],
                    )
                } else {
                    (
                        "a map literal is written in brackets: `[\"key\": value]`",
                        vec![
                            Edit {
                                span: t.span,
                                replacement: "[".into(),
                            },
                            Edit {
                                span: close,
                                replacement: "]".into(),
                            },
                        ],
                    )
                };
                self.report(
                    Diagnostic::error(Code::UnexpectedToken, span, message)
                        .hint("braces start a block in Vox; a `map[str, T]` literal is `[\"a\": 1, \"b\": 2]`, the empty one `[:]`")
                        .fix_with(
                            Applicability::MachineApplicable,
                            "write it in brackets",
                            edits,
                        ),
                );
                self.list_or_map(items, span)
            }
            T::LParen => {
                let open = self.bump();
                let inner = self.with_newlines(false, |p| -> PResult<Expr> {
                    let e = p.expr()?;
                    p.expect_close(T::RParen, open.span, "to close the parenthesis")?;
                    Ok(e)
                })?;
                Ok(inner)
            }
            T::If => self.if_expr(),
            T::Match => self.match_expr(),
            T::Fn if self.peek_nth(1) == T::LParen => self.lambda(),
            T::Let | T::Return | T::Break | T::Continue | T::For | T::While => {
                // A statement where a value is expected (`let x = break`,
                // `f(return 1)`).
                let at = self.skip_trivia_from(self.pos, !self.nl_significant());
                let t = self.raw(at);
                let word = t.kind.describe();
                // First on its line: the line before ended without its value
                // (`let b = p.x +`), and this is the next statement.
                let line_start = (0..at)
                    .rev()
                    .map(|i| self.raw(i).kind)
                    .find(|k| *k != T::Doc)
                    .is_none_or(|k| k == T::Newline);
                let hint = if line_start {
                    format!("the expression before this line is unfinished; {word} starts the next statement")
                } else {
                    format!(
                        "{word} is a statement, not a value: write it on a line of its own, as a match arm (`None => break`), or in a block, `{{ … }}` (`if c {{ … }}`)"
                    )
                };
                let d = Diagnostic::error(Code::UnexpectedToken, t.span, "expected an expression")
                    .label(format!("found {word}"))
                    .hint(hint);
                self.report(d);
                Err(Abort)
            }
            _ => Err(self.unexpected("expected an expression")),
        }
    }

    /// The bracketed items of `[…]`: a list when none has a `: value`, a
    /// map when all do; a mix is reported and read as a map of the entries.
    fn list_or_map(&mut self, items: Vec<(Expr, Option<Expr>)>, span: Span) -> PResult<Expr> {
        if items.iter().all(|(_, v)| v.is_none()) {
            let items = items.into_iter().map(|(e, _)| e).collect();
            return Ok(self.new_expr(ExprKind::List(items), span));
        }
        let mut entries = Vec::new();
        let mut stray = Vec::new();
        for (key, value) in items {
            match value {
                Some(value) => entries.push(MapEntry { key, value }),
                None => stray.push(key),
            }
        }
        if let Some(first) = stray.first() {
            self.report(
                Diagnostic::error(
                    Code::UnexpectedToken,
                    first.span,
                    "a map literal entry needs a key and a value",
                )
                .label("no `: value`")
                .hint("every entry of a map literal is `key: value`; a list literal has no `:`"),
            );
            let mut parts: Vec<Expr> = stray;
            parts.extend(entries.into_iter().flat_map(|m| [m.key, m.value]));
            return Ok(self.new_expr(ExprKind::Poison(parts), span));
        }
        Ok(self.new_expr(ExprKind::Map(entries), span))
    }

    fn record_literal(&mut self, name: Ident) -> PResult<Expr> {
        self.expect(T::LBrace, "")?;
        let fields = self.comma_list(T::RBrace, None, "to close the record literal", |p| {
            let fname = p.value_name("field")?;
            p.expect(T::Colon, "after the field name (`field: value`)")?;
            let value = p.expr()?;
            Ok(FieldInit { name: fname, value })
        })?;
        let span = name.span.to(self.prev_span());
        Ok(self.new_expr(ExprKind::Record { name, fields }, span))
    }
}

/// What [`Parser::line_items`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineItems {
    Statements,
    /// Match arms; a `,` may also end one.
    Arms,
}

impl LineItems {
    fn unclosed(self) -> (&'static str, &'static str) {
        match self {
            LineItems::Statements => ("unclosed `{`", "this block is never closed"),
            LineItems::Arms => ("unclosed `{` of this match", "never closed"),
        }
    }

    fn end_message(self) -> &'static str {
        match self {
            LineItems::Statements => "expected the end of the statement (a new line or `;`)",
            LineItems::Arms => "expected the end of the match arm (a new line or `,`)",
        }
    }
}

const CMP_PREC: u8 = 4;
const NOT_PREC: u8 = 3;

/// Binary operators and their precedence (higher binds tighter):
/// `or` 1, `and` 2, (`not` 3), comparisons 4, `+ -` 5, `* / %` 6.
fn binary_op(kind: T) -> Option<(BinaryOp, u8)> {
    Some(match kind {
        T::Or => (BinaryOp::Or, 1),
        T::And => (BinaryOp::And, 2),
        T::Is | T::EqEq => (BinaryOp::Eq, CMP_PREC),
        T::Isnt | T::NotEq => (BinaryOp::NotEq, CMP_PREC),
        T::Lt => (BinaryOp::Lt, CMP_PREC),
        T::Le => (BinaryOp::Le, CMP_PREC),
        T::Gt => (BinaryOp::Gt, CMP_PREC),
        T::Ge => (BinaryOp::Ge, CMP_PREC),
        T::Plus => (BinaryOp::Add, 5),
        T::Minus => (BinaryOp::Sub, 5),
        T::Star => (BinaryOp::Mul, 6),
        T::Slash => (BinaryOp::Div, 6),
        T::Percent => (BinaryOp::Rem, 6),
        _ => return None,
    })
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
        .unwrap_or_default()
}

fn is_keyword(kind: T) -> bool {
    matches!(
        kind,
        T::Type
            | T::Fn
            | T::Pub
            | T::Let
            | T::Mut
            | T::Return
            | T::If
            | T::Else
            | T::Match
            | T::For
            | T::While
            | T::Break
            | T::Continue
            | T::In
            | T::To
            | T::True
            | T::False
            | T::Is
            | T::Isnt
            | T::And
            | T::Or
            | T::Not
    )
}

/// How the hint on `x.name(…)` starts; the slips table's own hint for a
/// method it knows replaces it (`slips::slip_fixes`).
pub(crate) const NO_METHODS: &str = "Vox has no methods;";

/// The hint on `x.name(…)`: a builtin of that name is called with the
/// value as an argument; no other function is named, since none may exist
/// (the slips table gives the Vox spelling of other languages' methods).
fn method_hint(name: &str) -> String {
    if crate::check::Builtin::ALL.iter().any(|(n, _)| *n == name) {
        format!("{NO_METHODS} `{name}` is a function: call it with the value as its first argument")
    } else {
        format!("{NO_METHODS} pass the value to a function, or write one that takes it as its first parameter")
    }
}
