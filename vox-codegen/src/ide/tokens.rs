//! Semantic classes of a file's tokens: the lexer's tokens, with names
//! classified by what the index says they refer to (type, variant, field,
//! function, parameter or variable). Comments are left to the editor's
//! grammar (the lexer drops them); doc comments are tokens.

use std::collections::HashSet;

use super::{Index, Symbol};
use crate::ast::Item;
use crate::check::Builtin;
use crate::lexer::{self, TokenKind};
use crate::source::{FileId, Span};
use crate::types::BUILTIN_TYPE_NAMES;
use crate::Checked;

/// What a token is, for highlighting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenClass {
    Keyword,
    Type,
    Variant,
    Field,
    Function,
    Parameter,
    Variable,
    String,
    Number,
    /// A doc comment, `///` included.
    Comment,
    Decorator,
}

/// A keyword token: one whose description is a quoted word (`` `match` ``).
fn is_keyword(k: TokenKind) -> bool {
    let d = k.describe();
    d.len() > 2
        && d.starts_with('`')
        && d.ends_with('`')
        && d[1..d.len() - 1].chars().all(|c| c.is_ascii_alphabetic())
}

/// Every classified token of `file`, in order (unclassified tokens, such
/// as punctuation, are left out).
pub fn semantic_tokens(checked: &Checked, index: &Index, file: FileId) -> Vec<(Span, TokenClass)> {
    let text = &checked.sources.get(file).text;
    let lexed = lexer::lex(file, text);
    let params: HashSet<u32> = checked
        .module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Fn(f) => Some(f),
            _ => None,
        })
        .flat_map(|f| f.params.iter().map(|p| p.name.span))
        .filter(|s| s.file == file)
        .map(|s| s.start)
        .collect();
    let mut out = Vec::new();
    let mut prev_kind = TokenKind::Newline;
    for t in &lexed.tokens {
        let mut span = t.span;
        let class = match t.kind {
            TokenKind::Str => Some(TokenClass::String),
            TokenKind::Int | TokenKind::Float => Some(TokenClass::Number),
            TokenKind::Doc => {
                // The span covers the text after `///`.
                span.start = span.start.saturating_sub(3);
                Some(TokenClass::Comment)
            }
            TokenKind::Ident | TokenKind::TypeName => {
                let name = text.get(span.range()).unwrap_or("");
                match index.at(file, span.start).filter(|o| o.span == span) {
                    _ if prev_kind == TokenKind::At => Some(TokenClass::Decorator),
                    Some(o) => Some(match o.symbol {
                        Symbol::Type(_) => TokenClass::Type,
                        Symbol::Variant { .. } => TokenClass::Variant,
                        Symbol::Field { .. } => TokenClass::Field,
                        Symbol::Fn(_) => TokenClass::Function,
                        Symbol::Local(def) if params.contains(&def.start) => TokenClass::Parameter,
                        Symbol::Local(_) => TokenClass::Variable,
                    }),
                    None if BUILTIN_TYPE_NAMES.contains(&name) => Some(TokenClass::Type),
                    None if ["Some", "None", "Ok", "Error"].contains(&name) => {
                        Some(TokenClass::Variant)
                    }
                    None if Builtin::ALL.iter().any(|(n, _)| *n == name) => {
                        Some(TokenClass::Function)
                    }
                    None => None,
                }
            }
            TokenKind::At => Some(TokenClass::Decorator),
            k if is_keyword(k) => Some(TokenClass::Keyword),
            _ => None,
        };
        prev_kind = t.kind;
        if let Some(class) = class {
            out.push((span, class));
        }
    }
    out
}

/// The diagnostics of reading `text`'s tokens alone, before any parsing:
/// what an editor grammar's rules for invalid tokens must agree with.
pub fn lexer_diagnostics(text: &str) -> Vec<crate::Diagnostic> {
    lexer::lex(FileId(0), text).diagnostics
}

/// Whether `name` starts with a name token rather than a keyword.
pub fn is_name(name: &str) -> bool {
    let mut tokens = lexer::lex(FileId(0), name).tokens.into_iter();
    matches!(
        tokens.next().map(|t| t.kind),
        Some(TokenKind::Ident | TokenKind::TypeName)
    )
}
