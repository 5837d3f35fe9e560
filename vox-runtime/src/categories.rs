//! Categories known only at run time (`type Category = dynamic` in Vox;
//! docs/runtime.md, "Categories at run time").
//!
//! The generated schema marks each such type with
//! `{"type":"string","x-vox-categories":"Category"}`. A call fills every
//! mark with the values its options give (`CallOptions::categories`), so
//! the schema sent — and the cassette key, the stated shape, the
//! corrections and the streamed partials, which all read it — lists exactly
//! those values. The filled-in schema is held to the same strict-mode
//! limits as a compiled one, before anything is sent.

use serde_json::{Map, Value};

use crate::ai_function::CATEGORIES_KEY;
use crate::error::Error;

/// OpenAI's documented strict-mode limits, which vox-codegen holds compiled
/// schemas to as well (`vox/schema/*`): enum values in all, characters of
/// property names, definition names and enum values, and the characters of
/// one enum's values once it has more than [`LARGE_ENUM`] of them.
pub(crate) const MAX_ENUM_VALUES: usize = 1000;
pub(crate) const MAX_STRING_CHARS: usize = 120_000;
pub(crate) const LARGE_ENUM: usize = 250;
pub(crate) const MAX_LARGE_ENUM_CHARS: usize = 15_000;

/// The values of each run-time category type, by the Vox type's name, in
/// the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Categories(Vec<(String, Vec<String>)>);

impl Categories {
    /// No values for any type.
    pub(crate) const NONE: Categories = Categories(Vec::new());

    /// Sets `type_name`'s values (replacing earlier ones).
    pub(crate) fn set(&mut self, type_name: String, values: Vec<String>) {
        match self.0.iter_mut().find(|(name, _)| *name == type_name) {
            Some((_, old)) => *old = values,
            None => self.0.push((type_name, values)),
        }
    }

    pub(crate) fn has(&self, type_name: &str) -> bool {
        self.get(type_name).is_some()
    }

    fn get(&self, type_name: &str) -> Option<&[String]> {
        self.0
            .iter()
            .find(|(name, _)| name == type_name)
            .map(|(_, values)| values.as_slice())
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| name.as_str())
    }
}

/// `schema` with every run-time category mark replaced by the values
/// `categories` gives it, as JSON text.
pub(crate) fn fill(
    function: &str,
    schema: &Value,
    categories: &Categories,
) -> Result<String, Error> {
    let mut filled = schema.clone();
    let mut missing = Vec::new();
    let mut used = Vec::new();
    fill_node(
        function,
        &mut filled,
        categories,
        &mut missing,
        &mut used,
        0,
    )?;
    if !missing.is_empty() {
        missing.sort();
        missing.dedup();
        let given: Vec<&str> = categories.names().collect();
        let first = &missing[0];
        return Err(Error::Categories {
            function: function.to_owned(),
            type_name: first.clone(),
            problem: format!(
                "the call gave no values for {}; give them with \
                 `CallOptions::new().categories(\"{first}\", [\"…\", …])`{}",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if given.is_empty() {
                    String::new()
                } else {
                    format!(" (values were given for {})", given.join(", "))
                }
            ),
        });
    }
    within_limits(function, &filled)?;
    serde_json::to_string(&filled).map_err(|e| Error::Config(e.to_string()))
}

/// Deepest nesting followed; generated schemas are far shallower.
const MAX_DEPTH: usize = 64;

fn fill_node(
    function: &str,
    node: &mut Value,
    categories: &Categories,
    missing: &mut Vec<String>,
    used: &mut Vec<String>,
    depth: usize,
) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    match node {
        Value::Object(map) => {
            if let Some(Value::String(name)) = map.remove(CATEGORIES_KEY) {
                match categories.get(&name) {
                    Some(values) => {
                        check_values(function, &name, values)?;
                        map.insert(
                            "enum".to_owned(),
                            Value::Array(values.iter().cloned().map(Value::String).collect()),
                        );
                        used.push(name);
                    }
                    None => missing.push(name),
                }
                return Ok(());
            }
            for (_, child) in map.iter_mut() {
                fill_node(function, child, categories, missing, used, depth + 1)?;
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter_mut()
            .try_for_each(|item| fill_node(function, item, categories, missing, used, depth + 1)),
        _ => Ok(()),
    }
}

/// One type's values: at least one, none empty, no two the same.
fn check_values(function: &str, name: &str, values: &[String]) -> Result<(), Error> {
    let problem = |problem: String| Error::Categories {
        function: function.to_owned(),
        type_name: name.to_owned(),
        problem,
    };
    if values.is_empty() {
        return Err(problem(
            "the list of values is empty; a reply could never fit it".to_owned(),
        ));
    }
    if values.iter().any(String::is_empty) {
        return Err(problem("a value is the empty string".to_owned()));
    }
    let mut seen: Vec<&str> = values.iter().map(String::as_str).collect();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(problem(format!("the value {:?} is given twice", w[0])));
    }
    let chars: usize = values.iter().map(|v| v.chars().count()).sum();
    if values.len() > LARGE_ENUM && chars > MAX_LARGE_ENUM_CHARS {
        return Err(problem(format!(
            "{} values of {chars} characters in all: past {LARGE_ENUM} values, one enum's \
             values may have at most {MAX_LARGE_ENUM_CHARS} characters (OpenAI's strict-mode \
             limit)",
            values.len()
        )));
    }
    Ok(())
}

