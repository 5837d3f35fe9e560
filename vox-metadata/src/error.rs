//! Why a line or file could not be read as an envelope or a report.

use std::fmt;

/// An [`Envelope`](crate::Envelope) or [`Report`](crate::Report) that could
/// not be read.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON, or JSON that does not have the documented shape.
    Json(serde_json::Error),
    /// A version field that is missing or names a version these types do
    /// not describe (`found` is `None` when the field is missing or not a
    /// number).
    UnsupportedVersion {
        /// `envelope_version` or `report_version`.
        field: &'static str,
        /// The version found.
        found: Option<u64>,
        /// The version these types describe.
        supported: u32,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Json(e) => write!(f, "invalid JSON: {e}"),
            ParseError::UnsupportedVersion {
                field,
                found: Some(v),
                supported,
            } => write!(
                f,
                "`{field}` is {v}, but only version {supported} is understood (the reader is older or newer than the writer: use matching versions)"
            ),
            ParseError::UnsupportedVersion {
                field,
                found: None,
                supported,
            } => write!(
                f,
                "`{field}` is missing or not a number (expected {supported})"
            ),
        }
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ParseError::Json(e) => Some(e),
            ParseError::UnsupportedVersion { .. } => None,
        }
    }
}

impl From<serde_json::Error> for ParseError {
    fn from(e: serde_json::Error) -> ParseError {
        ParseError::Json(e)
    }
}

/// Parses `text` as a JSON object whose `field` must be `supported`, then
/// as `T`. The version is checked first, so an incompatible version is
/// reported as such rather than as a missing field.
pub(crate) fn parse_versioned<T: serde::de::DeserializeOwned>(
    text: &str,
    field: &'static str,
    supported: u32,
) -> Result<T, ParseError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let found = value.get(field).and_then(serde_json::Value::as_u64);
    if found != Some(u64::from(supported)) {
        if !value.is_object() {
            // Let serde say what it found instead of an object.
            return Err(serde_json::from_value::<T>(value).err().map_or(
                ParseError::UnsupportedVersion {
                    field,
                    found,
                    supported,
                },
                ParseError::Json,
            ));
        }
        return Err(ParseError::UnsupportedVersion {
            field,
            found,
            supported,
        });
    }
    Ok(serde_json::from_value(value)?)
}
