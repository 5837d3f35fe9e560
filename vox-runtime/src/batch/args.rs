//! Arguments from a line of JSON, in the order the line gives them.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::ai_function::Args;
use crate::error::Error;

/// The arguments a JSON object names, in its order: `{"text": "…"}` is
/// one argument `text`. Used for each line of a batch's input file.
///
/// ```
/// let args = vox_runtime::args_from_json(r#"{"b": 1, "a": [true]}"#)?;
/// assert_eq!(args.as_json(), r#"{"b":1,"a":[true]}"#);
/// # Ok::<(), vox_runtime::Error>(())
/// ```
pub fn args_from_json(text: &str) -> Result<Args, Error> {
    struct Fields;
    impl<'de> Visitor<'de> for Fields {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object of arguments")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut fields = Vec::new();
            while let Some((name, value)) = map.next_entry::<String, Box<RawValue>>()? {
                if fields.iter().any(|(n, _): &(String, _)| *n == name) {
                    return Err(serde::de::Error::custom(format!(
                        "argument `{name}` is given twice"
                    )));
                }
                fields.push((name, value));
            }
            Ok(fields)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let bad = |e: serde_json::Error| Error::Serialize {
        argument: "(input line)".into(),
        message: e.to_string(),
    };
    let fields = (&mut de).deserialize_map(Fields).map_err(bad)?;
    de.end().map_err(bad)?;
    let mut args = Args::new();
    for (name, value) in fields {
        // Compact, as `Args::arg` writes any other value.
        let value: serde_json::Value = serde_json::from_str(value.get()).map_err(bad)?;
        args = args.arg(&name, &value)?;
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_only_in_order_no_duplicates() {
        assert_eq!(
            args_from_json(r#" {"z": "x", "a": {"k": 1.5}} "#)
                .unwrap()
                .as_json(),
            r#"{"z":"x","a":{"k":1.5}}"#
        );
        for bad in ["[1]", "3", "{", r#"{"a":1}{"#, r#"{"a":1,"a":2}"#, ""] {
            assert!(args_from_json(bad).is_err(), "{bad}");
        }
    }
}
