//! The slip corpus: code written the way Python, Rust, TypeScript/JavaScript,
//! Go, Kotlin or Swift write it. Each case is a whole module and either the
//! exact text `cargo vox fix` must turn it into (which then checks clean), or
//! the exact hint an error must carry, naming what Vox has instead.

use vox_codegen::fix::{fix_module, FixFile};
use vox_codegen::{check, SourceFile, SourceMap};

enum Want {
    /// The fixed body (the module is `fn f(…) { BODY }` around it).
    Fixed(&'static str),
    /// A hint some error carries.
    Hint(&'static str),
}
use Want::*;

const HEAD: &str = "type Line {\n    price: float\n}\n\ntype Currency =\n    | USD\n    | EUR\n    | Coin(value: int)\n\nfn f(xs: list[int], s0: str, n: int, line: Line) to int {\n    let mut s = 0\n    let mut ys = [1]\n    let ws = [\"a\"]\n";
const TAIL: &str =
    "    print(s0)\n    print(str(line.price) + str(ys) + join(ws, \"\"))\n    return s + n + len(xs)\n}\n";

fn module(body: &str) -> String {
    format!("{HEAD}{body}{TAIL}")
}

/// (language, slip, body as written, what Vox must say or do).
const CASES: &[(&str, &str, &str, Want)] = &[
    ("Python", "+=", "    s += 1\n", Fixed("    s = s + 1\n")),
    ("Rust", "-=", "    s -= 2\n", Fixed("    s = s - 2\n")),
    ("Go", "*=", "    s *= 3\n", Fixed("    s = s * 3\n")),
    ("Kotlin", "/=", "    s /= 4\n", Fixed("    s = s / 4\n")),
    ("Swift", "%=", "    s %= 5\n", Fixed("    s = s % 5\n")),
    ("TypeScript", "++", "    s++\n", Fixed("    s = s + 1\n")),
    ("Kotlin", "-- before a line", "    s--\n    s = -n\n", Fixed("    s = s - 1\n    s = -n\n")),
    ("Swift", "++ before a line", "    s++\n    print(n)\n", Fixed("    s = s + 1\n    print(n)\n")),
    ("Python", "Decimal return", "    let d: Decimal = 12.50\n    print(d)\n", Fixed("    let d: Decimal = decimal(\"12.50\")\n    print(d)\n")),
    ("Python", "Decimal times int", "    let d = decimal(\"2.5\")\n    print(d * 2)\n", Fixed("    let d = decimal(\"2.5\")\n    print(d * decimal(2))\n")),
    ("Python", "Decimal plus float", "    let d = decimal(\"2.5\")\n    print(0.5 + d)\n", Fixed("    let d = decimal(\"2.5\")\n    print(decimal(\"0.5\") + d)\n")),
    ("Rust", "assignment as a match arm", "    match n {\n        1 => s = 2\n        _ => s = 3\n    }\n", Fixed("    match n {\n        1 => { s = 2 }\n        _ => { s = 3 }\n    }\n")),
    ("Rust", "struct literal of a variant", "    let c = Coin { value: 2 }\n    print(c)\n", Fixed("    let c = Coin(value: 2)\n    print(c)\n")),
    ("Python", "PIL's Image.open", "    let scan = Image.open(\"scan.png\")\n    print(scan)\n", Fixed("    let scan = image_file(\"scan.png\")\n    print(scan)\n")),
    ("Python", "open(…, \"rb\")", "    let pdf = open(\"invoice.pdf\", \"rb\")\n", Hint("Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`")),
    ("Rust", "fs::read", "    let bytes = fs::read(\"scan.png\")\n", Hint("Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`")),
    ("JavaScript", "readFileSync", "    let bytes = readFileSync(\"scan.png\")\n", Hint("Vox reads a text file with `read_text(path)` (`@uses(fs)`); a file for a model is `image_file(\"…\")`, `document_file(\"…\")` or `audio_file(\"…\")`")),
    ("Python", "os.environ[…]", "    let home = os.environ[\"HOME\"]\n", Hint("Vox reads an environment variable with `env(\"NAME\")`, an `Option[str]` (`@uses(env)`)")),
    ("Rust", "use", "    use std::fmt\n", Hint("Vox has no imports: every `.vox` file of a package is one module")),
    ("TypeScript", "===", "    if n === 1 {\n        s = 1\n    }\n", Fixed("    if n is 1 {\n        s = 1\n    }\n")),
    ("JavaScript", "!==", "    if n !== 1 {\n        s = 1\n    }\n", Fixed("    if n isnt 1 {\n        s = 1\n    }\n")),
    ("Python", "**", "    s = n ** 2\n", Hint("Vox has no power operator: multiply (`x * x`)")),
    ("TypeScript", "const", "    const k = 2\n    s = k\n", Fixed("    let k = 2\n    s = k\n")),
    ("Kotlin", "val", "    val k = 2\n    s = k\n", Fixed("    let k = 2\n    s = k\n")),
    ("Swift", "var", "    var k = 2\n    k = 3\n    s = k\n", Fixed("    let mut k = 2\n    k = 3\n    s = k\n")),
    ("Go", ":=", "    k := 2\n    s = k\n", Fixed("    let k = 2\n    s = k\n")),
    ("Rust", "static", "    static K = 2\n", Hint("Vox has no statics: write a function that returns the value")),
    ("Rust", "impl", "    impl Line {}\n", Hint("Vox has no methods: write a function that takes the value as its first parameter")),
    ("Swift", "async", "    async s = 1\n", Hint("Vox functions that call a model are marked `@uses(net)`; there is no `async`")),
    ("TypeScript", "await", "    s = await n\n", Hint("Vox has no `await`: call the function; `@uses(net)` marks the caller")),
    ("Python", "lambda", "    let g = lambda n\n", Hint("a lambda is written `fn(x) => …`, and passed to a builtin such as `map` or `filter`")),
    ("Python", "lambda x:", "    ys = filter(xs, lambda x: x > n)\n", Fixed("    ys = filter(xs, fn(x) => x > n)\n")),
    ("Rust", "|x|", "    ys = map(xs, |x| x * 2)\n", Fixed("    ys = map(xs, fn(x) => x * 2)\n")),
    ("Rust", "|x| { … }", "    ys = map(xs, |x| { x * 2 })\n", Fixed("    ys = map(xs, fn(x) { x * 2 })\n")),
    ("TypeScript", "x => …", "    ys = filter(xs, x => x > n)\n", Fixed("    ys = filter(xs, fn(x) => x > n)\n")),
    ("TypeScript", "(x) => { … }", "    ys = filter(xs, (x) => { return x > n })\n", Fixed("    ys = filter(xs, fn(x) { return x > n })\n")),
    ("TypeScript", "xs.filter(x => …)", "    ys = xs.filter(x => x > n)\n", Fixed("    ys = filter(xs, fn(x) => x > n)\n")),
    ("TypeScript", "xs.map(x => …)", "    ys = xs.map(x => x + 1)\n", Fixed("    ys = map(xs, fn(x) => x + 1)\n")),
    ("TypeScript", "xs.some(…)", "    print(xs.some(x => x > n))\n", Fixed("    print(any(xs, fn(x) => x > n))\n")),
    ("TypeScript", "xs.every(…)", "    print(xs.every(x => x > n))\n", Fixed("    print(all(xs, fn(x) => x > n))\n")),
    ("Rust", "xs.iter().any(|x| …)", "    print(xs.any(|x| x > n))\n", Fixed("    print(any(xs, fn(x) => x > n))\n")),
    ("Python", "sorted(xs, key=…)", "    ys = sorted(xs, key=lambda x: -x)\n", Fixed("    ys = sort_by(xs, fn(x) => -x)\n")),
    ("Rust", "sort_by_key", "    ys.sort_by_key(|x| -x)\n", Hint("Vox has no methods: `sort_by(xs, fn(x) => key)` gives a sorted copy")),
    ("Python", "import", "    import json\n", Hint("Vox has no imports: every `.vox` file of a package is one module")),
    ("Rust", "println!", "    println!(\"hi\")\n", Fixed("    print(\"hi\")\n")),
    ("Rust", "print!", "    print!(\"hi\")\n", Fixed("    print(\"hi\")\n")),
    ("Rust", "assert!", "    assert!(n > 0)\n", Fixed("    assert(n > 0)\n")),
    ("Rust", "assert_eq!", "    assert_eq!(n, 1)\n", Fixed("    assert_eq(n, 1)\n")),
    ("Rust", "vec!", "    ys = vec![1, 2]\n", Fixed("    ys = [1, 2]\n")),
    ("Rust", "format!", "    s0 = format!(\"{}\", n)\n", Hint("Vox has no `format!`: concatenate with `+` and `str(…)`")),
    ("Rust", "panic!", "    panic!(\"no\")\n", Hint("Vox has no `panic!`: return a `Result` (`Error(\"…\")`) instead")),
    ("Rust", "todo!", "    todo!()\n", Hint("Vox has no `todo!`: return a value")),
    ("JavaScript", "console.log", "    console.log(n)\n", Fixed("    print(n)\n")),
    ("Go", "fmt.Println", "    fmt.Println(n)\n", Fixed("    print(n)\n")),
    ("Kotlin", "println", "    println(n)\n", Fixed("    print(n)\n")),
    ("Rust", "Type::Variant", "    let c = Currency::USD\n    print(c)\n", Fixed("    let c = USD\n    print(c)\n")),
    ("Rust", "Err", "    let r: Result[int] = Err(\"no\")\n    print(r)\n", Fixed("    let r: Result[int] = Error(\"no\")\n    print(r)\n")),
    ("TypeScript", "undefined", "    let o: Option[int] = undefined\n    print(o)\n", Fixed("    let o: Option[int] = None\n    print(o)\n")),
    ("Rust", "loop", "    loop {\n        s = s + 1\n        break\n    }\n", Fixed("    while true {\n        s = s + 1\n        break\n    }\n")),
    ("Rust", "..", "    for i in 0..n {\n        s = s + i\n    }\n", Hint("Vox writes ranges as `range(a, b)` (`a` up to, not including, `b`): `for i in range(0, n)`")),
    ("TypeScript", "for … of", "    for x of xs {\n        s = s + x\n    }\n", Fixed("    for x in xs {\n        s = s + x\n    }\n")),
    ("JavaScript", "for (…)", "    for (x in xs) {\n        s = s + x\n    }\n", Hint("Vox loops are `for x in xs`, without parentheses")),
    ("Swift", "foreach", "    foreach x in xs {\n        s = x\n    }\n", Hint("Vox loops are `for x in xs`")),
    ("Go", "switch", "    switch n {\n        s = 1\n    }\n", Hint("Vox matches values with `match x { pattern => value }`")),
    ("Kotlin", "when", "    when (n) {\n        s = 1\n    }\n", Hint("Vox matches values with `match x { pattern => value }`")),
    ("Kotlin", "->", "    s = match n {\n        1 -> 2\n        _ => 3\n    }\n", Fixed("    s = match n {\n        1 => 2\n        _ => 3\n    }\n")),
    ("Rust", "?", "    s = n?\n", Hint("Vox has no `?` or ternary: write `match` on the `Option`/`Result`, or `if c { a } else { b }`")),
    ("TypeScript", "ternary", "    s = n > 0 ? 1 : 2\n", Hint("Vox has no `?` or ternary: write `match` on the `Option`/`Result`, or `if c { a } else { b }`")),
    ("Python", "x if c else y", "    s = n if n > 0 else 0\n", Hint("Vox has no `x if c else y`: write `if c { x } else { y }`")),
    ("Rust", ".push", "    ys.push(n)\n", Fixed("    ys = ys + [n]\n")),
    ("Python", ".append", "    ys.append(n)\n", Fixed("    ys = ys + [n]\n")),
    ("Rust", ".unwrap", "    s = ys.unwrap()\n", Hint("Vox has no `unwrap`: `match` on the `Option`/`Result` (`Some(v) => …`)")),
    ("Rust", ".expect", "    s = ys.expect(\"x\")\n", Hint("Vox has no `expect`: `match` on the `Option`/`Result`")),
    ("TypeScript", ".map", "    ys = xs.map(fn(x) => x + n)\n", Fixed("    ys = map(xs, fn(x) => x + n)\n")),
    ("TypeScript", ".filter", "    ys = xs.filter(fn(x) => x > n)\n", Fixed("    ys = filter(xs, fn(x) => x > n)\n")),
    ("TypeScript", ".toLowerCase", "    print(s0.toLowerCase())\n", Fixed("    print(lower(s0))\n")),
    ("Python", ".upper", "    print(s0.upper())\n", Fixed("    print(upper(s0))\n")),
    ("Python", ".strip", "    print(s0.strip())\n", Fixed("    print(trim(s0))\n")),
    ("Python", ".split", "    print(s0.split(\",\"))\n", Fixed("    print(split(s0, \",\"))\n")),
    ("Python", "str.join", "    print(\", \".join(ws))\n", Fixed("    print(join(ws, \", \"))\n")),
    ("TypeScript", ".includes", "    print(xs.includes(n))\n", Fixed("    print(contains(xs, n))\n")),
    ("Python", ".startswith", "    print(s0.startswith(\"a\"))\n", Fixed("    print(starts_with(s0, \"a\"))\n")),
    ("Rust", ".sort", "    ys.sort()\n", Fixed("    ys = sort(ys)\n")),
    ("TypeScript", ".toFixed", "    print(line.price.toFixed(2))\n", Hint("Vox has no methods: `fixed(x, 2)` writes a number with 2 decimals")),
    ("Python", "xs[0]", "    s = xs[0]\n", Hint("Vox has no indexing: `get(xs, i)` gives an `Option` (`first(xs)`, `last(xs)` too), or loop with `for`")),
    ("Python", "dict", "    let d = dict()\n    print(len(d))\n", Fixed("    let d = [:]\n    print(len(d))\n")),
    ("Kotlin", "Map", "    let d: Map<String, Int> = mapOf()\n    print(len(d))\n", Fixed("    let d: map[str, int] = [:]\n    print(len(d))\n")),
    ("Python", "{}", "    let d: dict[str, int] = {}\n    print(len(d))\n", Fixed("    let d: map[str, int] = [:]\n    print(len(d))\n")),
    ("Python", "{k: v}", "    let d = {\"a\": 1, \"b\": n}\n    s = s + len(d)\n", Fixed("    let d = [\"a\": 1, \"b\": n]\n    s = s + len(d)\n")),
    ("Rust", "HashMap::new()", "    let d: HashMap<String, i64> = HashMap::new()\n    print(len(d))\n", Fixed("    let d: map[str, int] = [:]\n    print(len(d))\n")),
    ("Swift", "Dictionary", "    let d: Dictionary[str, int] = [:]\n    print(len(d))\n", Fixed("    let d: map[str, int] = [:]\n    print(len(d))\n")),
    ("Python", ".keys()", "    let d = [\"a\": 1]\n    for k in d.keys() {\n        print(k)\n    }\n", Fixed("    let d = [\"a\": 1]\n    for k in keys(d) {\n        print(k)\n    }\n")),
    ("Python", ".get(k, default)", "    let d = [\"a\": 1]\n    s = s + d.get(\"a\", 0)\n", Fixed("    let d = [\"a\": 1]\n    s = s + get(d, \"a\", 0)\n")),
    ("TypeScript", ".has(k)", "    let d = [\"a\": 1]\n    print(d.has(\"a\"))\n", Fixed("    let d = [\"a\": 1]\n    print(contains(d, \"a\"))\n")),
    ("Python", "for k in d", "    let d = [\"a\": 1]\n    for k in d {\n        print(k)\n    }\n", Fixed("    let d = [\"a\": 1]\n    for k in keys(d) {\n        print(k)\n    }\n")),
    ("Python", "d[k] = v", "    let mut d = [\"a\": 1]\n    d[\"b\"] = 2\n", Hint("Vox maps are values: `m = insert(m, \"key\", value)`")),
    ("Python", "d[k]", "    let d = [\"a\": 1]\n    s = d[\"a\"]\n", Hint("Vox has no indexing: `get(m, \"key\")` gives an `Option`, `get(m, \"key\", default)` the value or the default")),
    ("Rust", ".insert(k, v)", "    let mut d = [\"a\": 1]\n    d.insert(\"b\", 2)\n", Hint("Vox maps are values: `m = insert(m, key, value)` (a list grows with `xs = xs + [x]`)")),
    ("Python", ".items()", "    let d = [\"a\": 1]\n    for k in d.items() {\n        print(k)\n    }\n", Hint("Vox has no tuples: `for k in keys(m) { … get(m, k, …) … }`")),
    ("Go", "make(map…)", "    let d = make(map[str, int])\n", Hint("the empty Vox map is `[:]`, a literal `[\"a\": 1]`")),
    ("Python", "abs", "    s = abs(n)\n", Hint("Vox has no `abs`: `if x < 0 { -x } else { x }`")),
    ("JavaScript", "template string", "    print(`n=${n}`)\n", Hint("Vox strings use double quotes: \"text\"; an f-string interpolates: f\"n={n}\"")),
    ("Python", "# comment", "    # note\n", Hint("Vox comments start with `//`")),
    ("JavaScript", "'text'", "    s0 = 'hi'\n", Hint("Vox strings use double quotes: \"text\"")),
    ("Python", "'''…'''", "    s0 = '''hi'''\n", Hint("Vox multi-line strings use double quotes: `\"\"\"` on its line, the text, `\"\"\"` at the indentation to remove")),
    ("Python", "datetime.date(…)", "    let d = datetime.date(2026, 12, 31)\n", Hint("a Vox date is `date(\"2026-12-31\")`, its text in ISO 8601")),
    ("Rust", "NaiveDate::parse_from_str", "    let d = NaiveDate::parse_from_str(s0, \"%Y-%m-%d\")\n", Hint("Vox reads an ISO date (`YYYY-MM-DD`) with `parse_date(s)`, an `Option[Date]`")),
    ("Python", "timedelta", "    let d = timedelta(days = 3)\n", Hint("Vox moves a date with `add_days(d, n)` and measures with `days_between(a, b)`")),
    ("TypeScript", "template", "    s0 = `hi`\n", Hint("Vox strings use double quotes: \"text\"; an f-string interpolates: f\"n={n}\"")),
];

fn checked(text: &str) -> vox_codegen::Checked {
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("case.vox", text));
    check(sources)
}

#[test]
fn every_slip_gets_the_vox_spelling() {
    assert!(CASES.len() >= 60, "the corpus has {} slips", CASES.len());
    let mut langs: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    langs.sort_unstable();
    langs.dedup();
    assert!(langs.len() >= 6, "{langs:?}");
    let mut failures = Vec::new();
    for (lang, slip, body, want) in CASES {
        let text = module(body);
        let before = checked(&text);
        if !before.has_errors() {
            failures.push(format!("{lang} `{slip}`: checks clean as written"));
            continue;
        }
        match want {
            Fixed(fixed) => {
                let out = fix_module(&[FixFile {
                    name: "case.vox".into(),
                    text: text.clone(),
                    editable: true,
                }]);
                let expected = module(fixed);
                if out.texts[0] != expected {
                    failures.push(format!(
                        "{lang} `{slip}`: fixed to\n{}\nexpected\n{expected}",
                        out.texts[0]
                    ));
                } else if !out.checked.diagnostics().is_empty() {
                    failures.push(format!(
                        "{lang} `{slip}`: the fixed module does not check clean: {:?}",
                        out.checked.diagnostics()
                    ));
                }
            }
            Hint(hint) => {
                let has = before
                    .diagnostics()
                    .iter()
                    .any(|d| d.is_error() && d.hints.iter().any(|h| h == hint));
                if !has {
                    let got: Vec<String> = before
                        .diagnostics()
                        .iter()
                        .map(|d| format!("{}: {} {:?}", d.code.as_str(), d.message, d.hints))
                        .collect();
                    failures.push(format!("{lang} `{slip}`: no hint {hint:?}; got {got:#?}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} slips failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A method call written the way another language writes it, for methods
/// of lists, strings, maps and records across languages, known to the
/// slips table or not: the error is reported once (not also as a field
/// read), and every function a hint or fix names in code (`name(`) is one
/// Vox has — the module's own, or a builtin (a call of it alone is not
/// `vox/name/unknown`).
#[test]
fn method_calls_get_one_error_naming_only_functions_that_exist() {
    const RECEIVERS: &[&str] = &["xs", "s0", "line", "m"];
    const METHODS: &[(&str, &str)] = &[
        ("len", ""),
        ("length", ""),
        ("size", ""),
        ("count", ""),
        ("isEmpty", ""),
        ("is_empty", ""),
        ("contains_key", "\"a\""),
        ("containsKey", "\"a\""),
        ("has", "\"a\""),
        ("get", "\"a\""),
        ("getOrDefault", "\"a\", 0"),
        ("keys", ""),
        ("values", ""),
        ("items", ""),
        ("to_string", ""),
        ("toString", ""),
        ("clone", ""),
        ("iter", ""),
        ("sum", ""),
        ("max", ""),
        ("first", ""),
        ("last", ""),
        ("reverse", ""),
        ("sorted", ""),
        ("trim", ""),
        ("replace", "\"a\", \"b\""),
        ("find", "\"a\""),
        ("indexOf", "\"a\""),
        ("frobnicate", "1"),
        ("price", ""),
    ];
    let has_function = |name: &str| {
        let probe = checked(&format!("fn main() {{\n    {name}()\n}}\n"));
        !probe
            .diagnostics()
            .iter()
            .any(|d| d.code.as_str() == "vox/name/unknown")
    };
    let mut failures = Vec::new();
    for receiver in RECEIVERS {
        for (method, args) in METHODS {
            let text = format!(
                "type Line {{\n    price: float\n}}\n\nfn f(xs: list[int], s0: str, line: Line, m: map[str, int]) {{\n    print({receiver}.{method}({args}))\n}}\n"
            );
            let c = checked(&text);
            let errors: Vec<_> = c.diagnostics().iter().filter(|d| d.is_error()).collect();
            if errors.len() != 1 {
                failures.push(format!(
                    "`{receiver}.{method}({args})`: {} errors: {:?}",
                    errors.len(),
                    errors.iter().map(|d| &d.message).collect::<Vec<_>>()
                ));
            }
            for d in errors {
                let fixes = d
                    .fixes
                    .iter()
                    .flat_map(|f| f.edits.iter().map(|e| &e.replacement));
                for text in d.hints.iter().chain(fixes) {
                    for named in called_names(text) {
                        if named != "f" && !has_function(&named) {
                            failures.push(format!(
                                "`{receiver}.{method}({args})`: `{text}` names `{named}(`, which Vox does not have"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The names written as calls (`name(`) in a hint or a fix.
fn called_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c != '(' {
            continue;
        }
        let start = chars[..i]
            .iter()
            .rposition(|c| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |p| p + 1);
        let name: String = chars[start..i].iter().collect();
        let after_dot = start > 0 && chars[start - 1] == '.';
        if !name.is_empty() && !after_dot && name.chars().next().is_some_and(|c| c.is_lowercase()) {
            names.push(name);
        }
    }
    names
}

/// Text read as a number the way other languages read it: the Vox
/// spelling, a `parse_*` builtin, gives an `Option` where theirs gave the
/// number, so it is offered (`maybe-incorrect`), never applied.
#[test]
fn reading_a_number_from_text_offers_parse_builtins() {
    // (language, body, the offered replacement, a hint's start).
    const OFFERS: &[(&str, &str, &str, &str)] = &[
        (
            "Rust",
            "    print(s0.parse::<i64>())\n",
            "parse_int(s0)",
            "Vox reads an `int` from text with `parse_int(s)`",
        ),
        (
            "Rust",
            "    print(s0.parse::<f64>())\n",
            "parse_float(s0)",
            "Vox reads a `float` from text with `parse_float(s)`",
        ),
        (
            "JavaScript",
            "    print(parseInt(s0))\n",
            "parse_int(s0)",
            "Vox reads an `int` from text with `parse_int(s)`",
        ),
        (
            "JavaScript",
            "    print(parseFloat(s0))\n",
            "parse_float(s0)",
            "Vox reads a `float` from text with `parse_float(s)`",
        ),
        (
            "TypeScript",
            "    print(Number(s0))\n",
            "parse_float(s0)",
            "Vox reads a number from text with `parse_float(s)` or `parse_int(s)`",
        ),
        (
            "Kotlin",
            "    print(s0.toInt())\n",
            "parse_int(s0)",
            "Vox reads an `int` from text with `parse_int(s)`",
        ),
        (
            "Kotlin",
            "    print(s0.toIntOrNull())\n",
            "parse_int(s0)",
            "Vox reads an `int` from text with `parse_int(s)`",
        ),
        (
            "Kotlin",
            "    print(s0.toDouble())\n",
            "parse_float(s0)",
            "Vox reads a `float` from text with `parse_float(s)`",
        ),
        (
            "Go",
            "    print(strconv.Atoi(s0))\n",
            "parse_int(s0)",
            "Vox reads an `int` from text with `parse_int(s)`",
        ),
        (
            "Python",
            "    print(open(\"notes.txt\").read())\n",
            "read_text(\"notes.txt\")",
            "Vox reads a text file with `read_text(path)`",
        ),
        (
            "Rust",
            "    print(std::fs::read_to_string(s0))\n",
            "read_text(",
            "Vox reads a text file with `read_text(path)`",
        ),
        (
            "JavaScript",
            "    print(fs.readFileSync(s0, \"utf8\"))\n",
            "read_text(",
            "Vox reads a text file with `read_text(path)`",
        ),
        (
            "Python",
            "    print(sys.argv)\n",
            "args()",
            "Vox's `args()` is the command-line arguments",
        ),
        (
            "Rust",
            "    print(std::env::args())\n",
            "args()",
            "Vox's `args()` is the command-line arguments",
        ),
        (
            "JavaScript",
            "    print(process.argv)\n",
            "args()",
            "Vox's `args()` is the command-line arguments",
        ),
        (
            "Rust",
            "    print(std::env::var(\"HOME\"))\n",
            "env(",
            "Vox reads an environment variable with `env(name)`",
        ),
        (
            "Python",
            "    print(os.getenv(\"HOME\"))\n",
            "env(",
            "Vox reads an environment variable with `env(name)`",
        ),
        (
            "Python",
            "    print(os.environ.get(\"HOME\"))\n",
            "env(",
            "Vox reads an environment variable with `env(name)`",
        ),
        (
            "JavaScript",
            "    print(process.env.HOME)\n",
            "env(\"HOME\")",
            "Vox reads an environment variable with `env(name)`",
        ),
        (
            "Python",
            "    print(date.fromisoformat(s0))\n",
            "parse_date(",
            "Vox reads a date from text with `parse_date(s)`",
        ),
        (
            "JavaScript",
            "    print(new Date(\"2026-12-31\"))\n",
            "date(\"2026-12-31\")",
            "a Vox date is `date(\"2026-12-31\")`",
        ),
        (
            "JavaScript",
            "    print(Date.parse(s0))\n",
            "parse_date(",
            "Vox reads a date from text with `parse_date(s)`",
        ),
        (
            "Python",
            "    print(date.today())\n",
            "today()",
            "Vox's `today()` is the current date in UTC",
        ),
        (
            "Rust",
            "    print(Utc::now())\n",
            "today()",
            "Vox's `today()` is the current date in UTC",
        ),
        (
            "Python",
            "    print(int(s0))\n",
            "parse_int",
            "`int` converts numbers; to read one from text, `parse_int(s)`",
        ),
        (
            "Python",
            "    print(float(s0))\n",
            "parse_float",
            "`float` converts numbers; to read one from text, `parse_float(s)`",
        ),
    ];
    let mut failures = Vec::new();
    for (lang, body, replacement, hint) in OFFERS {
        let text = module(body);
        let c = checked(&text);
        let found = c.diagnostics().iter().filter(|d| d.is_error()).find(|d| {
            d.hints.iter().any(|h| h.starts_with(hint))
                && d.fixes.iter().any(|f| {
                    f.applicability == vox_codegen::diagnostic::Applicability::MaybeIncorrect
                        && f.edits.iter().any(|e| e.replacement == *replacement)
                })
        });
        if found.is_none() {
            failures.push(format!(
                "{lang} `{}`: no offer of `{replacement}` with hint {hint:?}; got {:#?}",
                body.trim(),
                c.diagnostics()
            ));
        }
        // Nothing else is applied in its place: `cargo vox fix` leaves it.
        let out = fix_module(&[FixFile {
            name: "slip.vox".into(),
            text: text.clone(),
            editable: true,
        }]);
        if out.texts[0] != text {
            failures.push(format!(
                "{lang} `{}`: applied: {}",
                body.trim(),
                out.texts[0]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
