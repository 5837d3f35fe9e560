//! Editor queries over a checked module: what a name at an offset refers
//! to, where it is defined, every place it is used, the type of the
//! expression under the cursor, and how to describe a symbol on hover.
//!
//! The [`Index`] is built once per check from the AST and the checker's
//! side tables (`ModuleInfo::callees`, `ctors`, `locals`, `bindings`,
//! `expr_types`); it stores every occurrence of every named thing sorted
//! by position, so a query at an offset is a binary search. Type names are
//! found from the tokens (every `TypeName` token spelling a user type that
//! the AST did not already claim), so type references in any syntactic
//! position are found without a case per grammar form.

mod complete;
mod outline;
mod tokens;

use std::collections::HashMap;

use crate::ast::{self, Expr, ExprKind, Item, Pattern, PatternKind, TypeDeclKind};
use crate::check::{Callee, Ctor, FnInfo};
use crate::lexer::{self, TokenKind};
use crate::source::{FileId, Span};
use crate::types::{Ty, TypeDef, TypeId};
use crate::Checked;

pub use complete::{completions, Completion, CompletionKind, Completions};
pub use outline::{outline, OutlineItem, OutlineKind};
pub use tokens::{is_name, lexer_diagnostics, semantic_tokens, TokenClass};

/// What to show on hover at byte offset `at` of `file`, in Markdown, and
/// the span it is about: a symbol's declaration and doc comment (for an
/// `@ai` function also the JSON Schema the model's reply is held to),
/// else the type of the innermost expression there.
pub fn hover(checked: &Checked, index: &Index, file: FileId, at: u32) -> Option<(String, Span)> {
    if let Some(occ) = index.at(file, at) {
        return Some((describe(checked, occ.symbol)?, occ.span));
    }
    let (span, id) = index.expr_at(file, at)?;
    let ty = checked.info.expr_type(id);
    if ty.is_error() {
        return None;
    }
    let shown = ty.display(&checked.info.types);
    Some((format!("```vox\n{shown}\n```"), span))
}

/// A named thing of the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symbol {
    Type(TypeId),
    /// A field of a record (`variant: None`) or of a sum type's variant.
    Field {
        ty: TypeId,
        variant: Option<usize>,
        field: usize,
    },
    Variant {
        ty: TypeId,
        variant: usize,
    },
    /// Index into `ModuleInfo::fns`.
    Fn(usize),
    /// A parameter, `let`, `for` or pattern binding, named by the span of
    /// its name where it is bound.
    Local(Span),
}

/// One place a symbol's name is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    pub span: Span,
    pub symbol: Symbol,
    /// The defining occurrence (declaration or binding).
    pub def: bool,
}

/// The symbol/span index of one checked module.
#[derive(Debug, Default)]
pub struct Index {
    /// Sorted by (file, start).
    occs: Vec<Occurrence>,
    /// Every expression's span, sorted by (file, start, longest first).
    exprs: Vec<(Span, ast::ExprId)>,
}

fn key(s: Span) -> (FileId, u32, std::cmp::Reverse<u32>) {
    (s.file, s.start, std::cmp::Reverse(s.end))
}

impl Index {
    pub fn build(checked: &Checked) -> Index {
        let defs = &checked.info.types.defs;
        let mut type_names = HashMap::new();
        let mut variant_names = HashMap::new();
        for (i, d) in defs.iter().enumerate() {
            let id = TypeId(i as u32);
            // The first declaration of a name is the one the checker keeps.
            type_names.entry(d.name.as_str()).or_insert(id);
            for (vi, v) in d.variants().unwrap_or(&[]).iter().enumerate() {
                variant_names.entry(v.name.as_str()).or_insert((id, vi));
            }
        }
        let mut b = Builder {
            checked,
            type_names,
            variant_names,
            occs: Vec::new(),
            exprs: Vec::new(),
            fn_of_item: HashMap::new(),
        };
        b.run();
        let Builder {
            mut occs,
            mut exprs,
            ..
        } = b;
        occs.sort_by_key(|o| (key(o.span), !o.def));
        occs.dedup_by_key(|o| o.span);
        exprs.sort_by_key(|(s, _)| key(*s));
        Index { occs, exprs }
    }

