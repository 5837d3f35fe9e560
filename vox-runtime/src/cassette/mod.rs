//! Recorded replies (docs/runtime.md, "Cassettes" and "Reply cache").
//!
//! A cassette is a directory with one JSONL file per `@ai` function; each
//! line records one request, keyed by what it asks whatever the provider
//! (function, model, instruction, schema, arguments, and the rejected
//! replies and corrections before it), and what came back (the content,
//! how it finished, token usage; or the failure a call fell back from).
//! The client looks each attempt up before sending it: a hit is judged
//! exactly like a reply from the server, so re-prompts, repairs, checks and
//! fallbacks replay as they ran. The reply cache stores the same entries,
//! one file per key, in a directory bounded in size.

mod cache;
pub(crate) use cache::DEFAULT_CACHE_MAX_BYTES;
mod entry;
mod store;

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use crate::error::{CassetteField, Error};

pub(crate) use cache::ReplyCache;
use entry::Entry;
pub(crate) use entry::{
    arguments_with_media, schema_id, Finish, Recorded, RecordedCall, RecordedUsage, Request, Turn,
};
use store::{Found, Store};

/// What a cassette does with a call (`VOX_LLM_CASSETTE_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CassetteMode {
    /// Every call asks the provider and records its reply, replacing the
    /// entry of the same request.
    Record,
    /// Every call is answered from the cassette; a call it has no entry
    /// for fails with [`Error::CassetteMiss`]. No request leaves the
    /// process.
    Replay,
    /// Replays what is recorded, asks the provider and records the rest.
    Auto,
}

impl CassetteMode {
    /// The name used in `VOX_LLM_CASSETTE_MODE`.
    pub fn name(self) -> &'static str {
        match self {
            CassetteMode::Record => "record",
            CassetteMode::Replay => "replay",
            CassetteMode::Auto => "auto",
        }
    }

    /// The mode when `VOX_LLM_CASSETTE_MODE` is unset: `replay` when the
    /// `CI` variable is set (to anything but `false` or `0`), else `auto`.
    pub fn default_for(ci: Option<&str>) -> CassetteMode {
        match ci.map(str::trim) {
            Some("" | "0" | "false") | None => CassetteMode::Auto,
            Some(_) => CassetteMode::Replay,
        }
    }
}

impl fmt::Display for CassetteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CassetteMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "record" => Ok(CassetteMode::Record),
            "replay" => Ok(CassetteMode::Replay),
            "auto" => Ok(CassetteMode::Auto),
            _ => Err(Error::Config(format!(
                "VOX_LLM_CASSETTE_MODE must be `record`, `replay` or `auto`, got `{}`",
                crate::server_text::server_text(s, 40)
            ))),
        }
    }
}

/// Where one call's replies are looked up and recorded.
#[derive(Debug, Clone)]
pub(crate) enum Recorder {
    Cassette {
        store: Arc<Store>,
        mode: CassetteMode,
    },
    Cache(Arc<ReplyCache>),
}

/// What to do with one attempt.
pub(crate) enum Lookup {
    /// Judge this recorded reply (or fail with this recorded failure).
    Hit(Recorded),
    /// Ask the provider and record what comes back.
    Record,
}

/// How a miss is told to record: a sentence.
const RECORD_HINT: &str = "record it with `cargo vox test --record`, or run with \
     VOX_LLM_CASSETTE_MODE=record (or auto) and a provider's key";

impl Recorder {
    /// The cassette of `dir` in `mode`.
    pub fn cassette(dir: &Path, mode: CassetteMode) -> Recorder {
        Recorder::Cassette {
            store: Store::open(dir),
            mode,
        }
    }

    /// Whether `function` has a cassette file (always true for the cache).
    pub fn has_file_for(&self, function: &str) -> bool {
        match self {
            Recorder::Cassette { store, .. } => store.exists(function),
            Recorder::Cache(_) => true,
        }
    }

