//! The suggestion engine: fixes for mistakes people (and models) make when
//! they write Vox as if it were another language. Each one is attached to a
//! diagnostic the parser or checker already reports, and only where the
//! intended program is unambiguous; docs/diagnostics.md lists them. The fix
//! loop that applies them is the parent module.

use crate::ast::{walk_block, BinaryOp, Expr, ExprKind, Item, Module, TypeDeclKind};
use crate::check::ModuleInfo;
use crate::diagnostic::{Applicability, Code, Diagnostic, Edit};
use crate::lexer::{Token, TokenKind as T};
use crate::source::{FileId, SourceMap, Span};
use crate::types::Ty;

/// Adds fixes to `diagnostics` (as reported for `module`): called by
/// [`crate::check()`] before the diagnostics are sorted.
pub fn suggest(
    sources: &SourceMap,
    module: &Module,
    info: &ModuleInfo,
    diagnostics: &mut [Diagnostic],
) {
    if diagnostics.is_empty() {
        return;
    }
    let toks: Vec<Toks<'_>> = (0..sources.len())
        .map(|f| file_toks(sources, FileId(f as u32)))
        .collect();
    ast_fixes(sources, module, info, &toks, diagnostics);
    rename_fixes(sources, module, &toks, diagnostics);
    downgrade_in_recovered(module, diagnostics);
    // Token fixes repair the syntax itself: they apply in recovered bodies.
    token_fixes(sources, diagnostics);
    crate::slips::slip_fixes(&toks, diagnostics);
}

/// A fix the checker computed inside a function body that had syntax
/// errors may wrap an expression the parser cut short (`r.items[0].name`:
/// the checker sees `r.items`, and `str(r.items)` would give
/// `str(r.items)[0].name`). Such fixes are shown, never applied blindly:
/// once the syntax is fixed, the next round finds them again whole.
fn downgrade_in_recovered(module: &Module, diagnostics: &mut [Diagnostic]) {
    let mut recovered: Vec<Span> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Fn(f) if f.recovered => Some(f.body.span),
            _ => None,
        })
        .collect();
    if recovered.is_empty() {
        return;
    }
    recovered.sort_by_key(|b| (b.file, b.start));
    for d in diagnostics.iter_mut() {
        if d.code.as_str().starts_with("vox/syntax/") {
            continue;
        }
        // Bodies do not overlap: the last one starting before `d` is the candidate.
        let at = recovered.partition_point(|b| (b.file, b.start) <= (d.span.file, d.span.start));
        let inside = at
            .checked_sub(1)
            .and_then(|i| recovered.get(i))
            .is_some_and(|b| b.file == d.span.file && d.span.end <= b.end);
        if !inside {
            continue;
        }
        for f in &mut d.fixes {
            if f.applicability == Applicability::MachineApplicable {
                f.applicability = Applicability::MaybeIncorrect;
            }
        }
    }
}

/// The tokens of `file`, without doc comments.
fn file_toks(sources: &SourceMap, file: FileId) -> Toks<'_> {
    let text = sources.get(file).text.as_str();
    Toks {
        file,
        text,
        toks: crate::lexer::lex(file, text)
            .tokens
            .into_iter()
            .filter(|t| t.kind != T::Doc)
            .collect(),
    }
}

