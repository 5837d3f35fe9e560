//! Declarations: collecting the module's types (names, variants, fields)
//! and function signatures, and resolving written types.

use crate::ast::*;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::Span;
use crate::types::*;

use super::{suggest, Builtin, Checker, FnInfo, RESERVED_CTORS};

/// Resolves a written type against a checked module's types (no diagnostics:
/// the error says what is wrong).
pub fn resolve_type(t: &TypeExpr, types: &TypeTable) -> Result<Ty, String> {
    let arg = |i: usize| -> Result<Ty, String> {
        match (t.args.len(), t.args.get(i)) {
            (1, Some(a)) => resolve_type(a, types),
            (n, _) => Err(format!(
                "`{}` takes 1 type argument, found {n}",
                t.name.name
            )),
        }
    };
    let plain = |ty: Ty| -> Result<Ty, String> {
        if t.args.is_empty() {
            Ok(ty)
        } else {
            Err(format!("`{}` takes no type arguments", t.name.name))
        }
    };
    let name = t.name.name.as_str();
    match BuiltinType::lookup(name) {
        Some(BuiltinType::Plain(ty)) => plain(ty),
        Some(BuiltinType::Generic(make)) => Ok(make(Box::new(arg(0)?))),
        Some(BuiltinType::Map) => match t.args.as_slice() {
            [k, v] => match resolve_type(k, types)? {
                Ty::Str => Ok(Ty::Map(Box::new(resolve_type(v, types)?))),
                _ => Err(format!("a map's keys are `str`, found `{k}`")),
            },
            args => Err(format!(
                "`map` takes 2 type arguments, found {}",
                args.len()
            )),
        },
        None => match types.find(name) {
            Some(id) => plain(Ty::Named(id)),
            None => {
                let names: Vec<&str> = types.defs.iter().map(|d| d.name.as_str()).collect();
                Err(match did_you_mean(name, names) {
                    Some(s) => format!("unknown type `{name}`; did you mean `{s}`?"),
                    None => format!("unknown type `{name}`"),
                })
            }
        },
    }
}

