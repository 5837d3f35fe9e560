//! Media made ready to send when a call is made: files read, media types
//! detected from the content, URLs checked, the provider's rules and
//! limits applied, all before anything is sent.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bytes::Bytes;
use vox_metadata::providers::{MediaFacts, MediaRule};

use super::{file_name, placeholder, url_host, Kind, MediaArg, Source};
use crate::error::Error;

/// A media type the runtime sends, as detected from the first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MediaType {
    Png,
    Jpeg,
    Webp,
    Gif,
    Pdf,
    Wav,
    Mp3,
}

impl MediaType {
    /// Its MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Webp => "image/webp",
            MediaType::Gif => "image/gif",
            MediaType::Pdf => "application/pdf",
            MediaType::Wav => "audio/wav",
            MediaType::Mp3 => "audio/mpeg",
        }
    }

    /// Its MIME type as Gemini's guides list it: MP3 is `audio/mp3`
    /// ("Audio understanding"), the rest as [`MediaType::mime`].
    pub fn gemini_mime(self) -> &'static str {
        match self {
            MediaType::Mp3 => "audio/mp3",
            other => other.mime(),
        }
    }

    /// The media type a URL's path names by its extension (`.png`,
    /// `.jpg`, `.jpeg`, `.webp`, `.gif`, `.pdf`, `.wav`, `.mp3`, any case;
    /// the query and fragment are not looked at).
    pub fn of_url(url: &str) -> Option<MediaType> {
        let parsed = reqwest::Url::parse(url).ok()?;
        let last = parsed.path_segments()?.next_back()?;
        let (_, extension) = last.rsplit_once('.')?;
        Some(match extension.to_ascii_lowercase().as_str() {
            "png" => MediaType::Png,
            "jpg" | "jpeg" => MediaType::Jpeg,
            "webp" => MediaType::Webp,
            "gif" => MediaType::Gif,
            "pdf" => MediaType::Pdf,
            "wav" => MediaType::Wav,
            "mp3" => MediaType::Mp3,
            _ => return None,
        })
    }

    /// The kind of media it is.
    pub fn kind(self) -> Kind {
        match self {
            MediaType::Png | MediaType::Jpeg | MediaType::Webp | MediaType::Gif => Kind::Image,
            MediaType::Pdf => Kind::Document,
            MediaType::Wav | MediaType::Mp3 => Kind::Audio,
        }
    }

    /// How people name it.
    fn name(self) -> &'static str {
        match self {
            MediaType::Png => "a PNG image",
            MediaType::Jpeg => "a JPEG image",
            MediaType::Webp => "a WebP image",
            MediaType::Gif => "a GIF image",
            MediaType::Pdf => "a PDF document",
            MediaType::Wav => "WAV audio",
            MediaType::Mp3 => "MP3 audio",
        }
    }

    /// OpenAI's `input_audio` format name.
    pub fn audio_format(self) -> &'static str {
        match self {
            MediaType::Mp3 => "mp3",
            _ => "wav",
        }
    }

    /// The media type of `bytes`, from their first bytes (never a file
    /// name): PNG, JPEG, WebP and GIF signatures, `%PDF-` within the first
    /// 1,024 bytes (where PDF readers look for it), a RIFF `WAVE` header,
    /// an ID3 tag or an MPEG audio layer III frame header.
    pub fn detect(bytes: &[u8]) -> Option<MediaType> {
        let at =
            |offset: usize, magic: &[u8]| bytes.get(offset..offset + magic.len()) == Some(magic);
        if at(0, b"\x89PNG\r\n\x1a\n") {
            Some(MediaType::Png)
        } else if at(0, b"\xff\xd8\xff") {
            Some(MediaType::Jpeg)
        } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
            Some(MediaType::Gif)
        } else if at(0, b"RIFF") && at(8, b"WEBP") {
            Some(MediaType::Webp)
        } else if at(0, b"RIFF") && at(8, b"WAVE") {
            Some(MediaType::Wav)
        } else if bytes[..bytes.len().min(1024)]
            .windows(5)
            .any(|w| w == b"%PDF-")
        {
            Some(MediaType::Pdf)
        } else if at(0, b"ID3") || is_mp3_frame(bytes) {
            Some(MediaType::Mp3)
        } else {
            None
        }
    }

    /// The media type a caller names (`image/png`, `IMAGE/JPG; q=1`…),
    /// if it is one the runtime sends.
    pub fn parse(given: &str) -> Option<MediaType> {
        let essence = given
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        Some(match essence.as_str() {
            "image/png" => MediaType::Png,
            "image/jpeg" | "image/jpg" | "image/pjpeg" => MediaType::Jpeg,
            "image/webp" => MediaType::Webp,
            "image/gif" => MediaType::Gif,
            "application/pdf" | "application/x-pdf" => MediaType::Pdf,
            "audio/wav" | "audio/wave" | "audio/x-wav" | "audio/vnd.wave" => MediaType::Wav,
            "audio/mpeg" | "audio/mp3" | "audio/mpeg3" | "audio/x-mpeg-3" => MediaType::Mp3,
            _ => return None,
        })
    }
}