    /// All occurrences, sorted by position.
    pub fn occurrences(&self) -> &[Occurrence] {
        &self.occs
    }

    /// The occurrence whose name covers `offset` (its end counts too, so a
    /// cursor just after a name finds it).
    pub fn at(&self, file: FileId, offset: u32) -> Option<&Occurrence> {
        let i = self
            .occs
            .partition_point(|o| (o.span.file, o.span.start) <= (file, offset));
        self.occs[..i]
            .iter()
            .rev()
            .take_while(|o| o.span.file == file)
            .take(4)
            .find(|o| o.span.start <= offset && offset <= o.span.end)
    }

    /// Where `symbol` is defined.
    pub fn definition(&self, symbol: Symbol) -> Option<Span> {
        if let Symbol::Local(span) = symbol {
            return Some(span);
        }
        self.occs
            .iter()
            .find(|o| o.def && o.symbol == symbol)
            .map(|o| o.span)
    }

    /// Every occurrence of `symbol`, its definition included.
    pub fn references(&self, symbol: Symbol) -> impl Iterator<Item = &Occurrence> + '_ {
        self.occs.iter().filter(move |o| o.symbol == symbol)
    }

    /// The innermost expression covering `offset`.
    pub(crate) fn expr_at(&self, file: FileId, offset: u32) -> Option<(Span, ast::ExprId)> {
        let i = self
            .exprs
            .partition_point(|(s, _)| (s.file, s.start) <= (file, offset));
        // Candidates start at or before `offset`; the innermost is the one
        // starting last that still covers it. Look back a bounded distance:
        // enclosing expressions start earlier but are never innermost once
        // a covering one is found.
        self.exprs[..i]
            .iter()
            .rev()
            .take_while(|(s, _)| s.file == file)
            .take(20_000)
            .find(|(s, _)| s.start <= offset && offset <= s.end)
            .copied()
    }
}

struct Builder<'c> {
    checked: &'c Checked,
    /// User types and variants by name (each lookup is then constant-time).
    type_names: HashMap<&'c str, TypeId>,
    variant_names: HashMap<&'c str, (TypeId, usize)>,
    occs: Vec<Occurrence>,
    exprs: Vec<(Span, ast::ExprId)>,
    fn_of_item: HashMap<usize, usize>,
}

