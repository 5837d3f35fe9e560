//! `cargo vox lsp` on the 100,000-line benchmark module of `check_large`.
//!
//! Not a timed test: it prints the time from opening the module to the
//! first answer (the initial check), then the median latency of hover,
//! definition, references and completion requests after it, against the
//! goal (< 50 ms each), and of an edit followed by a request (the
//! re-check works on the open buffer; the file is deleted from disk after
//! opening to prove nothing is re-read).
//!
//! The server runs in-process over lsp-server's in-memory connection, so
//! the numbers are the server's, without pipe overhead.
//!
//! Run with `cargo bench -p cargo-vox --bench lsp_large`.

#[path = "check_large.rs"]
#[allow(dead_code)]
mod check_large;

use std::time::{Duration, Instant};

use cargo_vox::cli::GlobalArgs;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};

const RUNS: usize = 21;
const GOAL: Duration = Duration::from_millis(50);

struct Client {
    conn: Connection,
    next: i32,
}

impl Client {
    fn notify(&self, method: &str, params: Value) {
        let n = Notification::new(method.to_string(), params);
        self.conn.sender.send(Message::Notification(n)).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        let req = Request::new(id.clone(), method.to_string(), params);
        self.conn.sender.send(Message::Request(req)).unwrap();
        loop {
            match self.conn.receiver.recv().expect("server gone") {
                Message::Response(r) if r.id == id => {
                    return r
                        .response_result
                        .unwrap_or_else(|e| panic!("{method} failed: {}", e.message));
                }
                _ => continue,
            }
        }
    }
}

/// The LSP position (UTF-16; the module is ASCII) of the last occurrence of
/// `needle`, plus `delta` columns.
fn last_pos(text: &str, needle: &str, delta: usize) -> Value {
    let at = text.rfind(needle).expect(needle) + delta;
    let before = &text[..at];
    let line = before.matches('\n').count();
    let col = at - before.rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let (src, _) = check_large::generate();
    let lines = src.lines().count();
    let tmp = tempfile::Builder::new()
        .prefix("vox-lsp-large-")
        .tempdir()
        .unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let file = dir.join("large.vox");
    std::fs::write(&file, &src).unwrap();
    let uri = format!("file://{}", file.display());

    // Where a re-check's time goes: the frontend, then the index.
    let (mut check_t, mut index_t) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let mut sources = vox_codegen::SourceMap::new();
        sources.add(vox_codegen::SourceFile::new("large.vox", src.clone()));
        let t = Instant::now();
        let checked = vox_codegen::check(sources);
        check_t.push(t.elapsed());
        let t = Instant::now();
        let index = vox_codegen::ide::Index::build(&checked);
        index_t.push(t.elapsed());
        assert!(!index.occurrences().is_empty());
    }
    println!(
        "library: check {}, index {} (medians of 5)",
        ms(check_large::median(check_t)),
        ms(check_large::median(index_t))
    );

    let (server, client) = Connection::memory();
    let handle = std::thread::spawn(move || {
        let global = GlobalArgs {
            json: false,
            manifest_path: None,
            package: None,
        };
        cargo_vox::lsp::serve(server, cargo_vox::Context::new("lsp", &global)).unwrap();
    });
    let mut c = Client {
        conn: client,
        next: 0,
    };
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));

    let t = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "vox", "version": 1, "text": src}}),
    );
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let initial = t.elapsed();
    assert!(syms.as_array().is_some_and(|s| s.len() > 1000));
    println!(
        "{lines} lines: open → first answer (initial check and index) {}",
        ms(initial)
    );
    // Edits must not re-read the disk.
    std::fs::remove_file(&file).unwrap();

    let td = json!({"uri": uri});
    let at = |needle: &str, delta: usize| json!({"textDocument": td, "position": last_pos(&src, needle, delta)});
    let mut refs = at("Item", 2);
    refs["context"] = json!({"includeDeclaration": true});
    let queries: Vec<(&str, &str, Value)> = vec![
        (
            "hover (call: signature, @ai schema)",
            "textDocument/hover",
            at("= extract", 3),
        ),
        (
            "hover (expression type)",
            "textDocument/hover",
            at("it.price", 4),
        ),
        (
            "definition (type)",
            "textDocument/definition",
            at("items: list[Item", 13),
        ),
        ("references (type)", "textDocument/references", refs),
        (
            "completion (names starting with `ma`)",
            "textDocument/completion",
            at("make", 2),
        ),
        (
            "completion (fields after `.`)",
            "textDocument/completion",
            at("it.qty", 3),
        ),
    ];
    let mut worst = Duration::ZERO;
    for (label, method, params) in &queries {
        let mut times = Vec::new();
        let mut answer = Value::Null;
        for _ in 0..RUNS {
            let t = Instant::now();
            answer = c.request(method, params.clone());
            times.push(t.elapsed());
        }
        assert!(!answer.is_null(), "{label}: no answer");
        let m = check_large::median(times);
        worst = worst.max(m);
        println!("{label}: median {} over {RUNS} runs", ms(m));
    }
    println!(
        "goal: hover/definition/completion under {} after the initial check: {} (worst median {})",
        ms(GOAL),
        if worst < GOAL { "met" } else { "MISSED" },
        ms(worst)
    );

    // An edit (a space typed in the last function), then a hover: the
    // re-check of the whole module from the open buffer plus the answer.
    let mut times = Vec::new();
    let edit_at = last_pos(&src, "return total", 0);
    for v in 0..RUNS {
        let t = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v + 2},
                   "contentChanges": [{"range": {"start": edit_at, "end": edit_at}, "text": " "}]}),
        );
        let h = c.request("textDocument/hover", at("= extract", 3));
        times.push(t.elapsed());
        assert!(!h.is_null());
    }
    println!(
        "edit → re-check (open buffer, disk not read) → hover: median {}",
        ms(check_large::median(times))
    );
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    handle.join().unwrap();
}