/// An MPEG-1/2 audio layer III frame header: 11 sync bits, a version that
/// is not reserved, layer III, a bitrate index that is neither free nor
/// bad, a sample rate that is not reserved.
fn is_mp3_frame(bytes: &[u8]) -> bool {
    let [a, b, c, ..] = *bytes else {
        return false;
    };
    a == 0xff
        && b & 0xe0 == 0xe0
        && (b >> 3) & 0b11 != 0b01
        && (b >> 1) & 0b11 == 0b01
        && c >> 4 != 0
        && c >> 4 != 0xf
        && (c >> 2) & 0b11 != 0b11
}

/// What each kind of media may be, for messages.
fn kinds_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Image => "an image (PNG, JPEG, WebP or GIF)",
        Kind::Document => "a PDF document",
        Kind::Audio => "audio (WAV or MP3)",
    }
}

/// One media argument ready to send.
#[derive(Clone)]
pub(crate) struct Loaded {
    pub kind: Kind,
    /// Its placeholder's number (from 1).
    pub number: usize,
    pub content: Content,
}

/// What a wire sends for one media argument.
#[derive(Clone)]
pub(crate) enum Content {
    /// The bytes, sent base64-encoded in the request body.
    Inline {
        media_type: MediaType,
        bytes: Bytes,
        /// The file name (for the APIs that want one), `<kind>-N` for
        /// bytes.
        file_name: String,
    },
    /// An `https` URL the provider fetches.
    Url(String),
}

impl Loaded {
    /// The placeholder the arguments show for it (`<image 1>`).
    pub fn placeholder(&self) -> String {
        placeholder(self.kind, self.number)
    }

    /// Bytes sent inline (0 for a URL).
    pub fn inline_len(&self) -> usize {
        match &self.content {
            Content::Inline { bytes, .. } => bytes.len(),
            Content::Url(_) => 0,
        }
    }
}

/// Only the kind and number: never the content.
impl fmt::Debug for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.content {
            Content::Inline {
                media_type, bytes, ..
            } => write!(
                f,
                "{} ({}, {} bytes)",
                self.placeholder(),
                media_type.mime(),
                bytes.len()
            ),
            Content::Url(url) => write!(f, "{} (URL on {})", self.placeholder(), url_host(url)),
        }
    }
}

/// The rules a provider applies, and its name for messages.
#[derive(Clone, Copy)]
pub(crate) struct Rules<'a> {
    pub provider: &'a str,
    pub facts: &'a MediaFacts,
}

impl Rules<'_> {
    fn rule(&self, kind: Kind) -> &MediaRule {
        match kind {
            Kind::Image => &self.facts.image,
            Kind::Document => &self.facts.document,
            Kind::Audio => &self.facts.audio,
        }
    }
}

/// Megabytes, for messages.
fn mb(bytes: u64) -> String {
    let tenths = (bytes as f64 / 100_000.0).round() / 10.0;
    format!("{tenths} MB")
}