    /// What to do with `request`; `can_record` says whether a provider is
    /// configured to ask.
    pub fn lookup(&self, request: &Request<'_>, can_record: bool) -> Result<Lookup, Error> {
        let (store, mode) = match self {
            Recorder::Cache(cache) => {
                return Ok(match cache.find(request) {
                    Some(recorded) => Lookup::Hit(recorded),
                    None => Lookup::Record,
                })
            }
            Recorder::Cassette { store, mode } => (store, *mode),
        };
        if mode == CassetteMode::Record {
            if can_record {
                // What could not be recorded is not asked for (a paid call).
                if let Found::Miss {
                    corrupt: Some((line, message)),
                    ..
                } = store.find(request)?
                {
                    return Err(unrecordable(store, request, line, &message));
                }
                return Ok(Lookup::Record);
            }
            return Err(Error::Config(format!(
                "cassette mode `record` needs a provider to record `{}` with (set a provider's key)",
                request.function
            )));
        }
        match store.find(request)? {
            Found::Hit(entry) => {
                event("hit", request.function);
                Ok(Lookup::Hit(entry.reply))
            }
            Found::Miss {
                corrupt: Some((line, message)),
                ..
            } if mode == CassetteMode::Auto && can_record => {
                Err(unrecordable(store, request, line, &message))
            }
            Found::Miss { .. } if mode == CassetteMode::Auto && can_record => Ok(Lookup::Record),
            Found::Miss { corrupt, nearest } => {
                event("miss", request.function);
                // The entry asked for may be the line that is not one.
                if let Some((line, message)) = corrupt {
                    return Err(Error::Cassette {
                        path: store.path_of(request.function).display().to_string(),
                        line: Some(line),
                        message: format!(
                            "{message} (no other entry matches this call of `{}`)",
                            request.function
                        ),
                    });
                }
                let hint = if can_record || mode == CassetteMode::Replay {
                    RECORD_HINT
                } else {
                    "no provider is configured to record it with (set a provider's key)"
                };
                Err(self.miss(store, request, nearest.as_ref(), hint))
            }
        }
    }

    fn miss(
        &self,
        store: &Store,
        request: &Request<'_>,
        nearest: Option<&Entry>,
        hint: &str,
    ) -> Error {
        let (differs, text) = match nearest {
            Some(entry) => {
                let recorded = entry.request();
                let fields: Vec<CassetteField> = request.differences(&recorded);
                let text = request.describe_differences(&recorded, &fields);
                (fields, Some(text))
            }
            None => (Vec::new(), None),
        };
        let nearest = match (differs.is_empty(), text) {
            (true, _) => "none is recorded for this function".to_owned(),
            (false, Some(text)) => format!("the nearest recorded entry differs in {text}"),
            (false, None) => "the nearest recorded entry differs".to_owned(),
        };
        Error::CassetteMiss {
            function: request.function.to_owned(),
            message: format!(
                "no reply recorded in {} matches this call ({nearest}); {hint}",
                store.path_of(request.function).display()
            ),
            differs,
        }
    }

    /// Records `recorded` as the reply to `request`.
    pub fn save(&self, request: &Request<'_>, recorded: Recorded) -> Result<(), Error> {
        let entry = Entry::new(request, recorded)?;
        match self {
            Recorder::Cassette { store, .. } => {
                store.record(entry)?;
                event("record", request.function);
                Ok(())
            }
            Recorder::Cache(cache) => cache.store(&entry),
        }
    }
}

/// The error of a call that would be recorded into a cassette with a line
/// that is not an entry: said before the request is sent.
fn unrecordable(store: &Store, request: &Request<'_>, line: usize, message: &str) -> Error {
    Error::Cassette {
        path: store.path_of(request.function).display().to_string(),
        line: Some(line),
        message: format!(
            "{message}; not asking the provider for `{}`, whose reply could not be recorded \
             into a cassette with a corrupted line (fix or delete the line)",
            request.function
        ),
    }
}

/// Counts a cassette event for `cargo vox test`: when
/// `VOX_LLM_CASSETTE_EVENTS` names a file, appends `kind function` to it
/// (one short line per `write`, so lines of parallel tests do not mix).
fn event(kind: &str, function: &str) {
    let Some(path) = std::env::var_os("VOX_LLM_CASSETTE_EVENTS") else {
        return;
    };
    let path = PathBuf::from(path);
    let line = format!("{kind} {function}\n");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = file.write_all(line.as_bytes());
    }
}