impl Checker<'_> {
    pub(super) fn collect_types(&mut self) {
        let module = self.module;
        // Names first, so fields can refer to types declared later.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            if let Some(dup) = self.duplicate_type_name(&t.name) {
                self.err(dup);
                continue;
            }
            let id = TypeId(self.info.types.defs.len() as u32);
            self.type_index
                .insert(t.name.name.clone(), (id, t.name.span));
            self.info.type_items.insert(idx, id);
            self.info.types.defs.push(TypeDef {
                name: t.name.name.clone(),
                docs: t.docs.clone(),
                is_pub: t.is_pub,
                kind: TypeDefKind::Record(Vec::new()),
                span: t.name.span,
            });
            for d in &t.decorators {
                self.err(
                    Diagnostic::error(
                        Code::MisplacedDecorator,
                        d.span,
                        format!("`@{}` cannot be applied to a type", d.name.name),
                    )
                    .hint("decorators apply to functions"),
                );
            }
        }
        self.chat_types();
        // Variants.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            let (Some(&id), TypeDeclKind::Sum(vs)) = (self.info.type_items.get(&idx), &t.kind)
            else {
                continue;
            };
            for (vi, v) in vs.iter().enumerate() {
                let prev = self
                    .variant_index
                    .get(&v.name.name)
                    .map(|p| p.2)
                    .or_else(|| self.type_index.get(&v.name.name).map(|p| p.1));
                if RESERVED_CTORS.contains(&v.name.name.as_str())
                    || BUILTIN_TYPE_NAMES.contains(&v.name.name.as_str())
                {
                    self.err(Diagnostic::error(
                        Code::Duplicate,
                        v.name.span,
                        format!(
                            "`{}` is a builtin name and cannot be a variant",
                            v.name.name
                        ),
                    ));
                } else if let Some(prev) = prev {
                    self.err(
                        Diagnostic::error(
                            Code::Duplicate,
                            v.name.span,
                            format!("the name `{}` is defined more than once", v.name.name),
                        )
                        .label("redefined here")
                        .related(prev, "first defined here")
                        .hint(
                            "variant names are visible across the whole module and must be unique",
                        ),
                    );
                } else {
                    self.variant_index
                        .insert(v.name.name.clone(), (id, vi, v.name.span));
                }
            }
        }
        if let Some(role) = self.chat_role {
            for (vi, name) in ["User", "Assistant"].into_iter().enumerate() {
                if !self.variant_index.contains_key(name) && !self.type_index.contains_key(name) {
                    self.variant_index.insert(
                        name.into(),
                        (role, vi, Span::new(crate::source::FileId(0), 0, 0)),
                    );
                }
            }
        }
        // Fields.
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Type(t) = item else { continue };
            let kind = match &t.kind {
                TypeDeclKind::Record(fields) => TypeDefKind::Record(self.resolve_fields(fields)),
                TypeDeclKind::Dynamic(_) => TypeDefKind::Dynamic,
                TypeDeclKind::Sum(vs) => TypeDefKind::Sum({
                    self.reserved_kind_fields(vs);
                    vs.iter()
                        .map(|v| VariantDef {
                            name: v.name.name.clone(),
                            docs: v.docs.clone(),
                            fields: self.resolve_fields(&v.fields),
                            span: v.name.span,
                        })
                        .collect()
                }),
            };
            if let Some(&id) = self.info.type_items.get(&idx) {
                self.info.types.defs[id.0 as usize].kind = kind;
            }
        }
    }

    /// A `@rust` tool's declaration: a signature with a return type, no
    /// body, no other decorators (docs/language.md, "Tools").
    fn rust_declaration(&mut self, f: &FnDecl, other_decorators: bool) {
        if f.body.span.start != f.body.span.end {
            self.err(
                Diagnostic::error(
                    Code::RustTool,
                    f.body.span,
                    format!("the `@rust` function `{}` has a body", f.name.name),
                )
                .label("the crate implements it in Rust")
                .hint("remove the body, or remove `@rust` to write the function in Vox")
                .fix_with(
                    crate::diagnostic::Applicability::MaybeIncorrect,
                    "remove the body",
                    vec![crate::diagnostic::Edit {
                        span: f.body.span,
                        replacement: String::new(),
                    }],
                ),
            );
        }
        if f.ret.is_none() {
            self.err(
                Diagnostic::error(
                    Code::RustTool,
                    f.name.span,
                    format!("the `@rust` function `{}` has no return type", f.name.name),
                )
                .hint("declare what the tool gives back, e.g. `to Order`"),
            );
        }
        if other_decorators {
            self.err(
                Diagnostic::error(
                    Code::RustTool,
                    f.name.span,
                    format!(
                        "the `@rust` function `{}` takes no other decorator",
                        f.name.name
                    ),
                )
                .hint("a `@rust` function is a tool the crate implements; its effects are Rust's"),
            );
        }
    }

    /// The builtin `Message` and `Role` (docs/language.md, "Conversations"),
    /// added when a written type names either and the module declares
    /// neither. `Role`'s variants `User` and `Assistant` are names of the
    /// module unless it has variants of its own so named; where a `Role`
    /// is expected they are always `Role`'s.
    fn chat_types(&mut self) {
        let module = self.module;
        if self.type_index.contains_key("Message") || self.type_index.contains_key("Role") {
            return;
        }
        if !mentions_type(module, &["Message", "Role"]) {
            return;
        }
        let span = Span::new(crate::source::FileId(0), 0, 0);
        let role = TypeId(self.info.types.defs.len() as u32);
        let doc = |s: &str| vec![s.to_owned()];
        self.info.types.defs.push(TypeDef {
            name: "Role".into(),
            docs: doc("Who said a message: the person (`User`) or the model (`Assistant`)."),
            is_pub: true,
            kind: TypeDefKind::Sum(
                ["User", "Assistant"]
                    .into_iter()
                    .map(|name| VariantDef {
                        name: name.into(),
                        docs: Vec::new(),
                        fields: Vec::new(),
                        span,
                    })
                    .collect(),
            ),
            span,
        });
        let message = TypeId(self.info.types.defs.len() as u32);
        self.info.types.defs.push(TypeDef {
            name: "Message".into(),
            docs: doc("One message of a conversation: who said it, and what."),
            is_pub: true,
            kind: TypeDefKind::Record(vec![
                FieldDef {
                    name: "role".into(),
                    docs: Vec::new(),
                    ty: Ty::Named(role),
                    span,
                },
                FieldDef {
                    name: "content".into(),
                    docs: Vec::new(),
                    ty: Ty::Str,
                    span,
                },
            ]),
            span,
        });
        self.type_index.insert("Role".into(), (role, span));
        self.type_index.insert("Message".into(), (message, span));
        self.chat_role = Some(role);
        self.info.chat_message = Some(message);
    }

    /// Variants are tagged by a `kind` property in JSON (serde's internal
    /// tag), so no variant field may be called `kind`.
    fn reserved_kind_fields(&mut self, variants: &[Variant]) {
        for v in variants {
            for f in v.fields.iter().filter(|f| f.name.name == "kind") {
                self.err(
                    Diagnostic::error(
                        Code::DuplicateField,
                        f.name.span,
                        format!("variant `{}` cannot have a field named `kind`", v.name.name),
                    )
                    .label("`kind` carries the variant's name in JSON")
                    .hint("rename the field, e.g. `category`")
                    .fix("rename to `kind_`", f.name.span, "kind_"),
                );
            }
        }
    }

    fn duplicate_type_name(&self, name: &Ident) -> Option<Diagnostic> {
        if BUILTIN_TYPE_NAMES.contains(&name.name.as_str())
            || RESERVED_CTORS.contains(&name.name.as_str())
        {
            return Some(Diagnostic::error(
                Code::Duplicate,
                name.span,
                format!("`{}` is a builtin type name", name.name),
            ));
        }
        let (_, prev) = self.type_index.get(&name.name)?;
        Some(
            Diagnostic::error(
                Code::Duplicate,
                name.span,
                format!("the type `{}` is defined more than once", name.name),
            )
            .label("redefined here")
            .related(*prev, "first defined here"),
        )
    }

    fn resolve_fields(&mut self, fields: &[Field]) -> Vec<FieldDef> {
        let mut out: Vec<FieldDef> = Vec::with_capacity(fields.len());
        for f in fields {
            let ty = self.resolve_type(&f.ty);
            if let Some(prev) = out.iter().find(|p| p.name == f.name.name) {
                let prev = prev.span;
                self.err(
                    Diagnostic::error(
                        Code::DuplicateField,
                        f.name.span,
                        format!("field `{}` is declared twice", f.name.name),
                    )
                    .related(prev, "first declared here"),
                );
                continue;
            }
            out.push(FieldDef {
                name: f.name.name.clone(),
                docs: f.docs.clone(),
                ty,
                span: f.name.span,
            });
        }
        out
    }

    pub(super) fn resolve_type(&mut self, t: &TypeExpr) -> Ty {
        let name = t.name.name.as_str();
        let arity = |c: &mut Self, n: usize| -> bool {
            if t.args.len() == n {
                return true;
            }
            let msg = if n == 0 {
                format!("`{name}` takes no type arguments")
            } else {
                format!(
                    "`{name}` takes {n} type argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    t.args.len()
                )
            };
            let mut d = Diagnostic::error(Code::GenericArity, t.span, msg);
            if name == "Result" {
                d = d.hint("`Result[T]` always has `str` as its error type");
            }
            c.err(d);
            false
        };
        let inner = |c: &mut Self| -> Ty {
            match t.args.first() {
                Some(a) => c.resolve_type(a),
                None => Ty::Error,
            }
        };
        match BuiltinType::lookup(name) {
            Some(BuiltinType::Plain(ty)) => {
                if !arity(self, 0) {
                    return Ty::Error;
                }
                ty
            }
            Some(BuiltinType::Generic(make)) => {
                let ok = arity(self, 1);
                let inner = inner(self);
                if !ok {
                    return Ty::Error;
                }
                make(Box::new(inner))
            }
            Some(BuiltinType::Map) => {
                if !arity(self, 2) {
                    for a in &t.args {
                        self.resolve_type(a);
                    }
                    return Ty::Error;
                }
                let key = self.resolve_type(&t.args[0]);
                let value = self.resolve_type(&t.args[1]);
                if !matches!(key, Ty::Str | Ty::Error) {
                    let k = &t.args[0];
                    self.err(
                        Diagnostic::error(
                            Code::MapKey,
                            k.span,
                            format!("a map's keys are `str`, found `{}`", self.show(&key)),
                        )
                        .label("not `str`")
                        .hint("Vox maps are keyed by text (their JSON is an object): write `map[str, …]` and convert keys with `str(k)`"),
                    );
                    return Ty::Error;
                }
                Ty::Map(Box::new(value))
            }
            None => {
                if let Some(&(id, _)) = self.type_index.get(name) {
                    if !arity(self, 0) {
                        return Ty::Error;
                    }
                    return Ty::Named(id);
                }
                for a in &t.args {
                    self.resolve_type(a);
                }
                let mut d = Diagnostic::error(
                    Code::UnknownType,
                    t.name.span,
                    format!("unknown type `{name}`"),
                )
                .label("not a declared type");
                let suggestion = rust_type_alias(name).map(str::to_string).or_else(|| {
                    let names: Vec<&str> = BUILTIN_TYPE_NAMES
                        .iter()
                        .copied()
                        .chain(self.type_index.keys().map(String::as_str))
                        .collect();
                    did_you_mean(name, names).map(str::to_string)
                });
                if let Some(s) = suggestion {
                    d = suggest(d, &s, t.name.span);
                } else if self.variant_index.contains_key(name) {
                    d = d.hint(format!(
                        "`{name}` is a variant, not a type; use the sum type it belongs to"
                    ));
                }
                self.err(d);
                Ty::Error
            }
        }
    }

    pub(super) fn collect_fns(&mut self) {
        let module = self.module;
        for (idx, item) in module.items.iter().enumerate() {
            let Item::Fn(f) = item else { continue };
            let dup = if Builtin::lookup(&f.name.name).is_some() {
                Some(Diagnostic::error(
                    Code::Duplicate,
                    f.name.span,
                    format!(
                        "`{}` is a builtin function and cannot be redefined",
                        f.name.name
                    ),
                ))
            } else {
                self.fn_index.get(&f.name.name).map(|&prev| {
                    let prev_span = module
                        .fn_decl(self.info.fns[prev].item)
                        .map_or(f.name.span, |p| p.name.span);
                    Diagnostic::error(
                        Code::Duplicate,
                        f.name.span,
                        format!("the function `{}` is defined more than once", f.name.name),
                    )
                    .label("redefined here")
                    .related(prev_span, "first defined here")
                })
            };
            let mut params: Vec<(String, Ty)> = Vec::new();
            for p in &f.params {
                let ty = self.resolve_type(&p.ty);
                if let Some(prev) = f
                    .params
                    .iter()
                    .take_while(|q| !std::ptr::eq(*q, p))
                    .find(|q| q.name.name == p.name.name)
                {
                    self.err(
                        Diagnostic::error(
                            Code::Duplicate,
                            p.name.span,
                            format!("parameter `{}` is declared twice", p.name.name),
                        )
                        .related(prev.name.span, "first declared here"),
                    );
                }
                params.push((p.name.name.clone(), ty));
            }
            let ret = f.ret.as_ref().map_or(Ty::Unit, |t| self.resolve_type(t));
            let (ai, test, declared_net) = self.check_decorators(f, &ret);
            if f.name.name == "main" && (!f.params.is_empty() || !matches!(ret, Ty::Unit)) {
                self.err(
                    Diagnostic::error(
                        Code::MainSignature,
                        f.name.span,
                        "`fn main` takes no parameters and returns nothing",
                    )
                    .hint("write `fn main() { … }`; read inputs inside it"),
                );
            }
            let uses: Vec<super::Effect> = f
                .decorator("uses")
                .map(|d| {
                    super::Effect::ALL
                        .into_iter()
                        .filter(|e| d.args.iter().any(|a| a.name.name == e.name()))
                        .collect()
                })
                .unwrap_or_default();
            if f.external {
                self.rust_declaration(f, ai.is_some() || test || f.decorator("uses").is_some());
            }
            let info = FnInfo {
                name: f.name.name.clone(),
                params,
                ret,
                net: declared_net,
                uses,
                ai,
                test,
                rust: f.external,
                item: idx,
            };
            if let Some(d) = dup {
                self.err(d);
                // Checked but not callable by name.
                self.info.fns.push(info);
            } else {
                self.fn_index
                    .insert(f.name.name.clone(), self.info.fns.len());
                self.info.fns.push(info);
            }
            self.info.calls.push(Vec::new());
            self.info.effect_uses.push(Vec::new());
        }
        let mut reserved = Vec::new();
        // In a library crate `fn main` is emitted as `pub fn vox_main`
        // (README, "The language"), so a user `vox_main` would collide.
        if let (Some(_), Some(&vm)) = (self.fn_index.get("main"), self.fn_index.get("vox_main")) {
            if let Some(d) = module.fn_decl(self.info.fns[vm].item) {
                self.err(
                    Diagnostic::error(
                        Code::ReservedName,
                        d.name.span,
                        "`vox_main` is reserved in a module with `fn main`",
                    )
                    .label("reserved name")
                    .hint("in a library crate `fn main` becomes the Rust function `vox_main`; rename this function"),
                );
            }
        }
        // Each `@ai` function `f` also becomes the Rust function `f_batch`
        // (docs/runtime.md, "Bulk runs"), so a Vox `f_batch` would collide.
        for f in &self.info.fns {
            if f.ai.is_none() {
                continue;
            }
            let batch = format!("{}_batch", f.name);
            let Some(&other) = self.fn_index.get(&batch) else {
                continue;
            };
            let (Some(d), Some(ai_decl)) = (
                module.fn_decl(self.info.fns[other].item),
                module.fn_decl(f.item),
            ) else {
                continue;
            };
            reserved.push(
                Diagnostic::error(
                    Code::ReservedName,
                    d.name.span,
                    format!("`{batch}` is reserved by the @ai function `{}`", f.name),
                )
                .label("reserved name")
                .related(ai_decl.name.span, "the @ai function")
                .hint(format!(
                    "the @ai function `{}` also becomes the Rust function `{batch}` (its bulk run on the provider's batch engine); rename this function",
                    f.name
                )),
            );
        }
        for d in reserved {
            self.err(d);
        }
    }
}

