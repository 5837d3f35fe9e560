//! OpenAI's strict-mode limits on the size of a schema, and the measures a
//! derived schema is held to them by (`vox/schema/*` diagnostics).

use crate::json::Json;

/// OpenAI's documented strict-mode limits.
pub const MAX_NESTING: usize = 10;
pub const MAX_PROPERTIES: usize = 5000;
pub const MAX_ENUM_VALUES: usize = 1000;
pub const MAX_STRING_CHARS: usize = 120_000;

/// Size measures of a schema, compared against the strict-mode limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaStats {
    /// Deepest nesting of objects (the root object is level 1); `$ref`s to
    /// definitions are followed once, recursion (`#`) is not.
    pub nesting: usize,
    pub properties: usize,
    pub enum_values: usize,
    /// Total characters of property names, definition names and enum values.
    pub string_chars: usize,
}

impl SchemaStats {
    /// A sentence per exceeded limit.
    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.nesting > MAX_NESTING {
            v.push(format!(
                "objects nest {} levels deep (the limit is {MAX_NESTING})",
                self.nesting
            ));
        }
        if self.properties > MAX_PROPERTIES {
            v.push(format!(
                "{} object properties in total (the limit is {MAX_PROPERTIES})",
                self.properties
            ));
        }
        if self.enum_values > MAX_ENUM_VALUES {
            v.push(format!(
                "{} enum values in total (the limit is {MAX_ENUM_VALUES})",
                self.enum_values
            ));
        }
        if self.string_chars > MAX_STRING_CHARS {
            v.push(format!(
                "{} characters of names and enum values (the limit is {MAX_STRING_CHARS})",
                self.string_chars
            ));
        }
        v
    }
}

/// Measures a derived schema.
pub fn stats(schema: &Json) -> SchemaStats {
    let mut st = SchemaStats::default();
    let defs = schema.get("$defs");
    if let Some(Json::Obj(ds)) = defs {
        for (name, d) in ds {
            st.string_chars += name.chars().count();
            count(d, &mut st);
        }
    }
    count_root(schema, &mut st);
    st.nesting = depth(schema, defs, &mut Vec::new());
    st
}

fn count_root(schema: &Json, st: &mut SchemaStats) {
    if let Json::Obj(pairs) = schema {
        for (k, v) in pairs {
            if k != "$defs" {
                count_pair(k, v, st);
            }
        }
    }
}

fn count(node: &Json, st: &mut SchemaStats) {
    match node {
        Json::Obj(pairs) => pairs.iter().for_each(|(k, v)| count_pair(k, v, st)),
        Json::Arr(items) => items.iter().for_each(|i| count(i, st)),
        _ => {}
    }
}

fn count_pair(k: &str, v: &Json, st: &mut SchemaStats) {
    match (k, v) {
        ("properties", Json::Obj(props)) => {
            st.properties += props.len();
            for (name, p) in props {
                st.string_chars += name.chars().count();
                count(p, st);
            }
        }
        ("enum", Json::Arr(vals)) => {
            st.enum_values += vals.len();
            for v in vals {
                if let Json::Str(s) = v {
                    st.string_chars += s.chars().count();
                }
            }
        }
        _ => count(v, st),
    }
}

fn depth<'a>(node: &'a Json, defs: Option<&'a Json>, following: &mut Vec<&'a str>) -> usize {
    match node {
        Json::Obj(pairs) => {
            let is_object = node.get("type") == Some(&Json::str("object"));
            let mut inner = 0;
            for (k, v) in pairs {
                match (k.as_str(), v) {
                    ("$defs", _) => {}
                    ("$ref", Json::Str(r)) => {
                        if let (Some(name), Some(defs)) = (r.strip_prefix("#/$defs/"), defs) {
                            if !following.contains(&name) {
                                if let Some(target) = defs.get(name) {
                                    following.push(name);
                                    inner = inner.max(depth(target, Some(defs), following));
                                    following.pop();
                                }
                            }
                        }
                    }
                    ("properties", Json::Obj(props)) => {
                        for (_, p) in props {
                            inner = inner.max(depth(p, defs, following));
                        }
                    }
                    _ => inner = inner.max(depth(v, defs, following)),
                }
            }
            inner + usize::from(is_object)
        }
        Json::Arr(items) => items
            .iter()
            .map(|i| depth(i, defs, following))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}
