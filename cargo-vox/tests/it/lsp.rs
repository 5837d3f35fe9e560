//! `cargo vox lsp` driven as an editor drives it: the real binary over
//! stdio JSON-RPC, through initialize, open, edits (an error, then its
//! fix), hover, definition, references, rename, completion, code actions,
//! formatting, symbols, semantic tokens, shutdown and exit.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A hang guard, not a performance bound.
const WAIT: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for a response.
    notes: Vec<Value>,
}

fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    r.read_exact(&mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

impl Client {
    fn start(cwd: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-vox"))
            .arg("lsp")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start cargo-vox lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(v) = read_frame(&mut r) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            next_id: 1,
            notes: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no reply to {method}"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.notes.push(msg);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let resp = self.call(method, params);
        assert!(resp.get("error").is_none(), "{method} failed: {resp}");
        resp["result"].clone()
    }

    /// The next `publishDiagnostics` for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let is_ours = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        };
        if let Some(i) = self.notes.iter().position(is_ours) {
            let m = self.notes.remove(i);
            return m["params"]["diagnostics"].as_array().unwrap().clone();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .expect("no diagnostics published");
            if is_ours(&m) {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
            self.notes.push(m);
        }
    }
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// LSP position (UTF-16) of the `nth` occurrence of `needle` in `text`, plus `delta` characters.
fn pos(text: &str, needle: &str, nth: usize, delta: usize) -> Value {
    let at = text.match_indices(needle).nth(nth).expect(needle).0 + delta;
    let before = &text[..at];
    let line = before.matches('\n').count();
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .encode_utf16()
        .count();
    json!({"line": line, "character": col})
}

const TYPES: &str = "/// A bill from a vendor.\ntype Invoice {\n    vendor: str\n    total: int\n}\n\ntype Status =\n    | Paid\n    | Open(days: int)\n";

const MAIN: &str = "/// Makes an invoice.\nfn make(vendor: str) to Invoice {\n    let inv = Invoice { vendor: vendor, total: 1 }\n    return inv\n}\n\nfn label(s: Status) to str {\n    return match s {\n        Paid => \"paid\"\n        Open(d) => \"open \" + str(d)\n    }\n}\n\n/// Reads the invoice.\n@ai(max_iterations = 2)\n@uses(net)\nfn extract(text: str) to Invoice {\n    return make(text)\n}\n";

#[test]
fn an_editor_session_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("types.vox"), TYPES).unwrap();
    // On disk, a.vox is stale: the open buffer must win.
    std::fs::write(root.join("a.vox"), "fn stale( {").unwrap();
    let a = uri(&root.join("a.vox"));
    let types_uri = uri(&root.join("types.vox"));

    let mut c = Client::start(&root);
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&root), "capabilities": {}}),
    );
    let caps = &init["capabilities"];
    for cap in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "renameProvider",
        "completionProvider",
        "codeActionProvider",
        "documentFormattingProvider",
        "documentSymbolProvider",
        "semanticTokensProvider",
    ] {
        assert!(!caps[cap].is_null(), "missing {cap}: {init}");
    }
    assert_eq!(caps["positionEncoding"], "utf-16");
    c.notify("initialized", json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": a, "languageId": "vox", "version": 1, "text": MAIN}}),
    );

    // An error: a misspelt variable. Same code and message as `check`.
    let broken = MAIN.replace("return inv\n", "return invv\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 2}, "contentChanges": [{"text": broken}]}),
    );
    let diags = c.diagnostics(&a);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["code"], "vox/name/unknown");
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "vox");
    assert_eq!(d["range"]["start"], pos(&broken, "invv", 0, 0));
    let expected = {
        let mut sources = vox_codegen::SourceMap::new();
        sources.add(vox_codegen::SourceFile::new("a.vox", broken.as_str()));
        sources.add(vox_codegen::SourceFile::new("types.vox", TYPES));
        let checked = vox_codegen::check(sources);
        checked.diagnostics()[0].message.clone()
    };
    assert!(
        d["message"].as_str().unwrap().starts_with(&expected),
        "{d} vs {expected}"
    );

    // Its quick fix, preferred because machine-applicable.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": a}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let fix = &actions[0];
    assert_eq!(fix["isPreferred"], true, "{actions}");
    assert_eq!(fix["kind"], "quickfix");
    let edit = &fix["edit"]["changes"][&a][0];
    assert_eq!(edit["newText"], "inv");
    assert_eq!(edit["range"], d["range"]);

    // The fix, as an incremental edit: diagnostics clear.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 3},
               "contentChanges": [{"range": edit["range"], "text": "inv"}]}),
    );
    assert_eq!(c.diagnostics(&a), Vec::<Value>::new());

    // Related information: assigning to an immutable variable points at
    // its declaration.
    let reassign = MAIN.replace("    return inv\n", "    inv = inv\n    return inv\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 10}, "contentChanges": [{"text": reassign}]}),
    );
    let diags = c.diagnostics(&a);
    let d = diags
        .iter()
        .find(|d| d["code"] == "vox/name/immutable-assign")
        .unwrap_or_else(|| panic!("{diags:?}"));
    let rel = &d["relatedInformation"][0];
    assert_eq!(rel["message"], "declared here");
    assert_eq!(rel["location"]["uri"], a.as_str());
    assert_eq!(
        rel["location"]["range"]["start"],
        pos(&reassign, "inv =", 0, 0)
    );
    // Completion of a plain name: builtins, keywords, functions, locals.
    let comp = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": a}, "position": pos(&reassign, "inv = inv", 0, 0)}),
    );
    let labels: Vec<&str> = comp["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    for want in [
        "len", "let", "inv", "vendor", "Invoice", "make", "match", "str",
    ] {
        assert!(labels.contains(&want), "no `{want}` in {labels:?}");
    }
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 11}, "contentChanges": [{"text": MAIN}]}),
    );
    assert_eq!(c.diagnostics(&a), Vec::<Value>::new());

    // Hover: a call shows the signature and doc comment.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "make(text)", 0, 1)}),
    );
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("fn make(vendor: str) to Invoice"), "{md}");
    assert!(md.contains("Makes an invoice."), "{md}");
    // An @ai function: the JSON Schema the model receives.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "extract", 0, 2)}),
    );
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("JSON Schema") && md.contains("\"vendor\""),
        "{md}"
    );
    // A local: its type.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "return inv", 0, 8)}),
    );
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("inv: Invoice"),
        "{h}"
    );
    // An expression: its type.
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "\"open \"", 0, 2)}),
    );
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("str"),
        "{h}"
    );

    // Definition across files: the type lives in types.vox (not open).
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "Invoice {", 0, 1)}),
    );
    assert_eq!(def["uri"], types_uri.as_str());
    assert_eq!(def["range"]["start"], pos(TYPES, "Invoice", 0, 0));

    // References of a variant: its declaration and the pattern.
    let refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "Open(d)", 0, 0),
               "context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    assert_eq!(refs.len(), 2, "{refs:?}");
    assert!(refs.iter().any(|r| r["uri"] == types_uri.as_str()));

    // Rename a field: declaration (in the other file) and the literal.
    let ws = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "total: 1", 0, 0), "newName": "amount"}),
    );
    let changes = ws["changes"].as_object().unwrap();
    assert_eq!(changes[&a].as_array().unwrap().len(), 1, "{ws}");
    assert_eq!(changes[&types_uri].as_array().unwrap().len(), 1, "{ws}");
    assert_eq!(changes[&a][0]["newText"], "amount");
    // A rename to a name the language cannot take is refused.
    let bad = c.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "total: 1", 0, 0), "newName": "Total"}),
    );
    assert!(bad.get("error").is_some(), "{bad}");
    // So is one that would make two fields of `Invoice` share a name.
    let clash = c.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": a}, "position": pos(MAIN, "total: 1", 0, 0), "newName": "vendor"}),
    );
    assert!(
        clash["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("already"),
        "{clash}"
    );

    // Completion: fields after `.`.
    let dotted = MAIN.replace("return inv\n", "return inv.\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 4}, "contentChanges": [{"text": dotted}]}),
    );
    let comp = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": a}, "position": pos(&dotted, "inv.\n", 0, 4)}),
    );
    let labels: Vec<&str> = comp["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["vendor", "total"], "{comp}");
    // Variants in a pattern, the matched type's first.
    let arm = MAIN.replace(
        "        Paid => \"paid\"\n",
        "        Paid => \"paid\"\n        \n",
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 5}, "contentChanges": [{"text": arm}]}),
    );
    let comp = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": a}, "position": pos(&arm, "\n        \n", 0, 9)}),
    );
    let mut items = comp["items"].as_array().unwrap().clone();
    items.sort_by_key(|i| i["sortText"].as_str().unwrap_or("~").to_string());
    let first: Vec<&str> = items[..2]
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(first, ["Open", "Paid"], "{comp}");
    // `@ai(` arguments and provider prefixes.
    let ai = MAIN.replace(
        "@ai(max_iterations = 2)",
        "@ai(max_iterations = 2, model = \"",
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 6}, "contentChanges": [{"text": ai}]}),
    );
    let comp = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": a}, "position": pos(&ai, "model = \"", 0, 9)}),
    );
    assert!(
        comp["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["label"] == "openai:"),
        "{comp}"
    );
    let comp = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": a}, "position": pos(&ai, "max_iterations", 0, 0)}),
    );
    assert!(
        comp["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["label"] == "structured_output"),
        "{comp}"
    );

    // Formatting: the formatter's layout, as one edit.
    let messy = MAIN.replace("    let inv = Invoice", "        let   inv = Invoice");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 7}, "contentChanges": [{"text": messy}]}),
    );
    let edits = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": a}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(edits[0]["newText"], MAIN, "{edits}");

    // A file changed on disk is re-read when the editor's watcher says so
    // (and only then: the cached text stands in until it does).
    std::fs::write(
        root.join("types.vox"),
        TYPES.replace("    total: int\n", "    total: int\n    note: str\n"),
    )
    .unwrap();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 8}, "contentChanges": [{"text": dotted}]}),
    );
    let fields = |c: &mut Client| -> Vec<String> {
        let comp = c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": a}, "position": pos(&dotted, "inv.\n", 0, 4)}),
        );
        comp["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(fields(&mut c), ["vendor", "total"]);
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": types_uri, "type": 2}]}),
    );
    assert_eq!(fields(&mut c), ["vendor", "total", "note"]);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 9}, "contentChanges": [{"text": MAIN}]}),
    );

    // Outline and semantic tokens.
    let syms = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": a}}),
    );
    let names: Vec<&str> = syms
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["make", "label", "extract"]);
    let toks = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": a}}),
    );
    let data: Vec<u64> = toks["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let legend: Vec<&str> = caps["semanticTokensProvider"]["legend"]["tokenTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // Decode the relative encoding into (line, column, length, type).
    let (mut line, mut col) = (0, 0);
    let mut tokens = Vec::new();
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        tokens.push((line, col, t[2], legend[t[3] as usize]));
    }
    let kind_at = |needle: &str, nth: usize| {
        let p = pos(MAIN, needle, nth, 0);
        let (l, c) = (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        );
        tokens
            .iter()
            .find(|t| t.0 == l && t.1 == c)
            .map(|t| (t.2, t.3))
    };
    assert_eq!(kind_at("make", 0), Some((4, "function")));
    assert_eq!(kind_at("Invoice", 0), Some((7, "type")));
    assert_eq!(kind_at("vendor:", 1), Some((6, "property")));
    assert_eq!(kind_at("vendor,", 0), Some((6, "parameter")));
    assert_eq!(kind_at("inv =", 0), Some((3, "variable")));
    assert_eq!(kind_at("Open(d)", 0), Some((4, "enumMember")));
    assert_eq!(kind_at("\"paid\"", 0), Some((6, "string")));
    assert_eq!(kind_at("match", 0), Some((5, "keyword")));
    assert_eq!(kind_at("ai(", 0), Some((2, "decorator")));

    // Shutdown, exit: the process ends with status 0.
    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = c.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "cargo vox lsp did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}
