/**
 * Tree-sitter grammar for Vox (docs/language.md, "Grammar (informal)").
 *
 * For highlighting and structure in Neovim, Helix and Zed; the compiler's
 * own parser (vox-codegen) is the reference. Newlines end statements in
 * Vox; here they are whitespace, which parses every valid program the same
 * way except for pathological line breaks.
 */

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  add: 5,
  mul: 6,
  unary: 7,
  call: 8,
  field: 9,
};

const commaSep = (rule) => optional(commaSep1(rule));

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)), optional(','));

module.exports = grammar({
  name: 'vox',

  extras: ($) => [/\s/, $.doc_comment, $.comment],

  // A `-` that starts a line (after a newline): `src/scanner.c`.
  externals: ($) => [$._line_minus, $._error_sentinel],

  word: ($) => $.identifier,

  conflicts: ($) => [
    // `match None {`: a record literal cannot start the head of
    // `if`/`match`/`for`; both readings are tried and the block wins.
    [$.constructor_expression, $.record_expression],
    [$._arm_return],
  ],

  rules: {
    source_file: ($) =>
      repeat(
        choice(
          $.type_declaration,
          $.function_declaration,
          $.const_declaration,
          $.example_declaration,
        ),
      ),

    doc_comment: (_) => token(prec(2, seq('///', /.*/))),
    comment: (_) => token(prec(1, seq('//', /.*/))),

    identifier: (_) => /[a-z_][A-Za-z0-9_]*/,
    type_identifier: (_) => /[A-Z][A-Za-z0-9_]*/,

    // ---- items ----------------------------------------------------------

    decorator: ($) =>
      seq(
        '@',
        field('name', $.identifier),
        optional(seq('(', commaSep($.decorator_argument), ')')),
      ),

    decorator_argument: ($) =>
      seq(
        field('name', $.identifier),
        optional(seq(choice('=', ':'), field('value', $._decorator_value))),
      ),

    _decorator_value: ($) =>
      choice($.type, $.number, $.negative_number, $.string, $.boolean, $.decorator_list),

    decorator_list: ($) => seq('[', commaSep($._decorator_value), ']'),

    negative_number: ($) => seq('-', $.number),

    _line_negative_number: ($) => seq($._line_minus, $.number),

    type_declaration: ($) =>
      seq(
        repeat($.decorator),
        optional($.visibility),
        'type',
        field('name', $.type_identifier),
        choice($.record_body, seq('=', choice($.dynamic, repeat1($.variant)))),
      ),

    // `type Category = dynamic`: values each call supplies.
    dynamic: (_) => 'dynamic',

    visibility: (_) => 'pub',

    record_body: ($) => seq('{', repeat(seq($.field_declaration, optional(','))), '}'),

    field_declaration: ($) => seq(field('name', $.identifier), ':', field('type', $.type)),

    variant: ($) =>
      seq(
        '|',
        field('name', $.type_identifier),
        optional(seq('(', commaSep($.field_declaration), ')')),
      ),

    type: ($) =>
      seq(field('name', $._type_name), optional(seq('[', commaSep($.type), ']'))),

    _type_name: ($) => choice($.type_identifier, $.identifier),

    function_declaration: ($) =>
      seq(
        repeat($.decorator),
        optional($.visibility),
        'fn',
        field('name', $.identifier),
        field('parameters', $.parameters),
        optional(seq('to', field('return_type', $.type))),
        // A `@rust` function has no body: the crate implements it.
        optional(field('body', $.block)),
      ),

    // `example classify("I love it") => Positive`: a worked example of
    // an `@ai` function.
    example_declaration: ($) =>
      seq('example', field('call', $.call_expression), '=>', field('answer', $._expression)),

    // `const MAX_TOTAL = 1_000`, `const RATE: Decimal = decimal("0.2")`.
    const_declaration: ($) =>
      seq(
        optional($.visibility),
        'const',
        field('name', $.type_identifier),
        optional(seq(':', field('type', $.type))),
        '=',
        field('value', $._expression),
      ),

    parameters: ($) => seq('(', commaSep($.parameter), ')'),

    parameter: ($) => seq(field('name', $.identifier), ':', field('type', $.type)),

    // ---- statements -----------------------------------------------------

    block: ($) => seq('{', repeat(choice($._statement, ';')), '}'),

    _statement: ($) =>
      choice(
        $.let_statement,
        $.return_statement,
        $.for_statement,
        $.while_statement,
        $.break_statement,
        $.continue_statement,
        $.assignment,
        $._expression,
      ),

    let_statement: ($) =>
      choice(
        seq(
          'let',
          optional($.mutable),
          field('name', $.identifier),
          optional(seq(':', field('type', $.type))),
          '=',
          field('value', $._expression),
        ),
        // `let Invoice { vendor, total, .. } = inv`.
        seq('let', field('pattern', $.record_pattern), '=', field('value', $._expression)),
      ),

    mutable: (_) => 'mut',

    return_statement: ($) => prec.right(seq('return', optional($._expression))),

    for_statement: ($) =>
      seq('for', field('variable', $.identifier), 'in', field('iterable', $._expression), field('body', $.block)),

    while_statement: ($) => seq('while', field('condition', $._expression), field('body', $.block)),

    // A `return` arm body: bare (`None => return`, the next arm on the next
    // line) or with a value; both readings are tried (see `conflicts`) and
    // the one that parses wins.
    _arm_return: ($) => choice('return', prec.dynamic(-1, seq('return', $._expression))),

    break_statement: (_) => 'break',
    continue_statement: (_) => 'continue',

    assignment: ($) => seq(field('target', $._expression), '=', field('value', $._expression)),

    // ---- expressions ----------------------------------------------------

    _expression: ($) =>
      choice(
        $.if_expression,
        $.match_expression,
        $.binary_expression,
        $.unary_expression,
        $.try_expression,
        $._postfix,
      ),

    if_expression: ($) =>
      prec.right(
        seq(
          'if',
          field('condition', $._expression),
          field('consequence', $.block),
          optional(seq('else', field('alternative', choice($.block, $.if_expression)))),
        ),
      ),

    match_expression: ($) =>
      seq('match', field('value', $._expression), '{', repeat(choice($.match_arm, ';', ',')), '}'),

    match_arm: ($) =>
      seq(
        field('pattern', $._pattern),
        optional(seq('if', field('guard', $._expression))),
        '=>',
        // `None => break`, `_ => return 0`: a jump is an arm body too.
        field(
          'body',
          choice(
            $.block,
            $._expression,
            alias($._arm_return, $.return_statement),
            $.break_statement,
            $.continue_statement,
          ),
        ),
      ),

    _pattern: ($) =>
      choice(
        // A negative literal starting a line is a new arm's pattern, not
        // `- n` continuing the previous arm's body (src/scanner.c).
        alias($._line_negative_number, $.negative_number),
        $.wildcard,
        $.identifier,
        $.number,
        $.negative_number,
        $.string,
        $.boolean,
        $.constructor_pattern,
        $.record_pattern,
        $.or_pattern,
      ),

    wildcard: (_) => '_',

    // `Invoice { vendor: "ACME", total, .. }`.
    record_pattern: ($) =>
      prec(
        1,
        seq(
          field('name', $.type_identifier),
          '{',
          optional(
            seq(
              commaSep1(choice($.field_pattern, $.rest_pattern)),
            ),
          ),
          '}',
        ),
      ),

    field_pattern: ($) =>
      seq(field('name', $.identifier), optional(seq(':', field('pattern', $._pattern)))),

    rest_pattern: (_) => '..',

    constructor_pattern: ($) =>
      prec.right(
        seq(field('name', $.type_identifier), optional(seq('(', commaSep($._pattern), ')'))),
      ),

    or_pattern: ($) => prec.left(seq($._pattern, '|', $._pattern)),

    binary_expression: ($) => {
      const table = [
        [PREC.or, 'or'],
        [PREC.and, 'and'],
        [PREC.compare, choice('is', 'isnt', '==', '!=', '<', '<=', '>', '>=')],
        [PREC.add, choice('+', '-')],
        [PREC.mul, choice('*', '/', '%')],
      ];
      return choice(
        ...table.map(([p, op]) =>
          prec.left(p, seq(field('left', $._expression), field('operator', op), field('right', $._expression))),
        ),
      );
    },

    unary_expression: ($) =>
      choice(
        prec(PREC.not, seq(field('operator', 'not'), field('operand', $._expression))),
        prec(PREC.unary, seq(field('operator', '-'), field('operand', $._expression))),
      ),

    // `try f(x)`: a network call's outcome as a `Result` (the checker, not
    // the grammar, requires the operand to be a call of a network function);
    // `try` can still name a field.
    try_expression: ($) => prec(PREC.unary, seq('try', field('operand', $._expression))),

    _postfix: ($) => choice($.call_expression, $.field_expression, $._primary),

    call_expression: ($) =>
      prec(PREC.call, seq(field('function', $.identifier), field('arguments', $.arguments))),

    arguments: ($) => seq('(', commaSep($.argument), ')'),

    argument: ($) => seq(optional(seq(field('name', $.identifier), ':')), field('value', $._expression)),

    field_expression: ($) =>
      prec(
        PREC.field,
        seq(field('value', $._expression), '.', field('field', choice($.identifier, $.type_identifier))),
      ),

    _primary: ($) =>
      choice(
        $.number,
        $.string,
        $.format_string,
        $.boolean,
        $.identifier,
        $.constructor_expression,
        $.record_expression,
        $.list_expression,
        $.map_expression,
        $.parenthesized_expression,
        $.lambda_expression,
      ),

    // `fn(x) => x.total > 10`, `fn(x: Invoice) { … }`: the body takes the
    // whole expression after `=>`.
    lambda_expression: ($) =>
      prec.right(
        0,
        seq(
          'fn',
          field('parameters', $.lambda_parameters),
          choice(seq('=>', field('body', $._expression)), field('body', $.block)),
        ),
      ),

    lambda_parameters: ($) => seq('(', commaSep($.lambda_parameter), ')'),

    lambda_parameter: ($) =>
      seq(field('name', $.identifier), optional(seq(':', field('type', $.type)))),

    // `Name(…)` always takes its arguments; `Name {` may start a record
    // literal or, in the head of `if`/`match`/`for`, the body (a conflict,
    // settled by trying both).
    constructor_expression: ($) =>
      choice(
        prec(2, seq(field('name', $.type_identifier), field('arguments', $.arguments))),
        prec(1, field('name', $.type_identifier)),
      ),

    record_expression: ($) =>
      prec(1, seq(field('name', $.type_identifier), '{', commaSep($.field_initializer), '}')),

    field_initializer: ($) => seq(field('name', $.identifier), ':', field('value', $._expression)),

    list_expression: ($) => seq('[', commaSep($._expression), ']'),

    // `["a": 1, "b": 2]`, and `[:]` the empty map.
    map_expression: ($) => seq('[', choice(':', commaSep1($.map_entry)), ']'),

    map_entry: ($) => seq(field('key', $._expression), ':', field('value', $._expression)),

    parenthesized_expression: ($) => seq('(', $._expression, ')'),

    boolean: (_) => choice('true', 'false'),

    number: (_) =>
      token(
        choice(
          /[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?/,
          /[0-9][0-9_]*[eE][+-]?[0-9_]+/,
          /[0-9][0-9_]*/,
        ),
      ),

    string: ($) =>
      choice(
        seq('"', repeat(choice($.string_content, $.escape_sequence)), token.immediate('"')),
        $.multiline_string,
      ),

    // `"""` to `"""` over several lines (escapes are not told apart).
    multiline_string: (_) => token(prec(3, seq('"""', repeat(choice(/[^"]/, /"[^"]/, /""[^"]/)), '"""'))),

    string_content: (_) => token.immediate(prec(1, /[^"\\]+/)),

    escape_sequence: (_) => token.immediate(seq('\\', choice(/u\{[0-9A-Fa-f]+\}/, /./))),

    format_string: ($) =>
      seq(
        'f"',
        repeat(choice($.format_content, $.escape_sequence, $.brace_escape, $.interpolation)),
        token.immediate('"'),
      ),

    format_content: (_) => token.immediate(prec(1, /[^"\\{}]+/)),

    // `{{` and `}}`: literal braces in an f-string.
    brace_escape: (_) => token.immediate(choice('{{', '}}')),

    interpolation: ($) => seq('{', $._expression, '}'),
  },
});
