//! Removing credentials from text a server sent back.
//!
//! Every error text and tracing field derived from a reply goes through one
//! [`Redactor`], built once per client (docs/runtime.md, "Security"), and
//! then through `server_text` (bounded, control characters escaped). It
//! removes:
//!
//! 1. each credential the client sends — the API key, and the base URL's
//!    password and the `Basic` credentials reqwest makes of it — in every
//!    form a server may echo it: as sent, percent-encoded (either case of
//!    hex digit), with `/` written `\/` as some JSON encoders do;
//! 2. where such a form stands in a credential's place — after a name
//!    ending in `key`, `token`, `secret`, `password`, `auth`,
//!    `authorization`, `credential(s)`, or after `Bearer` or `Basic`, any
//!    case, followed by quotes, spaces, `:`, `=`, `[`, `(`, `,` or their
//!    percent-escapes (`X-Api-Key: k`, `"x-goog-api-key": "k"`, `?key=k`,
//!    `Authorization: bearer k`, `('x-api-key', 'k')`), and not followed by
//!    more credential characters — whatever its length;
//! 3. anywhere else, when it is at least [`MIN_SECRET_CHARS`] long —
//!    shorter ones are the dummy keys people give local servers (`x`,
//!    `none`, `ollama`), and blanking every `x` would destroy the text;
//! 4. any other `Bearer` credential containing something besides letters
//!    (so "a Bearer token" stays readable), and any other `Basic`
//!    credential (base64 of `user:password`, so "Basic authentication"
//!    stays);
//! 5. the password of any `scheme://user:password@host` URL.
//!
//! Nothing here runs on the success path of a call.

use std::borrow::Cow;

use crate::server_text::{message_text, server_text};

/// Keys and passwords at least this long are redacted wherever they
/// appear; shorter ones only where they stand in a credential's place.
pub const MIN_SECRET_CHARS: usize = 8;

const REDACTED: &str = "[REDACTED]";

/// Most separator characters looked through between a credential's name
/// and its value (`": "`, `'], ['`…).
const MAX_SEPARATOR: usize = 16;
/// Longest name looked at in front of a credential.
const MAX_NAME: usize = 64;

/// The credentials of one client and how to remove them from text.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Every form of every credential sent, longest first.
    forms: Vec<Form>,
}

/// One way a credential may be written in a server's text.
#[derive(Clone, PartialEq)]
struct Form {
    text: String,
    /// Long enough to be removed wherever it appears.
    everywhere: bool,
}

impl Redactor {
    /// The redactor for a client sending `api_key` (in whatever header its
    /// provider takes) to `base_url` (whose userinfo reqwest sends as basic
    /// credentials).
    pub fn new(api_key: Option<&str>, base_url: Option<&str>) -> Redactor {
        let mut redactor = Redactor::default();
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            redactor.add_secret(key);
        }
        if let Some((user, password)) = base_url.and_then(userinfo) {
            // What reqwest sends for a URL's userinfo: the percent-decoded
            // `user:password`, in base64.
            let decoded = (percent_decode(user), password.map(percent_decode));
            let mut plain = format!("{}:", decoded.0);
            if let Some(password) = &decoded.1 {
                plain.push_str(password);
            }
            redactor.add_secret(&base64(plain.as_bytes()));
            if let (Some(as_written), Some(password)) = (password, &decoded.1) {
                redactor.add_secret(password);
                redactor.add_form(as_written, password.chars().count() >= MIN_SECRET_CHARS);
            }
        }
        // Longest first, so a form containing another is removed whole.
        redactor
            .forms
            .sort_by_key(|f| std::cmp::Reverse(f.text.len()));
        redactor
    }

    /// Adds `secret` in every form a server may echo it.
    fn add_secret(&mut self, secret: &str) {
        let everywhere = secret.chars().count() >= MIN_SECRET_CHARS;
        self.add_form(secret, everywhere);
        self.add_form(&percent_encode(secret, b"0123456789ABCDEF"), everywhere);
        self.add_form(&percent_encode(secret, b"0123456789abcdef"), everywhere);
        self.add_form(&secret.replace('/', "\\/"), everywhere);
    }

    fn add_form(&mut self, text: &str, everywhere: bool) {
        let form = Form {
            text: text.to_owned(),
            everywhere,
        };
        if !text.is_empty() && !self.forms.contains(&form) {
            self.forms.push(form);
        }
    }

    /// `text` without credentials (see the module documentation).
    pub fn redact(&self, text: &str) -> String {
        let mut text = Cow::Borrowed(text);
        for form in &self.forms {
            if let Cow::Owned(replaced) = replace_form(&text, form) {
                text = Cow::Owned(replaced);
            }
        }
        let text = redact_auth_schemes(&text);
        redact_url_passwords(&text).into_owned()
    }

    /// `text`, from a server, fit to show: redacted (before it is cut, so
    /// that a cut cannot leave half a key), then at most `max_chars`
    /// characters on one line (`server_text`).
    pub fn shown(&self, text: &str, max_chars: usize) -> String {
        server_text(&self.redact(text), max_chars)
    }

    /// Like [`Redactor::shown`] for a message of the runtime's own quoting
    /// server text: its line breaks are kept (`server_text::message_text`).
    pub fn shown_message(&self, text: &str, max_chars: usize) -> String {
        message_text(&self.redact(text), max_chars)
    }
}

