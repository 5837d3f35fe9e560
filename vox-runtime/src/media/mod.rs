//! Images, PDFs and audio as arguments of `@ai` functions
//! (docs/runtime.md, "Media arguments").
//!
//! [`Image`], [`Document`] and [`Audio`] only say where the media is: a
//! file (read when the call is made, not when the value is built), an
//! `https` URL (checked when the call is made) or bytes in memory. While
//! an argument is serialized into the arguments of a call (`Args`), each one met anywhere
//! in it (the argument itself, a record's field, a list's item) is
//! collected and written as a placeholder, `"<image 1>"`, `"<document 2>"`
//! (numbered across the call); the wire then sends the media itself as the
//! provider's image, document or audio part, labelled with the same
//! placeholder. Outside `Args` a media value serializes as a description
//! (`"<image scan.png>"`), never its content.
//!
//! Nothing here shows content: `Debug` and `Display` give the kind, the
//! file name, the URL's host or the media type and size.

pub(crate) mod body;
pub(crate) mod load;

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a media value is, which decides the media types it may hold and
/// the part a wire sends it as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// PNG, JPEG, WebP or GIF.
    Image,
    /// PDF.
    Document,
    /// WAV or MP3.
    Audio,
}

impl Kind {
    /// The word for it in placeholders and messages.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Document => "document",
            Kind::Audio => "audio",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Where a media value's content is.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Source {
    /// A file, read when the call is made.
    Path(PathBuf),
    /// A URL the provider fetches, checked when the call is made.
    Url(String),
    /// Bytes in memory, with the media type the caller says they are.
    Bytes { media_type: String, bytes: Bytes },
}

impl Source {
    /// A description that shows no content and no secret: the file name,
    /// the URL's host, or the media type and size.
    pub fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Path(path) => write!(f, "file {:?}", file_name(path)),
            Source::Url(url) => write!(f, "URL on {:?}", url_host(url)),
            Source::Bytes { media_type, bytes } => {
                write!(f, "{:?}, {} bytes", media_type, bytes.len())
            }
        }
    }
}

/// The last component of `path`, the whole of it if it has none.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

/// The host of `url` (never its user, password, path or query): what may
/// be shown of a URL, which can carry a signature or a token.
pub(crate) fn url_host(url: &str) -> String {
    // Parsers disagree about a backslash (the call refuses the URL): its
    // host is shown as no single one.
    if url.contains('\\') {
        return "(not a valid URL: it has a backslash)".to_owned();
    }
    let rest = match url.split_once("://") {
        Some((_, rest)) => rest,
        None => return "(not a URL)".to_owned(),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if host_port.starts_with('[') {
        host_port.split(']').next().map(|h| format!("{h}]"))
    } else {
        host_port.split(':').next().map(str::to_owned)
    };
    let host = host.unwrap_or_default();
    if host.is_empty() {
        "(no host)".to_owned()
    } else {
        host.chars().flat_map(char::escape_default).collect()
    }
}

/// One media value met while an argument was serialized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MediaArg {
    /// The argument it is in.
    pub argument: Box<str>,
    pub kind: Kind,
    pub source: Source,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f)
    }
}

/// A collection going on: the number of the first media value it meets,
/// and those met.
type Collection = (usize, Vec<(Kind, Source)>);

thread_local! {
    /// The media of the argument being serialized into `Args` on this
    /// thread, if one is: the number the first one gets, and those met.
    static COLLECTOR: RefCell<Option<Collection>> = const { RefCell::new(None) };
}