/// Every name the module declares, with how many times: types, variants,
/// fields, functions, parameters, `let` and `for` bindings (the last two
/// found in the tokens).
fn declared_names(all: &[Toks<'_>], module: &Module) -> std::collections::HashMap<String, usize> {
    let mut names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut add = |n: &str| *names.entry(n.to_string()).or_default() += 1;
    for item in &module.items {
        match item {
            Item::Type(t) => {
                add(&t.name.name);
                match &t.kind {
                    TypeDeclKind::Record(fs) => fs.iter().for_each(|f| add(&f.name.name)),
                    TypeDeclKind::Dynamic(_) => {}
                    TypeDeclKind::Sum(vs) => {
                        for v in vs {
                            add(&v.name.name);
                            v.fields.iter().for_each(|f| add(&f.name.name));
                        }
                    }
                }
            }
            Item::Fn(f) => {
                add(&f.name.name);
                f.params.iter().for_each(|p| add(&p.name.name));
            }
            Item::Const(c) => add(&c.name.name),
            Item::Example(_) => {}
        }
    }
    for toks in all {
        for i in 0..toks.toks.len() {
            match toks.kind(i) {
                T::Let => {
                    let j = if toks.kind(i + 1) == T::Mut {
                        i + 2
                    } else {
                        i + 1
                    };
                    if matches!(toks.kind(j), T::Ident | T::TypeName) {
                        add(toks.word(j));
                    }
                }
                T::For if matches!(toks.kind(i + 1), T::Ident | T::TypeName) => {
                    add(toks.word(i + 1));
                }
                _ => {}
            }
        }
    }
    names
}

/// A rename of a misnamed declaration (`fn Tech_free` → `tech_free`) must
/// rename every use, or applying it leaves each call broken. When every
/// declaration of the old name is being renamed the same way and the new
/// name is not written anywhere in the module, the fix renames every token
/// spelled like the old name, in every file; otherwise it only renames the
/// declaration and is `maybe-incorrect`.
fn rename_fixes(
    sources: &SourceMap,
    module: &Module,
    all: &[Toks<'_>],
    diagnostics: &mut [Diagnostic],
) {
    let renames: Vec<(usize, String, String)> = diagnostics
        .iter()
        .enumerate()
        .filter(|(_, d)| d.code == Code::Naming)
        .filter_map(|(k, d)| {
            let f = d.fixes.first()?;
            let [e] = f.edits.as_slice() else {
                return None;
            };
            let old = text_of(sources, e.span);
            Some((k, old.to_string(), e.replacement.clone()))
        })
        .collect();
    if renames.is_empty() {
        return;
    }
    let declared = declared_names(all, module);
    // Where each word is written, for the names involved.
    let mut written: std::collections::HashMap<&str, Vec<Span>> = std::collections::HashMap::new();
    for (_, old, new) in &renames {
        written.entry(old.as_str()).or_default();
        written.entry(new.as_str()).or_default();
    }
    for t in all {
        for i in 0..t.toks.len() {
            if let Some(v) = written.get_mut(t.word(i)) {
                v.push(t.span(i));
            }
        }
    }
    let mut counts: std::collections::HashMap<(&str, &str), usize> =
        std::collections::HashMap::new();
    for (_, o, n) in &renames {
        *counts.entry((o.as_str(), n.as_str())).or_default() += 1;
    }
    for (k, old, new) in &renames {
        let renamed_here = counts
            .get(&(old.as_str(), new.as_str()))
            .copied()
            .unwrap_or(0);
        let uses = written.get(old.as_str()).cloned().unwrap_or_default();
        let keyword = crate::lexer::lex(FileId(0), old)
            .tokens
            .first()
            .is_some_and(|t| !matches!(t.kind, T::Ident | T::TypeName));
        let safe = !keyword
            && declared.get(old).copied().unwrap_or(0) == renamed_here
            && written.get(new.as_str()).is_none_or(Vec::is_empty);
        let Some(fix) = diagnostics.get_mut(*k).and_then(|d| d.fixes.first_mut()) else {
            continue;
        };
        if safe {
            fix.edits = uses.into_iter().map(|s| edit(s, new.clone())).collect();
            if fix.edits.len() > 1 {
                fix.message = format!("rename `{old}` to `{new}` everywhere");
            }
        } else {
            fix.applicability = Applicability::MaybeIncorrect;
            fix.message = format!("{} (uses are not renamed)", fix.message);
        }
    }
}

fn has_machine_fix(d: &Diagnostic) -> bool {
    d.fixes
        .iter()
        .any(|f| f.applicability == Applicability::MachineApplicable)
}

fn text_of(sources: &SourceMap, span: Span) -> &str {
    sources.get(span.file).text.get(span.range()).unwrap_or("")
}

fn edit(span: Span, replacement: impl Into<String>) -> Edit {
    Edit {
        span,
        replacement: replacement.into(),
    }
}

/// The tokens of one file, without doc comments.
pub(crate) struct Toks<'a> {
    pub(crate) file: FileId,
    pub(crate) text: &'a str,
    pub(crate) toks: Vec<Token>,
}

impl Toks<'_> {
    pub(crate) fn kind(&self, i: usize) -> T {
        self.toks.get(i).map_or(T::Eof, |t| t.kind)
    }

    pub(crate) fn word(&self, i: usize) -> &str {
        self.toks
            .get(i)
            .and_then(|t| self.text.get(t.span.range()))
            .unwrap_or("")
    }

    pub(crate) fn span(&self, i: usize) -> Span {
        self.toks
            .get(i)
            .map_or(Span::new(self.file, 0, 0), |t| t.span)
    }

    /// The token starting at byte `at`.
    fn at(&self, at: u32) -> Option<usize> {
        self.toks.binary_search_by_key(&at, |t| t.span.start).ok()
    }

    /// The previous token that is not a newline.
    fn prev(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&j| self.kind(j) != T::Newline)
    }

    /// The next token at or after `i` that is not a newline.
    fn next(&self, i: usize) -> usize {
        let mut j = i;
        while self.kind(j) == T::Newline {
            j += 1;
        }
        j
    }
}

fn token_fixes(sources: &SourceMap, diagnostics: &mut [Diagnostic]) {
    let mut files: Vec<FileId> = diagnostics
        .iter()
        .filter(|d| d.is_error() && d.span.file.0 < sources.len() as u32)
        .map(|d| d.span.file)
        .collect();
    files.sort();
    files.dedup();
    for file in files {
        let text = sources.get(file).text.as_str();
        let toks = Toks {
            file,
            text,
            toks: crate::lexer::lex(file, text)
                .tokens
                .into_iter()
                .filter(|t| t.kind != T::Doc)
                .collect(),
        };
        elif_fixes(&toks, diagnostics);
        for d in diagnostics.iter_mut() {
            if d.span.file != file || d.code != Code::UnexpectedToken || has_machine_fix(d) {
                continue;
            }
            let Some(i) = toks.at(d.span.start) else {
                continue;
            };
            if let Some((message, edits)) = token_fix(&toks, i) {
                d.fixes.insert(
                    0,
                    crate::diagnostic::Fix {
                        message,
                        edits,
                        applicability: Applicability::MachineApplicable,
                    },
                );
            }
        }
    }
}

