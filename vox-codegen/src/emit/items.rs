//! Type definitions (`pub struct`/`pub enum` with serde attributes), Rust
//! spellings of Vox types, fields boxed to break recursion, and the
//! structured-output schema statics.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::check::ModuleInfo;
use crate::schema;
use crate::types::{Ty, TypeDefKind, TypeId};

use super::names::{needs_rename, rust_ident, rust_str, rust_type_ident};
use super::{doc_attrs, Ctx, Emitter, Tail, TYPE_ALLOWS};
use crate::ast::Item;

impl Emitter<'_> {
    pub(super) fn type_def(&mut self, id: TypeId) {
        let Some(def) = self.info.types.get(id) else {
            return;
        };
        let mut out = String::new();
        let name = rust_type_ident(&def.name);
        if def.is_dynamic() {
            // The chosen value's text, compared with the caller's strings
            // (vox-runtime's `run_time_category!`: docs/runtime.md,
            // "Categories at run time").
            out.push_str("::vox_runtime::__private::run_time_category! {\n");
            doc_attrs(&mut out, &def.docs, "");
            out.push_str(TYPE_ALLOWS);
            let _ = writeln!(out, "{name}\n}}\n");
            self.out.push_str(&out);
            return;
        }
        doc_attrs(&mut out, &def.docs, "");
        out.push_str(TYPE_ALLOWS);
        out.push_str("#[derive(Debug, Clone, PartialEq, ::vox_runtime::serde::Serialize, ::vox_runtime::serde::Deserialize)]\n");
        match &def.kind {
            TypeDefKind::Record(fields) => {
                // A key the record does not have is an error, so a misnamed
                // field is never read as a missing `Option` (docs/runtime.md,
                // "Unknown and missing fields").
                out.push_str("#[serde(crate = \"::vox_runtime::serde\", deny_unknown_fields)]\n");
                let _ = writeln!(out, "pub struct {name} {{");
                for f in fields {
                    doc_attrs(&mut out, &f.docs, "    ");
                    let ident = rust_ident(&f.name);
                    if needs_rename(&f.name, &ident) {
                        let _ = writeln!(out, "    #[serde(rename = {})]", rust_str(&f.name));
                    }
                    let ty = self.field_rust_type(id, usize::MAX, &f.name, &f.ty);
                    let _ = writeln!(out, "    pub {ident}: {ty},");
                }
                out.push_str("}\n\n");
            }
            TypeDefKind::Sum(variants) => {
                // Cases without fields only: a plain enum, `"USD"` in JSON
                // (serde's unit variants); otherwise objects tagged by `kind`.
                if def.is_plain_enum() {
                    out.push_str("#[serde(crate = \"::vox_runtime::serde\")]\n");
                } else {
                    out.push_str(
                        "#[serde(crate = \"::vox_runtime::serde\", tag = \"kind\", deny_unknown_fields)]\n",
                    );
                }
                let _ = writeln!(out, "pub enum {name} {{");
                for (vi, v) in variants.iter().enumerate() {
                    doc_attrs(&mut out, &v.docs, "    ");
                    let vident = rust_type_ident(&v.name);
                    if vident != v.name {
                        let _ = writeln!(out, "    #[serde(rename = {})]", rust_str(&v.name));
                    }
                    if v.fields.is_empty() {
                        let _ = writeln!(out, "    {vident},");
                        continue;
                    }
                    let _ = writeln!(out, "    {vident} {{");
                    for f in &v.fields {
                        doc_attrs(&mut out, &f.docs, "        ");
                        let ident = rust_ident(&f.name);
                        if needs_rename(&f.name, &ident) {
                            let _ =
                                writeln!(out, "        #[serde(rename = {})]", rust_str(&f.name));
                        }
                        let ty = self.field_rust_type(id, vi, &f.name, &f.ty);
                        let _ = writeln!(out, "        {ident}: {ty},");
                    }
                    out.push_str("    },\n");
                }
                out.push_str("}\n\n");
            }
            TypeDefKind::Dynamic => {}
        }
        self.out.push_str(&out);
    }

    fn field_rust_type(&self, id: TypeId, variant: usize, field: &str, ty: &Ty) -> String {
        if self.boxed.contains_key(&(id, variant, field.to_string())) {
            return self.boxed_rust_type(ty);
        }
        self.rust_type(ty)
    }

    /// The function `map` applies to a value of the boxed field type `ty`
    /// (`Option[N]`, `Option[Option[N]]`, …) to box its innermost named
    /// value; closure parameters are typed so an untyped `None` still compiles.
    pub(super) fn box_fn(&self, ty: &Ty) -> String {
        match ty {
            Ty::Option(inner) | Ty::Result(inner)
                if matches!(**inner, Ty::Option(_) | Ty::Result(_)) =>
            {
                format!(
                    "|b: {}| b.map({})",
                    self.rust_type(inner),
                    self.box_fn(inner)
                )
            }
            _ => "::std::boxed::Box::new".into(),
        }
    }

    /// `Option<Option<N>>` as `Option<Option<Box<N>>>`: the innermost named
    /// type boxed.
    fn boxed_rust_type(&self, ty: &Ty) -> String {
        match ty {
            Ty::Option(t) => format!("::std::option::Option<{}>", self.boxed_rust_type(t)),
            Ty::Result(t) => format!(
                "::std::result::Result<{}, ::std::string::String>",
                self.boxed_rust_type(t)
            ),
            t => format!("::std::boxed::Box<{}>", self.rust_type(t)),
        }
    }

    pub(super) fn rust_type(&self, ty: &Ty) -> String {
        match ty {
            Ty::Int => "i64".into(),
            Ty::Float => "f64".into(),
            Ty::Bool => "bool".into(),
            Ty::Str | Ty::Decimal | Ty::Date => "::std::string::String".into(),
            Ty::Media(m) => m.rust_type().into(),
            Ty::Unit | Ty::Never => "()".into(),
            Ty::List(t) => format!("::std::vec::Vec<{}>", self.rust_type(t)),
            Ty::Map(t) => format!(
                "::std::collections::BTreeMap<::std::string::String, {}>",
                self.rust_type(t)
            ),
            Ty::Option(t) => format!("::std::option::Option<{}>", self.rust_type(t)),
            Ty::Result(t) => format!(
                "::std::result::Result<{}, ::std::string::String>",
                self.rust_type(t)
            ),
            Ty::Named(id) => self
                .info
                .types
                .get(*id)
                .map_or("()".into(), |d| rust_type_ident(&d.name)),
            Ty::Unknown | Ty::Error => "_".into(),
        }
    }

    pub(super) fn collect_schemas(&mut self) {
        let mut names: HashSet<String> = HashSet::new();
        for f in &self.info.fns {
            if f.ai.is_none() || self.schemas.iter().any(|(t, _, _)| *t == f.ret) {
                continue;
            }
            let mut s = match self.info.output_schemas.iter().find(|(t, _)| *t == f.ret) {
                Some((_, s)) => s.clone(),
                None => schema::output_schema(&f.ret, &self.info.types),
            };
            let base = s.name.clone();
            let mut n = 1;
            while !names.insert(s.name.clone()) {
                n += 1;
                s.name = format!("{}_{n}", base.chars().take(60).collect::<String>());
            }
            let static_name = format!("VOX_SCHEMA_{}", s.name.replace('-', "_"));
            self.schemas.push((f.ret.clone(), static_name, s));
        }
    }
}