/// Runs `serialize` with media collected: each media value it serializes
/// is written as `"<kind N>"`, numbered from `first`, and returned in the
/// order met. A collection already going on (a serializer that serializes
/// `Args` itself) is set aside and restored.
pub(crate) fn collecting<R>(
    first: usize,
    serialize: impl FnOnce() -> R,
) -> (R, Vec<(Kind, Source)>) {
    let outer = COLLECTOR.with(|c| c.borrow_mut().replace((first, Vec::new())));
    // Restores the outer collection even if `serialize` panics.
    struct Restore(Option<Option<Collection>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                COLLECTOR.with(|c| *c.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let result = serialize();
    let collected = COLLECTOR.with(|c| c.borrow_mut().take());
    if let Some(outer) = restore.0.take() {
        COLLECTOR.with(|c| *c.borrow_mut() = outer);
    }
    (
        result,
        collected.map(|(_, media)| media).unwrap_or_default(),
    )
}

/// The placeholder the arguments' JSON shows for the `number`th media
/// value of a call (from 1).
pub(crate) fn placeholder(kind: Kind, number: usize) -> String {
    format!("<{kind} {number}>")
}

fn serialize_media<S: Serializer>(kind: Kind, source: &Source, s: S) -> Result<S::Ok, S::Error> {
    let number = COLLECTOR.with(|c| {
        c.borrow_mut().as_mut().map(|(first, media)| {
            media.push((kind, source.clone()));
            *first + media.len()
        })
    });
    match number {
        Some(number) => s.serialize_str(&placeholder(kind, number)),
        None => s.collect_str(&format_args!("<{kind} {}>", Short(source))),
    }
}

/// A source as a placeholder outside `Args` describes it: the file name,
/// the host, or the media type.
struct Short<'a>(&'a Source);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Source::Path(path) => f.write_str(&file_name(path)),
            Source::Url(url) => write!(f, "from {}", url_host(url)),
            Source::Bytes { media_type, bytes } => {
                write!(f, "{media_type}, {} bytes", bytes.len())
            }
        }
    }
}

fn refuse_deserialize<'de, D: Deserializer<'de>, T>(kind: Kind, _: D) -> Result<T, D::Error> {
    Err(serde::de::Error::custom(format_args!(
        "{kind} values cannot be read from JSON: media are arguments of @ai functions \
         only, never part of a model's reply"
    )))
}

macro_rules! media_type {
    ($(#[$doc:meta])* $name:ident, $kind:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            source: Source,
        }

        impl $name {
            #[doc = concat!("The ", $what, " in the file at `path`. Nothing is read now: the file is \
                read when the `@ai` call it is an argument of is made, its media type detected \
                from its first bytes (never its extension), and a missing, empty, unreadable, \
                oversized or mistyped file is then an [`Error::Media`](crate::Error::Media).")]
            pub fn from_path(path: impl Into<PathBuf>) -> $name {
                $name {
                    source: Source::Path(path.into()),
                }
            }

            #[doc = concat!("The ", $what, " at `url`, which the provider fetches. Checked when the \
                call is made: an `https` URL with a host, and a provider that takes URLs for \
                this kind of media; else an [`Error::Media`](crate::Error::Media).")]
            pub fn from_url(url: impl Into<String>) -> $name {
                $name {
                    source: Source::Url(url.into()),
                }
            }

            #[doc = concat!("The ", $what, " in `bytes`, of `media_type` (`image/png`…). When the \
                call is made the bytes must be of that type (detected from their first bytes), \
                else the call fails with an [`Error::Media`](crate::Error::Media). Cloning \
                shares the bytes.")]
            pub fn from_bytes(media_type: impl Into<String>, bytes: impl Into<Bytes>) -> $name {
                $name {
                    source: Source::Bytes {
                        media_type: media_type.into(),
                        bytes: bytes.into(),
                    },
                }
            }

            /// The file it is read from, if it is one.
            pub fn path(&self) -> Option<&Path> {
                match &self.source {
                    Source::Path(path) => Some(path),
                    _ => None,
                }
            }

            /// The URL it is fetched from, if it is one.
            pub fn url(&self) -> Option<&str> {
                match &self.source {
                    Source::Url(url) => Some(url),
                    _ => None,
                }
            }
        }

        /// The kind and the file name, the URL's host, or the media type
        /// and size; never the content, a directory or a URL's path.
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(", stringify!($name))?;
                self.source.describe(f)?;
                f.write_str(")")
            }
        }

        /// As `Debug`: `image file "scan.png"`.
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} ", $kind)?;
                self.source.describe(f)
            }
        }

        /// In the arguments of a call (`Args`), a placeholder (`"<image 1>"`) and the media
        /// collected for the wire; elsewhere a description
        /// (`"<image scan.png>"`). Never the content.
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serialize_media($kind, &self.source, s)
            }
        }

        /// Always fails: a model cannot return media. (It exists so that a
        /// record holding media can derive `Deserialize`.)
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                refuse_deserialize($kind, d)
            }
        }

        /// Vox `str`/`print`: `<image scan.png>`, `<image from example.com>`;
        /// never the content (docs/language.md, "Images, documents and audio").
        impl crate::__private::show::Show for $name {
            fn show(&self, out: &mut String) {
                use std::fmt::Write as _;
                let _ = write!(out, "<{} {}>", $kind, Short(&self.source));
            }
        }
    };
}