/// `} elif cond {` → `} else if cond {`: attached to the error the parser
/// reports at `elif` or just after it.
fn elif_fixes(toks: &Toks<'_>, diagnostics: &mut [Diagnostic]) {
    // This file's errors by position, for a lookup per `elif`.
    let mut errors: Vec<(u32, usize)> = diagnostics
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_error() && d.span.file == toks.file)
        .map(|(k, d)| (d.span.start, k))
        .collect();
    errors.sort_unstable();
    for i in 0..toks.toks.len() {
        if toks.kind(i) != T::Ident || toks.word(i) != "elif" {
            continue;
        }
        if toks.prev(i).map(|p| toks.kind(p)) != Some(T::RBrace) {
            continue;
        }
        let from = toks.span(i).start;
        let to = toks.span(toks.next(i + 1)).end;
        let first = errors.partition_point(|&(start, _)| start < from);
        let target = errors[first..]
            .iter()
            .take_while(|&&(start, _)| start <= to)
            .map(|&(_, k)| k)
            .find(|&k| diagnostics.get(k).is_some_and(|d| !has_machine_fix(d)));
        if let Some(d) = target.and_then(|k| diagnostics.get_mut(k)) {
            d.fixes.insert(
                0,
                crate::diagnostic::Fix {
                    message: "replace `elif` with `else if`".into(),
                    edits: vec![edit(toks.span(i), "else if")],
                    applicability: Applicability::MachineApplicable,
                },
            );
        }
    }
}

/// A fix for the unexpected token `i`, when the intent is clear.
fn token_fix(toks: &Toks<'_>, i: usize) -> Option<(String, Vec<Edit>)> {
    let word = toks.word(i);
    let next = toks.kind(i + 1);
    let next2 = toks.kind(i + 2);
    match (toks.kind(i), word) {
        (T::Ident, "struct" | "class" | "interface")
            if next == T::TypeName && next2 == T::LBrace =>
        {
            Some((
                format!("replace `{word}` with `type`"),
                vec![edit(toks.span(i), "type")],
            ))
        }
        (T::Ident, "def" | "func" | "function" | "fun")
            if next == T::Ident && next2 == T::LParen =>
        {
            Some((
                format!("replace `{word}` with `fn`"),
                vec![edit(toks.span(i), "fn")],
            ))
        }
        (T::Ident, "enum") if next == T::TypeName && next2 == T::LBrace => enum_fix(toks, i),
        (T::Colon, _) => return_colon_fix(toks, i),
        (T::Lt, _) => generics_fix(toks, i),
        _ => None,
    }
}

/// `enum Color { Red, Green(hex: str) }` → `type Color = | Red | Green(hex: str)`,
/// when every variant is a name, optionally with named fields, and no
/// comment is inside.
fn enum_fix(toks: &Toks<'_>, i: usize) -> Option<(String, Vec<Edit>)> {
    let name = toks.word(i + 1);
    let mut variants: Vec<String> = Vec::new();
    let mut j = i + 3;
    let close = loop {
        match toks.kind(j) {
            T::Newline | T::Comma => j += 1,
            T::RBrace => break j,
            T::TypeName => {
                let start = toks.span(j).start as usize;
                let mut end = toks.span(j).end as usize;
                j += 1;
                if toks.kind(j) == T::LParen {
                    // Named fields only: `(name: type, …)`.
                    if toks.kind(j + 1) != T::Ident || toks.kind(j + 2) != T::Colon {
                        return None;
                    }
                    let mut depth = 0usize;
                    loop {
                        match toks.kind(j) {
                            T::LParen | T::LBracket => depth += 1,
                            T::RParen | T::RBracket => {
                                depth = depth.checked_sub(1)?;
                                if depth == 0 {
                                    break;
                                }
                            }
                            T::Ident | T::TypeName | T::Colon | T::Comma | T::Newline => {}
                            _ => return None,
                        }
                        j += 1;
                    }
                    end = toks.span(j).end as usize;
                    j += 1;
                }
                variants.push(
                    toks.text
                        .get(start..end)?
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
            _ => return None,
        }
    };
    if variants.is_empty() {
        return None;
    }
    let span = toks.span(i).to(toks.span(close));
    let written = toks.text.get(span.range())?;
    if written.contains("//") {
        return None;
    }
    let replacement = if written.contains('\n') {
        let mut s = format!("type {name} =");
        for v in &variants {
            s.push_str("\n    | ");
            s.push_str(v);
        }
        s
    } else {
        format!("type {name} = | {}", variants.join(" | "))
    };
    Some((
        format!("write the enum `{name}` as a Vox sum type"),
        vec![edit(span, replacement)],
    ))
}

/// `fn f(x: int): int {` → `fn f(x: int) to int {`.
fn return_colon_fix(toks: &Toks<'_>, i: usize) -> Option<(String, Vec<Edit>)> {
    let close = i.checked_sub(1)?;
    if toks.kind(close) != T::RParen || !matches!(toks.kind(i + 1), T::Ident | T::TypeName) {
        return None;
    }
    // Back to the `(` of the parameter list, which follows `fn name`.
    let mut depth = 0usize;
    let mut j = close;
    let mut budget = 4096usize;
    loop {
        budget = budget.checked_sub(1)?;
        match toks.kind(j) {
            T::RParen => depth += 1,
            T::LParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break;
                }
            }
            T::Fn | T::LBrace | T::RBrace | T::Eof => return None,
            _ => {}
        }
        j = j.checked_sub(1)?;
    }
    if toks.kind(j.checked_sub(1)?) != T::Ident || toks.kind(j.checked_sub(2)?) != T::Fn {
        return None;
    }
    let span = toks.span(close).shrink_to_end().to(toks.span(i));
    Some((
        "write the return type with `to`".into(),
        vec![edit(span, " to")],
    ))
}

