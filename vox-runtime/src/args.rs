//! The arguments of one `@ai` call, rendered once as the JSON object the
//! prompt shows.

use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::media::MediaArg;

/// A worked example of an `@ai` function (docs/language.md, "Worked
/// examples"): the arguments, as the JSON object a call's would be (the
/// history left out), and the answer as JSON; sent before the call's own
/// turns as a user turn and the model's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    pub arguments: &'static str,
    pub output: &'static str,
}

/// The arguments of one call, in declaration order, rendered once as the
/// JSON object the prompt shows (`{"name":value,…}`).
///
/// Each argument is serialized straight into that text: no intermediate
/// `serde_json::Value` tree is built per call.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Always a complete JSON object, valid UTF-8 (serde_json writes only
    /// that, and names are `&str`).
    json: Vec<u8>,
    len: usize,
    /// Where the first argument's value starts in `json` (after `"name":`).
    first_value: usize,
    /// The media met in the arguments, in the order of their placeholders
    /// (`"<image 1>"` is the first; see `media`).
    media: Vec<MediaArg>,
}

impl Default for Args {
    fn default() -> Self {
        // Room for a few short arguments without regrowing.
        let mut json = Vec::with_capacity(128);
        json.extend_from_slice(b"{}");
        Args {
            json,
            len: 0,
            first_value: 0,
            media: Vec::new(),
        }
    }
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Self {
        Args::default()
    }

    /// Adds argument `name` with `value`, serialized to JSON.
    pub fn arg<T: Serialize + ?Sized>(mut self, name: &str, value: &T) -> Result<Args, Error> {
        let before = self.json.len();
        // Reopen the object: drop the closing brace, add a separator.
        self.json.pop();
        if self.len > 0 {
            self.json.push(b',');
        }
        let json = &mut self.json;
        let mut value_start = 0;
        let (written, media) = crate::media::collecting(self.media.len(), || {
            serde_json::to_writer(&mut *json, name).and_then(|()| {
                json.push(b':');
                value_start = json.len();
                serde_json::to_writer(&mut *json, value)
            })
        });
        if let Err(e) = written {
            // Leave the arguments as they were before this one.
            self.json.truncate(before - 1);
            self.json.push(b'}');
            return Err(Error::Serialize {
                argument: name.to_owned(),
                message: e.to_string(),
            });
        }
        self.json.push(b'}');
        if self.len == 0 {
            self.first_value = value_start;
        }
        self.len += 1;
        self.media
            .extend(media.into_iter().map(|(kind, source)| MediaArg {
                argument: name.into(),
                kind,
                source,
            }));
        Ok(self)
    }

    /// The arguments as one JSON object, in insertion order.
    pub fn as_json(&self) -> &str {
        // Always valid UTF-8 (see `json`); the fallback is unreachable.
        std::str::from_utf8(&self.json).unwrap_or("{}")
    }

    /// The text of the only argument, when there is one and it is a
    /// string (a `str`): the model is given it plainly, as the user message
    /// (docs/runtime.md, "What the model sees").
    #[cfg(test)]
    pub(crate) fn single_text(&self) -> Option<String> {
        serde_json::from_str(self.single_text_json()?).ok()
    }

    /// The text of the only argument (see `single_text`) as the JSON string serde wrote (quotes and
    /// escapes included), sliced out of the arguments without parsing them.
    pub(crate) fn single_text_json(&self) -> Option<&str> {
        if self.len != 1 || !self.media.is_empty() {
            return None;
        }
        // The only value runs from `first_value` to the closing brace.
        let value = self.as_json().get(self.first_value..self.json.len() - 1)?;
        value.starts_with('"').then_some(value)
    }

    /// The media in the arguments (images, documents, audio), in the
    /// order of their placeholders.
    pub(crate) fn media(&self) -> &[MediaArg] {
        &self.media
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// These arguments without `name`'s, and its value: an `@ai`
    /// function's conversation so far, which goes to the model as turns,
    /// not in the arguments' text (docs/runtime.md, "Conversations"). The
    /// media stay (a conversation holds none).
    pub(crate) fn split_off(&self, name: &str) -> Result<(Option<Box<RawValue>>, Args), Error> {
        let entries = ordered_entries(self.as_json())?;
        if !entries.values().any(|(key, _)| key == name) {
            return Ok((None, self.clone()));
        }
        let mut rest = Args::new();
        let mut taken = None;
        for (key, value) in entries.into_values() {
            if key == name {
                taken = Some(value);
            } else {
                rest = rest.arg(&key, &value)?;
            }
        }
        rest.media = self.media.clone();
        Ok((taken, rest))
    }
}

/// The entries of a JSON object's text, keyed by their position.
fn ordered_entries(
    json: &str,
) -> Result<std::collections::BTreeMap<usize, (String, Box<RawValue>)>, Error> {
    use serde::de::{Deserializer as _, MapAccess, Visitor};
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = std::collections::BTreeMap<usize, (String, Box<RawValue>)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = std::collections::BTreeMap::new();
            while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                out.insert(out.len(), (k, v));
            }
            Ok(out)
        }
    }
    serde_json::Deserializer::from_str(json)
        .deserialize_map(Entries)
        .map_err(|e| Error::Serialize {
            argument: "(arguments)".into(),
            message: e.to_string(),
        })
}

/// Serializes as the JSON object (its text is spliced in as is).
impl Serialize for Args {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw =
            serde_json::from_str::<&RawValue>(self.as_json()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}
