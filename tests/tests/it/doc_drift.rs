//! Facts the docs state that the code decides (same spirit as
//! `doc_citations`): the subcommands `cargo vox --help` names, the envelope
//! `command` values README lists, the contract version docs/runtime.md
//! shows, which slips docs/diagnostics.md says have no Vox spelling (against
//! the slips table and what Vox has), and the argument types the docs say
//! each builtin takes (against the checker's table). Each is read from the
//! code, and the test fails when a doc disagrees.

use std::time::Duration;

use vox_e2e::workspace_root;

/// `cargo vox --help`: its first line, and the names under `Commands:`.
fn help() -> (String, Vec<String>) {
    let run = vox_e2e::run(
        std::process::Command::new(vox_e2e::cargo_vox_bin()).arg("--help"),
        Duration::from_secs(60),
    );
    run.assert_success();
    let about = run.stdout.lines().next().unwrap_or_default().to_string();
    let commands = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    (about, commands)
}

fn subcommands() -> Vec<String> {
    help().1
}

#[test]
fn the_help_summary_names_every_subcommand() {
    let (about, commands) = help();
    assert!(
        commands.len() >= 10,
        "commands read from --help: {commands:?}"
    );
    let listed: Vec<&str> = about
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(listed, commands, "cargo vox --help's summary: {about:?}");
}

#[test]
fn readme_lists_every_envelope_command() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `command` |"))
        .expect("README's envelope table has a `command` row");
    // `doctor` prints its own report and `lsp` speaks LSP: no envelopes.
    for name in subcommands() {
        if name == "doctor" || name == "lsp" {
            continue;
        }
        assert!(
            row.contains(&format!("`{name}`")),
            "README's `command` row lacks `{name}`: {row}"
        );
    }
}

#[test]
fn docs_show_the_current_contract_version() {
    let text =
        std::fs::read_to_string(workspace_root().join("docs/runtime.md")).expect("docs/runtime.md");
    let want = format!("assert_contract({})", vox_runtime::CONTRACT_VERSION);
    let mut found = 0;
    for (at, _) in text.match_indices("assert_contract(") {
        found += 1;
        assert!(
            text[at..].starts_with(&want),
            "docs/runtime.md shows {}, the contract is {want}",
            &text[at..at + 20]
        );
    }
    assert!(found > 0, "docs/runtime.md no longer shows assert_contract");
}