/// `list<int>`, `Option<Vec<str>>` in a type position → square brackets.
fn generics_fix(toks: &Toks<'_>, i: usize) -> Option<(String, Vec<Edit>)> {
    let name = i.checked_sub(1)?;
    if !matches!(toks.kind(name), T::Ident | T::TypeName) {
        return None;
    }
    // A type position: after `x:`, `to`, `->`, or inside type arguments.
    let before = toks.kind(name.checked_sub(1)?);
    if !matches!(before, T::Colon | T::To | T::Gt | T::LBracket | T::Lt) {
        return None;
    }
    let mut edits = Vec::new();
    let mut depth = 0usize;
    let mut j = i;
    let mut budget = 4096usize;
    loop {
        budget = budget.checked_sub(1)?;
        match toks.kind(j) {
            T::Lt => {
                depth += 1;
                edits.push(edit(toks.span(j), "["));
            }
            T::Gt => {
                depth = depth.checked_sub(1)?;
                edits.push(edit(toks.span(j), "]"));
                if depth == 0 {
                    break;
                }
            }
            T::Ident | T::TypeName | T::Comma | T::LBracket | T::RBracket => {}
            _ => return None,
        }
        j += 1;
    }
    // What may follow a type; anything else (`a < b > c`) is not one.
    if !matches!(
        toks.kind(j + 1),
        T::RParen
            | T::Comma
            | T::LBrace
            | T::RBrace
            | T::Eq
            | T::RBracket
            | T::Gt
            | T::Newline
            | T::Eof
    ) {
        return None;
    }
    Some(("write type arguments in `[…]`".into(), edits))
}

/// The expressions the AST fixes need, found by the spans diagnostics
/// point at: an expression's own span, and for a call that could not be
/// made its callee, for a field access its name, for a record literal its
/// type name, for a `match` its scrutinee.
#[derive(Default)]
struct Found<'m> {
    exprs: Vec<&'m Expr>,
    index: std::collections::HashMap<Span, Vec<usize>>,
}

impl<'m> Found<'m> {
    fn push(&mut self, e: &'m Expr) {
        let i = self.exprs.len();
        self.exprs.push(e);
        let key = match &e.kind {
            ExprKind::Poison(parts) => parts.first().map(|p| p.span),
            ExprKind::Field { name, .. } | ExprKind::Record { name, .. } => Some(name.span),
            ExprKind::Match { scrutinee, .. } => Some(scrutinee.span),
            _ => None,
        };
        self.index.entry(e.span).or_default().push(i);
        if let Some(k) = key.filter(|k| *k != e.span) {
            self.index.entry(k).or_default().push(i);
        }
    }

    /// The expressions found under `span` that `pick` accepts.
    fn at(&self, span: Span, pick: impl Fn(&Expr) -> bool) -> Option<&'m Expr> {
        self.index
            .get(&span)?
            .iter()
            .filter_map(|&i| self.exprs.get(i).copied())
            .find(|e| pick(e))
    }
}

/// More spellings of Vox types than the checker's own "did you mean".
fn type_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "i8" | "i16" | "i128" | "isize" | "u8" | "u16" | "u128" | "long" | "Integer" | "Long" => {
            "int"
        }
        "double" | "Double" | "Number" | "f16" => "float",
        "Boolean" => "bool",
        "Vector" | "ArrayList" => "list",
        "Optional" => "Option",
        _ => return None,
    })
}

