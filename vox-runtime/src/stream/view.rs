//! A partial value as [`PartialParser`](super::partial::PartialParser)
//! shows it, borrowed from the parser's state instead of built: the
//! finished parts are the parser's own [`Value`]s, the unfinished spine
//! (the containers still open, the string still growing) is read in place.
//!
//! A [`View`] is what [`PartialParser::value`](super::partial::PartialParser::value)
//! would return, without copying it: [`View::to_value`] builds that value,
//! and a `View` is a serde [`Deserializer`] that gives a type exactly what
//! deserializing that value gives it (the same visits in the same order,
//! the same errors), so a streamed call's typed partial costs one pass over
//! what is shown and no copy of it.

use std::sync::OnceLock;

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Value};

type Error = serde_json::Error;

/// A partial value, borrowed.
#[derive(Debug)]
pub(crate) enum View<'a> {
    /// A finished value.
    Whole(&'a Value),
    /// A string still growing: its prefix so far.
    Str(&'a str),
    /// An object still open: its finished entries, and the entry in
    /// progress (its key and what its value shows), if it shows.
    Obj {
        map: &'a Map<String, Value>,
        open: Option<(&'a str, Box<View<'a>>)>,
    },
    /// A list still open: its finished elements, and the last one, if it
    /// shows.
    Arr {
        items: &'a [Value],
        open: Option<Box<View<'a>>>,
    },
}

impl<'a> View<'a> {
    /// The value this shows, built.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            View::Whole(v) => (*v).clone(),
            View::Str(s) => Value::String((*s).to_owned()),
            View::Obj { map, open } => {
                let mut map = (*map).clone();
                if let Some((key, child)) = open {
                    map.insert((*key).to_owned(), child.to_value());
                }
                Value::Object(map)
            }
            View::Arr { items, open } => {
                let mut items = items.to_vec();
                items.extend(open.as_ref().map(|c| c.to_value()));
                Value::Array(items)
            }
        }
    }

    /// The value of `key` in the object this shows (`None` when it is not
    /// an object or has no such key yet).
    pub(crate) fn field(self, key: &str) -> Option<View<'a>> {
        match self {
            View::Whole(Value::Object(map)) => map.get(key).map(View::Whole),
            View::Obj { map, open } => match open {
                Some((k, child)) if k == key => Some(*child),
                _ => map.get(key).map(View::Whole),
            },
            _ => None,
        }
    }

    /// How much this shows: one for each value in it, plus the bytes of
    /// its strings. A partial that is a state of another and differs from
    /// it is smaller (a state has fewer keys or elements, or a shorter
    /// string, somewhere, and is equal elsewhere), so within one attempt,
    /// whose partials each are a state of the next (the parser's rules),
    /// an unchanged size is an unchanged partial.
    pub(crate) fn size(&self) -> usize {
        fn whole(v: &Value) -> usize {
            1 + match v {
                Value::String(s) => s.len(),
                Value::Array(items) => items.iter().map(whole).sum(),
                Value::Object(map) => map.values().map(whole).sum(),
                _ => 0,
            }
        }
        match self {
            View::Whole(v) => whole(v),
            View::Str(s) => 1 + s.len(),
            View::Obj { map, open } => {
                1 + map.values().map(whole).sum::<usize>()
                    + open.as_ref().map_or(0, |(_, c)| c.size())
            }
            View::Arr { items, open } => {
                1 + items.iter().map(whole).sum::<usize>() + open.as_ref().map_or(0, |c| c.size())
            }
        }
    }
}

/// Whether a [`Map`] keeps its keys sorted (serde_json without its
/// `preserve_order` feature) rather than in insertion order: where
/// [`View::to_value`] puts the entry in progress, and so where a `View`
/// hands it over.
fn maps_sorted() -> bool {
    static SORTED: OnceLock<bool> = OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut map = Map::new();
        map.insert("b".to_owned(), Value::Null);
        map.insert("a".to_owned(), Value::Null);
        map.keys().next().map(String::as_str) == Some("a")
    })
}

