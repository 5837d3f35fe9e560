//! Inline media written into a request body without a base64 copy of
//! their own.
//!
//! A wire serializes each inline media's data as a marker string
//! ([`Inline`]): a per-process random nonce and the media's index. The
//! body rendered that way holds no media; [`splice`] then writes the final
//! body once, copying the text around the markers and base64-encoding each
//! media's bytes straight into it. At the peak a request holds the media's
//! bytes (kept for the call), the small body without them, and the final
//! body: about the raw size plus its base64.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

use serde::{Serialize, Serializer};

use super::load::{Content, Loaded};

/// `VOXMEDIA` and 32 random hex digits, the same for the whole process and
/// never sent: what no argument text can contain by accident.
fn nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| {
        // std's hasher keys are random per process (no extra dependency).
        let random = |salt: u64| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(salt);
            h.finish()
        };
        format!("VOXMEDIA{:016x}{:016x}", random(1), random(2))
    })
}

/// The data of the `index`th media of the conversation, as a JSON string
/// `prefix` + base64: written as a marker, replaced by [`splice`].
pub(crate) struct Inline<'a> {
    /// What precedes the base64 in the string (`data:image/png;base64,`
    /// for a data URL, else empty).
    pub prefix: &'a str,
    pub index: usize,
}

impl Serialize for Inline<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}{}#{}#", self.prefix, nonce(), self.index))
    }
}

/// A data URL's start: `data:<mime>;base64,`.
pub(crate) struct DataUrl<'a>(pub &'a str);

impl fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data:{};base64,", self.0)
    }
}

/// `skeleton` with each marker replaced by the base64 of its media's
/// bytes; `skeleton` itself when it has none.
pub(crate) fn splice(skeleton: Vec<u8>, media: &[Loaded]) -> Vec<u8> {
    let nonce = nonce().as_bytes();
    // (start of marker, end of marker, bytes)
    let mut found: Vec<(usize, usize, &[u8])> = Vec::new();
    let mut from = 0;
    while let Some(at) = find(&skeleton[from..], nonce) {
        let start = from + at;
        let digits_at = start + nonce.len() + 1;
        let digits = skeleton[digits_at.min(skeleton.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = digits_at + digits + 1;
        let index = skeleton
            .get(digits_at..digits_at + digits)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| d.parse::<usize>().ok());
        let bytes = index
            .and_then(|i| media.get(i))
            .and_then(|m| match &m.content {
                Content::Inline { bytes, .. } => Some(&bytes[..]),
                Content::Url(_) => None,
            });
        match bytes {
            // Written by `Inline`: `#` + index + `#`.
            Some(bytes)
                if skeleton.get(digits_at - 1) == Some(&b'#')
                    && skeleton.get(end - 1) == Some(&b'#') =>
            {
                found.push((start, end, bytes));
                from = end;
            }
            // Not a marker of ours after all: left as it is.
            _ => from = start + nonce.len(),
        }
    }
    if found.is_empty() {
        return skeleton;
    }
    let size = skeleton.len() - found.iter().map(|(s, e, _)| e - s).sum::<usize>()
        + found
            .iter()
            .map(|(_, _, b)| base64_len(b.len()))
            .sum::<usize>();
    let mut body = Vec::with_capacity(size);
    let mut copied = 0;
    for (start, end, bytes) in found {
        body.extend_from_slice(&skeleton[copied..start]);
        encode_into(bytes, &mut body);
        copied = end;
    }
    body.extend_from_slice(&skeleton[copied..]);
    body
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Length of the padded base64 of `n` bytes.
pub(crate) fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// Appends the standard, padded base64 of `bytes` to `out`.
pub(crate) fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(base64_len(bytes.len()));
    // Encoded a block at a time through a buffer on the stack.
    let mut buf = [0u8; 4096];
    let mut chunks = bytes.chunks_exact(3);
    let mut n = 0;
    for c in &mut chunks {
        let v = u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2]);
        buf[n] = ALPHABET[(v >> 18) as usize & 63];
        buf[n + 1] = ALPHABET[(v >> 12) as usize & 63];
        buf[n + 2] = ALPHABET[(v >> 6) as usize & 63];
        buf[n + 3] = ALPHABET[v as usize & 63];
        n += 4;
        if n == buf.len() {
            out.extend_from_slice(&buf);
            n = 0;
        }
    }
    out.extend_from_slice(&buf[..n]);
    match *chunks.remainder() {
        [a] => {
            let v = u32::from(a) << 16;
            out.extend_from_slice(&[
                ALPHABET[(v >> 18) as usize & 63],
                ALPHABET[(v >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let v = u32::from(a) << 16 | u32::from(b) << 8;
            out.extend_from_slice(&[
                ALPHABET[(v >> 18) as usize & 63],
                ALPHABET[(v >> 12) as usize & 63],
                ALPHABET[(v >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::load::MediaType;
    use crate::media::Kind;
    use bytes::Bytes;

    fn inline(bytes: &'static [u8]) -> Loaded {
        Loaded {
            kind: Kind::Image,
            number: 1,
            content: Content::Inline {
                media_type: MediaType::Png,
                bytes: Bytes::from_static(bytes),
                file_name: "x.png".into(),
            },
        }
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = Vec::new();
            encode_into(plain.as_bytes(), &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), encoded);
            assert_eq!(base64_len(plain.len()), encoded.len());
        }
        // Across the stack buffer's edge.
        let long: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 256) as u8).collect();
        let mut out = Vec::new();
        encode_into(&long, &mut out);
        assert_eq!(out.len(), base64_len(long.len()));
        assert_eq!(
            crate::redact::base64(&long).as_bytes(),
            &out[..],
            "the same as the redactor's encoder"
        );
    }

    #[test]
    fn markers_are_replaced_and_other_text_is_kept() {
        let media = [inline(b"foobar"), inline(b"fo")];
        let skeleton = serde_json::to_vec(&serde_json::json!([
            "nothing here",
            serde_json::to_value(Inline {
                prefix: "data:image/png;base64,",
                index: 0
            })
            .unwrap(),
            serde_json::to_value(Inline {
                prefix: "",
                index: 1
            })
            .unwrap(),
            format!("{}#9#", nonce()),
            format!("{}#x", nonce()),
        ]))
        .unwrap();
        let body = String::from_utf8(splice(skeleton, &media)).unwrap();
        let expected = format!(
            r#"["nothing here","data:image/png;base64,Zm9vYmFy","Zm8=","{n}#9#","{n}#x"]"#,
            n = nonce()
        );
        assert_eq!(body, expected);
        let plain = b"[1,2]".to_vec();
        assert_eq!(splice(plain.clone(), &media), plain);
        // A nonce at the very end is no marker and no panic.
        let tail = format!("[\"{}", nonce()).into_bytes();
        assert_eq!(splice(tail.clone(), &media), tail);
    }
}