fn ast_fixes(
    sources: &SourceMap,
    module: &Module,
    info: &ModuleInfo,
    all_toks: &[Toks<'_>],
    diagnostics: &mut [Diagnostic],
) {
    let wanted = |c: Code| {
        matches!(
            c,
            Code::NotCallable
                | Code::NotARecord
                | Code::InvalidOperand
                | Code::MissingField
                | Code::NonExhaustive
        )
    };
    let mut found = Found::default();
    if diagnostics.iter().any(|d| wanted(d.code)) {
        for item in &module.items {
            if let Item::Fn(f) = item {
                walk_block(&f.body, &mut |e| {
                    if matches!(
                        e.kind,
                        ExprKind::Poison(_)
                            | ExprKind::Field { .. }
                            | ExprKind::Binary { .. }
                            | ExprKind::Record { .. }
                            | ExprKind::Match { .. }
                    ) {
                        found.push(e);
                    }
                });
            }
        }
    }
    let ty = |e: &Expr| info.expr_types.get(e.id.0 as usize);
    let mut all = Found::default();
    if diagnostics.iter().any(|d| d.code == Code::Mismatch) {
        for item in &module.items {
            if let Item::Fn(f) = item {
                walk_block(&f.body, &mut |e| all.push(e));
            }
        }
    }
    for d in diagnostics.iter_mut() {
        if d.code == Code::Mismatch {
            mismatch_fix(sources, module, all_toks, &all, d);
            continue;
        }
        if has_machine_fix(d) && d.code != Code::UnknownName {
            continue;
        }
        let written = text_of(sources, d.span).to_string();
        let fix: Option<(Applicability, String, Vec<Edit>)> = match d.code {
            Code::UnknownName => match written.as_str() {
                "null" | "nil" => Some((
                    Applicability::MachineApplicable,
                    format!("replace `{written}` with `None`"),
                    vec![edit(d.span, "None")],
                )),
                "True" | "False" => {
                    let lower = written.to_ascii_lowercase();
                    Some((
                        Applicability::MachineApplicable,
                        format!("replace `{written}` with `{lower}`"),
                        vec![edit(d.span, lower)],
                    ))
                }
                _ => None,
            },
            Code::UnknownType => type_alias(&written).map(|t| {
                (
                    Applicability::MachineApplicable,
                    format!("replace with `{t}`"),
                    vec![edit(d.span, t)],
                )
            }),
            // `x.len()`, `x.to_string()`: a method call.
            Code::NotCallable => found
                .at(d.span, |e| matches!(e.kind, ExprKind::Poison(_)))
                .and_then(|call| {
                    let ExprKind::Poison(parts) = &call.kind else {
                        return None;
                    };
                    if let [field] = parts.as_slice() {
                        if let Some(fix) = method_fix(sources, field, call.span, &ty) {
                            return Some(fix);
                        }
                    }
                    call_form_fix(sources, info, parts, call.span, &ty)
                }),
            // `x.length`: a property.
            Code::NotARecord => found
                .at(d.span, |e| matches!(&e.kind, ExprKind::Field { name, .. } if name.span == d.span))
                .filter(|e| {
                    // Not the callee of a call (that one is fixed above).
                    found
                        .at(e.span, |c| matches!(&c.kind, ExprKind::Poison(p) if p.first().is_some_and(|f| f.span == e.span)))
                        .is_none()
                })
                .and_then(|e| {
                    let ExprKind::Field { name, .. } = &e.kind else {
                        return None;
                    };
                    if matches!(name.name.as_str(), "length" | "len" | "size" | "count") {
                        method_fix(sources, e, e.span, &ty)
                    } else {
                        None
                    }
                }),
            Code::InvalidOperand => found
                .at(d.span, |e| matches!(e.kind, ExprKind::Binary { .. }))
                .and_then(|e| {
                    let ExprKind::Binary { lhs, rhs, .. } = &e.kind else {
                        return None;
                    };
                    let side = match (ty(lhs)?, ty(rhs)?) {
                        (Ty::Int, Ty::Float) => lhs,
                        (Ty::Float, Ty::Int) => rhs,
                        _ => return None,
                    };
                    Some(float_fix(sources, module, all_toks, side))
                }),
            Code::MissingField => missing_fields_fix(sources, module, &found, d.span),
            Code::NonExhaustive => non_exhaustive_fix(sources, &found, d),
            _ => None,
        };
        if let Some((applicability, message, edits)) = fix {
            let fix = crate::diagnostic::Fix {
                message,
                edits,
                applicability,
            };
            if applicability == Applicability::MachineApplicable {
                d.fixes.insert(0, fix);
            } else {
                d.fixes.push(fix);
            }
        }
    }
}

/// An `int` where a `float` is wanted, or a `float` assigned to an
/// `int` accumulator: the conversion the author meant (see [`float_fix`]),
/// replacing the checker's plain `float(…)`; and no `int(…)` hint for an
/// accumulator started at an integer literal.
fn mismatch_fix(
    sources: &SourceMap,
    module: &Module,
    all_toks: &[Toks<'_>],
    all: &Found<'_>,
    d: &mut Diagnostic,
) {
    let (Some(expected), Some(found)) = (d.expected.as_deref(), d.found.as_deref()) else {
        return;
    };
    let Some(e) = all.at(d.span, |e| e.span == d.span) else {
        return;
    };
    let fix = match (expected, found) {
        ("float", "int") => float_fix(sources, module, all_toks, e),
        ("int", "float") => {
            // `s = s + x.price` where `let mut s = 0`: the literal is wrong.
            let Some(toks) = all_toks.get(d.span.file.0 as usize) else {
                return;
            };
            let Some(i) = toks.at(d.span.start) else {
                return;
            };
            let target = toks
                .prev(i)
                .filter(|&j| toks.kind(j) == T::Eq)
                .and_then(|j| toks.prev(j))
                .filter(|&j| toks.kind(j) == T::Ident);
            let Some(j) = target else {
                return;
            };
            let name = toks.word(j).to_string();
            let Some(lit) = accumulator_literal(toks, module, toks.span(j), &name) else {
                return;
            };
            d.hints.retain(|h| !h.contains("int(…)"));
            (
                Applicability::MachineApplicable,
                format!(
                    "start `{name}` at `{}.0`: it holds a `float`",
                    toks.word(lit)
                ),
                vec![edit(toks.span(lit), format!("{}.0", toks.word(lit)))],
            )
        }
        _ => return,
    };
    d.fixes
        .retain(|f| f.applicability != Applicability::MachineApplicable);
    d.fixes.insert(
        0,
        crate::diagnostic::Fix {
            message: fix.1,
            edits: fix.2,
            applicability: fix.0,
        },
    );
}

/// An `int` expression converted to `float` as its author meant:
///
/// - an integer literal becomes a float literal (`1` → `1.0`);
/// - a `let mut` accumulator started at an integer literal and then used
///   with `float`s (`let mut s = 0` … `s + x.price`) gets a float start
///   (`0.0`), not a `float(s)` at each use;
/// - a division converts its operands (`a / b` → `float(a) / float(b)`):
///   `float(a / b)` would divide integers first and drop the fraction;
/// - anything else is wrapped: `float(e)`.
fn float_fix(
    sources: &SourceMap,
    module: &Module,
    all_toks: &[Toks<'_>],
    e: &Expr,
) -> (Applicability, String, Vec<Edit>) {
    if let (ExprKind::Var(name), Some(toks)) = (&e.kind, all_toks.get(e.span.file.0 as usize)) {
        if let Some(lit) = accumulator_literal(toks, module, e.span, name) {
            return (
                Applicability::MachineApplicable,
                format!(
                    "start `{name}` at `{}.0`: it holds a `float`",
                    toks.word(lit)
                ),
                vec![edit(toks.span(lit), format!("{}.0", toks.word(lit)))],
            );
        }
    }
    let span = balanced(sources, e.span);
    let text = text_of(sources, span);
    let converted = float_text(sources, e, false);
    let message = match &e.kind {
        ExprKind::Int(_) => format!("write `{text}` as the float literal `{converted}`"),
        _ if has_division(e) => {
            format!("divide as `float`s: `{converted}` (`float({text})` would drop the fraction)")
        }
        _ => format!("convert `{text}` with `float(…)`"),
    };
    (
        Applicability::MachineApplicable,
        message,
        vec![edit(span, converted)],
    )
}

/// `span` grown to take in the parentheses it cuts through: the span of a
/// binary operation runs from its left operand to its right one, and an
/// operand's span leaves out its own parentheses (`(a + b) / 2` is
/// recorded as `a + b) / 2`).
fn balanced(sources: &SourceMap, span: Span) -> Span {
    let text = sources.get(span.file).text.as_bytes();
    let (mut start, mut end) = (span.start as usize, (span.end as usize).min(text.len()));
    let depth = |a: usize, b: usize| -> (i32, i32) {
        // (unmatched `)`, unmatched `(`) in text[a..b]
        let (mut open, mut close) = (0i32, 0i32);
        for &c in text.get(a..b).unwrap_or(&[]) {
            match c {
                b'(' => open += 1,
                b')' if open > 0 => open -= 1,
                b')' => close += 1,
                _ => {}
            }
        }
        (close, open)
    };
    for _ in 0..64 {
        let (close, open) = depth(start, end);
        if close == 0 && open == 0 {
            break;
        }
        if close > 0 {
            match text
                .get(..start)
                .and_then(|t| t.iter().rposition(|&c| c == b'('))
            {
                Some(p) => start = p,
                None => return span,
            }
        } else {
            match text
                .get(end..)
                .and_then(|t| t.iter().position(|&c| c == b')'))
            {
                Some(p) => end += p + 1,
                None => return span,
            }
        }
    }
    Span::new(span.file, start, end)
}

fn has_division(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => match op {
            BinaryOp::Div => true,
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => has_division(lhs) || has_division(rhs),
            _ => false,
        },
        _ => false,
    }
}

/// The text of the `int` expression `e` as a `float` (see [`float_fix`]);
/// `nested` parenthesizes a rewritten operation.
fn float_text(sources: &SourceMap, e: &Expr, nested: bool) -> String {
    let text = text_of(sources, e.span);
    let whole = text_of(sources, balanced(sources, e.span));
    match &e.kind {
        ExprKind::Int(_)
            if text
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'_' || b == b'-') =>
        {
            format!("{text}.0")
        }
        ExprKind::Binary { op, lhs, rhs } if has_division(e) => {
            // Between the operands: the operator, and the parentheses
            // around them, which the rewritten operands bring back.
            let op_text = sources
                .get(e.span.file)
                .text
                .get(lhs.span.end as usize..rhs.span.start as usize)
                .map_or(op.symbol(), |t| {
                    t.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                });
            let inner = format!(
                "{} {op_text} {}",
                float_text(sources, lhs, true),
                float_text(sources, rhs, true)
            );
            if nested {
                format!("({inner})")
            } else {
                inner
            }
        }
        _ => format!("float({})", strip_parens(whole)),
    }
}

/// `(e)` → `e` (for `float((a + b))`).
fn strip_parens(text: &str) -> &str {
    let t = text.trim();
    match t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        Some(inner) if !inner.contains(['(', ')']) => inner,
        _ => t,
    }
}

