//! Slips: code written the way another language writes it (Python, Rust,
//! TypeScript/JavaScript, Go, Kotlin, Swift). One table, [`SLIPS`], says
//! what each foreign spelling is in Vox; [`slip_fixes`] matches it against
//! the tokens around every error that has no fix of its own and attaches
//! the Vox spelling: a machine-applicable fix where the intent is clear,
//! else a hint naming what Vox has instead. Nothing here is special-cased
//! in the parser: a new slip is a new row.

use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::lexer::TokenKind as T;

use crate::fix::Toks;

/// One foreign spelling.
pub(crate) struct Slip {
    /// Tokens as written, separated by spaces: `$a` is any lowercase name,
    /// `$T` any uppercase one, `$s` a string literal, anything else the
    /// token's exact text.
    pub(crate) pattern: &'static str,
    /// The Vox text for the matched tokens (`$a`, `$T`, `$s` substituted),
    /// when the intent is clear: then the fix is machine-applicable.
    pub(crate) vox: Option<&'static str>,
    /// What Vox writes instead, shown as a hint.
    pub(crate) say: &'static str,
    /// Whether `vox` is what was meant: else it is offered (a person
    /// should look, as when the Vox spelling gives an `Option` where the
    /// foreign one gave the value) and `cargo vox fix` leaves it.
    pub(crate) sure: bool,
}

const fn fix(pattern: &'static str, vox: &'static str, say: &'static str) -> Slip {
    Slip {
        pattern,
        vox: Some(vox),
        say,
        sure: true,
    }
}

/// A Vox spelling that is probably meant, shown but never applied.
const fn offer(pattern: &'static str, vox: &'static str, say: &'static str) -> Slip {
    Slip {
        pattern,
        vox: Some(vox),
        say,
        sure: false,
    }
}

const fn say(pattern: &'static str, say: &'static str) -> Slip {
    Slip {
        pattern,
        vox: None,
        say,
        sure: true,
    }
}

