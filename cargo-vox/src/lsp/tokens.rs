//! Semantic tokens: the lexer's tokens, with names classified by what the
//! index says they refer to (type, variant, field, function, parameter or
//! variable). Comments are left to the editor's grammar (the lexer drops
//! them), doc comments are tokens.

use lsp_types::{SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensLegend};
use vox_codegen::ide::Symbol;
use vox_codegen::lexer::{self, TokenKind};
use vox_codegen::types::BUILTIN_TYPE_NAMES;
use vox_codegen::FileId;

use super::position::Encoding;
use super::store::Analysis;

const TYPES: [SemanticTokenType; 12] = [
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
    SemanticTokenType::DECORATOR,
    SemanticTokenType::OPERATOR,
];

fn kind(t: SemanticTokenType) -> u32 {
    TYPES.iter().position(|x| *x == t).unwrap_or(0) as u32
}

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: Vec::new(),
    }
}

/// A keyword token: one whose description is a quoted word (`` `match` ``).
fn is_keyword(k: TokenKind) -> bool {
    let d = k.describe();
    d.len() > 2
        && d.starts_with('`')
        && d.ends_with('`')
        && d[1..d.len() - 1].chars().all(|c| c.is_ascii_alphabetic())
}

pub fn semantic_tokens(a: &Analysis, file: FileId, enc: Encoding) -> SemanticTokens {
    let text = &a.checked.sources.get(file).text;
    let lines = a.lines(file, enc);
    let lexed = lexer::lex(file, text);
    let params: std::collections::HashSet<u32> = a
        .checked
        .module
        .items
        .iter()
        .filter_map(|i| match i {
            vox_codegen::ast::Item::Fn(f) => Some(f),
            _ => None,
        })
        .flat_map(|f| f.params.iter().map(|p| p.name.span))
        .filter(|s| s.file == file)
        .map(|s| s.start)
        .collect();
    let mut data = Vec::new();
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    let mut prev_kind = TokenKind::Newline;
    for t in &lexed.tokens {
        let mut span = t.span;
        let class = match t.kind {
            TokenKind::Str => Some(SemanticTokenType::STRING),
            TokenKind::Int | TokenKind::Float => Some(SemanticTokenType::NUMBER),
            TokenKind::Doc => {
                // The span covers the text after `///`.
                span.start = span.start.saturating_sub(3);
                Some(SemanticTokenType::COMMENT)
            }
            TokenKind::Ident | TokenKind::TypeName => {
                let name = text.get(span.range()).unwrap_or("");
                match a.index.at(file, span.start).filter(|o| o.span == span) {
                    _ if prev_kind == TokenKind::At => Some(SemanticTokenType::DECORATOR),
                    Some(o) => Some(match o.symbol {
                        Symbol::Type(_) => SemanticTokenType::TYPE,
                        Symbol::Variant { .. } => SemanticTokenType::ENUM_MEMBER,
                        Symbol::Field { .. } => SemanticTokenType::PROPERTY,
                        Symbol::Fn(_) => SemanticTokenType::FUNCTION,
                        Symbol::Local(def) if params.contains(&def.start) => {
                            SemanticTokenType::PARAMETER
                        }
                        Symbol::Local(_) => SemanticTokenType::VARIABLE,
                    }),
                    None if BUILTIN_TYPE_NAMES.contains(&name) => Some(SemanticTokenType::TYPE),
                    None if ["Some", "None", "Ok", "Error"].contains(&name) => {
                        Some(SemanticTokenType::ENUM_MEMBER)
                    }
                    None if vox_codegen::check::Builtin::ALL
                        .iter()
                        .any(|(n, _)| *n == name) =>
                    {
                        Some(SemanticTokenType::FUNCTION)
                    }
                    None => None,
                }
            }
            TokenKind::At => Some(SemanticTokenType::DECORATOR),
            k if is_keyword(k) => Some(SemanticTokenType::KEYWORD),
            _ => None,
        };
        prev_kind = t.kind;
        let Some(class) = class else { continue };
        let start = lines.position(span.start as usize);
        let end = lines.position(span.end as usize);
        // Tokens are single-line in the protocol: a multi-line string is
        // left to the editor's grammar.
        if start.line != end.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - prev_line;
        let delta_start = if delta_line == 0 {
            start.character - prev_col
        } else {
            start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: kind(class),
            token_modifiers_bitset: 0,
        });
        prev_line = start.line;
        prev_col = start.character;
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}