impl Builder<'_> {
    fn push(&mut self, span: Span, symbol: Symbol, def: bool) {
        if span.end > span.start {
            self.occs.push(Occurrence { span, symbol, def });
        }
    }

    fn run(&mut self) {
        let checked = self.checked;
        let info = &checked.info;
        for (k, f) in info.fns.iter().enumerate() {
            self.fn_of_item.entry(f.item).or_insert(k);
        }
        for (i, item) in checked.module.items.iter().enumerate() {
            match item {
                Item::Type(t) => {
                    let Some(&id) = info.type_items.get(&i) else {
                        continue;
                    };
                    self.push(t.name.span, Symbol::Type(id), true);
                    match &t.kind {
                        TypeDeclKind::Record(fields) => {
                            for (fi, f) in fields.iter().enumerate() {
                                let sym = Symbol::Field {
                                    ty: id,
                                    variant: None,
                                    field: fi,
                                };
                                self.push(f.name.span, sym, true);
                            }
                        }
                        TypeDeclKind::Dynamic(_) => {}
                        TypeDeclKind::Sum(variants) => {
                            for (vi, v) in variants.iter().enumerate() {
                                let sym = Symbol::Variant {
                                    ty: id,
                                    variant: vi,
                                };
                                self.push(v.name.span, sym, true);
                                for (fi, f) in v.fields.iter().enumerate() {
                                    let sym = Symbol::Field {
                                        ty: id,
                                        variant: Some(vi),
                                        field: fi,
                                    };
                                    self.push(f.name.span, sym, true);
                                }
                            }
                        }
                    }
                }
                // Constants have no editor symbols yet.
                Item::Const(_) | Item::Example(_) => {}
                Item::Fn(f) => {
                    let Some(&k) = self.fn_of_item.get(&i) else {
                        continue;
                    };
                    self.push(f.name.span, Symbol::Fn(k), true);
                    if let Some(check) = info.fns[k].ai.as_ref().and_then(|a| a.check.as_ref()) {
                        if let Some(target) = info.fns.iter().position(|g| g.name == check.name) {
                            self.push(check.span, Symbol::Fn(target), false);
                        }
                    }
                    let mut exprs = Vec::new();
                    ast::walk_block(&f.body, &mut |e: &Expr| exprs.push(e));
                    for e in exprs {
                        self.expr(e);
                    }
                }
            }
        }
        for (span, _) in &info.bindings {
            self.push(*span, Symbol::Local(*span), true);
        }
        self.type_tokens();
    }

    fn expr(&mut self, e: &Expr) {
        let info = &self.checked.info;
        self.exprs.push((e.span, e.id));
        match &e.kind {
            ExprKind::Var(_) => {
                if let Some(&at) = info.locals.get(&e.id) {
                    self.push(e.span, Symbol::Local(at), false);
                }
            }
            ExprKind::Call { callee, args } => {
                if let Some(Callee::Fn(k)) = info.callees.get(&e.id) {
                    self.push(callee.span, Symbol::Fn(*k), false);
                    // Named arguments name parameters: those are locals
                    // bound at the parameter's name.
                    let decl = info
                        .fns
                        .get(*k)
                        .and_then(|f| self.checked.module.fn_decl(f.item));
                    if let Some(decl) = decl {
                        for a in args {
                            let Some(n) = &a.name else { continue };
                            if let Some(p) = decl.params.iter().find(|p| p.name.name == n.name) {
                                self.push(n.span, Symbol::Local(p.name.span), false);
                            }
                        }
                    }
                }
            }
            ExprKind::Ctor { name, args } => {
                if let Some(Ctor::Variant(ty, v)) = info.ctors.get(&e.id) {
                    let (ty, v) = (*ty, *v);
                    self.push(name.span, Symbol::Variant { ty, variant: v }, false);
                    for a in args.iter().flatten() {
                        let Some(n) = &a.name else { continue };
                        if let Some(field) = variant_field(self.def(ty), v, &n.name) {
                            let sym = Symbol::Field {
                                ty,
                                variant: Some(v),
                                field,
                            };
                            self.push(n.span, sym, false);
                        }
                    }
                }
            }
            ExprKind::Record { name, fields } => {
                if let Some(&ty) = self.type_names.get(name.name.as_str()) {
                    for init in fields {
                        if let Some(field) = record_field(self.def(ty), &init.name.name) {
                            let sym = Symbol::Field {
                                ty,
                                variant: None,
                                field,
                            };
                            self.push(init.name.span, sym, false);
                        }
                    }
                }
            }
            ExprKind::Field { base, name } => {
                if let Ty::Named(ty) = info.expr_type(base.id) {
                    let ty = *ty;
                    if let Some(field) = record_field(self.def(ty), &name.name) {
                        let sym = Symbol::Field {
                            ty,
                            variant: None,
                            field,
                        };
                        self.push(name.span, sym, false);
                    }
                }
            }
            ExprKind::Match { arms, .. } => {
                for arm in arms {
                    self.pattern(&arm.pattern);
                }
            }
            _ => {}
        }
    }

    fn pattern(&mut self, p: &Pattern) {
        if let PatternKind::Or(alts) = &p.kind {
            for a in alts {
                self.pattern(a);
            }
        }
        if let PatternKind::Ctor { name, args } = &p.kind {
            if let Some(&(ty, v)) = self.variant_names.get(name.name.as_str()) {
                self.push(name.span, Symbol::Variant { ty, variant: v }, false);
            }
            for a in args.iter().flatten() {
                self.pattern(a);
            }
        }
    }

    fn def(&self, ty: TypeId) -> Option<&TypeDef> {
        self.checked.info.types.get(ty)
    }

    /// Every type-name token that spells a user type and is not already a
    /// variant or constructor occurrence is a reference to that type.
    fn type_tokens(&mut self) {
        let mut claimed: std::collections::HashSet<(FileId, u32)> = self
            .occs
            .iter()
            .map(|o| (o.span.file, o.span.start))
            .collect();
        for (file, src) in self.checked.sources.files() {
            let lexed = lexer::lex(file, &src.text);
            for t in &lexed.tokens {
                if t.kind != TokenKind::TypeName || claimed.contains(&(file, t.span.start)) {
                    continue;
                }
                let name = src.text.get(t.span.range()).unwrap_or("");
                if let Some(&id) = self.type_names.get(name) {
                    self.occs.push(Occurrence {
                        span: t.span,
                        symbol: Symbol::Type(id),
                        def: false,
                    });
                    claimed.insert((file, t.span.start));
                }
            }
        }
    }
}