/// The integer literal a `let mut name = 0` accumulator starts at, when
/// `name` at `use_at` is that binding: the function declares `name` once
/// (no parameter, other `let` or `for` of it), with `let mut`, no type and
/// an integer literal alone as the value.
fn accumulator_literal(
    toks: &Toks<'_>,
    module: &Module,
    use_at: Span,
    name: &str,
) -> Option<usize> {
    let f = module.items.iter().find_map(|i| match i {
        Item::Fn(f)
            if f.span.file == use_at.file
                && f.span.start <= use_at.start
                && use_at.end <= f.span.end =>
        {
            Some(f)
        }
        _ => None,
    })?;
    if f.params.iter().any(|p| p.name.name == name) {
        return None;
    }
    let mut found = None;
    let first = toks.toks.partition_point(|t| t.span.start < f.span.start);
    let last = toks.toks.partition_point(|t| t.span.start < f.span.end);
    for i in first..last {
        let declares = match toks.kind(i) {
            T::Let => {
                let j = if toks.kind(i + 1) == T::Mut {
                    i + 2
                } else {
                    i + 1
                };
                (toks.word(j) == name).then_some(j)
            }
            T::For => (toks.word(i + 1) == name).then_some(i + 1),
            _ => None,
        };
        let Some(j) = declares else {
            continue;
        };
        if found.is_some() {
            return None;
        }
        let literal = toks.kind(i) == T::Let
            && toks.kind(i + 1) == T::Mut
            && toks.kind(j + 1) == T::Eq
            && toks.kind(j + 2) == T::Int
            && matches!(toks.kind(j + 3), T::Newline | T::Semi | T::RBrace)
            && toks
                .word(j + 2)
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'_' || b == b'-');
        if !literal || toks.span(j).start > use_at.start {
            return None;
        }
        found = Some(j + 2);
    }
    found
}