/// Makes every media argument of a call ready to send under `rules`
/// (`None`: no provider rules, as when a cassette replays without one):
/// reads each file, detects its media type, checks it against its kind
/// and against what `from_bytes` said, checks URLs, and applies the
/// provider's rules and limits, each before any request is sent.
pub(crate) fn load_all(media: &[MediaArg], rules: Option<Rules<'_>>) -> Result<Vec<Loaded>, Error> {
    let mut loaded = Vec::with_capacity(media.len());
    let mut total: u64 = 0;
    for (i, arg) in media.iter().enumerate() {
        let number = i + 1;
        let fail = |reason: String| Error::Media {
            argument: arg.argument.to_string(),
            reason: format!(
                "{} ({}): {reason}",
                placeholder(arg.kind, number),
                Shown(&arg.source)
            ),
        };
        let one = load_one(arg, number, rules).map_err(fail)?;
        total += one.inline_len() as u64;
        if let Some(rules) = rules {
            let max = rules.facts.max_total_inline_bytes;
            if total > max {
                return Err(fail(format!(
                    "the media of this call come to {} with it, over {}'s limit of {} of media \
                     in one request (sizes before base64)",
                    mb(total),
                    rules.provider,
                    mb(max)
                )));
            }
        }
        loaded.push(one);
    }
    Ok(loaded)
}

/// A source as an error names it: the file name, the URL's host, or bytes
/// and their size.
struct Shown<'a>(&'a Source);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Source::Path(path) => {
                write!(f, "file {:?}", file_name(path))?;
                if path.is_relative() && path.components().count() > 0 {
                    f.write_str(", relative to the current directory")?;
                }
                Ok(())
            }
            Source::Url(url) => write!(f, "URL on {}", url_host(url)),
            Source::Bytes { bytes, .. } => write!(f, "{} bytes in memory", bytes.len()),
        }
    }
}

fn load_one(arg: &MediaArg, number: usize, rules: Option<Rules<'_>>) -> Result<Loaded, String> {
    let kind = arg.kind;
    let rule = rules.map(|r| (r.provider, *r.rule(kind)));
    if let Some((provider, rule)) = &rule {
        if rule.max_inline_bytes == 0 && !rule.url {
            return Err(format!(
                "{provider} does not take {kind} arguments; use a provider that does \
                 (the Vox runtime guide, \"Media arguments\": \
                 https://github.com/vox-lang/vox-for-cargo/blob/main/docs/runtime.md#media-arguments)"
            ));
        }
    }
    let content = match &arg.source {
        Source::Url(url) => {
            let url = check_url(url)?;
            if let Some((provider, rule)) = &rule {
                if !rule.url {
                    return Err(format!(
                        "{provider} does not take {kind} URLs, only the {kind} itself: pass \
                         it with from_path or from_bytes (a file or bytes the runtime sends)"
                    ));
                }
                // Gemini's `fileData` needs the `mimeType` of what the URL
                // holds; a PDF is the one document type.
                if *provider == "gemini"
                    && kind != Kind::Document
                    && MediaType::of_url(&url).is_none_or(|t| t.kind() != kind)
                {
                    return Err(format!(
                        "gemini needs the media type of a {kind} URL, told by the extension of \
                         its path (.png, .jpg, .jpeg, .webp, .gif for images; .wav, .mp3 for \
                         audio), and this URL's does not say it: pass the {kind} with from_path \
                         or from_bytes instead"
                    ));
                }
            }
            Content::Url(url)
        }
        Source::Path(path) => {
            let limit = inline_limit(kind, rule)?;
            let bytes = read_file(path, limit, |len| over_limit(len, kind, rule, limit))?;
            let media_type = detect_kind(kind, &bytes, None)?;
            Content::Inline {
                media_type,
                bytes: Bytes::from(bytes),
                file_name: file_name(path),
            }
        }
        Source::Bytes { media_type, bytes } => {
            let limit = inline_limit(kind, rule)?;
            if bytes.is_empty() {
                return Err("there are no bytes (an empty value)".into());
            }
            if bytes.len() as u64 > limit {
                return Err(over_limit(bytes.len() as u64, kind, rule, limit));
            }
            let detected = detect_kind(kind, bytes, Some(media_type))?;
            Content::Inline {
                media_type: detected,
                bytes: bytes.clone(),
                file_name: format!("{kind}-{number}{}", extension(detected)),
            }
        }
    };
    Ok(Loaded {
        kind,
        number,
        content,
    })
}