fn record_field(def: Option<&TypeDef>, name: &str) -> Option<usize> {
    def?.fields()?.iter().position(|f| f.name == name)
}

fn variant_field(def: Option<&TypeDef>, v: usize, name: &str) -> Option<usize> {
    def?.variants()?
        .get(v)?
        .fields
        .iter()
        .position(|f| f.name == name)
}

/// The sum type and variant called `name` (variant names are module-wide).
pub(crate) fn find_variant(defs: &[TypeDef], name: &str) -> Option<(TypeId, usize)> {
    defs.iter().enumerate().find_map(|(i, d)| {
        d.variants()?
            .iter()
            .position(|v| v.name == name)
            .map(|v| (TypeId(i as u32), v))
    })
}

/// The language's keywords, for completion (each lexes as a keyword; see
/// the test).
pub const KEYWORDS: [&str; 19] = [
    "type", "fn", "pub", "let", "mut", "return", "if", "else", "match", "for", "in", "to", "true",
    "false", "is", "isnt", "and", "or", "not",
];

/// The sum type matched by the innermost `match` covering `offset`
/// (whose arms' patterns are that type's variants).
pub(crate) fn match_type_at(checked: &Checked, file: FileId, offset: u32) -> Option<TypeId> {
    let covers = |s: Span| s.file == file && s.start <= offset && offset <= s.end;
    let mut best: Option<(u32, TypeId)> = None;
    for item in &checked.module.items {
        let Item::Fn(f) = item else { continue };
        if !covers(f.span) {
            continue;
        }
        ast::walk_block(&f.body, &mut |e: &Expr| {
            if let ExprKind::Match { scrutinee, .. } = &e.kind {
                if let (true, Ty::Named(id)) =
                    (covers(e.span), checked.info.expr_type(scrutinee.id))
                {
                    if best.is_none_or(|(start, _)| e.span.start >= start) {
                        best = Some((e.span.start, *id));
                    }
                }
            }
        });
    }
    best.map(|(_, t)| t)
}

/// The locals visible at `offset` (bound earlier in the function around
/// it), latest binding of each name first, with their types.
pub(crate) fn locals_at(checked: &Checked, file: FileId, offset: u32) -> Vec<(String, Ty)> {
    let Some(f) = checked.module.items.iter().find_map(|i| match i {
        Item::Fn(f) if f.span.file == file && f.span.start <= offset && offset <= f.span.end => {
            Some(f)
        }
        _ => None,
    }) else {
        return Vec::new();
    };
    let text = &checked.sources.get(file).text;
    let mut out: Vec<(String, Ty)> = Vec::new();
    for (span, ty) in checked.info.bindings.iter().rev() {
        if span.file != file || span.start < f.span.start || span.end > offset {
            continue;
        }
        let Some(name) = text.get(span.range()) else {
            continue;
        };
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.to_string(), ty.clone()));
        }
    }
    out
}

