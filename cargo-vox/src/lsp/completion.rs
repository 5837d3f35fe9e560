//! Completion: keywords, types, functions, builtins and locals in scope;
//! record fields after `.`; variants in patterns; `@ai(…)` argument names
//! and the provider prefixes of `model = "…"`; decorator names after `@`.

use lsp_types::{CompletionItem, CompletionItemKind, CompletionList, CompletionResponse, Position};
use vox_codegen::check::{Builtin, AI_ARGS, KNOWN_DECORATORS};
use vox_codegen::ide;
use vox_codegen::types::{Ty, TypeId, BUILTIN_TYPE_NAMES};
use vox_codegen::FileId;

use super::position::Encoding;
use super::store::Analysis;

fn item(
    label: impl Into<String>,
    kind: CompletionItemKind,
    detail: Option<String>,
) -> CompletionItem {
    CompletionItem {
        label: label.into(),
        kind: Some(kind),
        detail,
        ..Default::default()
    }
}

pub fn complete(a: &Analysis, file: FileId, pos: Position, enc: Encoding) -> CompletionResponse {
    let text = &a.checked.sources.get(file).text;
    let at = a.offset(file, pos, enc) as usize;
    let before = &text[..at];
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let word_start = line
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(line.len(), |(i, _)| i);
    let (head, prefix) = line.split_at(word_start);
    let items = items_for(a, file, at as u32, head, prefix);
    let first = prefix.chars().next().map(|c| c.to_ascii_lowercase());
    let items: Vec<CompletionItem> = items
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
    CompletionResponse::List(CompletionList {
        // Filtered by the first letter only: ask again as the word grows.
        is_incomplete: first.is_some(),
        items,
    })
}

fn items_for(a: &Analysis, file: FileId, at: u32, head: &str, prefix: &str) -> Vec<CompletionItem> {
    let checked = &a.checked;
    let types = &checked.info.types;
    let trimmed = head.trim_start();
    // `@ai(…)` arguments and the provider prefixes of a model string.
    if let Some(args) = trimmed.strip_prefix("@ai(") {
        if !args.contains(')') {
            if args.matches('"').count() % 2 == 1 {
                return vox_codegen::schema::PROVIDERS
                    .iter()
                    .chain(["fixture"].iter())
                    .map(|p| {
                        item(
                            format!("{p}:"),
                            CompletionItemKind::MODULE,
                            Some("provider".into()),
                        )
                    })
                    .collect();
            }
            let t = args.trim_end();
            if t.is_empty() || t.ends_with(',') {
                return AI_ARGS
                    .iter()
                    .map(|n| {
                        item(
                            *n,
                            CompletionItemKind::PROPERTY,
                            Some("@ai argument".into()),
                        )
                    })
                    .collect();
            }
            if t.ends_with('=') || t.ends_with(':') {
                return type_items(a);
            }
        }
    }
    if trimmed == "@" {
        return KNOWN_DECORATORS
            .iter()
            .map(|n| item(*n, CompletionItemKind::KEYWORD, Some("decorator".into())))
            .collect();
    }
    // Fields after `.`.
    if let Some(base) = head.strip_suffix('.') {
        return field_items(a, file, at, base);
    }
    let mut out = Vec::new();
    // Variants (patterns, constructors): the matched type's first.
    let in_match = ide::match_type_at(checked, file, at);
    let pattern_position = trimmed.is_empty() || trimmed.ends_with('(') || trimmed.ends_with('|');
    if let Some(ty) = in_match.filter(|_| pattern_position) {
        out.extend(variant_items(a, ty, "0"));
    }
    if prefix.chars().next().is_some_and(|c| c.is_uppercase()) || in_match.is_some() {
        for id in types.ids() {
            if Some(id) != in_match {
                out.extend(variant_items(a, id, "2"));
            }
        }
        for c in ["Some", "None", "Ok", "Error"] {
            out.push(item(c, CompletionItemKind::ENUM_MEMBER, None));
        }
    }
    for (name, ty) in ide::locals_at(checked, file, at) {
        let mut i = item(name, CompletionItemKind::VARIABLE, Some(ty.display(types)));
        i.sort_text = Some(format!("1{}", i.label));
        out.push(i);
    }
    out.extend(type_items(a));
    for f in &checked.info.fns {
        out.push(item(
            f.name.clone(),
            CompletionItemKind::FUNCTION,
            Some(ide::fn_signature(checked, f)),
        ));
    }
    for (name, _) in Builtin::ALL {
        out.push(item(
            name,
            CompletionItemKind::FUNCTION,
            Some("builtin".into()),
        ));
    }
    for k in ide::KEYWORDS {
        out.push(item(k, CompletionItemKind::KEYWORD, None));
    }
    out
}

fn type_items(a: &Analysis) -> Vec<CompletionItem> {
    let types = &a.checked.info.types;
    let mut out: Vec<CompletionItem> = BUILTIN_TYPE_NAMES
        .iter()
        .map(|n| item(*n, CompletionItemKind::STRUCT, Some("builtin type".into())))
        .collect();
    for d in &types.defs {
        let kind = if d.variants().is_some() {
            CompletionItemKind::ENUM
        } else {
            CompletionItemKind::STRUCT
        };
        out.push(item(d.name.clone(), kind, None));
    }
    out
}

fn variant_items(a: &Analysis, ty: TypeId, rank: &str) -> Vec<CompletionItem> {
    let Some(def) = a.checked.info.types.get(ty) else {
        return Vec::new();
    };
    def.variants()
        .unwrap_or(&[])
        .iter()
        .map(|v| {
            let mut i = item(
                v.name.clone(),
                CompletionItemKind::ENUM_MEMBER,
                Some(def.name.clone()),
            );
            i.sort_text = Some(format!("{rank}{}", v.name));
            i
        })
        .collect()
}

/// The fields of the record that `base` (`x`, `x.y.z` before the `.`) is.
fn field_items(a: &Analysis, file: FileId, at: u32, base: &str) -> Vec<CompletionItem> {
    let types = &a.checked.info.types;
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
    let locals = ide::locals_at(&a.checked, file, at);
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
                CompletionItemKind::FIELD,
                Some(f.ty.display(types)),
            );
            if !f.docs.is_empty() {
                i.documentation = Some(lsp_types::Documentation::String(f.docs.join("\n")));
            }
            i
        })
        .collect()
}
