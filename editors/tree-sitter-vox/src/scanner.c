// External scanner for Vox: one token, a `-` that starts a line.
//
// Newlines end statements and match arms in Vox, but this grammar treats
// them as whitespace; the one place that changes a valid program's parse
// is a match arm whose pattern is a negative number:
//
//     "least"
//     -1 => "minus one"
//
// Where a pattern may start, this scanner claims a `-` preceded by a
// newline, so the arm before is not read as `"least" - 1`.

#include "tree_sitter/parser.h"

enum TokenType {
  LINE_MINUS,
  ERROR_SENTINEL,
};

void *tree_sitter_vox_external_scanner_create(void) { return NULL; }
void tree_sitter_vox_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_vox_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}
void tree_sitter_vox_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

bool tree_sitter_vox_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid_symbols) {
  (void)payload;
  // During error recovery every symbol is valid: claim nothing.
  if (valid_symbols[ERROR_SENTINEL] || !valid_symbols[LINE_MINUS]) {
    return false;
  }
  bool newline = false;
  while (lexer->lookahead == ' ' || lexer->lookahead == '\t' || lexer->lookahead == '\r' ||
         lexer->lookahead == '\n') {
    if (lexer->lookahead == '\n') {
      newline = true;
    }
    lexer->advance(lexer, true);
  }
  if (!newline || lexer->lookahead != '-') {
    return false;
  }
  lexer->advance(lexer, false);
  lexer->result_symbol = LINE_MINUS;
  return true;
}