/// Why renaming `symbol` to `new_name` would change what the program
/// means (or break it), if it would: another type, variant, function,
/// field of the same type, or local of the same function already has
/// that name, or it is a builtin's.
pub fn rename_clash(checked: &Checked, symbol: Symbol, new_name: &str) -> Option<String> {
    use crate::types::BUILTIN_TYPE_NAMES;
    let info = &checked.info;
    let types = &info.types;
    let taken = |what: &str| Some(format!("`{new_name}` is already {what}"));
    match symbol {
        Symbol::Type(_) | Symbol::Variant { .. } => {
            if BUILTIN_TYPE_NAMES.contains(&new_name) {
                return taken("a builtin type");
            }
            if ["Some", "None", "Ok", "Error"].contains(&new_name) {
                return taken("a builtin constructor");
            }
            if types.find(new_name).is_some() {
                return taken("a type of this module");
            }
            if find_variant(&types.defs, new_name).is_some() {
                return taken("a variant of this module");
            }
        }
        Symbol::Fn(_) => {
            if crate::check::Builtin::ALL
                .iter()
                .any(|(n, _)| *n == new_name)
            {
                return taken("a builtin function");
            }
            if info.fn_named(new_name).is_some() {
                return taken("a function of this module");
            }
        }
        Symbol::Field { ty, variant, .. } => {
            let def = types.get(ty)?;
            let fields = match variant {
                None => def.fields()?,
                Some(v) => &def.variants()?.get(v)?.fields,
            };
            if fields.iter().any(|f| f.name == new_name) {
                return taken("a field of this type");
            }
        }
        Symbol::Local(span) => {
            let text = &checked.sources.get(span.file).text;
            let f = checked.module.items.iter().find_map(|i| match i {
                Item::Fn(f)
                    if f.span.file == span.file
                        && f.span.start <= span.start
                        && span.end <= f.span.end =>
                {
                    Some(f)
                }
                _ => None,
            })?;
            let clash = info.bindings.iter().any(|(b, _)| {
                b.file == span.file
                    && f.span.start <= b.start
                    && b.end <= f.span.end
                    && text.get(b.range()) == Some(new_name)
            });
            if clash {
                return taken("a variable of this function");
            }
            if info.fn_named(new_name).is_some()
                || crate::check::Builtin::ALL
                    .iter()
                    .any(|(n, _)| *n == new_name)
            {
                return taken("a function's name");
            }
        }
    }
    None
}

/// The name a symbol is written with.
pub fn symbol_name(checked: &Checked, symbol: Symbol) -> Option<String> {
    let types = &checked.info.types;
    Some(match symbol {
        Symbol::Type(t) => types.get(t)?.name.clone(),
        Symbol::Field { ty, variant, field } => {
            field_def(checked, ty, variant, field)?.name.clone()
        }
        Symbol::Variant { ty, variant } => types.get(ty)?.variants()?.get(variant)?.name.clone(),
        Symbol::Fn(k) => checked.info.fns.get(k)?.name.clone(),
        Symbol::Local(span) => checked
            .sources
            .get(span.file)
            .text
            .get(span.range())?
            .to_string(),
    })
}

fn field_def(
    checked: &Checked,
    ty: TypeId,
    variant: Option<usize>,
    field: usize,
) -> Option<&crate::types::FieldDef> {
    let def = checked.info.types.get(ty)?;
    match variant {
        None => def.fields()?.get(field),
        Some(v) => def.variants()?.get(v)?.fields.get(field),
    }
}

/// A function's signature as written: `fn name(a: T, …) to R`.
pub(crate) fn fn_signature(checked: &Checked, f: &FnInfo) -> String {
    let types = &checked.info.types;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|(n, t)| format!("{n}: {}", t.display(types)))
        .collect();
    let mut s = format!("fn {}({})", f.name, params.join(", "));
    if !matches!(f.ret, Ty::Unit) {
        s.push_str(&format!(" to {}", f.ret.display(types)));
    }
    s
}

fn docs_md(docs: &[String]) -> String {
    docs.iter().map(|d| d.trim()).collect::<Vec<_>>().join("\n")
}

