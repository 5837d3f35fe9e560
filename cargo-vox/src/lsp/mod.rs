//! `cargo vox lsp`: a Language Server Protocol server over stdio.
//!
//! Built on rust-analyzer's own `lsp-server` (the JSON-RPC transport) and
//! `lsp-types` (the protocol's types): synchronous, small, and no async
//! runtime in the editor's path. The Vox frontend checks a 100,000-line
//! module in about 0.1 s, so the server does everything on one thread:
//! read a message, answer it from the latest analysis, and re-check a
//! module once its edits pause (see [`DEBOUNCE`]).
//!
//! Layout: this file is the server loop and dispatch; `store` holds open
//! buffers, modules and analyses; [`position`] converts positions; one
//! file per feature (diagnostics, hover, navigation, completion, actions,
//! format, symbols, tokens).

mod actions;
mod completion;
mod diagnostics;
mod format;
mod hover;
mod navigation;
pub mod position;
mod store;
mod symbols;
mod tokens;
mod transport;

use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as _,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, Request as _, SemanticTokensFullRequest,
};
use lsp_types::{
    CodeActionProviderCapability, CompletionOptions, HoverProviderCapability, InitializeParams,
    OneOf, PositionEncodingKind, RenameOptions, SemanticTokensFullOptions, SemanticTokensOptions,
    SemanticTokensServerCapabilities, ServerCapabilities, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri, WorkDoneProgressOptions,
};
use serde_json::Value;

use crate::context::Context;
use position::Encoding;
use store::{Analysis, Store};

/// How long edits must pause before a module is re-checked and its
/// diagnostics published. A request about a module re-checks it first.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

#[derive(Debug, Args)]
pub struct LspArgs {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: &LspArgs, ctx: &Context) -> crate::error::Result<i32> {
    let (connection, io_threads) =
        transport::stdio().context("cannot start the LSP I/O threads")?;
    serve(connection, ctx.clone())?;
    io_threads.join().context("the LSP writer failed")?;
    Ok(crate::exit::SUCCESS)
}

/// Runs the protocol on `connection` until `shutdown` and `exit`.
pub fn serve(connection: Connection, ctx: Context) -> anyhow::Result<()> {
    let (id, params) = connection
        .initialize_start()
        .context("no initialize request")?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let utf8 = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
    let enc = if utf8 {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    let result = serde_json::json!({
        "capabilities": capabilities(enc),
        "serverInfo": { "name": "cargo-vox", "version": env!("CARGO_PKG_VERSION") },
    });
    connection
        .initialize_finish(id, result)
        .context("initialize failed")?;
    let mut server = Server {
        conn: connection,
        enc,
        ctx,
        store: Store::default(),
    };
    server.main_loop()
}

fn capabilities(enc: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match enc {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "(".into(), "\"".into(), "@".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: tokens::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            },
        )),
        ..Default::default()
    }
}

struct Server {
    conn: Connection,
    enc: Encoding,
    ctx: Context,
    store: Store,
}

/// A feature's answer: a JSON result, or an error for the client.
type Reply = Result<Value, (ErrorCode, String)>;

impl Server {
    fn main_loop(&mut self) -> anyhow::Result<()> {
        loop {
            let msg = match self.next_deadline() {
                Some(deadline) => {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    match self.conn.receiver.recv_timeout(wait) {
                        Ok(m) => m,
                        Err(crossbeam_timeout) if crossbeam_timeout.is_timeout() => {
                            self.flush_due();
                            continue;
                        }
                        Err(_) => return Ok(()),
                    }
                }
                None => match self.conn.receiver.recv() {
                    Ok(m) => m,
                    Err(_) => return Ok(()),
                },
            };
            match msg {
                Message::Request(req) => {
                    if self.conn.handle_shutdown(&req)? {
                        return Ok(());
                    }
                    let id = req.id.clone();
                    let reply = self.request(req);
                    let resp = match reply {
                        Ok(v) => Response::new_ok(id, v),
                        Err((code, msg)) => Response::new_err(id, code as i32, msg),
                    };
                    self.send(Message::Response(resp));
                }
                Message::Notification(n) => self.notification(n),
                Message::Response(_) => {}
            }
        }
    }

    fn send(&self, msg: Message) {
        // The client went away: the loop ends when the receiver closes.
        let _ = self.conn.sender.send(msg);
    }