/// The methods a `View` that is not [`View::Whole`] leaves to the value it
/// shows, built (rare forms: numbers, tuples, enums… which an open
/// container or a growing string is not).
macro_rules! built {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
                match self {
                    View::Whole(v) => v.$method($($arg,)* visitor),
                    other => other.to_value().$method($($arg,)* visitor),
                }
            }
        )*
    };
}

impl<'de> Deserializer<'de> for View<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_any(visitor),
            View::Str(s) => visitor.visit_borrowed_str(s),
            View::Obj { map, open } => visit_object(map, open, visitor),
            View::Arr { items, open } => visit_array(items, open, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_option(visitor),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_newtype_struct(name, visitor),
            other => visitor.visit_newtype_struct(other),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_str(visitor),
            View::Str(s) => visitor.visit_borrowed_str(s),
            other => other.to_value().deserialize_str(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_string(visitor),
            View::Str(s) => visitor.visit_borrowed_str(s),
            other => other.to_value().deserialize_string(visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_seq(visitor),
            View::Arr { items, open } => visit_array(items, open, visitor),
            other => other.to_value().deserialize_seq(visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_map(visitor),
            View::Obj { map, open } => visit_object(map, open, visitor),
            other => other.to_value().deserialize_map(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            View::Whole(v) => v.deserialize_struct(name, fields, visitor),
            View::Obj { map, open } => visit_object(map, open, visitor),
            View::Arr { items, open } => visit_array(items, open, visitor),
            other => other.to_value().deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    built! {
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }
}

/// An open object, as serde_json visits an object: its entries in the
/// map's order, and an error if the visitor leaves some unread.
fn visit_object<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    open: Option<(&'de str, Box<View<'de>>)>,
    visitor: V,
) -> Result<V::Value, Error> {
    let len = map.len() + usize::from(open.is_some());
    let mut access = ObjAccess {
        entries: map.iter().peekable(),
        open,
        sorted: maps_sorted(),
        value: None,
        left: len,
    };
    let value = visitor.visit_map(&mut access)?;
    if access.left == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

/// An open list, as serde_json visits an array.
fn visit_array<'de, V: Visitor<'de>>(
    items: &'de [Value],
    open: Option<Box<View<'de>>>,
    visitor: V,
) -> Result<V::Value, Error> {
    let len = items.len() + usize::from(open.is_some());
    let mut access = ArrAccess {
        items: items.iter(),
        open,
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.items.len() == 0 && access.open.is_none() {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in array"))
    }
}

struct ObjAccess<'de> {
    entries: std::iter::Peekable<serde_json::map::Iter<'de>>,
    open: Option<(&'de str, Box<View<'de>>)>,
    sorted: bool,
    /// The value of the key just handed over.
    value: Option<View<'de>>,
    left: usize,
}

impl<'de> MapAccess<'de> for ObjAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        // The entry in progress goes where `Map::insert` would put it.
        let open_first = match (&self.open, self.entries.peek()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some((key, _)), Some((next, _))) => self.sorted && *key < next.as_str(),
        };
        let key = if open_first {
            let Some((key, child)) = self.open.take() else {
                return Ok(None);
            };
            self.value = Some(*child);
            key
        } else {
            match self.entries.next() {
                Some((key, value)) => {
                    self.value = Some(View::Whole(value));
                    key.as_str()
                }
                None => return Ok(None),
            }
        };
        self.left -= 1;
        seed.deserialize(Key(key)).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct ArrAccess<'de> {
    items: std::slice::Iter<'de, Value>,
    open: Option<Box<View<'de>>>,
}

impl<'de> SeqAccess<'de> for ArrAccess<'de> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        if let Some(item) = self.items.next() {
            return seed.deserialize(item).map(Some);
        }
        match self.open.take() {
            Some(last) => seed.deserialize(*last).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() + usize::from(self.open.is_some()))
    }
}

/// An object's key, read as serde_json reads a key of a [`Value`]'s map:
/// a string, or a number or a boolean written as one.
struct Key<'de>(&'de str);