/// Markdown describing `symbol`: its declaration, doc comment and, for an
/// `@ai` function, the JSON Schema the model's reply is held to.
pub fn describe(checked: &Checked, symbol: Symbol) -> Option<String> {
    let types = &checked.info.types;
    let code = |s: &str| format!("```vox\n{s}\n```");
    Some(match symbol {
        Symbol::Type(t) => {
            let def = types.get(t)?;
            let mut body = String::new();
            match &def.kind {
                crate::types::TypeDefKind::Record(fields) => {
                    body.push_str(&format!("type {} {{\n", def.name));
                    for f in fields {
                        body.push_str(&format!("    {}: {}\n", f.name, f.ty.display(types)));
                    }
                    body.push('}');
                }
                crate::types::TypeDefKind::Dynamic => {
                    body.push_str(&format!("type {} = dynamic", def.name));
                }
                crate::types::TypeDefKind::Sum(vs) => {
                    body.push_str(&format!("type {} =", def.name));
                    for v in vs {
                        body.push_str(&format!("\n    | {}", variant_text(types, v)));
                    }
                }
            }
            with_docs(code(&body), &def.docs)
        }
        Symbol::Field { ty, variant, field } => {
            let def = types.get(ty)?;
            let f = field_def(checked, ty, variant, field)?;
            let owner = match variant.and_then(|v| def.variants()?.get(v)) {
                Some(v) => format!("{}.{}", def.name, v.name),
                None => def.name.clone(),
            };
            with_docs(
                code(&format!("{owner}.{}: {}", f.name, f.ty.display(types))),
                &f.docs,
            )
        }
        Symbol::Variant { ty, variant } => {
            let def = types.get(ty)?;
            let v = def.variants()?.get(variant)?;
            with_docs(
                code(&format!("{}.{}", def.name, variant_text(types, v))),
                &v.docs,
            )
        }
        Symbol::Fn(k) => {
            let f = checked.info.fns.get(k)?;
            let decl = checked.module.fn_decl(f.item)?;
            let mut head = String::new();
            for d in &decl.decorators {
                if let Some(text) = checked.sources.get(d.span.file).text.get(d.span.range()) {
                    head.push_str(text);
                    head.push('\n');
                }
            }
            head.push_str(&fn_signature(checked, f));
            let mut md = with_docs(code(&head), &decl.docs);
            if f.ai.is_some() {
                if let Some((_, s)) = checked
                    .info
                    .output_schemas
                    .iter()
                    .find(|(t, _)| *t == f.ret)
                {
                    md.push_str(&format!(
                        "\n\n---\nThe model's reply is held to this JSON Schema (`{}`):\n```json\n{}\n```",
                        s.name,
                        s.schema.to_pretty()
                    ));
                }
            }
            md
        }
        Symbol::Local(span) => {
            let name = symbol_name(checked, symbol)?;
            let ty = checked
                .info
                .bindings
                .iter()
                .find(|(s, _)| *s == span)
                .map(|(_, t)| t.display(types))
                .unwrap_or_else(|| "_".into());
            code(&format!("{name}: {ty}"))
        }
    })
}

fn variant_text(types: &crate::types::TypeTable, v: &crate::types::VariantDef) -> String {
    if v.fields.is_empty() {
        return v.name.clone();
    }
    let fs: Vec<String> = v
        .fields
        .iter()
        .map(|f| format!("{}: {}", f.name, f.ty.display(types)))
        .collect();
    format!("{}({})", v.name, fs.join(", "))
}