/// `x.len()`, `x.length`, `x.size` (text or list) → `len(x)`;
/// `x.to_string()` → `str(x)`. `whole` is what gets replaced.
fn method_fix<'a>(
    sources: &SourceMap,
    field: &Expr,
    whole: Span,
    ty: &dyn Fn(&Expr) -> Option<&'a Ty>,
) -> Option<(Applicability, String, Vec<Edit>)> {
    let ExprKind::Field { base, name } = &field.kind else {
        return None;
    };
    let base_text = text_of(sources, base.span);
    let builtin = match name.name.as_str() {
        "len" | "length" | "size" | "count" => {
            if !matches!(ty(base)?, Ty::Str | Ty::List(_)) {
                return None;
            }
            "len"
        }
        "to_string" | "toString" if whole != field.span => "str",
        _ => return None,
    };
    let written = text_of(sources, whole);
    Some((
        Applicability::MachineApplicable,
        format!("replace `{written}` with `{builtin}({base_text})`"),
        vec![edit(whole, format!("{builtin}({base_text})"))],
    ))
}

/// `x.f(args)`, where `f` is a builtin taking `x`'s kind of value first or
/// a function of the module whose first parameter takes `x`'s type and
/// that has one parameter more than the arguments: `f(x, args)`. The kind
/// of mistake, not a list of methods: Vox has no methods, and every
/// function is called with the value first (docs/language.md, "Coming from
/// Python, Rust or TypeScript"). A call whose value is dropped is left to
/// the slips (`xs.sort()` changes `xs` in place in Rust: `xs = sort(xs)`).
fn call_form_fix<'a>(
    sources: &SourceMap,
    info: &ModuleInfo,
    parts: &[Expr],
    whole: Span,
    ty: &dyn Fn(&Expr) -> Option<&'a Ty>,
) -> Option<(Applicability, String, Vec<Edit>)> {
    let (field, args) = parts.split_first()?;
    let ExprKind::Field { base, name } = &field.kind else {
        return None;
    };
    let bt = ty(base)?;
    if !bt.is_concrete() {
        return None;
    }
    let takes = if let Some(b) = crate::check::Builtin::lookup(&name.name) {
        use crate::check::Builtin as B;
        // Rust's and Python's `insert`/`remove` give the old value, not a
        // new map; Python's `xs.count(3)` counts a value, not what a
        // function holds for: other programs than the Vox builtin's.
        let function_arg = |a: &Expr| {
            matches!(a.kind, ExprKind::Lambda(_))
                || matches!(&a.kind, ExprKind::Var(n) if info.fn_named(n).is_some())
        };
        if matches!(b, B::Insert | B::Remove)
            || (b.takes_function() && !args.first().is_some_and(function_arg))
        {
            return None;
        }
        // Builtins the table names a first-argument kind for, and the text
        // builtins (a `str` first).
        match b.accepts() {
            Some(kinds) => crate::check::Kind::any_holds(kinds, bt),
            None => {
                (matches!(
                    b,
                    B::Trim | B::Lower | B::Upper | B::StartsWith | B::EndsWith | B::Split
                ) && matches!(bt, Ty::Str))
                    || (b == B::Join && matches!(bt, Ty::List(e) if **e == Ty::Str))
            }
        }
    } else if let Some(f) = info.fn_named(&name.name) {
        !f.test
            && f.name != "main"
            && f.params.len() == args.len() + 1
            && f.params.first().is_some_and(|(_, t)| t.accepts(bt))
    } else {
        false
    };
    if !takes {
        return None;
    }
    // Statement position: the value is dropped (an in-place method).
    let file = sources.get(whole.file);
    let before = file.text.get(..whole.start as usize).unwrap_or("");
    let after = file.text.get(whole.end as usize..).unwrap_or("");
    let line_before = before.rsplit('\n').next().unwrap_or("");
    let line_after = after.split('\n').next().unwrap_or("");
    if line_before.trim().is_empty() && line_after.trim().is_empty() {
        return None;
    }
    let mut text = format!("{}({}", name.name, text_of(sources, base.span));
    for a in args {
        text.push_str(", ");
        text.push_str(text_of(sources, a.span));
    }
    text.push(')');
    let written = text_of(sources, whole);
    Some((
        Applicability::MachineApplicable,
        format!("replace `{written}` with `{text}`"),
        vec![edit(whole, text)],
    ))
}