/// The table, most specific first (the first row that matches wins).
pub(crate) const SLIPS: &[Slip] = &[
    // Before the `.get(` of maps (docs/language.md, "Script input").
    offer("os . environ . get (", "env(", "Vox reads an environment variable with `env(name)`, an `Option[str]` (`@uses(env)`)"),
    // Compound assignment and increments (every C-family language, Python, Swift, Kotlin, Go).
    fix("$a + =", "$a = $a +", "Vox has no `+=`: write `x = x + …`"),
    fix("$a - =", "$a = $a -", "Vox has no `-=`: write `x = x - …`"),
    fix("$a * =", "$a = $a *", "Vox has no `*=`: write `x = x * …`"),
    fix("$a / =", "$a = $a /", "Vox has no `/=`: write `x = x / …`"),
    fix("$a % =", "$a = $a %", "Vox has no `%=`: write `x = x % …`"),
    fix("$a + +", "$a = $a + 1", "Vox has no `++`: write `x = x + 1`"),
    fix("$a - -", "$a = $a - 1", "Vox has no `--`: write `x = x - 1`"),
    // Equality spellings (TS/JS).
    fix("== =", "is", "Vox compares with `is` (or `==`)"),
    fix("!= =", "isnt", "Vox compares with `isnt` (or `!=`)"),
    say("* *", "Vox has no power operator: multiply (`x * x`)"),
    // Declarations.
    fix("const $a =", "let $a =", "Vox declares constants with `let`"),
    fix("val $a =", "let $a =", "Vox declares values with `let`"),
    fix("var $a =", "let mut $a =", "Vox declares variables with `let mut`"),
    fix("let $a : =", "let $a =", "Go's `:=` is `let x = …` in Vox"),
    fix("$a : =", "let $a =", "Go's `:=` is `let x = …` in Vox"),
    say("static", "Vox has no statics: write a function that returns the value"),
    say("impl", "Vox has no methods: write a function that takes the value as its first parameter"),
    say("trait", "Vox has no traits: write a function per type, or a sum type"),
    say("async", "Vox functions that call a model are marked `@uses(net)`; there is no `async`"),
    say("await", "Vox has no `await`: call the function; `@uses(net)` marks the caller"),
    say("lambda", "a lambda is written `fn(x) => …`, and passed to a builtin such as `map` or `filter`"),
    say("import", "Vox has no imports: every `.vox` file of a package is one module"),
    say("use $a : :", "Vox has no imports: every `.vox` file of a package is one module"),
    say("package", "Vox has no packages inside a file: every `.vox` file of a package is one module"),
    // Macros (Rust) and printing (Go, TS/JS, Kotlin, Swift).
    fix("println ! (", "print(", "Vox prints with `print(…)`"),
    fix("print ! (", "print(", "Vox prints with `print(…)`"),
    fix("assert ! (", "assert(", "Vox asserts with `assert(…)`"),
    fix("assert_eq ! (", "assert_eq(", "Vox asserts with `assert_eq(…)`"),
    fix("vec ! [", "[", "a Vox list is written `[a, b]`"),
    say("format ! (", "Vox has no `format!`: concatenate with `+` and `str(…)`"),
    say("panic ! (", "Vox has no `panic!`: return a `Result` (`Error(\"…\")`) instead"),
    say("todo ! (", "Vox has no `todo!`: return a value"),
    fix("console . log (", "print(", "Vox prints with `print(…)`"),
    fix("fmt . Println (", "print(", "Vox prints with `print(…)`"),
    fix("println (", "print(", "Vox prints with `print(…)`"),
    // Paths to variants (Rust `::`, TS/Kotlin/Swift `.`).
    fix("$T : : $T", "$T2", "Vox names a variant alone: `USD`, not `Currency::USD`"),
    fix("Err (", "Error(", "Vox's failed `Result` is `Error(…)`"),
    fix("undefined", "None", "Vox's missing value is `None`"),
    fix("nullptr", "None", "Vox's missing value is `None`"),
    // Control flow.
    fix("loop {", "while true {", "Vox has no `loop`: write `while true { … }` and leave it with `break`"),
    fix("for $a of", "for $a in", "Vox loops are `for x in xs`"),
    say("for (", "Vox loops are `for x in xs`, without parentheses"),
    say(". .", "Vox writes ranges as `range(a, b)` (`a` up to, not including, `b`): `for i in range(0, n)`"),
    say("foreach", "Vox loops are `for x in xs`"),
    say("try {", "Vox has no `try` blocks: `match try f(x) { Ok(v) => …, Error(e) => … }` around one network call"),
    say("switch", "Vox matches values with `match x { pattern => value }`"),
    say("case $T", "Vox matches values with `match x { pattern => value }`, one arm per line"),
    say("case $a", "Vox matches values with `match x { pattern => value }`, one arm per line"),
    say("when (", "Vox matches values with `match x { pattern => value }`"),
    say("when $a {", "Vox matches values with `match x { pattern => value }`"),
    say("default :", "in a Vox `match`, `_ => …` matches everything else"),
    fix("- >", "=>", "a Vox `match` arm is `pattern => value`"),
    say("?", "Vox has no `?` or ternary: write `match` on the `Option`/`Result`, or `if c { a } else { b }`"),
    say("$a if", "Vox has no `x if c else y`: write `if c { x } else { y }`"),
    // Reading numbers from text: Vox's `parse_*` give an `Option` (`None`
    // for text that is no such number) where these give the number or
    // throw, so the Vox spelling is offered, not applied.
    offer("$a . parse : : < i64 > ( )", "parse_int($a)", "Vox reads an `int` from text with `parse_int(s)`, an `Option[int]`: `match parse_int(s) { Some(n) => …, None => … }`"),
    offer("$a . parse : : < f64 > ( )", "parse_float($a)", "Vox reads a `float` from text with `parse_float(s)`, an `Option[float]`: `match parse_float(s) { Some(x) => …, None => … }`"),
    say(". parse (", "Vox has no methods: `parse_int(s)`, `parse_float(s)` and `parse_decimal(s)` read a number from text (each an `Option`)"),
    say(". parse : :", "Vox has no methods: `parse_int(s)`, `parse_float(s)` and `parse_decimal(s)` read a number from text (each an `Option`)"),
    offer("parseInt ( $a )", "parse_int($a)", "Vox reads an `int` from text with `parse_int(s)`, an `Option[int]` (`None`, not `NaN`, for text that is no number)"),
    offer("parseFloat ( $a )", "parse_float($a)", "Vox reads a `float` from text with `parse_float(s)`, an `Option[float]` (`None`, not `NaN`, for text that is no number)"),
    offer("Number ( $a )", "parse_float($a)", "Vox reads a number from text with `parse_float(s)` or `parse_int(s)`, each an `Option` (`None`, not `NaN`, for text that is no number)"),
    offer("$a . toInt ( )", "parse_int($a)", "Vox reads an `int` from text with `parse_int(s)`, an `Option[int]`"),
    offer("$a . toIntOrNull ( )", "parse_int($a)", "Vox reads an `int` from text with `parse_int(s)`, an `Option[int]`"),
    offer("$a . toDouble ( )", "parse_float($a)", "Vox reads a `float` from text with `parse_float(s)`, an `Option[float]`"),
    offer("$a . toDoubleOrNull ( )", "parse_float($a)", "Vox reads a `float` from text with `parse_float(s)`, an `Option[float]`"),
    offer("strconv . Atoi ( $a )", "parse_int($a)", "Vox reads an `int` from text with `parse_int(s)`, an `Option[int]` (no error value: `None`)"),
    // Methods other languages call on values.
    fix("$a . push (", "$a = $a + [", "Vox lists are values: `xs = xs + [x]`"),
    fix("$a . append (", "$a = $a + [", "Vox lists are values: `xs = xs + [x]`"),
    say(". unwrap (", "Vox has no `unwrap`: `match` on the `Option`/`Result` (`Some(v) => …`)"),
    say(". expect (", "Vox has no `expect`: `match` on the `Option`/`Result`"),
    fix("$a . contains (", "contains($a, ", "Vox has no methods: `contains(xs, x)`"),
    fix("$a . includes (", "contains($a, ", "Vox has no methods: `contains(xs, x)`"),
    fix("$a . startswith (", "starts_with($a, ", "Vox has no methods: `starts_with(s, prefix)`"),
    fix("$a . starts_with (", "starts_with($a, ", "Vox has no methods: `starts_with(s, prefix)`"),
    fix("$a . startsWith (", "starts_with($a, ", "Vox has no methods: `starts_with(s, prefix)`"),
    fix("$a . endswith (", "ends_with($a, ", "Vox has no methods: `ends_with(s, suffix)`"),
    fix("$a . ends_with (", "ends_with($a, ", "Vox has no methods: `ends_with(s, suffix)`"),
    fix("$a . endsWith (", "ends_with($a, ", "Vox has no methods: `ends_with(s, suffix)`"),
    // Functions as arguments: builtins taking the list first.
    fix("$a . map (", "map($a, ", "Vox has no methods: `map(xs, fn(x) => …)`"),
    fix("$a . filter (", "filter($a, ", "Vox has no methods: `filter(xs, fn(x) => …)`"),
    fix("$a . find (", "find($a, ", "Vox has no methods: `find(xs, fn(x) => …)`, an `Option`"),
    fix("$a . some (", "any($a, ", "Vox has no methods: TypeScript's `xs.some(f)` is `any(xs, f)`"),
    fix("$a . every (", "all($a, ", "Vox has no methods: TypeScript's `xs.every(f)` is `all(xs, f)`"),
    fix("$a . any (", "any($a, ", "Vox has no methods: `any(xs, fn(x) => …)`"),
    fix("$a . all (", "all($a, ", "Vox has no methods: `all(xs, fn(x) => …)`"),
    fix("sorted ( $a , key =", "sort_by($a, ", "Python's `sorted(xs, key=f)` is `sort_by(xs, f)` (stable, ascending)"),
    offer("$a . sort_by_key (", "$a = sort_by($a, ", "Vox has no methods: `sort_by(xs, fn(x) => key)` gives a sorted copy"),
    offer("$a . sort ( key =", "$a = sort_by($a, ", "Vox has no methods: `sort_by(xs, fn(x) => key)` gives a sorted copy"),
    say(". map (", "Vox has no methods: `map(xs, fn(x) => …)`"),
    say(". filter (", "Vox has no methods: `filter(xs, fn(x) => …)`"),
    fix("$s . join ( $a )", "join($a, $s)", "Vox has no methods: `join(xs, sep)` (the list first)"),
    say(". join (", "Vox has no methods: `join(xs, sep)` (the list first)"),
    fix("$a . split (", "split($a, ", "Vox has no methods: `split(s, sep)`"),
    fix("$a . lower ( )", "lower($a)", "Vox has no methods: `lower(s)`"),
    fix("$a . upper ( )", "upper($a)", "Vox has no methods: `upper(s)`"),
    fix("$a . trim ( )", "trim($a)", "Vox has no methods: `trim(s)`"),
    fix("$a . strip ( )", "trim($a)", "Vox has no methods: `trim(s)`"),
    fix("$a . toLowerCase ( )", "lower($a)", "Vox has no methods: `lower(s)`"),
    fix("$a . toUpperCase ( )", "upper($a)", "Vox has no methods: `upper(s)`"),
    fix("$a . lowercase ( )", "lower($a)", "Vox has no methods: `lower(s)`"),
    fix("$a . uppercase ( )", "upper($a)", "Vox has no methods: `upper(s)`"),
    fix("$a . sort ( )", "$a = sort($a)", "Vox lists are values: `xs = sort(xs)`"),
    fix("$a . reverse ( )", "$a = reverse($a)", "Vox lists are values: `xs = reverse(xs)`"),
    say(". sorted (", "Vox has no methods: `sort(xs)` returns a sorted copy"),
    say(". toFixed (", "Vox has no methods: `fixed(x, 2)` writes a number with 2 decimals"),
    // Maps (Python dicts, Rust HashMap/BTreeMap, JS/Kotlin/Swift maps).
    fix("$a . keys ( )", "keys($a)", "Vox has no methods: `keys(m)` (sorted)"),
    fix("$a . values ( )", "values($a)", "Vox has no methods: `values(m)` (in key order)"),
    fix("$a . get (", "get($a, ", "Vox has no methods: `get(m, key)` gives an `Option`, `get(m, key, default)` the value or the default"),
    fix("$a . contains_key (", "contains($a, ", "Vox has no methods: `contains(m, key)`"),
    fix("$a . containsKey (", "contains($a, ", "Vox has no methods: `contains(m, key)`"),
    fix("$a . has (", "contains($a, ", "Vox has no methods: `contains(m, key)`"),
    say("$a . insert (", "Vox maps are values: `m = insert(m, key, value)` (a list grows with `xs = xs + [x]`)"),
    say("$a . set (", "Vox maps are values: `m = insert(m, key, value)`"),
    say("$a . remove (", "Vox maps are values: `m = remove(m, key)`"),
    say("$a . items (", "Vox has no tuples: `for k in keys(m) { … get(m, k, …) … }`"),
    say("$a . entries (", "Vox has no tuples: `for k in keys(m) { … get(m, k, …) … }`"),
    fix("HashMap : : new ( )", "[:]", "the empty Vox map is `[:]`"),
    fix("BTreeMap : : new ( )", "[:]", "the empty Vox map is `[:]`"),
    fix("dict ( )", "[:]", "the empty Vox map is `[:]`"),
    fix("new Map ( )", "[:]", "the empty Vox map is `[:]`"),
    fix("mutableMapOf ( )", "[:]", "the empty Vox map is `[:]`"),
    fix("mapOf ( )", "[:]", "the empty Vox map is `[:]`"),
    say("make ( map [", "the empty Vox map is `[:]`, a literal `[\"a\": 1]`"),
    say("$a [ $s ] =", "Vox maps are values: `m = insert(m, \"key\", value)`"),
    say("$a [ $s ]", "Vox has no indexing: `get(m, \"key\")` gives an `Option`, `get(m, \"key\", default)` the value or the default"),
    say("[ $a ]", "Vox has no indexing: `get(xs, i)` gives an `Option` (`first(xs)`, `last(xs)` too), or loop with `for`"),
    say("[ $n ]", "Vox has no indexing: `get(xs, i)` gives an `Option` (`first(xs)`, `last(xs)` too), or loop with `for`"),
    // Script input (docs/language.md, "Script input"): offered, not applied,
    // since each Vox builtin gives an `Option`/`Result` or drops the
    // program's own name where the other language did not.
    offer("open ( $s ) . read ( )", "read_text($s)", "Vox reads a text file with `read_text(path)`, a `Result[str]` (`@uses(fs)`)"),
    offer("std : : fs : : read_to_string (", "read_text(", "Vox reads a text file with `read_text(path)`, a `Result[str]` (`@uses(fs)`)"),
    offer("fs : : read_to_string (", "read_text(", "Vox reads a text file with `read_text(path)`, a `Result[str]` (`@uses(fs)`)"),
    offer("fs . readFileSync (", "read_text(", "Vox reads a text file with `read_text(path)`, a `Result[str]` (`@uses(fs)`)"),
    offer("sys . argv", "args()", "Vox's `args()` is the command-line arguments without the program's name (Python's `sys.argv[1:]`) (`@uses(env)`)"),
    offer("std : : env : : args ( )", "args()", "Vox's `args()` is the command-line arguments without the program's name (`std::env::args().skip(1)`) (`@uses(env)`)"),
    offer("env : : args ( )", "args()", "Vox's `args()` is the command-line arguments without the program's name (`std::env::args().skip(1)`) (`@uses(env)`)"),
    offer("process . argv", "args()", "Vox's `args()` is the command-line arguments without the program's name (Node's `process.argv.slice(2)`) (`@uses(env)`)"),
    offer("std : : env : : var (", "env(", "Vox reads an environment variable with `env(name)`, an `Option[str]` (`@uses(env)`)"),
    offer("env : : var (", "env(", "Vox reads an environment variable with `env(name)`, an `Option[str]` (`@uses(env)`)"),
    offer("os . getenv (", "env(", "Vox reads an environment variable with `env(name)`, an `Option[str]` (`@uses(env)`)"),
    offer("process . env . $T", "env(\"$T\")", "Vox reads an environment variable with `env(name)`, an `Option[str]` (`@uses(env)`)"),
    say("os . environ", "Vox reads an environment variable with `env(\"NAME\")`, an `Option[str]` (`@uses(env)`)"),
    // Dates (docs/language.md, "Dates"): offered where the Vox builtin
    // gives an `Option` or reads the clock in UTC; hints where the
    // arguments differ.
    offer("datetime . date . fromisoformat (", "parse_date(", "Vox reads a date from text with `parse_date(s)`, an `Option[Date]`"),
    offer("date . fromisoformat (", "parse_date(", "Vox reads a date from text with `parse_date(s)`, an `Option[Date]`"),
    offer("new Date ( $s )", "date($s)", "a Vox date is `date(\"2026-12-31\")` (checked when compiling); from text, `parse_date(s)` gives an `Option[Date]`"),
    offer("Date . parse (", "parse_date(", "Vox reads a date from text with `parse_date(s)`, an `Option[Date]`"),
    say("datetime . date (", "a Vox date is `date(\"2026-12-31\")`, its text in ISO 8601"),
    say("NaiveDate : : parse_from_str (", "Vox reads an ISO date (`YYYY-MM-DD`) with `parse_date(s)`, an `Option[Date]`"),
    say("NaiveDate : : from_ymd_opt (", "a Vox date is `date(\"2026-12-31\")`, its text in ISO 8601"),
    say("timedelta ( days =", "Vox moves a date with `add_days(d, n)` and measures with `days_between(a, b)`"),
    offer("date . today ( )", "today()", "Vox's `today()` is the current date in UTC (`@uses(clock)`, never in a test)"),
    offer("Local : : now ( )", "today()", "Vox's `today()` is the current date in UTC (`@uses(clock)`, never in a test)"),
    offer("Utc : : now ( )", "today()", "Vox's `today()` is the current date in UTC (`@uses(clock)`, never in a test)"),
    // Opening files (Python's PIL, Python, Rust, Node): Vox reads a file only
    // to hand it to a model (docs/language.md, "Images, documents and audio").
    fix("Image . open ( $s )", "image_file($s)", "a Vox image is `image_file(\"scan.png\")`, read when the call that sends it is made"),
    say("open (", "Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`"),
    say("fs : : read", "Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`"),
    say("readFileSync (", "Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`"),
    // Types and literals.
    say("dict", "Vox's map type is `map[str, T]`: the empty map is `[:]`, a literal `[\"a\": 1]`"),
    say("Map", "Vox's map type is `map[str, T]`: the empty map is `[:]`, a literal `[\"a\": 1]`"),
    say("HashMap", "Vox's map type is `map[str, T]`: the empty map is `[:]`, a literal `[\"a\": 1]`"),
    say("BTreeMap", "Vox's map type is `map[str, T]`: the empty map is `[:]`, a literal `[\"a\": 1]`"),
    say("abs (", "Vox has no `abs`: `if x < 0 { -x } else { x }`"),
    say("#", "Vox comments start with `//`"),
    say("'''", "Vox multi-line strings use double quotes: `\"\"\"` on its line, the text, `\"\"\"` at the indentation to remove"),
    say("'", "Vox strings use double quotes: \"text\""),
    say("`", "Vox strings use double quotes: \"text\"; an f-string interpolates: f\"n={n}\""),
];

