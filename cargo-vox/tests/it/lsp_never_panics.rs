//! `cargo vox lsp` never panics or hangs, whatever the buffer holds: the
//! never-panics corpus of the frontend (regressions, random bytes, token
//! soups, mutated fixtures, deep nesting, torture cases) replayed through
//! `didChange`, each buffer followed by every request the server answers,
//! at positions inside, at the edges of and beyond the text. A handler
//! that panicked would answer with an internal error; one that hung would
//! not answer within the hang guard.

#[path = "../../../vox-codegen/tests/it/inputs/mod.rs"]
mod inputs;

use std::time::Duration;

use cargo_vox::cli::GlobalArgs;
use inputs::*;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};

/// A hang guard, not a performance bound (debug build, 1 MB buffers).
const WAIT: Duration = Duration::from_secs(120);

struct Session {
    conn: Connection,
    next: i32,
    version: i32,
    uri: String,
    /// The input being replayed, for failure messages.
    label: String,
}

impl Session {
    fn start(dir: &std::path::Path) -> (Session, std::thread::JoinHandle<()>) {
        let (server, client) = Connection::memory();
        let handle = std::thread::Builder::new()
            // The binary serves on its main thread (8 MiB).
            .stack_size(8 * 1024 * 1024)
            .spawn(move || {
                let global = GlobalArgs {
                    json: false,
                    manifest_path: None,
                    package: None,
                };
                cargo_vox::lsp::serve(server, cargo_vox::Context::new("lsp", &global))
                    .expect("serve");
            })
            .unwrap();
        let mut s = Session {
            conn: client,
            next: 0,
            version: 1,
            uri: format!("file://{}/fuzz.vox", dir.display()),
            label: "start".into(),
        };
        s.request("initialize", json!({"capabilities": {}}));
        s.notify("initialized", json!({}));
        let uri = s.uri.clone();
        s.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "vox", "version": 1, "text": ""}}),
        );
        (s, handle)
    }

    fn notify(&mut self, method: &str, params: Value) {
        let n = Notification::new(method.to_string(), params);
        self.conn.sender.send(Message::Notification(n)).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> lsp_server::Response {
        self.next += 1;
        let id = RequestId::from(self.next);
        let req = Request::new(id.clone(), method.to_string(), params);
        self.conn.sender.send(Message::Request(req)).unwrap();
        loop {
            match self.conn.receiver.recv_timeout(WAIT) {
                Ok(Message::Response(r)) if r.id == id => return r,
                Ok(_) => continue,
                Err(_) => panic!("no reply to {method} on {} within {WAIT:?}", self.label),
            }
        }
    }

    /// Replaces the buffer with `text` and sends every request at a spread
    /// of positions; panics naming `label` on an error reply.
    fn replay(&mut self, label: &str, text: &str) {
        self.label = label.to_string();
        self.version += 1;
        let uri = self.uri.clone();
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": self.version},
                   "contentChanges": [{"text": text}]}),
        );
        let lines = text.split('\n').count() as u32;
        let mut positions = vec![
            (0, 0),
            (lines / 2, 4),
            (lines.saturating_sub(1), 0),
            (lines + 5, 99),
        ];
        // A few positions on names, where most features do their work.
        for (line, l) in text.split('\n').take(200).enumerate() {
            if let Some(col) = l.find(|c: char| c.is_alphabetic()) {
                positions.push((line as u32, l[..col].encode_utf16().count() as u32 + 1));
            }
        }
        positions.truncate(12);
        let td = json!({"uri": uri});
        let mut requests = vec![
            (
                "textDocument/formatting",
                json!({"textDocument": td, "options": {"tabSize": 4, "insertSpaces": true}}),
            ),
            ("textDocument/documentSymbol", json!({"textDocument": td})),
            (
                "textDocument/semanticTokens/full",
                json!({"textDocument": td}),
            ),
            (
                "textDocument/codeAction",
                json!({"textDocument": td,
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines + 1, "character": 0}},
                "context": {"diagnostics": []}}),
            ),
        ];
        for (l, c) in positions {
            let p = json!({"textDocument": td, "position": {"line": l, "character": c}});
            requests.push(("textDocument/hover", p.clone()));
            requests.push(("textDocument/definition", p.clone()));
            requests.push(("textDocument/completion", p.clone()));
            requests.push(("textDocument/prepareRename", p.clone()));
            let mut r = p.clone();
            r["context"] = json!({"includeDeclaration": true});
            requests.push(("textDocument/references", r));
            let mut r = p;
            r["newName"] = json!("renamed");
            requests.push(("textDocument/rename", r));
        }
        for (method, params) in requests {
            let resp = self.request(method, params);
            if let Err(e) = resp.response_result {
                // A refused rename is an answer, not a failure.
                assert!(
                    method == "textDocument/rename"
                        && e.code == lsp_server::ErrorCode::InvalidParams as i32,
                    "{method} failed on {label}: {} — input: {:?}",
                    e.message,
                    &text[..text.len().min(300)]
                );
            }
        }
    }

    fn finish(mut self, handle: std::thread::JoinHandle<()>) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        handle.join().expect("server thread panicked");
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn regressions_random_bytes_and_token_soups() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, h) = Session::start(dir.path());
    for src in REGRESSIONS {
        s.replay(&format!("{src:?}"), src);
    }
    let mut rng = Rng::new(0x5EED_15F0);
    for case in 0..150 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(10) {
                0 => rng.next() as u8,
                1 => 0,
                _ => 0x20 + rng.below(0x5F) as u8,
            })
            .collect();
        s.replay(
            &format!("random bytes #{case} (seed 0x5EED_15F0)"),
            &lossy(&bytes),
        );
    }
    for case in 0..150 {
        let mut text = String::new();
        for _ in 0..rng.below(80) {
            text.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
            if rng.below(3) == 0 {
                text.push(' ');
            }
        }
        s.replay(&format!("token soup #{case} (seed 0x5EED_15F0)"), &text);
    }
    s.finish(h);
}

#[test]
fn fixtures_and_their_mutations() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, h) = Session::start(dir.path());
    let mut rng = Rng::new(0x5EED_15F1);
    for (name, bytes) in fixture_files() {
        s.replay(&name, &lossy(&bytes));
        for m in 0..3 {
            let mutated = mutate(&mut rng, &bytes);
            s.replay(
                &format!("{name} mutation #{m} (seed 0x5EED_15F1)"),
                &lossy(&mutated),
            );
        }
    }
    s.finish(h);
}

#[test]
fn deep_and_torture_cases() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, h) = Session::start(dir.path());
    for name in DEEP_CASES.iter().chain(TORTURE_CASES) {
        for (i, file) in case_inputs(name).iter().enumerate() {
            s.replay(&format!("{name} #{i}"), &lossy(file));
        }
    }
    s.finish(h);
}