/// A record literal missing fields: insert `field: <type>` for each, to
/// be filled in.
fn missing_fields_fix(
    sources: &SourceMap,
    module: &Module,
    found: &Found<'_>,
    at: Span,
) -> Option<(Applicability, String, Vec<Edit>)> {
    let lit = found.at(
        at,
        |e| matches!(&e.kind, ExprKind::Record { name, .. } if name.span == at),
    )?;
    let ExprKind::Record { name, fields } = &lit.kind else {
        return None;
    };
    let decl_fields = module.items.iter().find_map(|i| match i {
        Item::Type(t) if t.name.name == name.name => match &t.kind {
            TypeDeclKind::Record(fs) => Some(fs),
            TypeDeclKind::Sum(_) | TypeDeclKind::Dynamic(_) => None,
        },
        _ => None,
    })?;
    let missing: Vec<String> = decl_fields
        .iter()
        .filter(|f| !fields.iter().any(|g| g.name.name == f.name.name))
        .map(|f| format!("{}: <{}>", f.name.name, f.ty))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let text = text_of(sources, lit.span);
    let edit = if let Some(last) = fields.last() {
        edit(
            last.value.span.shrink_to_end(),
            format!(", {}", missing.join(", ")),
        )
    } else {
        // `Name {}` or `Name { }`: fill the braces.
        let open = text.find('{')?;
        let inner = Span::new(
            lit.span.file,
            lit.span.start as usize + open + 1,
            (lit.span.end as usize).checked_sub(1)?,
        );
        edit(inner, format!(" {} ", missing.join(", ")))
    };
    Some((
        Applicability::HasPlaceholders,
        format!(
            "add the missing field{} `{}`",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|m| m.split(':').next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("`, `")
        ),
        vec![edit],
    ))
}

/// A non-exhaustive `match`: an arm for each missing pattern (as the
/// diagnostic names them), with a `<value>` body to fill in.
fn non_exhaustive_fix(
    sources: &SourceMap,
    found: &Found<'_>,
    d: &Diagnostic,
) -> Option<(Applicability, String, Vec<Edit>)> {
    let m = found.at(
        d.span,
        |e| matches!(&e.kind, ExprKind::Match { scrutinee, .. } if scrutinee.span == d.span),
    )?;
    let ExprKind::Match { arms, .. } = &m.kind else {
        return None;
    };
    let label = d.label.as_deref()?;
    let patterns: Vec<&str> = label.split('`').skip(1).step_by(2).collect();
    if patterns.is_empty() {
        return None;
    }
    let file = sources.get(m.span.file);
    let close = (m.span.end as usize).checked_sub(1)?;
    if file.text.get(close..close + 1) != Some("}") {
        return None;
    }
    let line = file.line_col(close).line;
    let line_start = file.line_start(line);
    let before_close = file.text.get(line_start..close)?;
    let edit = if before_close.trim().is_empty() {
        // `}` on its own line: one arm per line, indented like the others.
        let indent = arms
            .first()
            .map(|a| {
                let l = file.line_col(a.span.start as usize).line;
                let s = file.line_start(l);
                file.text
                    .get(s..a.span.start as usize)
                    .unwrap_or("")
                    .to_string()
            })
            .filter(|s| s.trim().is_empty())
            .unwrap_or_else(|| format!("{before_close}    "));
        let text: String = patterns
            .iter()
            .map(|p| format!("{indent}{p} => <value>\n"))
            .collect();
        edit(Span::new(m.span.file, line_start, line_start), text)
    } else {
        let sep = if arms.is_empty() { " " } else { ", " };
        let text: String = patterns
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{}{p} => <value>", if k == 0 { sep } else { ", " }))
            .collect();
        let at = close - (before_close.len() - before_close.trim_end().len());
        edit(Span::new(m.span.file, at, at), text)
    };
    Some((
        Applicability::HasPlaceholders,
        if patterns.len() == 1 {
            format!("add an arm for `{}`", patterns[0])
        } else {
            format!("add arms for `{}`", patterns.join("`, `"))
        },
        vec![edit],
    ))
}
