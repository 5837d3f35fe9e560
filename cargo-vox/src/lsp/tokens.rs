//! Semantic tokens: vox-codegen's `ide::semantic_tokens` (the lexer's
//! tokens, names classified by what they refer to), encoded as the
//! protocol's relative positions. Comments are left to the editor's
//! grammar, doc comments are tokens.

use lsp_types::{SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensLegend};
use vox_codegen::ide::{self, TokenClass};
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

pub fn semantic_tokens(a: &Analysis, file: FileId, enc: Encoding) -> SemanticTokens {
    let lines = a.lines(file, enc);
    let mut data = Vec::new();
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    for (span, class) in ide::semantic_tokens(&a.checked, &a.index, file) {
        let class = match class {
            TokenClass::Keyword => SemanticTokenType::KEYWORD,
            TokenClass::Type => SemanticTokenType::TYPE,
            TokenClass::Variant => SemanticTokenType::ENUM_MEMBER,
            TokenClass::Field => SemanticTokenType::PROPERTY,
            TokenClass::Function => SemanticTokenType::FUNCTION,
            TokenClass::Parameter => SemanticTokenType::PARAMETER,
            TokenClass::Variable => SemanticTokenType::VARIABLE,
            TokenClass::String => SemanticTokenType::STRING,
            TokenClass::Number => SemanticTokenType::NUMBER,
            TokenClass::Comment => SemanticTokenType::COMMENT,
            TokenClass::Decorator => SemanticTokenType::DECORATOR,
        };
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
