//! Completion: keywords, types, functions, builtins and locals in scope;
//! record fields after `.`; variants in patterns; `@ai(…)` argument names
//! and the provider prefixes of `model = "…"`; decorator names after `@`.

use super::{locals_at, match_type_at, KEYWORDS};
use crate::check::{Builtin, AI_ARGS, KNOWN_DECORATORS};
use crate::source::FileId;
use crate::types::{Ty, TypeId, BUILTIN_TYPE_NAMES};
use crate::Checked;

/// What a completion is, for the editor's icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A provider prefix (`openai:`) in a model string.
    Provider,
    /// An `@ai(…)` argument name.
    AiArgument,
    Keyword,
    Decorator,
    Variant,
    Local,
    /// A record type or a builtin type.
    Record,
    /// A sum type.
    Sum,
    Function,
    Builtin,
    Field,
}

/// One completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    /// A short description (a type, a signature, `builtin`).
    pub detail: Option<String>,
    /// The doc comment, if any.
    pub documentation: Option<String>,
    /// How the editor should order it, when not by label.
    pub sort_text: Option<String>,
}

/// The completions at one position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completions {
    pub items: Vec<Completion>,
    /// Filtered by the first letter typed only: ask again as the word grows.
    pub incomplete: bool,
}

fn item(label: impl Into<String>, kind: CompletionKind, detail: Option<String>) -> Completion {
    Completion {
        label: label.into(),
        kind,
        detail,
        documentation: None,
        sort_text: None,
    }
}

/// The completions at byte offset `at` of `file`.
pub fn completions(checked: &Checked, file: FileId, at: u32) -> Completions {
    let text = &checked.sources.get(file).text;
    let at = (at as usize).min(text.len());
    let Some(before) = text.get(..at) else {
        return Completions {
            items: Vec::new(),
            incomplete: false,
        };
    };
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let word_start = line
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(line.len(), |(i, _)| i);
    let (head, prefix) = line.split_at(word_start);
    let items = items_for(checked, file, at as u32, head, prefix);
    let first = prefix.chars().next().map(|c| c.to_ascii_lowercase());
    let items = items
        .into_iter()
        .filter(|i| {
            first.is_none_or(|f| {
                i.label
                    .chars()
                    .next()
                    .is_some_and(|c| c.to_ascii_lowercase() == f)
            })
        })
        .collect();
    Completions {
        items,
        incomplete: first.is_some(),
    }
}

fn items_for(
    checked: &Checked,
    file: FileId,
    at: u32,
    head: &str,
    prefix: &str,
) -> Vec<Completion> {
    let types = &checked.info.types;
    let trimmed = head.trim_start();
    // `@ai(…)` arguments and the provider prefixes of a model string.
    if let Some(args) = trimmed.strip_prefix("@ai(") {
        if !args.contains(')') {
            if args.matches('"').count() % 2 == 1 {
                return crate::schema::PROVIDERS
                    .iter()
                    .chain(["fixture"].iter())
                    .map(|p| {
                        item(
                            format!("{p}:"),
                            CompletionKind::Provider,
                            Some("provider".into()),
                        )
                    })
                    .collect();
            }
            let t = args.trim_end();
            if t.is_empty() || t.ends_with(',') {
                return AI_ARGS
                    .iter()
                    .map(|n| item(*n, CompletionKind::AiArgument, Some("@ai argument".into())))
                    .collect();
            }
            if t.ends_with('=') || t.ends_with(':') {
                return type_items(checked);
            }
        }
    }
    if trimmed == "@" {
        return KNOWN_DECORATORS
            .iter()
            .map(|n| item(*n, CompletionKind::Decorator, Some("decorator".into())))
            .collect();
    }
    // Fields after `.`.
    if let Some(base) = head.strip_suffix('.') {
        return field_items(checked, file, at, base);
    }
    let mut out = Vec::new();
    // Variants (patterns, constructors): the matched type's first.
    let in_match = match_type_at(checked, file, at);
    let pattern_position = trimmed.is_empty() || trimmed.ends_with('(') || trimmed.ends_with('|');
    if let Some(ty) = in_match.filter(|_| pattern_position) {
        out.extend(variant_items(checked, ty, "0"));
    }
    if prefix.chars().next().is_some_and(|c| c.is_uppercase()) || in_match.is_some() {
        for id in types.ids() {
            if Some(id) != in_match {
                out.extend(variant_items(checked, id, "2"));
            }
        }
        for c in ["Some", "None", "Ok", "Error"] {
            out.push(item(c, CompletionKind::Variant, None));
        }
    }
    for (name, ty) in locals_at(checked, file, at) {
        let mut i = item(name, CompletionKind::Local, Some(ty.display(types)));
        i.sort_text = Some(format!("1{}", i.label));
        out.push(i);
    }
    out.extend(type_items(checked));
    for f in &checked.info.fns {
        out.push(item(
            f.name.clone(),
            CompletionKind::Function,
            Some(super::fn_signature(checked, f)),
        ));
    }
    for (name, _) in Builtin::ALL {
        out.push(item(name, CompletionKind::Builtin, Some("builtin".into())));
    }
    for k in KEYWORDS {
        out.push(item(k, CompletionKind::Keyword, None));
    }
    out
}

fn type_items(checked: &Checked) -> Vec<Completion> {
    let types = &checked.info.types;
    let mut out: Vec<Completion> = BUILTIN_TYPE_NAMES
        .iter()
        .map(|n| item(*n, CompletionKind::Record, Some("builtin type".into())))
        .collect();
    for d in &types.defs {
        let kind = if d.variants().is_some() {
            CompletionKind::Sum
        } else {
            CompletionKind::Record
        };
        out.push(item(d.name.clone(), kind, None));
    }
    out
}

fn variant_items(checked: &Checked, ty: TypeId, rank: &str) -> Vec<Completion> {
    let Some(def) = checked.info.types.get(ty) else {
        return Vec::new();
    };
    def.variants()
        .unwrap_or(&[])
        .iter()
        .map(|v| {
            let mut i = item(
                v.name.clone(),
                CompletionKind::Variant,
                Some(def.name.clone()),
            );
            i.sort_text = Some(format!("{rank}{}", v.name));
            i
        })
        .collect()
}

/// The fields of the record that `base` (`x`, `x.y.z` before the `.`) is.
fn field_items(checked: &Checked, file: FileId, at: u32, base: &str) -> Vec<Completion> {
    let types = &checked.info.types;
    let chain_start = base
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '.')
        .last()
        .map_or(base.len(), |(i, _)| i);
    let mut parts = base[chain_start..].split('.');
    let Some(root) = parts.next().filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    let locals = locals_at(checked, file, at);
    let Some((_, mut ty)) = locals.into_iter().find(|(n, _)| n == root) else {
        return Vec::new();
    };
    for part in parts {
        let next = match &ty {
            Ty::Named(id) => types
                .get(*id)
                .and_then(|d| d.fields())
                .and_then(|fs| fs.iter().find(|f| f.name == part))
                .map(|f| f.ty.clone()),
            _ => None,
        };
        let Some(next) = next else {
            return Vec::new();
        };
        ty = next;
    }
    let Ty::Named(id) = ty else {
        return Vec::new();
    };
    let Some(fields) = types.get(id).and_then(|d| d.fields()) else {
        return Vec::new();
    };
    fields
        .iter()
        .map(|f| {
            let mut i = item(
                f.name.clone(),
                CompletionKind::Field,
                Some(f.ty.display(types)),
            );
            if !f.docs.is_empty() {
                i.documentation = Some(f.docs.join("\n"));
            }
            i
        })
        .collect()
}