/// The closure that unboxes a boxed field's value under `depth` layers of
/// `Option`/`Result` (both have `map`): `|b| *b`, `|b| b.map(|b| *b)`, …
pub(super) fn unbox_fn(depth: usize) -> String {
    let mut f = "|b| *b".to_string();
    for _ in 1..depth {
        f = format!("|b| b.map({f})");
    }
    f
}

/// Fields stored as `Option<Box<T>>` because `T` contains the record again.
pub(super) fn boxed_fields(info: &ModuleInfo) -> HashMap<(TypeId, usize, String), usize> {
    let types = &info.types;
    // Edges that make a type's size depend on another's: direct, Option and Result.
    let size_edges = |id: TypeId| -> Vec<TypeId> {
        let mut out = Vec::new();
        let mut add = |t: &Ty| {
            let mut t = t;
            loop {
                match t {
                    Ty::Named(n) => {
                        out.push(*n);
                        break;
                    }
                    Ty::Option(i) | Ty::Result(i) => t = i,
                    _ => break,
                }
            }
        };
        if let Some(def) = types.get(id) {
            def.every_field().for_each(|f| add(&f.ty));
        }
        out
    };
    let mut reach_cache: HashMap<TypeId, HashSet<TypeId>> = HashMap::new();
    let mut reaches = |from: TypeId, to: TypeId| -> bool {
        let set = reach_cache.entry(from).or_insert_with(|| {
            let mut seen = HashSet::new();
            let mut stack = vec![from];
            while let Some(n) = stack.pop() {
                if seen.insert(n) {
                    stack.extend(size_edges(n));
                }
            }
            seen
        });
        set.contains(&to)
    };
    let mut out = HashMap::new();
    for id in types.ids() {
        let Some(def) = types.get(id) else { continue };
        for (vi, f) in def.fields_by_variant() {
            // Records' fields are keyed by `usize::MAX` (see `Emitter::boxed`).
            let vi = vi.unwrap_or(usize::MAX);
            // `Option[N]`, `Option[Option[N]]`, `Option[Result[N]]`, …: the
            // checker rejects recursion without an `Option` on the way.
            let mut t = &f.ty;
            let mut depth = 0;
            while let Ty::Option(inner) | Ty::Result(inner) = t {
                t = inner;
                depth += 1;
            }
            if let (Ty::Named(target), true) = (t, depth > 0) {
                if reaches(*target, id) {
                    out.insert((id, vi, f.name.clone()), depth);
                }
            }
        }
    }
    out
}