/// The whole filled-in schema against the strict-mode totals.
fn within_limits(function: &str, schema: &Value) -> Result<(), Error> {
    let mut enum_values = 0;
    let mut chars = 0;
    count(schema, &mut enum_values, &mut chars, 0);
    let problem = if enum_values > MAX_ENUM_VALUES {
        format!(
            "the schema would have {enum_values} enum values in all (the strict-mode limit is \
             {MAX_ENUM_VALUES})"
        )
    } else if chars > MAX_STRING_CHARS {
        format!(
            "the schema would have {chars} characters of names and enum values (the \
             strict-mode limit is {MAX_STRING_CHARS})"
        )
    } else {
        return Ok(());
    };
    Err(Error::Categories {
        function: function.to_owned(),
        type_name: "(all)".to_owned(),
        problem,
    })
}

fn count(node: &Value, enum_values: &mut usize, chars: &mut usize, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("enum", Value::Array(values)) => {
                        *enum_values += values.len();
                        *chars += values
                            .iter()
                            .filter_map(Value::as_str)
                            .map(|v| v.chars().count())
                            .sum::<usize>();
                    }
                    ("properties" | "$defs", Value::Object(props)) => {
                        *chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
                        count_children(props, enum_values, chars, depth);
                    }
                    _ => count(child, enum_values, chars, depth + 1),
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| count(item, enum_values, chars, depth + 1)),
        _ => {}
    }
}

fn count_children(
    props: &Map<String, Value>,
    enum_values: &mut usize,
    chars: &mut usize,
    depth: usize,
) {
    for child in props.values() {
        count(child, enum_values, chars, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cats(name: &str, values: &[&str]) -> Categories {
        let mut c = Categories::default();
        c.set(
            name.to_owned(),
            values.iter().map(|v| (*v).to_owned()).collect(),
        );
        c
    }

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "label":{"type":"string","x-vox-categories":"Category","description":"The ticket's queue."},
            "others":{"type":"array","items":{"$ref":"#/$defs/Category"}}},
            "required":["label","others"],"additionalProperties":false,
            "$defs":{"Category":{"type":"string","x-vox-categories":"Category"}}})
    }

    #[test]
    fn every_mark_gets_exactly_the_values_given() {
        let text = fill(
            "f",
            &schema(),
            &cats("Category", &["billing", "shipping", "other"]),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let want = json!(["billing", "shipping", "other"]);
        assert_eq!(v["properties"]["label"]["enum"], want);
        assert_eq!(
            v["properties"]["label"]["description"],
            "The ticket's queue."
        );
        assert_eq!(v["$defs"]["Category"]["enum"], want);
        assert!(!text.contains(CATEGORIES_KEY), "{text}");
    }

    #[test]
    fn a_type_without_values_is_named_in_the_error() {
        let err = fill("f", &schema(), &cats("Queue", &["a"])).unwrap_err();
        let text = err.to_string();
        assert!(matches!(&err, Error::Categories { type_name, .. } if type_name == "Category"));
        assert!(text.contains("no values for `Category`"), "{text}");
        assert!(text.contains("values were given for Queue"), "{text}");
    }

    #[test]
    fn empty_duplicate_and_blank_values_are_refused() {
        for (values, needle) in [
            (&[][..], "empty"),
            (&["a", "b", "a"][..], "\"a\" is given twice"),
            (&["a", ""][..], "empty string"),
        ] {
            let err = fill("f", &schema(), &cats("Category", values)).unwrap_err();
            assert!(err.to_string().contains(needle), "{values:?}: {err}");
        }
    }

    #[test]
    fn strict_limits_apply_to_the_values_given() {
        // 1001 short values: past the total; 300 values of 60 characters:
        // past the large-enum characters; 250 such values are fine.
        let many: Vec<String> = (0..1001).map(|i| format!("c{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = fill("f", &schema(), &cats("Category", &refs)).unwrap_err();
        assert!(err.to_string().contains("enum values in all"), "{err}");

        let long: Vec<String> = (0..300).map(|i| format!("{i:060}")).collect();
        let refs: Vec<&str> = long.iter().map(String::as_str).collect();
        let err = fill("f", &schema(), &cats("Category", &refs)).unwrap_err();
        assert!(
            err.to_string().contains("at most 15000 characters"),
            "{err}"
        );

        let fine: Vec<&str> = refs[..250].to_vec();
        assert!(fill("f", &schema(), &cats("Category", &fine)).is_ok());
    }
}