/// A token in `toks` matches pattern word `p`; captures fill `caps`.
fn word_matches(toks: &Toks<'_>, i: usize, p: &str, caps: &mut Vec<(String, String)>) -> bool {
    let kind = toks.kind(i);
    let w = toks.word(i);
    let var = |c: &mut Vec<(String, String)>, name: &str| {
        let key = if c.iter().any(|(k, _)| k == name) {
            format!("{name}2")
        } else {
            name.to_string()
        };
        c.push((key, w.to_string()));
    };
    match p {
        "$a" if kind == T::Ident => {
            var(caps, "$a");
            true
        }
        "$T" if kind == T::TypeName => {
            var(caps, "$T");
            true
        }
        "$s" if kind == T::Str => {
            var(caps, "$s");
            true
        }
        "$n" if kind == T::Int => {
            var(caps, "$n");
            true
        }
        _ => kind != T::Newline && !p.starts_with('$') && w == p,
    }
}

/// Matches `slip` at token `start`; returns the last token and the captures.
fn matches_at(
    toks: &Toks<'_>,
    start: usize,
    slip: &Slip,
) -> Option<(usize, Vec<(String, String)>)> {
    let mut caps = Vec::new();
    let mut i = start;
    for p in slip.pattern.split(' ') {
        if i >= toks.toks.len() || !word_matches(toks, i, p, &mut caps) {
            return None;
        }
        i += 1;
    }
    Some((i - 1, caps))
}