/// Partial types: what a streamed call shows while the reply arrives
/// (vox-runtime's docs/runtime.md, "Streaming"). One `Partial<Name>` per
/// record and tagged sum type reachable from an `@ai` function's return
/// type: every field optional (absent until seen; an `Option` field is
/// `Option<Option<_>>`, `Some(None)` once `null` was seen), nested records
/// and sums partial too. Plain enums, numbers, `bool` and `Decimal` keep
/// their own types: they appear only when complete.
impl Emitter<'_> {
    /// The records and tagged sums reachable from `@ai` return types, in
    /// declaration order.
    pub(super) fn partial_ids(&self) -> Vec<TypeId> {
        let mut seen: HashSet<TypeId> = HashSet::new();
        let mut todo: Vec<Ty> = self
            .info
            .fns
            .iter()
            .filter(|f| f.ai.is_some())
            .map(|f| f.ret.clone())
            .collect();
        while let Some(ty) = todo.pop() {
            match ty {
                Ty::List(t) | Ty::Map(t) | Ty::Option(t) | Ty::Result(t) => todo.push(*t),
                Ty::Named(id) => {
                    let Some(def) = self.info.types.get(id) else {
                        continue;
                    };
                    if def.is_plain_enum() || def.is_dynamic() || !seen.insert(id) {
                        continue;
                    }
                    match &def.kind {
                        TypeDefKind::Record(fields) => {
                            todo.extend(fields.iter().map(|f| f.ty.clone()))
                        }
                        TypeDefKind::Sum(variants) => todo.extend(
                            variants
                                .iter()
                                .flat_map(|v| v.fields.iter().map(|f| f.ty.clone())),
                        ),
                        TypeDefKind::Dynamic => {}
                    }
                }
                _ => {}
            }
        }
        self.info
            .types
            .ids()
            .filter(|id| seen.contains(id))
            .collect()
    }

    /// The Rust name of `id`'s partial type: `Partial<Name>`, or
    /// `VoxPartial<Name>` when the module has a type of that name.
    pub(super) fn partial_type_name(&self, id: TypeId) -> String {
        let name = self
            .info
            .types
            .get(id)
            .map_or_else(String::new, |d| rust_type_ident(&d.name));
        let plain = format!("Partial{name}");
        let taken = self
            .info
            .types
            .ids()
            .filter_map(|i| self.info.types.get(i))
            .any(|d| rust_type_ident(&d.name) == plain);
        if taken {
            format!("VoxPartial{name}")
        } else {
            plain
        }
    }

    /// The partial Rust type of a value of `ty` that has started to show.
    pub(super) fn partial_rust_type(&self, ty: &Ty) -> String {
        match ty {
            Ty::List(t) => format!("::std::vec::Vec<{}>", self.partial_rust_type(t)),
            Ty::Map(t) => format!(
                "::std::collections::BTreeMap<::std::string::String, {}>",
                self.partial_rust_type(t)
            ),
            Ty::Option(t) => format!("::std::option::Option<{}>", self.partial_rust_type(t)),
            Ty::Named(id) => match self.info.types.get(*id) {
                // Plain enums and run-time categories appear only complete.
                Some(def) if !def.is_plain_enum() && !def.is_dynamic() => {
                    self.partial_type_name(*id)
                }
                _ => self.rust_type(ty),
            },
            _ => self.rust_type(ty),
        }
    }

    /// A field of a partial type: optional, boxed where the full type's
    /// field is (recursion), with the serde attributes that tell "not
    /// seen" from `null`.
    fn partial_field(
        &self,
        out: &mut String,
        id: TypeId,
        variant: usize,
        f: &crate::types::FieldDef,
        indent: &str,
        public: bool,
    ) {
        let ident = rust_ident(&f.name);
        let mut attrs = vec!["default".to_owned()];
        if needs_rename(&f.name, &ident) {
            attrs.push(format!("rename = {}", rust_str(&f.name)));
        }
        let mut ty = self.partial_rust_type(&f.ty);
        if self.boxed.contains_key(&(id, variant, f.name.clone())) {
            ty = match &f.ty {
                Ty::Option(inner) => format!(
                    "::std::option::Option<::std::boxed::Box<{}>>",
                    self.partial_rust_type(inner)
                ),
                _ => format!("::std::boxed::Box<{ty}>"),
            };
        }
        if matches!(f.ty, Ty::Option(_)) {
            attrs.push("deserialize_with = \"::vox_runtime::__private::seen\"".to_owned());
        }
        attrs.push("skip_serializing_if = \"::std::option::Option::is_none\"".to_owned());
        let _ = writeln!(out, "{indent}#[serde({})]", attrs.join(", "));
        let vis = if public { "pub " } else { "" };
        let _ = writeln!(out, "{indent}{vis}{ident}: ::std::option::Option<{ty}>,");
    }

    pub(super) fn partial_type_def(&mut self, id: TypeId) {
        let Some(def) = self.info.types.get(id) else {
            return;
        };
        let name = self.partial_type_name(id);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "/// `{}` as far as a streamed reply shows it (`f_stream`): each field is\n/// `None` until seen (vox-runtime: docs/runtime.md, \"Streaming\").",
            def.name
        );
        out.push_str(TYPE_ALLOWS);
        match &def.kind {
            // Never reached: `partial_ids` leaves categories out.
            TypeDefKind::Dynamic => return,
            TypeDefKind::Record(fields) => {
                out.push_str("#[derive(Debug, Clone, PartialEq, Default, ::vox_runtime::serde::Serialize, ::vox_runtime::serde::Deserialize)]\n");
                out.push_str("#[serde(crate = \"::vox_runtime::serde\")]\n");
                let _ = writeln!(out, "pub struct {name} {{");
                for f in fields {
                    self.partial_field(&mut out, id, usize::MAX, f, "    ", true);
                }
                out.push_str("}\n\n");
            }
            TypeDefKind::Sum(variants) => {
                out.push_str("#[derive(Debug, Clone, PartialEq, ::vox_runtime::serde::Serialize, ::vox_runtime::serde::Deserialize)]\n");
                out.push_str("#[serde(crate = \"::vox_runtime::serde\", tag = \"kind\")]\n");
                let _ = writeln!(out, "pub enum {name} {{");
                for (vi, v) in variants.iter().enumerate() {
                    let vident = rust_type_ident(&v.name);
                    if vident != v.name {
                        let _ = writeln!(out, "    #[serde(rename = {})]", rust_str(&v.name));
                    }
                    if v.fields.is_empty() {
                        let _ = writeln!(out, "    {vident} {{}},");
                        continue;
                    }
                    let _ = writeln!(out, "    {vident} {{");
                    for f in &v.fields {
                        self.partial_field(&mut out, id, vi, f, "        ", false);
                    }
                    out.push_str("    },\n");
                }
                out.push_str("}\n\n");
            }
        }
        self.out.push_str(&out);
    }
}