    /// When the earliest pending re-check is due.
    fn next_deadline(&self) -> Option<Instant> {
        self.store
            .modules
            .iter()
            .filter_map(|m| m.dirty_since)
            .min()
            .map(|t| t + DEBOUNCE)
    }

    /// Re-checks and publishes every module whose edits have paused.
    fn flush_due(&mut self) {
        let now = Instant::now();
        for i in 0..self.store.modules.len() {
            if self.store.modules[i]
                .dirty_since
                .is_some_and(|t| t + DEBOUNCE <= now)
            {
                self.recheck_and_publish(i);
            }
        }
    }

    fn recheck_and_publish(&mut self, module: usize) {
        let Some(m) = self.store.modules.get_mut(module) else {
            return;
        };
        let open = &self.store.open;
        // As for requests: a failure on some buffer is that buffer's, not
        // the session's (the module keeps no analysis until the next edit).
        let checked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.recheck(open))).is_ok();
        if !checked {
            m.analysis = None;
            m.dirty_since = None;
            return;
        }
        for msg in diagnostics::publish(m, &open.too_large, self.enc) {
            self.send(msg);
        }
    }

    /// Tells the editor something it should see (`window/showMessage`).
    fn show(&self, typ: lsp_types::MessageType, message: String) {
        self.send(notification(
            lsp_types::notification::ShowMessage::METHOD,
            lsp_types::ShowMessageParams { typ, message },
        ));
    }

    /// Says that the buffer of `path` is over the size limit.
    fn too_large(&self, path: &std::path::Path, len: u64) {
        self.show(
            lsp_types::MessageType::WARNING,
            diagnostics::too_large_message(path, len),
        );
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = position::uri_to_path(&p.text_document.uri) else {
                    return;
                };
                let found = self.store.module_for(&path, &self.ctx);
                if let Some(note) = found.note {
                    self.show(lsp_types::MessageType::INFO, note);
                }
                let open = &mut self.store.open;
                open.opened_as
                    .insert(found.path.clone(), p.text_document.uri);
                if let Some(len) = open.set(&found.path, p.text_document.text) {
                    self.too_large(&found.path, len);
                }
                self.recheck_and_publish(found.module);
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = position::uri_to_path(&p.text_document.uri) else {
                    return;
                };
                let found = self.store.module_for(&path, &self.ctx);
                let open = &mut self.store.open;
                let was_too_large = open.too_large.contains_key(&found.path);
                let mut text = open.text.remove(&found.path).unwrap_or_default();
                // A buffer over the limit was not kept: only a whole new
                // text replaces it.
                let mut known = !was_too_large;
                for change in p.content_changes {
                    match change.range {
                        Some(r) if known => {
                            let start = position::offset(&text, r.start, self.enc);
                            let end = position::offset(&text, r.end, self.enc).max(start);
                            text.replace_range(start..end, &change.text);
                        }
                        Some(_) => {}
                        None => {
                            text = change.text;
                            known = true;
                        }
                    }
                }
                if known {
                    if let Some(len) = open.set(&found.path, text) {
                        self.too_large(&found.path, len);
                    }
                }
                // Trailing debounce: the re-check waits for the last edit.
                self.store.modules[found.module].touch();
            }
            DidSaveTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = position::uri_to_path(&p.text_document.uri) else {
                    return;
                };
                if let Some((m, _)) = self.store.find(&path) {
                    self.recheck_and_publish(m);
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = position::uri_to_path(&p.text_document.uri) else {
                    return;
                };
                if let Some((m, listed)) = self.store.find(&path) {
                    self.store.open.close(&listed);
                    // The file on disk is what counts again.
                    self.store.modules[m].forget_disk(&listed);
                    self.recheck_and_publish(m);
                }
            }
            DidChangeWatchedFiles::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeWatchedFilesParams>(n.params)
                else {
                    return;
                };
                for change in p.changes {
                    let Some(path) = position::uri_to_path(&change.uri) else {
                        continue;
                    };
                    let deleted = change.typ == lsp_types::FileChangeType::DELETED;
                    self.store.disk_changed(&path, deleted);
                }
            }
            _ => {}
        }
    }

    /// The up-to-date analysis of the module holding `uri`, re-checking it
    /// first if it has unchecked edits, and the file's id in it.
    fn analysis(&mut self, uri: &Uri) -> Option<(&Analysis, vox_codegen::FileId)> {
        let path = position::uri_to_path(uri)?;
        let (m, path) = self.store.find(&path)?;
        if self.store.modules[m].dirty_since.is_some() || self.store.modules[m].analysis.is_none() {
            self.recheck_and_publish(m);
        }
        let a = self.store.modules[m].analysis.as_ref()?;
        let file = a.file_of(&path)?;
        Some((a, file))
    }

    fn request(&mut self, req: Request) -> Reply {
        let Request { method, params, .. } = req;
        // A feature that fails on some buffer must not take the server
        // down with it: report it as an internal error for that request.
        let enc = self.enc;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.dispatch(&method, params, enc)
        }));
        outcome.unwrap_or_else(|_| {
            Err((
                ErrorCode::InternalError,
                format!("cargo vox lsp: {method} failed on this buffer"),
            ))
        })
    }

    fn dispatch(&mut self, method: &str, params: Value, enc: Encoding) -> Reply {
        fn parse<P: serde::de::DeserializeOwned>(v: Value) -> Result<P, (ErrorCode, String)> {
            serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
        }
        let null = Ok(Value::Null);
        match method {
            HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = parse(params)?;
                let tdp = p.text_document_position_params;
                let Some((a, file)) = self.analysis(&tdp.text_document.uri) else {
                    return null;
                };
                to_json(hover::hover(a, file, tdp.position, enc))
            }
            GotoDefinition::METHOD => {
                let p: lsp_types::GotoDefinitionParams = parse(params)?;
                let TextDocumentPositionParams {
                    text_document,
                    position,
                } = p.text_document_position_params;
                let Some((a, file)) = self.analysis(&text_document.uri) else {
                    return null;
                };
                to_json(navigation::definition(a, file, position, enc))
            }
            References::METHOD => {
                let p: lsp_types::ReferenceParams = parse(params)?;
                let tdp = p.text_document_position;
                let Some((a, file)) = self.analysis(&tdp.text_document.uri) else {
                    return null;
                };
                to_json(navigation::references(
                    a,
                    file,
                    tdp.position,
                    p.context.include_declaration,
                    enc,
                ))
            }
            PrepareRenameRequest::METHOD => {
                let p: TextDocumentPositionParams = parse(params)?;
                let Some((a, file)) = self.analysis(&p.text_document.uri) else {
                    return null;
                };
                to_json(navigation::prepare_rename(a, file, p.position, enc))
            }
            Rename::METHOD => {
                let p: lsp_types::RenameParams = parse(params)?;
                let tdp = p.text_document_position;
                let Some((a, file)) = self.analysis(&tdp.text_document.uri) else {
                    return null;
                };
                navigation::rename(a, file, tdp.position, &p.new_name, enc)
                    .map_err(|m| (ErrorCode::InvalidParams, m))
                    .and_then(to_json)
            }
            Completion::METHOD => {
                let p: lsp_types::CompletionParams = parse(params)?;
                let tdp = p.text_document_position;
                let Some((a, file)) = self.analysis(&tdp.text_document.uri) else {
                    return null;
                };
                to_json(completion::complete(a, file, tdp.position, enc))
            }
            CodeActionRequest::METHOD => {
                let p: lsp_types::CodeActionParams = parse(params)?;
                let Some((a, file)) = self.analysis(&p.text_document.uri) else {
                    return null;
                };
                to_json(actions::code_actions(a, file, p.range, enc))
            }
            Formatting::METHOD => {
                let p: lsp_types::DocumentFormattingParams = parse(params)?;
                let Some((a, file)) = self.analysis(&p.text_document.uri) else {
                    return null;
                };
                to_json(format::format(a, file, enc))
            }
            DocumentSymbolRequest::METHOD => {
                let p: lsp_types::DocumentSymbolParams = parse(params)?;
                let Some((a, file)) = self.analysis(&p.text_document.uri) else {
                    return null;
                };
                to_json(symbols::document_symbols(a, file, enc))
            }
            SemanticTokensFullRequest::METHOD => {
                let p: lsp_types::SemanticTokensParams = parse(params)?;
                let Some((a, file)) = self.analysis(&p.text_document.uri) else {
                    return null;
                };
                to_json(tokens::semantic_tokens(a, file, enc))
            }
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("cargo vox lsp does not handle {method}"),
            )),
        }
    }
}

fn to_json<T: serde::Serialize>(v: T) -> Reply {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

/// For `Notification` construction in features.
pub(crate) fn notification<P: serde::Serialize>(method: &str, params: P) -> Message {
    Message::Notification(Notification::new(method.to_string(), params))
}
