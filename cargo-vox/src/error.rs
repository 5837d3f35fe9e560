//! The one error type of `cargo vox`'s commands.
//!
//! A command that cannot produce its result returns an [`Error`]; only
//! `lib::run` reports it ([`crate::context::Context::report`]): under
//! `--json` as exactly one failure envelope (or the envelope the error
//! carries), otherwise on stderr. A command that produced its result —
//! diagnostics and all — prints its envelope itself and returns its exit
//! status; nothing is "already reported" on the error path.

use crate::envelope::Envelope;
use crate::exit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asked for something that does not exist or cannot
    /// be (exit status 2). `label` is the envelope's `file_path`.
    #[error("{message}")]
    Usage { label: String, message: String },
    /// The command could not do its work (exit status 1): one message per
    /// cause, each naming what it is about.
    #[error("{}", .messages.join("\n"))]
    Failure {
        label: String,
        messages: Vec<String>,
    },
    /// The module the command needs has errors: the envelope holding its
    /// diagnostics, the summary line people see, and the diagnostics
    /// rendered for them (empty under `--json`).
    #[error("{summary}")]
    Rejected {
        envelope: Box<Envelope>,
        summary: String,
        rendered: Vec<String>,
    },
    /// Something outside the command's own checks failed (writing stdout,
    /// the editor connection): reported under the context's default label.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// What commands return.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(label: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Usage {
            label: label.into(),
            message: message.into(),
        }
    }

    pub fn failure(label: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Failure {
            label: label.into(),
            messages: vec![message.into()],
        }
    }

    /// The exit status the error ends the command with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => exit::USAGE,
            Error::Failure { .. } | Error::Rejected { .. } | Error::Other(_) => exit::FAILURE,
        }
    }

    /// The same error about `label` (a command names its failures after
    /// what it was asked to work on, `schema` after the type).
    pub fn labelled(self, new: &str) -> Error {
        match self {
            Error::Usage { message, .. } => Error::usage(new, message),
            Error::Failure { messages, .. } => Error::Failure {
                label: new.to_string(),
                messages,
            },
            other => other,
        }
    }
}