/// A file name extension for media named after their placeholder.
fn extension(media_type: MediaType) -> &'static str {
    match media_type {
        MediaType::Png => ".png",
        MediaType::Jpeg => ".jpg",
        MediaType::Webp => ".webp",
        MediaType::Gif => ".gif",
        MediaType::Pdf => ".pdf",
        MediaType::Wav => ".wav",
        MediaType::Mp3 => ".mp3",
    }
}

/// The most bytes of `kind` sent inline under `rule`; an error when the
/// provider takes only URLs of it.
fn inline_limit(kind: Kind, rule: Option<(&str, MediaRule)>) -> Result<u64, String> {
    match rule {
        None => Ok(u64::MAX),
        Some((provider, rule)) if rule.max_inline_bytes == 0 => Err(format!(
            "{provider} takes {kind} arguments only as https URLs it fetches (from_url)"
        )),
        Some((_, rule)) => Ok(rule.max_inline_bytes),
    }
}

fn over_limit(len: u64, kind: Kind, rule: Option<(&str, MediaRule)>, limit: u64) -> String {
    let provider = rule.map_or("the provider", |(p, _)| p);
    format!(
        "it is {} ({len} bytes), over {provider}'s limit of {} for one {kind} (before base64)",
        mb(len),
        mb(limit)
    )
}

/// The media type of `bytes` for an argument of `kind`, checked against
/// `given` (what `from_bytes` said) when there is one.
fn detect_kind(kind: Kind, bytes: &[u8], given: Option<&str>) -> Result<MediaType, String> {
    let detected = MediaType::detect(bytes);
    if let Some(given) = given {
        let shown: String = given
            .chars()
            .take(80)
            .flat_map(char::escape_default)
            .collect();
        let Some(named) = MediaType::parse(given) else {
            return Err(format!(
                "the media type \"{shown}\" is not one the runtime sends (image/png, image/jpeg, \
                 image/webp, image/gif, application/pdf, audio/wav, audio/mpeg)"
            ));
        };
        match detected {
            Some(d) if d == named => {}
            Some(d) => {
                return Err(format!(
                    "the bytes are {}, not \"{shown}\" as given (the media type is read from \
                     the content)",
                    d.name()
                ))
            }
            None => {
                return Err(format!(
                    "the bytes are not {} as given: they do not start the way such content \
                     does",
                    named.name()
                ))
            }
        }
    }
    match detected {
        Some(d) if d.kind() == kind => Ok(d),
        Some(d) => Err(format!(
            "the content is {}, not {} (the media type is read from the content, never the \
             file name)",
            d.name(),
            kinds_of(kind)
        )),
        None => Err(format!(
            "the content is not {}: its first bytes match none of the formats the runtime \
             sends (the media type is read from the content, never the file name)",
            kinds_of(kind)
        )),
    }
}

/// An `https` URL with a host; nothing else is passed on to a provider.
fn check_url(url: &str) -> Result<String, String> {
    // Parsers disagree about a backslash: WHATWG parsers (browsers, the
    // providers' fetchers) read it as `/`, others as a character of the
    // authority, so `https://evil.example\@good.example.com/` names two
    // hosts. Refused rather than guessed.
    if url.contains('\\') {
        return Err(
            "the URL contains a backslash, which URL parsers read differently: \
             write `/`, or `%5C` inside the path"
                .into(),
        );
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the URL contains spaces or control characters".into());
    }
    let Some(rest) = url
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| &url[8..])
    else {
        return Err("a media URL must be an https URL".into());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    if host.is_empty() || host.starts_with(':') {
        return Err("the URL has no host".into());
    }
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("the URL is not valid ({e})"))?;
    if parsed.scheme() != "https" || parsed.host_str().is_none_or(str::is_empty) {
        return Err("a media URL must be an https URL with a host".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "a media URL may not carry a user name or password (the provider would \
             fetch with them): use a URL that needs none, or pass the file itself"
                .into(),
        );
    }
    // Sent as the parser reads it, so what is shown and what is fetched
    // are one URL.
    Ok(parsed.into())
}