/// Replaces each occurrence of `form` in `text` that may be removed: all
/// of them if it is long, else those in a credential's place.
fn replace_form<'t>(text: &'t str, form: &Form) -> Cow<'t, str> {
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(form.text.as_str()) {
        let end = at + form.text.len();
        let removable =
            form.everywhere || (ends_token(text, end) && follows_credential_name(text, at));
        if !removable {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str(REDACTED);
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `byte` can be part of a credential (RFC 9110's token68).
fn is_credential_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~+/=".contains(&byte)
}

/// Whether a credential ending at `end` is whole: the text does not go on
/// with more of one (a `.` or `=` followed by something else — the end of
/// a sentence, a query's next `&` — ends it).
fn ends_token(text: &str, end: usize) -> bool {
    let bytes = text.as_bytes();
    match bytes.get(end) {
        None => true,
        Some(b'.' | b'=') => !bytes.get(end + 1).copied().is_some_and(is_credential_byte),
        Some(&b) => !is_credential_byte(b),
    }
}

/// Whether what stands before `at` is a credential's name and a separator:
/// `X-Api-Key: `, `"x-goog-api-key": "`, `?key=`, `Bearer `, `api_key%3D`.
fn follows_credential_name(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    let mut i = at;
    let mut separators = 0;
    while i > 0 && separators < MAX_SEPARATOR {
        if matches!(
            bytes[i - 1],
            b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'`' | b'\\' | b'[' | b'(' | b','
        ) {
            i -= 1;
        } else if i >= 3
            && bytes[i - 3] == b'%'
            && matches!(
                [bytes[i - 2], bytes[i - 1].to_ascii_uppercase()],
                [b'3', b'A' | b'D'] | [b'2', b'0' | b'2' | b'7' | b'C']
            )
        {
            i -= 3;
        } else {
            break;
        }
        separators += 1;
    }
    if separators == 0 {
        return false;
    }
    let name_end = i;
    while i > 0
        && name_end - i < MAX_NAME
        && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'-' | b'_'))
    {
        i -= 1;
    }
    // The name is ASCII, so these are char boundaries.
    is_credential_name(&text[i..name_end].to_ascii_lowercase())
}

