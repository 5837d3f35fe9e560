//! Removing credentials from text a server sent back.
//!
//! Every error text and tracing field derived from a reply goes through one
//! [`Redactor`], built once per client (docs/runtime.md, "Security"). It
//! removes:
//!
//! 1. the exact `Authorization` values the client sends (`Bearer <key>`,
//!    and `Basic <credentials>` for a password in the base URL), whatever
//!    the key's length;
//! 2. the key and the base URL's password on their own, wherever they
//!    appear, when they are at least [`MIN_SECRET_CHARS`] long — shorter
//!    ones are the dummy keys people give local servers (`x`, `none`,
//!    `ollama`), and blanking every `x` would destroy the text;
//! 3. any other `Bearer` credential containing something besides letters
//!    (so "a Bearer token" stays readable), and any other `Basic`
//!    credential (base64 of `user:password`, so "Basic authentication"
//!    stays);
//! 4. the password of any `scheme://user:password@host` URL.
//!
//! Nothing here runs on the success path of a call.

use std::borrow::Cow;

/// Keys and passwords at least this long are redacted wherever they
/// appear; shorter ones only where echoed as the header they were sent in.
pub const MIN_SECRET_CHARS: usize = 8;

const REDACTED: &str = "[REDACTED]";

/// The credentials of one client and how to remove them from text.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Header values sent, as (scheme, credential): `Bearer <key>`.
    sent: Vec<(&'static str, String)>,
    /// Secrets long enough to be removed wherever they appear.
    secrets: Vec<String>,
}

impl Redactor {
    /// The redactor for a client sending `api_key` as a bearer token to
    /// `base_url` (whose userinfo reqwest sends as basic credentials).
    #[cfg(test)]
    pub fn new(api_key: Option<&str>, base_url: Option<&str>) -> Redactor {
        Redactor::with_key_header(api_key, base_url, "Bearer")
    }

    /// Like [`Redactor::new`] for a key sent as `<scheme> <key>`: `Bearer`
    /// in `Authorization`, or a header of its own written `x-api-key:`
    /// (Anthropic) or `x-goog-api-key:` (Gemini), as a server echoing the
    /// request would show it.
    pub fn with_key_header(
        api_key: Option<&str>,
        base_url: Option<&str>,
        scheme: &'static str,
    ) -> Redactor {
        let mut redactor = Redactor::default();
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            redactor.sent.push((scheme, key.to_owned()));
            redactor.add_secret(key);
        }
        if let Some((user, password)) = base_url.and_then(userinfo) {
            // What reqwest sends for a URL's userinfo: the percent-decoded
            // `user:password`, in base64.
            let (user, password) = (percent_decode(user), password.map(percent_decode));
            let mut plain = format!("{user}:");
            if let Some(password) = &password {
                plain.push_str(password);
            }
            let credential = base64(plain.as_bytes());
            redactor.add_secret(&credential);
            redactor.sent.push(("Basic", credential));
            if let Some(password) = password {
                redactor.add_secret(&password);
            }
        }
        // Longest first, so a secret containing another is removed whole.
        redactor.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        redactor
    }

    fn add_secret(&mut self, secret: &str) {
        if secret.chars().count() >= MIN_SECRET_CHARS && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_owned());
        }
    }

    /// `text` without credentials (see the module documentation).
    pub fn redact(&self, text: &str) -> String {
        let mut text = Cow::Borrowed(text);
        for (scheme, credential) in &self.sent {
            let sent = format!("{scheme} {credential}");
            if let Cow::Owned(replaced) = replace_whole(&text, &sent, scheme) {
                text = Cow::Owned(replaced);
            }
        }
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), REDACTED));
            }
        }
        let text = redact_auth_schemes(&text);
        redact_url_passwords(&text).into_owned()
    }
}

/// Whether `byte` can be part of a credential (RFC 9110's token68).
fn is_credential_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~+/=".contains(&byte)
}

