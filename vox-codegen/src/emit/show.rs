//! `str` and `print` of any value (docs/language.md, "Printing"): the
//! writer for a Vox type, and the `Show` implementation of each declared
//! record and sum type, which writes it as Vox source would.
//!
//! The writer follows the Vox type, not the Rust one, since `str` and
//! `Decimal` are both a `String` in Rust but print differently inside a
//! value (`"text"` quoted, `12.50` as it is).

use std::fmt::Write as _;

use crate::types::{Ty, TypeDefKind, TypeId};

use super::names::{rust_ident, rust_str, rust_type_ident};
use super::{Emitter, TYPE_ALLOWS};

/// The runtime module that writes values.
pub(super) const SHOW: &str = "::vox_runtime::__private::show";

/// The writer of a value of type `ty` inside another value: an expression
/// of type `impl Fn(&mut String, &T)` for the Rust type `T` of `ty`.
pub(super) fn writer(ty: &Ty) -> String {
    match ty {
        Ty::Int => format!("{SHOW}::int"),
        Ty::Float => format!("{SHOW}::float"),
        Ty::Bool => format!("{SHOW}::boolean"),
        Ty::Str => format!("|VOX_O: &mut ::std::string::String, VOX_V: &::std::string::String| {SHOW}::text(VOX_O, VOX_V)"),
        Ty::Decimal | Ty::Date => format!("|VOX_O: &mut ::std::string::String, VOX_V: &::std::string::String| {SHOW}::verbatim(VOX_O, VOX_V)"),
        // An untyped `[]` or `None` holds `Unit` (docs/language.md, "Empty
        // lists and `None`").
        Ty::Unit | Ty::Never | Ty::Unknown | Ty::Error => format!("{SHOW}::unit"),
        Ty::List(t) => format!(
            "|VOX_O: &mut ::std::string::String, VOX_V| {SHOW}::list(VOX_O, VOX_V, {})",
            writer(t)
        ),
        Ty::Option(t) => format!(
            "|VOX_O: &mut ::std::string::String, VOX_V| {SHOW}::option(VOX_O, VOX_V, {})",
            writer(t)
        ),
        Ty::Result(t) => format!(
            "|VOX_O: &mut ::std::string::String, VOX_V| {SHOW}::result(VOX_O, VOX_V, {})",
            writer(t)
        ),
        Ty::Map(t) => format!(
            "|VOX_O: &mut ::std::string::String, VOX_V| {SHOW}::map(VOX_O, VOX_V, {})",
            writer(t)
        ),
        // `<image scan.png>`: the runtime's `Show` of media shows where it
        // comes from, never the content.
        Ty::Named(_) | Ty::Media(_) => format!("{SHOW}::value"),
    }
}

/// The writer of a value of type `ty` on its own (`str(v)`, `print(v)`):
/// text is not quoted there; everything else is written as inside a value.
pub(super) fn top_writer(ty: &Ty) -> String {
    match ty {
        Ty::Str => writer(&Ty::Decimal),
        t => writer(t),
    }
}

impl Emitter<'_> {
    /// `impl Show for T` of the declared type `id`: a record as
    /// `Name { field: value, … }`, a case with fields as `Case(value, …)`,
    /// a case without as `Case`.
    pub(super) fn show_impl(&mut self, id: TypeId) {
        let Some(def) = self.info.types.get(id) else {
            return;
        };
        let name = rust_type_ident(&def.name);
        let mut out = String::new();
        out.push_str(TYPE_ALLOWS);
        let _ = writeln!(out, "impl {SHOW}::Show for {name} {{");
        out.push_str("    fn show(&self, VOX_OUT: &mut ::std::string::String) {\n");
        match &def.kind {
            TypeDefKind::Record(fields) => {
                let mut text = format!("{} {{", def.name);
                for (i, f) in fields.iter().enumerate() {
                    text.push_str(if i == 0 { " " } else { ", " });
                    text.push_str(&f.name);
                    text.push_str(": ");
                    let _ = writeln!(out, "        VOX_OUT.push_str({});", rust_str(&text));
                    text.clear();
                    let _ = writeln!(
                        out,
                        "        {SHOW}::with(VOX_OUT, &self.{}, {});",
                        rust_ident(&f.name),
                        writer(&f.ty),
                    );
                }
                text.push_str(if fields.is_empty() { "}" } else { " }" });
                let _ = writeln!(out, "        VOX_OUT.push_str({});", rust_str(&text));
            }
            // A run-time category is written as its value, unquoted, as a
            // plain enum's case is.
            TypeDefKind::Dynamic => out.push_str("        VOX_OUT.push_str(self.as_str());\n"),
            TypeDefKind::Sum(variants) => {
                out.push_str("        match self {\n");
                for v in variants {
                    let vident = rust_type_ident(&v.name);
                    if v.fields.is_empty() {
                        let _ = writeln!(
                            out,
                            "            Self::{vident} => VOX_OUT.push_str({}),",
                            rust_str(&v.name)
                        );
                        continue;
                    }
                    let binds: Vec<String> = v
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| format!("{}: VOX_F{i}", rust_ident(&f.name)))
                        .collect();
                    let _ = writeln!(
                        out,
                        "            Self::{vident} {{ {} }} => {{",
                        binds.join(", ")
                    );
                    let _ = writeln!(
                        out,
                        "                VOX_OUT.push_str({});",
                        rust_str(&format!("{}(", v.name))
                    );
                    for (i, f) in v.fields.iter().enumerate() {
                        if i > 0 {
                            out.push_str("                VOX_OUT.push_str(\", \");\n");
                        }
                        let _ = writeln!(
                            out,
                            "                {SHOW}::with(VOX_OUT, VOX_F{i}, {});",
                            writer(&f.ty)
                        );
                    }
                    out.push_str("                VOX_OUT.push(')');\n            }\n");
                }
                out.push_str("        }\n");
            }
        }
        out.push_str("    }\n}\n\n");
        self.out.push_str(&out);
    }
}