media_type!(
    /// An image argument of an `@ai` function: PNG, JPEG, WebP or GIF
    /// (docs/runtime.md, "Media arguments").
    ///
    /// ```
    /// let scan = vox_runtime::Image::from_path("scan.png"); // read when the call is made
    /// assert_eq!(format!("{scan:?}"), r#"Image(file "scan.png")"#);
    /// let logo = vox_runtime::Image::from_url("https://example.com/logo.png?sig=secret");
    /// assert_eq!(logo.to_string(), r#"image URL on "example.com""#);
    /// ```
    Image,
    Kind::Image,
    "image"
);

media_type!(
    /// A document argument of an `@ai` function: a PDF (docs/runtime.md,
    /// "Media arguments").
    ///
    /// ```
    /// let invoice = vox_runtime::Document::from_path("invoices/march.pdf");
    /// assert_eq!(format!("{invoice:?}"), r#"Document(file "march.pdf")"#);
    /// ```
    Document,
    Kind::Document,
    "document"
);

media_type!(
    /// An audio argument of an `@ai` function: WAV or MP3, for the
    /// providers that take audio (docs/runtime.md, "Media arguments").
    ///
    /// ```
    /// let memo = vox_runtime::Audio::from_bytes("audio/wav", b"RIFF....WAVE".to_vec());
    /// assert_eq!(format!("{memo:?}"), r#"Audio("audio/wav", 12 bytes)"#);
    /// ```
    Audio,
    Kind::Audio,
    "audio"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_show_no_content_and_no_url_secrets() {
        let image = Image::from_bytes("image/png", b"\x89PNG secret pixels".to_vec());
        assert_eq!(format!("{image:?}"), r#"Image("image/png", 18 bytes)"#);
        let url = Image::from_url("https://user:pw@cdn.example.com:8443/a/b.png?token=t0k");
        let shown = format!("{url:?} {url}");
        assert!(shown.contains("cdn.example.com"), "{shown}");
        for secret in ["user", "pw", "8443", "/a/b.png", "t0k"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let path = Document::from_path("/home/someone/private/invoice.pdf");
        assert_eq!(format!("{path:?}"), r#"Document(file "invoice.pdf")"#);
        assert_eq!(url_host("https://[::1]:80/x"), "[::1]");
        assert_eq!(url_host("nonsense"), "(not a URL)");
        assert_eq!(url_host("https:///x"), "(no host)");
        assert_eq!(
            url_host(r"https://evil.example\@good.example.com/x.png"),
            "(not a valid URL: it has a backslash)"
        );
    }

    #[test]
    fn outside_args_media_serializes_as_a_description() {
        let json = serde_json::to_string(&vec![
            Image::from_path("dir/scan.png"),
            Image::from_url("https://example.com/x.png?sig=abc"),
        ])
        .unwrap();
        assert_eq!(json, r#"["<image scan.png>","<image from example.com>"]"#);
    }

    #[test]
    fn deserializing_media_fails_with_a_clear_message() {
        let err = serde_json::from_str::<Image>(r#""<image 1>""#).unwrap_err();
        assert!(
            err.to_string().contains("never part of a model's reply"),
            "{err}"
        );
        assert!(serde_json::from_str::<Document>("{}").is_err());
        assert!(serde_json::from_str::<Audio>("null").is_err());
    }

    #[test]
    fn collecting_numbers_media_across_calls_and_restores_the_outer_collection() {
        let (json, media) = collecting(2, || {
            let inner = collecting(0, || serde_json::to_string(&Image::from_path("a.png")));
            assert_eq!(inner.0.unwrap(), r#""<image 1>""#);
            serde_json::to_string(&(Document::from_path("b.pdf"), Image::from_path("c.png")))
        });
        assert_eq!(json.unwrap(), r#"["<document 3>","<image 4>"]"#);
        assert_eq!(media.len(), 2);
        assert_eq!(media[0].0, Kind::Document);
        // Nothing is collected after the collection ends.
        assert_eq!(
            serde_json::to_string(&Image::from_path("d.png")).unwrap(),
            r#""<image d.png>""#
        );
    }
}