fn with_docs(mut md: String, docs: &[String]) -> String {
    let d = docs_md(docs);
    if !d.is_empty() {
        md.push_str("\n\n");
        md.push_str(&d);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SourceFile, SourceMap};

    fn checked(src: &str) -> Checked {
        let mut m = SourceMap::new();
        m.add(SourceFile::new("a.vox", src));
        crate::check(m)
    }

    fn at(c: &Checked, idx: &Index, needle: &str, nth: usize) -> Occurrence {
        let off = c
            .sources
            .get(FileId(0))
            .text
            .match_indices(needle)
            .nth(nth)
            .unwrap()
            .0;
        *idx.at(FileId(0), off as u32)
            .unwrap_or_else(|| panic!("nothing at {needle}#{nth}"))
    }

    const SRC: &str = "/// A bill.\ntype Invoice {\n    vendor: str\n    total: int\n}\n\ntype State =\n    | Idle\n    | Busy(load: int)\n\nfn make(v: str) to Invoice {\n    let inv = Invoice { vendor: v, total: 1 }\n    return inv\n}\n\nfn load(s: State) to int {\n    return match s {\n        Idle => 0\n        Busy(l) => l + make(\"x\").total\n    }\n}\n\nfn busy() to State {\n    return Busy(load: 2)\n}\n";

    #[test]
    fn resolves_every_kind_of_name() {
        let c = checked(SRC);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        let idx = Index::build(&c);
        // Locals: the use of `inv` resolves to its `let`.
        let use_inv = at(&c, &idx, "inv\n", 0);
        let def_inv = at(&c, &idx, "inv =", 0);
        assert_eq!(use_inv.symbol, def_inv.symbol);
        assert!(def_inv.def && !use_inv.def);
        // Types: the declaration, the return type and the record literal.
        let ty = at(&c, &idx, "Invoice", 0).symbol;
        assert_eq!(idx.references(ty).count(), 3);
        // Fields: the declaration, the literal and the access.
        let total = at(&c, &idx, "total", 0).symbol;
        assert_eq!(idx.references(total).count(), 3);
        // Variants: declaration, pattern and constructor.
        let busy = at(&c, &idx, "Busy", 0).symbol;
        assert_eq!(idx.references(busy).count(), 3);
        // The variant's field by name.
        let load = at(&c, &idx, "load: int", 0).symbol;
        assert_eq!(idx.references(load).count(), 2);
        // Functions: declaration and call.
        let make = at(&c, &idx, "make", 0).symbol;
        assert_eq!(idx.references(make).count(), 2);
        assert_eq!(
            idx.definition(make).map(|s| s.start),
            Some(SRC.find("make").unwrap() as u32)
        );
        // Pattern bindings.
        let l = at(&c, &idx, "l +", 0).symbol;
        assert_eq!(idx.references(l).count(), 2);
    }

    #[test]
    fn describes_functions_and_types_of_expressions() {
        let c = checked(SRC);
        let idx = Index::build(&c);
        let make = at(&c, &idx, "make", 0).symbol;
        let md = describe(&c, make).unwrap();
        assert!(md.contains("fn make(v: str) to Invoice"), "{md}");
        let ty = describe(&c, at(&c, &idx, "Invoice", 0).symbol).unwrap();
        assert!(ty.contains("A bill.") && ty.contains("vendor: str"), "{ty}");
        let off = SRC.find("l + make").unwrap() as u32 + 2;
        let (_, e) = idx.expr_at(FileId(0), off).unwrap();
        assert_eq!(c.info.expr_type(e), &Ty::Int);
    }

    #[test]
    fn renames_that_would_clash_are_named() {
        let c = checked(SRC);
        let idx = Index::build(&c);
        let sym = |needle: &str| at(&c, &idx, needle, 0).symbol;
        assert!(rename_clash(&c, sym("Invoice"), "State").is_some());
        assert!(rename_clash(&c, sym("Invoice"), "Busy").is_some());
        assert!(rename_clash(&c, sym("Invoice"), "Option").is_some());
        assert!(rename_clash(&c, sym("Invoice"), "Bill").is_none());
        assert!(rename_clash(&c, sym("Idle"), "Busy").is_some());
        assert!(rename_clash(&c, sym("make"), "load").is_some());
        assert!(rename_clash(&c, sym("make"), "len").is_some());
        assert!(rename_clash(&c, sym("make"), "build").is_none());
        assert!(rename_clash(&c, sym("vendor"), "total").is_some());
        assert!(rename_clash(&c, sym("vendor"), "seller").is_none());
        // `inv` and the parameter `v` live in the same function.
        assert!(rename_clash(&c, sym("inv ="), "v").is_some());
        assert!(rename_clash(&c, sym("inv ="), "bill").is_none());
    }

    #[test]
    fn keywords_lex_as_keywords() {
        for k in KEYWORDS {
            let t = lexer::lex(FileId(0), k).tokens[0].kind;
            assert!(!matches!(t, TokenKind::Ident | TokenKind::TypeName), "{k}");
        }
    }

    #[test]
    fn ai_functions_show_their_schema() {
        let c = checked("type R {\n    a: int\n}\n\n@ai(max_iterations = 2)\n@uses(net)\nfn ask(q: str) to R {\n    return R { a: 1 }\n}\n");
        let idx = Index::build(&c);
        let ask = at(&c, &idx, "ask", 0).symbol;
        let md = describe(&c, ask).unwrap();
        assert!(
            md.contains("JSON Schema") && md.contains("\"additionalProperties\""),
            "{md}"
        );
    }
}