impl Emitter<'_> {
    /// `const NAME = value`: a `static` computed on first use (a
    /// `LazyLock`, so a long list is built once), read by cloning.
    pub(super) fn constant(&mut self, ci: usize) {
        let c = &self.info.consts[ci];
        let Some(Item::Const(d)) = self.module.items.get(c.item) else {
            return;
        };
        let ty = self.rust_type(&c.ty);
        let mut out = String::new();
        doc_attrs(&mut out, &d.docs, "");
        self.current_fn = c.name.clone();
        // Its value is pure code; a `return` in it gives the value.
        let body = self.expr(&d.value, Ctx::Pure, 1, Tail::Value);
        let vis = if d.is_pub { "pub " } else { "" };
        out.push_str(&format!(
            "#[allow(non_upper_case_globals)]\n{}\n{vis}static {}: ::std::sync::LazyLock<{ty}> = ::std::sync::LazyLock::new(|| -> {ty} {{\n    {body}\n}});\n\n",
            super::FN_ALLOWS,
            rust_ident(&c.name)
        ));
        self.out.push_str(&out);
    }

    /// A use of constant `ci`: a copy of its value.
    pub(super) fn const_value(&self, ci: usize) -> String {
        let name = self
            .info
            .consts
            .get(ci)
            .map_or_else(String::new, |c| rust_ident(&c.name));
        let module = if self.in_test { "super" } else { "self" };
        format!("::std::clone::Clone::clone(&*{module}::{name})")
    }
}