/// Rust spellings people reach for, mapped to the Vox type.
fn rust_type_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "String" | "string" | "Str" | "text" => "str",
        "i64" | "i32" | "u32" | "u64" | "usize" | "Int" | "integer" => "int",
        "f64" | "f32" | "Float" | "number" => "float",
        "Bool" | "boolean" => "bool",
        "Vec" | "Array" | "array" => "list",
        "dict" | "Dict" | "Map" | "HashMap" | "BTreeMap" | "Dictionary" | "MutableMap" => "map",
        "unit" | "()" => "Unit",
        _ => return None,
    })
}

/// Whether a written type of `module` (a signature, a field, a constant's
/// annotation) names one of `names`.
fn mentions_type(module: &Module, names: &[&str]) -> bool {
    fn names_in(t: &TypeExpr, names: &[&str]) -> bool {
        names.contains(&t.name.name.as_str()) || t.args.iter().any(|a| names_in(a, names))
    }
    module.items.iter().any(|item| match item {
        Item::Fn(f) => {
            f.params.iter().any(|p| names_in(&p.ty, names))
                || f.ret.as_ref().is_some_and(|r| names_in(r, names))
        }
        Item::Type(t) => match &t.kind {
            TypeDeclKind::Record(fields) => fields.iter().any(|f| names_in(&f.ty, names)),
            TypeDeclKind::Sum(vs) => vs
                .iter()
                .any(|v| v.fields.iter().any(|f| names_in(&f.ty, names))),
            TypeDeclKind::Dynamic(_) => false,
        },
        Item::Const(c) => c.ty.as_ref().is_some_and(|t| names_in(t, names)),
        Item::Example(_) => false,
    })
}