/// Reads the regular file at `path`, at most `limit` bytes (larger is an
/// error, found from its size before reading). A FIFO, socket or device is
/// refused from its metadata before it is opened, and the file is opened
/// without blocking (`O_NONBLOCK` on Unix), so a FIFO put in its place in
/// between is reported too, not waited on.
fn read_file(
    path: &Path,
    limit: u64,
    too_large: impl Fn(u64) -> String,
) -> Result<Vec<u8>, String> {
    let not_opened = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => "there is no such file".to_owned(),
        io::ErrorKind::PermissionDenied => "the file cannot be read (permission denied)".to_owned(),
        _ => format!("the file cannot be opened ({})", io_reason(&e)),
    };
    check_file_type(&std::fs::metadata(path).map_err(not_opened)?.file_type())?;
    let file: File = open_options().open(path).map_err(not_opened)?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("the file cannot be examined ({})", io_reason(&e)))?;
    // Again on what was opened: the path may have changed in between.
    check_file_type(&metadata.file_type())?;
    let len = metadata.len();
    if len == 0 {
        return Err("the file is empty".into());
    }
    if len > limit {
        return Err(too_large(len));
    }
    // Sized from the metadata; a file that grew since is read only up to
    // the limit and then refused.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("the file could not be read ({})", io_reason(&e)))?;
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reading, without blocking on Unix (a FIFO without a writer opens at
/// once; reading a regular file is unaffected).
fn open_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options
}

/// A regular file; a directory, FIFO, socket or device is an error.
fn check_file_type(file_type: &std::fs::FileType) -> Result<(), String> {
    if file_type.is_dir() {
        return Err("it is a directory, not a file".into());
    }
    if !file_type.is_file() {
        return Err(format!(
            "it is {}, not a regular file",
            special_file(file_type)
        ));
    }
    Ok(())
}

/// What a non-regular file is.
fn special_file(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    let _ = file_type;
    "a special file"
}

/// An I/O error's reason without the path (the error names the file
/// already).
fn io_reason(e: &io::Error) -> String {
    e.kind().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_detected_and_lies_are_not() {
        let cases: &[(&[u8], Option<MediaType>)] = &[
            (b"\x89PNG\r\n\x1a\n....", Some(MediaType::Png)),
            (b"\xff\xd8\xff\xe0..JFIF", Some(MediaType::Jpeg)),
            (b"GIF89a....", Some(MediaType::Gif)),
            (b"RIFF\x10\0\0\0WEBPVP8 ", Some(MediaType::Webp)),
            (b"RIFF\x10\0\0\0WAVEfmt ", Some(MediaType::Wav)),
            (b"%PDF-1.7\n", Some(MediaType::Pdf)),
            (b"\xef\xbb\xbf\n%PDF-1.4\n", Some(MediaType::Pdf)),
            (b"ID3\x04\0\0", Some(MediaType::Mp3)),
            (b"\xff\xfb\x90\x64", Some(MediaType::Mp3)),
            (b"\xff\xd8", None),
            (b"RIFF\x10\0\0\0AVI ", None),
            (b"\x89PNG", None),
            (b"hello, world", None),
            (b"", None),
            (b"\xff\xfb\xf0\x64", None),
        ];
        for (bytes, expected) in cases {
            assert_eq!(MediaType::detect(bytes), *expected, "{bytes:?}");
        }
        assert_eq!(MediaType::parse(" IMAGE/JPG ; q=1"), Some(MediaType::Jpeg));
        assert_eq!(MediaType::parse("image/tiff"), None);
    }

    #[test]
    fn urls_must_be_https_with_a_host() {
        assert!(check_url("https://example.com/a.png").is_ok());
        assert!(check_url("HTTPS://example.com").is_ok());
        for bad in [
            "http://example.com/a.png",
            "file:///etc/passwd",
            "https://",
            "https:///x",
            "https://:80/x",
            "https://exa mple.com/",
            "scan.png",
            "",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_swapped_in_after_the_check_opens_without_blocking() {
        let dir = std::env::temp_dir().join(format!("vox-fifo-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("scan.png");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let opened = open_options()
                .open(&fifo)
                .map(|f| f.metadata().map(|m| m.file_type()));
            let _ = tx.send(opened.map(|t| t.map(|t| check_file_type(&t))));
        });
        let checked = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening a FIFO must not block");
        let reason = checked.unwrap().unwrap().unwrap_err();
        assert!(reason.contains("a FIFO"), "{reason}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(mb(3_750_000), "3.8 MB");
        assert_eq!(mb(20_000_000), "20 MB");
    }
}