/// Attaches the Vox spelling of a foreign slip to each error at or inside
/// it that has no machine-applicable fix (or only the lexer's blind `!` →
/// `not`, which a macro is not).
pub(crate) fn slip_fixes(all: &[Toks<'_>], diagnostics: &mut [Diagnostic]) {
    for d in diagnostics.iter_mut() {
        if !d.is_error() {
            continue;
        }
        let Some(toks) = all.get(d.span.file.0 as usize) else {
            continue;
        };
        // A character the lexer dropped (`?`, `#`, `'`) is no token.
        if d.code == crate::diagnostic::Code::UnexpectedChar {
            let written = toks.text.get(d.span.range()).unwrap_or("");
            if let Some(slip) = SLIPS.iter().find(|s| s.pattern == written) {
                if !d.hints.iter().any(|h| h == slip.say) {
                    d.hints.push(slip.say.to_string());
                }
                continue;
            }
        }
        let at = toks.toks.partition_point(|t| t.span.start < d.span.start);
        if at >= toks.toks.len() {
            continue;
        }
        // Slips that start up to a pattern's length before the error, or,
        // for a call of a method, inside it (`ys.unwrap(` is one error
        // spanning `ys.unwrap`).
        let inside = if d.code == crate::diagnostic::Code::NotCallable {
            toks.toks[at..]
                .iter()
                .take_while(|t| t.span.start < d.span.end)
                .count()
        } else {
            1
        };
        let found = SLIPS.iter().find_map(|slip| {
            let len = slip.pattern.split(' ').count();
            let before = (0..len).filter_map(|k| at.checked_sub(k));
            before.chain(at + 1..at + inside).find_map(|start| {
                matches_at(toks, start, slip).map(|(end, caps)| (slip, start, end, caps))
            })
        });
        let Some((slip, start, end, caps)) = found else {
            continue;
        };
        let blind_not = d.code == crate::diagnostic::Code::UnexpectedChar && toks.word(at) == "!";
        // A name's "did you mean" (`parseInt` → `print`) is a guess; an
        // offered slip knows what the name is.
        let guessed = !slip.sure
            && d.code == crate::diagnostic::Code::UnknownName
            && d.hints.iter().any(|h| h.starts_with("did you mean"));
        if guessed {
            d.hints.retain(|h| !h.starts_with("did you mean"));
            d.fixes.clear();
        }
        if d.fixes
            .iter()
            .any(|f| f.applicability == Applicability::MachineApplicable)
            && !blind_not
        {
            continue;
        }
        if slip.pattern.contains(" . ") {
            // The slip names the Vox spelling of this method: the parser's
            // general hint about methods goes.
            d.hints
                .retain(|h| !h.starts_with(crate::parser::NO_METHODS));
        }
        if !d.hints.iter().any(|h| h == slip.say) {
            d.hints.push(slip.say.to_string());
        }
        let Some(vox) = slip.vox else {
            if blind_not {
                d.fixes.clear();
            }
            continue;
        };
        let mut text = vox.to_string();
        // Longest keys first, so `$T2` is not read as `$T` then `2`.
        let mut caps = caps;
        caps.sort_by_key(|c| std::cmp::Reverse(c.0.len()));
        for (k, v) in &caps {
            text = text.replace(k.as_str(), v);
        }
        let span = toks.span(start).to(toks.span(end));
        let written = toks.text.get(span.range()).unwrap_or("");
        let mut edits = vec![Edit {
            span,
            replacement: text.clone(),
        }];
        // `xs.push(x)` → `xs = xs + [x]`: the call's `)` closes the list.
        if text.ends_with('[') && slip.pattern.ends_with('(') {
            let Some(close) = matching_paren(toks, end) else {
                continue;
            };
            edits.push(Edit {
                span: toks.span(close),
                replacement: "]".into(),
            });
        }
        let applicability = if slip.sure {
            d.fixes
                .retain(|f| f.applicability != Applicability::MachineApplicable);
            Applicability::MachineApplicable
        } else {
            Applicability::MaybeIncorrect
        };
        d.fixes.insert(
            0,
            Fix {
                message: format!("replace `{written}` with `{text}`"),
                edits,
                applicability,
            },
        );
    }
}

/// The `)` closing the `(` at token `open`, on the same line.
fn matching_paren(toks: &Toks<'_>, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in open..toks.toks.len() {
        match toks.kind(i) {
            T::LParen => depth += 1,
            T::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            T::Newline | T::Eof => return None,
            _ => {}
        }
    }
    None
}