/// A number in a key, as serde_json reads one: the key's whole text, a
/// JSON number.
macro_rules! numeric_key {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                // Nothing before or after the number, not even whitespace.
                let json_ws = [' ', '\t', '\n', '\r'];
                if !self.0.starts_with(|c: char| c == '-' || c.is_ascii_digit())
                    || self.0.ends_with(json_ws)
                {
                    return Err(de::Error::custom(
                        "invalid value: expected key to be a number in quotes",
                    ));
                }
                let mut de = serde_json::Deserializer::from_str(self.0);
                let value = de.$method(visitor)?;
                de.end()?;
                Ok(value)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    numeric_key! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(
                de::Unexpected::Str(other),
                &visitor,
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // Keys are never null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        IntoDeserializer::<Error>::into_deserializer(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct
        map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::super::partial::PartialParser;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Doc {
        title: Option<String>,
        items: Option<Vec<Item>>,
        tags: Option<BTreeMap<String, Option<Vec<String>>>>,
        shape: Option<Shape>,
        pair: Option<(i64, String)>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Item {
        name: Option<String>,
        qty: Option<i64>,
        ok: Option<Option<bool>>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind")]
    enum Shape {
        Circle {
            r: Option<f64>,
            label: Option<String>,
        },
        Dot {},
    }

    /// Every prefix of a reply, typed from the view and from the value
    /// built, gives the same (or fails alike).
    #[test]
    fn typed_from_the_view_is_typed_from_the_value() {
        let schema = json!({"type": "object", "properties": {
            "title": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "qty": {"type": "integer"},
                "ok": {"type": ["boolean", "null"]}}}},
            "tags": {"type": "object", "additionalProperties": {
                "type": ["array", "null"], "items": {"type": "string"}}},
            "shape": {"anyOf": [
                {"type": "object", "properties": {"kind": {"enum": ["Circle"]},
                    "r": {"type": "number"}, "label": {"type": "string"}}},
                {"type": "object", "properties": {"kind": {"enum": ["Dot"]}}}]},
            "pair": {"type": "array", "items": {}}}});
        let text = r#"{"title": "caf\u00e9 \"A\"", "tags": {"z": ["x", "y"], "b": null, "m": ["é"]},
            "items": [{"name": "one", "qty": 12, "ok": true}, {"qty": -3, "ok": null, "name": "two"}],
            "shape": {"label": "round", "kind": "Circle", "r": 1.5}, "pair": [7, "seven"]}"#;
        let chars: Vec<char> = text.chars().collect();
        let mut typed = 0;
        for cut in 0..=chars.len() {
            let prefix: String = chars[..cut].iter().collect();
            let mut p = PartialParser::new(&schema);
            p.push(&prefix);
            assert_eq!(p.broken(), None, "{prefix}");
            let (Some(view), Some(value)) = (p.view(), p.value()) else {
                continue;
            };
            let from_view = Doc::deserialize(view).map_err(|e| e.to_string());
            let from_value = serde_json::from_value::<Doc>(value).map_err(|e| e.to_string());
            assert_eq!(from_view, from_value, "{prefix}");
            typed += usize::from(from_view.is_ok());
        }
        assert!(typed > chars.len() / 2, "{typed}");
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Numbered {
        m: Option<BTreeMap<i64, String>>,
        n: Option<BTreeMap<u8, String>>,
    }

    /// Keys read as numbers, as serde_json reads those of a value's map.
    #[test]
    fn numeric_keys_are_read_as_from_the_value() {
        let schema = json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "n": {"type": "object", "additionalProperties": {"type": "string"}}}});
        for text in [
            r#"{"m": {"1": "a", "-20": "bc"}, "n": {"7": "x"}}"#,
            r#"{"m": {"1 ": "a"}}"#,
            r#"{"m": {" 1": "a"}}"#,
            r#"{"n": {"300": "x"}}"#,
            r#"{"n": {"x": "y"}}"#,
        ] {
            let chars: Vec<char> = text.chars().collect();
            for cut in 0..=chars.len() {
                let prefix: String = chars[..cut].iter().collect();
                let mut p = PartialParser::new(&schema);
                p.push(&prefix);
                let (Some(view), Some(value)) = (p.view(), p.value()) else {
                    continue;
                };
                let from_view = Numbered::deserialize(view).ok();
                let from_value = serde_json::from_value::<Numbered>(value).ok();
                assert_eq!(from_view, from_value, "{prefix}");
            }
        }
    }
}
