//! The arguments of one `@ai` call, rendered once as the JSON object the
//! prompt shows.

use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::media::MediaArg;

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
}

/// Serializes as the JSON object (its text is spliced in as is).
impl Serialize for Args {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw =
            serde_json::from_str::<&RawValue>(self.as_json()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}