/// Replaces each `sent` (`<scheme> <credential>`) in `text` that is not
/// the start of a longer credential with `<scheme> [REDACTED]`: with the
/// key `x`, `Bearer x` goes but `Bearer xylophone` stays.
fn replace_whole<'t>(text: &'t str, sent: &str, scheme: &str) -> Cow<'t, str> {
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(sent) {
        let end = at + sent.len();
        if at < copied
            || text
                .as_bytes()
                .get(end)
                .is_some_and(|&b| is_credential_byte(b))
        {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str(scheme);
        out.push(' ');
        out.push_str(REDACTED);
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Replaces the credential after `Bearer` (any case) when it contains
/// anything but letters, and after `Basic` when it is base64 of
/// `user:password`.
fn redact_auth_schemes(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let scheme = ["bearer", "basic"].into_iter().find(|scheme| {
            let end = i + scheme.len();
            end < bytes.len() && bytes[i..end].eq_ignore_ascii_case(scheme.as_bytes())
        });
        let at_word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let Some(scheme) = scheme.filter(|_| at_word_start) else {
            i += 1;
            continue;
        };
        let mut start = i + scheme.len();
        if !matches!(bytes[start], b' ' | b'\t') {
            i += 1;
            continue;
        }
        while start < bytes.len() && matches!(bytes[start], b' ' | b'\t') {
            start += 1;
        }
        // RFC 9110's token68: letters, digits, `-._~+/`, then `=` padding.
        let mut end = start;
        while end < bytes.len() && is_credential_byte(bytes[end]) && bytes[end] != b'=' {
            end += 1;
        }
        while end < bytes.len() && bytes[end] == b'=' {
            end += 1;
        }
        let credential = &bytes[start..end];
        let is_credential = match scheme {
            "basic" => base64_decode(credential).is_some_and(|plain| plain.contains(&b':')),
            _ => !credential.is_empty() && !credential.iter().all(u8::is_ascii_alphabetic),
        };
        if is_credential {
            // All boundaries are ASCII bytes, so these are char boundaries.
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = end.max(i + 1);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Replaces the password of every `scheme://user:password@host` in `text`,
/// whatever its length; the user name stays, to say which account it was.
pub(crate) fn redact_url_passwords(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let authority_start = search + found + 3;
        let authority_len = text[authority_start..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '`' | '<' | '>')
            })
            .unwrap_or(text.len() - authority_start);
        let authority = &text[authority_start..authority_start + authority_len];
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority[..at].find(':') {
                let password_start = authority_start + colon + 1;
                out.push_str(&text[copied..password_start]);
                out.push_str(REDACTED);
                copied = authority_start + at;
            }
        }
        search = authority_start + authority_len;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The user and password of a URL's authority, as written in it.
fn userinfo(url: &str) -> Option<(&str, Option<&str>)> {
    let after_scheme = &url[url.find("://")? + 3..];
    let authority = &after_scheme[..after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len())];
    let info = &authority[..authority.rfind('@')?];
    Some(match info.split_once(':') {
        Some((user, password)) => (user, Some(password)),
        None => (info, None),
    })
}

/// Decodes `%XX` escapes (invalid escapes and non-UTF-8 results are kept
/// as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` if it is not.
fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let digits: &[u8] = match text.iter().position(|&b| b == b'=') {
        Some(pad) if text[pad..].iter().all(|&b| b == b'=') && text.len() % 4 == 0 => &text[..pad],
        Some(_) => return None,
        None => text,
    };
    if digits.len() % 4 == 1 {
        return None;
    }
    let value = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &b) in chunk.iter().enumerate() {
            n |= u32::from(value(b)?) << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            ("alice:hunter2-pw", "YWxpY2U6aHVudGVyMi1wdw=="),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
            assert_eq!(
                base64_decode(encoded.as_bytes()).as_deref(),
                Some(plain.as_bytes()),
                "{encoded}"
            );
            let unpadded = encoded.trim_end_matches('=');
            assert_eq!(
                base64_decode(unpadded.as_bytes()).as_deref(),
                Some(plain.as_bytes()),
                "{unpadded}"
            );
        }
        for bad in ["Zg=", "Z", "Zm9v!", "Zg==Zg==", "=Zg="] {
            assert_eq!(base64_decode(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn percent_escapes_are_decoded() {
        assert_eq!(percent_decode("p%40ss%3Aw"), "p@ss:w");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
        assert_eq!(percent_decode("%FF"), "%FF", "not UTF-8: kept as written");
    }

    #[test]
    fn long_keys_go_everywhere_short_keys_only_as_their_header() {
        let long = Redactor::new(Some("sk-1234567890"), None);
        assert_eq!(
            long.redact("key sk-1234567890, Bearer sk-1234567890"),
            "key [REDACTED], Bearer [REDACTED]"
        );
        let short = Redactor::new(Some("x"), None);
        assert_eq!(
            short.redact("std::exception at #/properties/next; Bearer x"),
            "std::exception at #/properties/next; Bearer [REDACTED]"
        );
        assert_eq!(
            short.redact("Bearer x\nBearer xylophone"),
            "Bearer [REDACTED]\nBearer xylophone"
        );
        assert_eq!(Redactor::new(None, None).redact("Bearer x"), "Bearer x");
        assert_eq!(Redactor::new(Some(""), None).redact("text"), "text");
    }

    #[test]
    fn other_credentials_after_an_auth_scheme_are_redacted() {
        let r = Redactor::default();
        for (text, expected) in [
            ("Bearer abc.def-1", "Bearer [REDACTED]"),
            ("bearer  eyJ0eXAi.e30.sig_-", "bearer  [REDACTED]"),
            (
                r#"{"auth":"Basic dXNlcjpwYXNz"}"#,
                r#"{"auth":"Basic [REDACTED]"}"#,
            ),
            ("Basic YTpiMQ==, next", "Basic [REDACTED], next"),
            ("Basic Zm9vYmE=", "Basic Zm9vYmE="),
            ("a Bearer token is required", "a Bearer token is required"),
            ("basic authentication", "basic authentication"),
            ("Basic usage", "Basic usage"),
            ("Basic 101", "Basic 101"),
            ("Bearer", "Bearer"),
            ("Bearer ", "Bearer "),
            ("xBearer abc123", "xBearer abc123"),
            ("Bearer [REDACTED]", "Bearer [REDACTED]"),
            ("Bearer é1", "Bearer é1"),
        ] {
            assert_eq!(r.redact(text), expected, "{text}");
        }
    }

    #[test]
    fn url_passwords_are_redacted_whatever_their_length() {
        for (text, expected) in [
            ("https://u:p@host/v1", "https://u:[REDACTED]@host/v1"),
            (
                "see http://a:b@h:1 and ftp://c:d@e?x",
                "see http://a:[REDACTED]@h:1 and ftp://c:[REDACTED]@e?x",
            ),
            ("https://user@host/v1", "https://user@host/v1"),
            ("https://host/a:b@c", "https://host/a:b@c"),
            ("https://u:p:q@r@host", "https://u:[REDACTED]@host"),
            ("no url: a:b@c", "no url: a:b@c"),
            ("://", "://"),
            ("https://ü:ß@höst", "https://ü:[REDACTED]@höst"),
        ] {
            assert_eq!(redact_url_passwords(text), expected, "{text}");
        }
    }

    /// Server text is arbitrary: no input makes redaction panic, and what
    /// it returns never contains a secret.
    #[test]
    fn arbitrary_text_never_panics_nor_keeps_a_secret() {
        let r = Redactor::new(Some("sk-abcdefgh"), Some("http://u:pw-12345678@h/v1"));
        let pieces = [
            "Bearer",
            "bearer ",
            "Basic ",
            "basic\t",
            " ",
            "sk-abcdefgh",
            "pw-12345678",
            "://",
            "u:",
            "@",
            "/",
            "é",
            "ß",
            "🦀",
            "=",
            "%",
            "x",
            ":",
            "\"",
            "dTpwdy0xMjM0NTY3OA==",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut redacted = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..next() % 12 {
                text.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let out = r.redact(&text);
            assert!(!out.contains("sk-abcdefgh"), "{text:?} -> {out:?}");
            assert!(!out.contains("pw-12345678"), "{text:?} -> {out:?}");
            redacted += usize::from(out != text);
        }
        assert!(
            redacted > 1_000,
            "the inputs exercise redaction: {redacted}"
        );
    }

    #[test]
    fn basic_credentials_from_the_base_url_are_known_secrets() {
        let r = Redactor::new(None, Some("https://alice:hunter2%2Dpw@host/v1"));
        // reqwest sends base64("alice:hunter2-pw"), percent-decoded.
        assert_eq!(
            r.redact("got YWxpY2U6aHVudGVyMi1wdw== and hunter2-pw"),
            "got [REDACTED] and [REDACTED]"
        );
        let short = Redactor::new(None, Some("http://u:p@host"));
        assert_eq!(short.redact("Basic dTpw, up"), "Basic [REDACTED], up");
    }
}