fn read_doc(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Why Vox has `word` (a keyword, builtin function or type, or what the
/// lexer reads, such as an f-string), if it does.
fn vox_has(word: &str) -> Option<&'static str> {
    use vox_codegen::facts;
    if facts::is_keyword(word) {
        Some("a Vox keyword")
    } else if facts::builtins().contains(&word) {
        Some("a Vox builtin")
    } else if facts::builtin_types().contains(&word) {
        Some("a Vox type")
    } else if facts::literals().contains(&word) {
        Some("read by the Vox lexer")
    } else {
        None
    }
}

/// A prose word in the singular: `lambdas` → `lambda`, `ternaries` → `ternary`.
fn singular(word: &str) -> String {
    let w = word.trim().to_lowercase();
    if let Some(stem) = w.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = w.strip_suffix('s') {
        stem.to_string()
    } else {
        w
    }
}

/// The text between backticks in `item`, if any.
fn code_of(item: &str) -> Option<&str> {
    let start = item.find('`')? + 1;
    let len = item[start..].find('`')?;
    Some(&item[start..start + len])
}

/// Splits at `sep` outside backticks.
fn split_outside_code<'a>(text: &'a str, sep: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let (mut from, mut in_code) = (0, false);
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with('`') {
            in_code = !in_code;
        } else if !in_code && text[i..].starts_with(sep) {
            out.push(text[from..i].trim());
            from = i + sep.len();
            i = from;
            continue;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    out.push(text[from..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// Source text as the slips table's patterns see it: names, string
/// literals, integers, and single other characters.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            i = (i + 1).min(chars.len());
        } else {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

fn pattern_word_matches(p: &str, tok: &str) -> bool {
    let first = tok.chars().next().unwrap_or(' ');
    match p {
        "$a" => first.is_lowercase() || (first == '_' && tok.len() > 1),
        "$T" => first.is_uppercase(),
        "$s" => first == '"',
        "$n" => first.is_ascii_digit(),
        _ => p == tok,
    }
}

/// The first row of the slips table matching somewhere in `code`.
fn slip_for(code: &str) -> Option<vox_codegen::facts::SlipRow> {
    let toks = tokens(code);
    vox_codegen::facts::slips().into_iter().find(|row| {
        let pat: Vec<&str> = row.pattern.split(' ').collect();
        toks.windows(pat.len())
            .any(|w| pat.iter().zip(w).all(|(p, t)| pattern_word_matches(p, t)))
    })
}

/// The first name in `code` (`range` of `range(…)`, `unwrap` of `.unwrap()`).
fn leading_name(code: &str) -> Option<String> {
    tokens(code)
        .into_iter()
        .find(|t| t.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}

/// docs/diagnostics.md's "a slip with no Vox spelling (…)" row: the
/// constructs it lists, and those its note says "are Vox now".
fn no_vox_spelling_row() -> (Vec<String>, Vec<String>) {
    let doc = read_doc("docs/diagnostics.md");
    let prefix = "| a slip with no Vox spelling (";
    let line = doc
        .lines()
        .find(|l| l.starts_with(prefix))
        .expect("docs/diagnostics.md has the row `a slip with no Vox spelling (…)`");
    let inner = &line[prefix.len()..];
    let inner = &inner[..inner.find(") |").expect("the row's list ends with `) |`")];
    let mut parts = split_outside_code(inner, ";").into_iter();
    let listed = split_outside_code(parts.next().unwrap_or_default(), ",")
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut vox_now = Vec::new();
    for note in parts {
        let names = note
            .strip_suffix("are Vox now")
            .unwrap_or_else(|| panic!("docs/diagnostics.md's no-Vox-spelling row: a note other than `… are Vox now`: {note:?}"));
        for part in split_outside_code(names, ",") {
            vox_now.extend(
                split_outside_code(part, " and ")
                    .into_iter()
                    .map(str::to_string),
            );
        }
    }
    (listed, vox_now)
}

#[test]
fn slips_docs_call_foreign_lack_a_vox_spelling() {
    let (listed, vox_now) = no_vox_spelling_row();
    assert!(
        listed.len() >= 5,
        "constructs read from the row: {listed:?}"
    );
    let slips = vox_codegen::facts::slips();
    let mut problems = Vec::new();
    for item in &listed {
        match code_of(item) {
            Some(code) => {
                if let Some(why) = leading_name(code).and_then(|n| vox_has(&n).map(|w| (n, w))) {
                    problems.push(format!("`{code}`: `{}` is {}", why.0, why.1));
                }
                match slip_for(code) {
                    None => {
                        problems.push(format!("`{code}`: no row of the slips table matches it"))
                    }
                    Some(row) => {
                        if let Some(fix) = row.fix {
                            problems.push(format!(
                                "`{code}`: the slips table fixes it (`{}` → `{fix}`)",
                                row.pattern
                            ))
                        }
                    }
                }
            }
            None => {
                let word = singular(item);
                if let Some(why) = vox_has(&word) {
                    problems.push(format!("{item}: `{word}` is {why}"));
                }
                let named = slips.iter().any(|row| {
                    let hint = row.hint.to_lowercase().replace('`', "");
                    row.fix.is_none() && hint.contains("has no") && hint.contains(&word)
                });
                if !named {
                    problems.push(format!(
                        "{item}: no hint-only row of the slips table says Vox has no {word}"
                    ));
                }
            }
        }
    }
    for item in &vox_now {
        let word = code_of(item).map_or_else(|| singular(item), str::to_string);
        if vox_has(&word).is_none() {
            problems.push(format!(
                "the row's note says {item} is Vox now; the code has no keyword, builtin, type or literal `{word}`"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/diagnostics.md (generated from vox-codegen/tests/it/docs_fixes.md), \
         \"a slip with no Vox spelling\":\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn hint_only_slips_are_for_what_vox_lacks() {
    let (_, vox_now) = no_vox_spelling_row();
    let mut problems = Vec::new();
    for row in vox_codegen::facts::slips() {
        if row.fix.is_none() {
            for item in &vox_now {
                let code = code_of(item).unwrap_or(item);
                if slip_for(code).is_some_and(|r| r.pattern == row.pattern) {
                    problems.push(format!(
                        "the hint-only row `{}` matches {item}, which docs/diagnostics.md says is Vox",
                        row.pattern
                    ));
                }
            }
        }
        // "Vox has no `while`": the name must be neither a keyword nor a builtin function.
        for (at, _) in row.hint.match_indices("has no `") {
            let rest = &row.hint[at + "has no `".len()..];
            let name = &rest[..rest.find('`').unwrap_or(0)];
            let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if is_name
                && (vox_codegen::facts::is_keyword(name)
                    || vox_codegen::facts::builtins().contains(&name))
            {
                problems.push(format!(
                    "slip `{}` hints {:?}, but `{name}` is {}",
                    row.pattern,
                    row.hint,
                    vox_has(name).unwrap_or("Vox")
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the slips table:\n  {}",
        problems.join("\n  ")
    );
}

/// The docs that describe the builtins' argument types.
const BUILTIN_DOCS: [&str; 2] = ["README.md", "docs/language.md"];

/// The types the docs list for builtin `name`: the elements of its list for
/// `sum`, `sort`, `min` and `max`, else its first argument. `None` where
/// any type goes.
fn described_types(name: &str) -> Option<Vec<&'static str>> {
    vox_codegen::facts::builtin_elements(name).or_else(|| vox_codegen::facts::builtin_accepts(name))
}

fn is_type_name(word: &str) -> bool {
    [
        "int", "float", "bool", "Decimal", "Date", "str", "list", "map",
    ]
    .contains(&word)
}

/// A run of type names at the start of `text`, as prose lists them
/// (`` an `int`, `float` or `Decimal` ``, `` a `str`, a `list` or a `map` ``):
/// the names and the length of text read.
fn type_run(text: &str) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut at = 0;
    loop {
        let mut rest = &text[at..];
        let mut used = 0;
        if !names.is_empty() {
            let Some(sep) = [", or ", ", ", " or "]
                .into_iter()
                .find(|s| rest.starts_with(s))
            else {
                break;
            };
            rest = &rest[sep.len()..];
            used += sep.len();
        }
        for article in ["an ", "a "] {
            if let Some(r) = rest.strip_prefix(article) {
                rest = r;
                used += article.len();
                break;
            }
        }
        let Some(code) = rest.strip_prefix('`') else {
            break;
        };
        let Some(end) = code.find('`') else {
            break;
        };
        if !is_type_name(&code[..end]) {
            break;
        }
        // "…, `float` an `int`": a name followed by its own list starts
        // the next clause.
        let after = &code[end + 1..];
        if !names.is_empty() && (after.starts_with(" a `") || after.starts_with(" an `")) {
            break;
        }
        names.push(code[..end].to_string());
        at += used + 1 + end + 1;
    }
    (names, at)
}

/// Every run of two or more type names in `text`.
fn type_runs(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with('`')
            || text[i..].starts_with("a `")
            || text[i..].starts_with("an `")
        {
            let (names, len) = type_run(&text[i..]);
            if names.len() >= 2 {
                out.push(names);
                i += len;
                continue;
            }
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Docs are wrapped: a paragraph or list item as one line.
fn paragraphs(doc: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in doc.lines() {
        let t = line.trim();
        let starts = t.is_empty()
            || t.starts_with("- ")
            || t.starts_with('|')
            || t.starts_with('#')
            || t.starts_with("```");
        if open && !starts {
            let last = out.last_mut().expect("an open paragraph");
            last.push(' ');
            last.push_str(t);
        } else {
            out.push(t.to_string());
        }
        open = !t.is_empty() && !t.starts_with('|') && !t.starts_with('#') && !t.starts_with("```");
    }
    out
}

fn same_types(listed: &[String], code: &[&str]) -> bool {
    let mut a: Vec<&str> = listed.iter().map(String::as_str).collect();
    let mut b = code.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

#[test]
fn docs_list_the_types_each_builtin_takes() {
    let builtins = vox_codegen::facts::builtins();
    assert!(
        described_types("int").is_some_and(|t| t.contains(&"Decimal")),
        "the checker's table: int takes {:?}",
        described_types("int")
    );
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in BUILTIN_DOCS {
        for para in paragraphs(&read_doc(path)) {
            // "`int` takes an `int`, `float`, `bool` or `Decimal`", and
            // clauses that leave out "takes": "…, `float` an `int` or `float`".
            for name in &builtins {
                let needle = format!("`{name}` takes ");
                for (at, _) in para.match_indices(&needle) {
                    let mut name = *name;
                    let mut rest = &para[at + needle.len()..];
                    loop {
                        let (listed, len) = type_run(rest);
                        if listed.is_empty() {
                            break;
                        }
                        checked += 1;
                        let code = described_types(name).unwrap_or_default();
                        if !same_types(&listed, &code) {
                            problems.push(format!(
                                "{path}: `{name}` takes {listed:?}, the checker takes {code:?}: {para}"
                            ));
                        }
                        rest = &rest[len..];
                        let next = [", `", "; `"].iter().find_map(|sep| {
                            let r = rest.strip_prefix(sep)?;
                            let end = r.find('`')?;
                            let n = builtins.iter().find(|b| **b == &r[..end])?;
                            let r = &r[end + 1..];
                            let r = r.strip_prefix(" takes ").or_else(|| r.strip_prefix(' '))?;
                            Some((*n, r))
                        });
                        let Some((n, r)) = next else {
                            break;
                        };
                        name = n;
                        rest = r;
                    }
                }
            }
            // "`decimal(n)` of an `int`", "no `decimal(x)` of a `float`".
            for name in &builtins {
                let Some(code) = described_types(name) else {
                    continue;
                };
                for (at, _) in para.match_indices(&format!("`{name}")) {
                    let rest = &para[at + 1 + name.len()..];
                    let rest = match rest.strip_prefix('(') {
                        Some(r) => match r.find(")`") {
                            Some(end) => &r[end + 1..],
                            None => continue,
                        },
                        None => rest,
                    };
                    let Some(rest) = rest.strip_prefix("` of ") else {
                        continue;
                    };
                    let (of, _) = type_run(rest);
                    let Some(ty) = of.first() else {
                        continue;
                    };
                    checked += 1;
                    let denied = para[..at].ends_with("no ");
                    if code.contains(&ty.as_str()) == denied {
                        problems.push(format!(
                            "{path}: says there is {}`{name}` of {} `{ty}`; the checker takes {code:?}: {para}",
                            if denied { "no " } else { "a " },
                            if ty == "int" { "an" } else { "a" }
                        ));
                    }
                }
            }
            // Table rows: "| `sum(xs)` | the total of a list of `int`, `float` or `Decimal` … |".
            if let Some(row) = para.strip_prefix("| `") {
                let Some((first, rest)) = row.split_once(" | ") else {
                    continue;
                };
                let named: Vec<&str> = builtins
                    .iter()
                    .copied()
                    .filter(|n| {
                        row.starts_with(&format!("{n}(")) || first.contains(&format!(", `{n}("))
                    })
                    .collect();
                for name in named {
                    let code = described_types(name);
                    for listed in type_runs(rest) {
                        checked += 1;
                        match &code {
                            Some(code) if same_types(&listed, code) => {}
                            _ => problems.push(format!(
                                "{path}: the row of `{name}` lists {listed:?}, the checker takes {code:?}: {para}"
                            )),
                        }
                    }
                    // "(same types as `sort`)".
                    if let Some(at) = rest.find("same types as `") {
                        let other = &rest[at + "same types as `".len()..];
                        let other = &other[..other.find('`').unwrap_or(0)];
                        checked += 1;
                        if described_types(name) != described_types(other) {
                            problems.push(format!(
                                "{path}: `{name}` takes the same types as `{other}`, but the checker gives {:?} and {:?}",
                                described_types(name),
                                described_types(other)
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} statements about builtins' types found"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The dates the checker takes as literals are those the runtime accepts.
#[test]
fn date_literals_are_the_runtime_s_dates() {
    // The checker's `date("…")` rule and the runtime's reply check are two
    // copies (vox-codegen cannot depend on vox-runtime): the same texts.
    let mut texts: Vec<String> = [
        "2026-12-31",
        "2024-02-29",
        "1900-02-29",
        "2000-02-29",
        "0000-01-01",
        "0001-01-01",
        "9999-12-31",
        "2026-13-01",
        "2026-00-10",
        "2026-04-31",
        "2026-1-01",
        " 2026-12-31",
        "2026-12-31T00:00",
        "31/12/2026",
        "",
        "2026/12/31",
        "２０２６-01-01",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for y in [1, 4, 100, 400, 1900, 2000, 2023, 2024, 9999] {
        for m in 0..=13 {
            for d in [0, 1, 28, 29, 30, 31, 32] {
                texts.push(format!("{y:04}-{m:02}-{d:02}"));
            }
        }
    }
    for t in &texts {
        assert_eq!(
            vox_codegen::facts::is_iso_date(t),
            vox_runtime::__private::date::is_date(t),
            "{t:?}"
        );
    }
}

/// The rounding modes the checker accepts are those the runtime rounds by.
#[test]
fn rounding_modes_are_the_runtime_s() {
    assert_eq!(
        vox_codegen::facts::ROUNDING_MODES,
        vox_runtime::__private::decimal::ROUNDING_MODES
    );
}
