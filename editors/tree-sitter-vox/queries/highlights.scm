; Vox highlights (Neovim, Helix and Zed capture names).

(comment) @comment
(doc_comment) @comment.documentation

[
  "type"
  "fn"
  "let"
  "const"
  "example"
] @keyword

(visibility) @keyword.modifier
(dynamic) @keyword.type
(mutable) @keyword.modifier

[
  "if"
  "else"
  "match"
] @keyword.conditional

[
  "for"
  "in"
  "while"
] @keyword.repeat

(break_statement) @keyword.repeat
(continue_statement) @keyword.repeat

"return" @keyword.return

"try" @keyword.exception

[
  "to"
  "is"
  "isnt"
  "and"
  "or"
  "not"
] @keyword.operator

[
  "=" "==" "!=" "<" "<=" ">" ">=" "+" "-" "*" "/" "%" "=>" "|"
] @operator

[ "(" ")" "[" "]" "{" "}" ] @punctuation.bracket
[ "," ":" ";" "." ] @punctuation.delimiter

(decorator "@" @attribute)
(decorator name: (identifier) @attribute)
(decorator_argument name: (identifier) @property)

(type_declaration name: (type_identifier) @type.definition)
(variant name: (type_identifier) @constructor)
(field_declaration name: (identifier) @variable.member)
(field_initializer name: (identifier) @variable.member)
(field_expression field: (identifier) @variable.member)

(type name: (identifier) @type.builtin)
(type
  name: (type_identifier) @type.builtin
  (#any-of? @type.builtin "Unit" "List" "Option" "Result" "Decimal" "Image" "Document" "Audio"))
(type name: (type_identifier) @type)

(function_declaration name: (identifier) @function)
(const_declaration name: (type_identifier) @constant)
(parameter name: (identifier) @variable.parameter)
(lambda_parameter name: (identifier) @variable.parameter)
(call_expression
  function: (identifier) @function.builtin
  (#any-of? @function.builtin "len" "str" "int" "float" "decimal" "print" "assert" "assert_eq"
    "image_file" "image_url" "document_file" "document_url" "audio_file" "audio_url"))
(call_expression function: (identifier) @function.call)
(argument name: (identifier) @variable.parameter)

(constructor_expression name: (type_identifier) @constructor)
(constructor_pattern name: (type_identifier) @constructor)
(record_expression name: (type_identifier) @type)

(wildcard) @variable.builtin
(identifier) @variable

(number) @number
(negative_number) @number
(boolean) @boolean
(string) @string
(format_string) @string
(escape_sequence) @string.escape
(brace_escape) @string.escape
(interpolation ["{" "}"] @punctuation.special)