/// Whether `name` (lowercase) names a credential.
fn is_credential_name(name: &str) -> bool {
    matches!(name, "bearer" | "basic")
        || [
            "key",
            "token",
            "secret",
            "password",
            "passwd",
            "pwd",
            "auth",
            "authorization",
            "credential",
            "credentials",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// `text` with every byte but RFC 3986's unreserved ones written `%XX`,
/// with hex digits from `digits`.
fn percent_encode(text: &str, digits: &[u8; 16]) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(digits[usize::from(b >> 4)] as char);
            out.push(digits[usize::from(b & 15)] as char);
        }
    }
    out
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
pub(crate) fn base64(bytes: &[u8]) -> String {
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
        Some(pad) if text[pad..].iter().all(|&b| b == b'=') && text.len().is_multiple_of(4) => {
            &text[..pad]
        }
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
#[path = "../tests/it/support/keys.rs"]
mod keys;

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
    fn long_keys_go_everywhere_short_keys_only_in_a_credentials_place() {
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

    /// The header each provider sends its key in, as servers write it.
    const KEY_HEADERS: &[&str] = &[
        "Authorization: Bearer",
        "authorization: bearer",
        "AUTHORIZATION: BEARER",
        "x-api-key:",
        "X-Api-Key:",
        "X-API-KEY:",
        "x-goog-api-key:",
        "X-Goog-Api-Key:",
        "X-GOOG-API-KEY:",
    ];

    /// How a server echoes a key: `{h}` is a header name (from
    /// [`KEY_HEADERS`], without its colon and scheme), `{hv}` the header as
    /// sent, `{k}` the key, `{k%}` percent-encoded (`{k%l}` lowercase hex),
    /// `{k\/}` with `/` escaped.
    const ECHOES: &[&str] = &[
        "{hv} {k}",
        "{hv}{k}",
        "{h} = {k}",
        "{h}={k}",
        r#"{"{h}":"{k}"}"#,
        r#"{"{h}": ["{k}"]}"#,
        r#"{'{h}': '{k}'}"#,
        r#"[("{h}", "{k}")]"#,
        r#"{"detail":"{\"{h}\": \"{k}\"}"}"#,
        "{h}%3A%20{k%}",
        "{h}%3d{k%l}",
        "GET /v1beta/models/m:generateContent?key={k}&alt=json",
        "https://h/v1?key={k%}",
        "https://h/v1?api_key={k%l}#x",
        "access_token={k}; Path=/",
        "invalid api key: {k}.",
        "bad key `{k}`",
        r#"{"key":"{k\/}"}"#,
        "Bearer {k}",
        "bearer\t{k}",
    ];

    fn fill(template: &str, header: &str, key: &str) -> String {
        let name = header.split(':').next().unwrap_or_default();
        template
            .replace("{hv}", header)
            .replace("{h}", name)
            .replace("{k%}", &percent_encode(key, b"0123456789ABCDEF"))
            .replace("{k%l}", &percent_encode(key, b"0123456789abcdef"))
            .replace("{k\\/}", &key.replace('/', "\\/"))
            .replace("{k}", key)
    }

    /// Every echo of a key of every length from 1 to 64, in every header a
    /// provider sends it in, is removed — exactly the key, nothing else.
    #[test]
    fn every_echo_of_a_key_of_any_length_is_redacted() {
        let mut checked = 0;
        for len in 1..=64 {
            for seed in 0..3 {
                let key = keys::key(len, (len * 3 + seed) as u64);
                let r = Redactor::new(Some(&key), Some("https://h/v1"));
                for header in KEY_HEADERS {
                    for echo in ECHOES {
                        if echo.starts_with("{hv}{k}") && !header.ends_with(':') {
                            // `Bearer` always has a space after it.
                            continue;
                        }
                        let text = fill(echo, header, &key);
                        let expected = fill(
                            &echo
                                .replace("{k%}", "{k}")
                                .replace("{k%l}", "{k}")
                                .replace("{k\\/}", "{k}"),
                            header,
                            REDACTED,
                        );
                        assert_eq!(r.redact(&text), expected, "key {key:?} in {text:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 64 * 3 * KEY_HEADERS.len() * (ECHOES.len() - 1));
    }

    /// The same for a base URL's password, whatever its length: as the
    /// `Basic` credentials reqwest sends, and on its own.
    #[test]
    fn every_echo_of_a_url_password_of_any_length_is_redacted() {
        for len in 1..=64 {
            let password = keys::key(len, len as u64 * 7);
            let encoded = percent_encode(&password, b"0123456789ABCDEF");
            let r = Redactor::new(None, Some(&format!("https://alice:{encoded}@h/v1")));
            let basic = base64(format!("alice:{password}").as_bytes());
            for (text, expected) in [
                (
                    format!("Authorization: Basic {basic}"),
                    "Authorization: Basic [REDACTED]".to_owned(),
                ),
                (
                    format!(r#"{{"authorization":"basic {basic}"}}"#),
                    r#"{"authorization":"basic [REDACTED]"}"#.to_owned(),
                ),
                (
                    format!("password={encoded}&x=1"),
                    "password=[REDACTED]&x=1".to_owned(),
                ),
                (
                    format!("'password': '{password}'"),
                    "'password': '[REDACTED]'".to_owned(),
                ),
                (
                    format!("via https://alice:{encoded}@h/v1"),
                    "via https://alice:[REDACTED]@h/v1".to_owned(),
                ),
            ] {
                assert_eq!(
                    r.redact(&text),
                    expected,
                    "password {password:?} in {text:?}"
                );
            }
        }
    }

    /// A short key outside a credential's place is an ordinary word, and
    /// text around a redacted key is kept.
    #[test]
    fn short_keys_leave_ordinary_text_alone() {
        for key in ["x", "none", "ollama", "key", "api", "Bearer", "a1"] {
            let r = Redactor::new(Some(key), None);
            for text in [
                "std::exception at #/properties/next: none of the variants matched",
                "model \"ollama\" not found, try pulling it first",
                "the x-api-key header is missing; see the api docs",
                "Bearer xylophone; a Bearer token is required",
                "keyboard: x1, monkeys: none",
            ] {
                assert_eq!(r.redact(text), text, "key {key:?}");
            }
        }
        let r = Redactor::new(Some("ollama"), None);
        assert_eq!(
            r.redact("model ollama: key=ollama, token: ollama2"),
            "model ollama: key=[REDACTED], token: ollama2"
        );
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
