//! `cargo vox lsp` against a hostile or careless editor client, the real
//! binary over stdio (README, "Editors", "Limits of the server"): broken
//! frames of every kind, a frame too large to hold, a scratch file in a big
//! directory, a flood of file-watcher events, a symlinked file, a burst of
//! keystrokes and a buffer over the source size limit.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A hang guard, not a performance bound.
const WAIT: Duration = Duration::from_secs(60);

/// The frame size the server accepts (README, "Limits of the server").
const MAX_FRAME: usize = 64 * 1024 * 1024;

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Messages received while waiting for something else.
    notes: Vec<Value>,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
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
    /// Starts the server in `cwd` and initializes it.
    fn start(cwd: &Path) -> Client {
        let dir = tempfile::tempdir().unwrap();
        let stderr = dir.path().join("stderr");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-vox"))
            .arg("lsp")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start cargo-vox lsp");
        let stdin = child.stdin.take();
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
        let mut c = Client {
            child,
            stdin,
            rx,
            next_id: 1,
            notes: Vec::new(),
            stderr,
            _dir: dir,
        };
        let init = c.call(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        c.notify("initialized", json!({}));
        c
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message matching `want`, within `wait`.
    fn next_where(&mut self, wait: Duration, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.notes.iter().position(&want) {
            return self.notes.remove(i);
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self.rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no {what} within {wait:?}; stderr: {}", self.stderr_text())
            });
            if want(&msg) {
                return msg;
            }
            self.notes.push(msg);
        }
    }

    /// The response with id `id`.
    fn response(&mut self, id: &Value, wait: Duration) -> Value {
        let id = id.clone();
        self.next_where(wait, &format!("response to {id}"), move |m| {
            m.get("id") == Some(&id) && m.get("method").is_none()
        })
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_within(method, params, WAIT)
    }

    fn call_within(&mut self, method: &str, params: Value, wait: Duration) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id), wait)
    }

    /// The next `publishDiagnostics` for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self.next_where(WAIT, &format!("diagnostics for {uri}"), |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "vox", "version": 1, "text": text}}),
        );
    }

    /// Drains what has arrived by now (waiting `quiet` for stragglers).
    fn drain(&mut self, quiet: Duration) {
        while let Ok(m) = self.rx.recv_timeout(quiet) {
            self.notes.push(m);
        }
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Closes stdin and waits for the process to end.
    fn close_and_wait(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "the server did not exit at EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server still answers: a request it handles, answered.
    fn assert_alive(&mut self, case: &str) {
        let r = self.call(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": "file:///nowhere/x.vox"}}),
        );
        assert!(
            r.get("result").is_some(),
            "{case}: {r}; stderr: {}",
            self.stderr_text()
        );
    }

    /// Peak resident memory of the server, in bytes (Linux).
    fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What the server must do with a bad frame.
enum Expect {
    /// Answer an error with this code and id.
    Error(i64, Value),
    /// Skip it (a note on stderr) and go on.
    Skip,
    /// Treat it as the request it is (a lenient but unambiguous frame).
    Answer(Value),
}

/// Every way the client's stream can be bad that still leaves a next frame
/// to find; the server must answer as told and then keep serving.
#[test]
fn bad_frames_leave_the_server_serving() {
    let dir = tempfile::tempdir().unwrap();
    let hover = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol",
               "params": {"textDocument": {"uri": "file:///nowhere/x.vox"}}})
        .to_string()
    };
    let h = hover(900);
    let mut long_line = vec![b'X'; 1 << 20];
    long_line.extend_from_slice(b"\r\n\r\n");
    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        ("invalid JSON", frame(b"{\"jsonrpc"), Expect::Error(-32700, Value::Null)),
        ("JSON cut short", frame(br#"{"jsonrpc":"2.0","id":5,"method":"x""#), Expect::Error(-32700, Value::Null)),
        ("empty body", frame(b""), Expect::Error(-32700, Value::Null)),
        ("non-UTF-8 body", frame(b"{\"a\":\"\xff\xfe\"}"), Expect::Error(-32700, Value::Null)),
        ("a JSON array", frame(b"[1,2,3]"), Expect::Error(-32600, Value::Null)),
        ("an empty batch", frame(b"[]"), Expect::Error(-32600, Value::Null)),
        ("a JSON number", frame(b"42"), Expect::Error(-32600, Value::Null)),
        ("JSON null", frame(b"null"), Expect::Error(-32600, Value::Null)),
        ("a JSON string", frame(b"\"initialize\""), Expect::Error(-32600, Value::Null)),
        ("an object with no method", frame(br#"{"jsonrpc":"2.0"}"#), Expect::Error(-32600, Value::Null)),
        ("a method that is a number", frame(br#"{"jsonrpc":"2.0","id":7,"method":5}"#), Expect::Error(-32600, json!(7))),
        ("an id that is an object", frame(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"textDocument/hover","params":{}}"#), Expect::Error(-32600, Value::Null)),
        ("hover whose params are a string", frame(br#"{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":"x"}"#), Expect::Error(-32602, json!(8))),
        ("hover with no position", frame(br#"{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x.vox"}}}"#), Expect::Error(-32602, json!(9))),
        ("rename whose newName is a number", frame(br#"{"jsonrpc":"2.0","id":10,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///x.vox"},"position":{"line":0,"character":0},"newName":3}}"#), Expect::Error(-32602, json!(10))),
        ("didOpen whose params are a list", frame(br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":[1]}"#), Expect::Skip),
        ("didChange of a file never opened, range past the end", frame(br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///nowhere/y.vox","version":2},"contentChanges":[{"range":{"start":{"line":99,"character":99},"end":{"line":0,"character":0}},"text":"x"}]}}"#), Expect::Skip),
        ("no Content-Length", [b"Content-Type: application/json\r\n\r\n".as_slice(), h.as_bytes()].concat(), Expect::Skip),
        ("a non-numeric Content-Length", [b"Content-Length: abc\r\n\r\n".as_slice(), h.as_bytes()].concat(), Expect::Skip),
        ("a negative Content-Length", [b"Content-Length: -5\r\n\r\n".as_slice(), h.as_bytes()].concat(), Expect::Skip),
        ("a Content-Length past u64", [b"Content-Length: 99999999999999999999999\r\n\r\n".as_slice(), h.as_bytes()].concat(), Expect::Skip),
        ("two different Content-Lengths", format!("Content-Length: 2\r\nContent-Length: {}\r\n\r\n{h}", h.len()).into_bytes(), Expect::Skip),
        ("a header line with no colon", [b"garbage\r\n\r\n".as_slice(), h.as_bytes()].concat(), Expect::Skip),
        ("a 1 MiB header line", long_line, Expect::Skip),
        ("bytes before the first header", [b"\x00\xff junk ".as_slice(), &frame(h.as_bytes())].concat(), Expect::Answer(json!(900))),
        ("two equal Content-Lengths", format!("Content-Length: {0}\r\ncontent-length: {0}\r\n\r\n{h}", h.len()).into_bytes(), Expect::Answer(json!(900))),
        ("headers ended by LF only", format!("Content-Length: {}\nContent-Type: x\n\n{h}", h.len()).into_bytes(), Expect::Answer(json!(900))),
        ("no space after the colon", format!("Content-Length:{}\r\n\r\n{h}", h.len()).into_bytes(), Expect::Answer(json!(900))),
    ];
    for (case, bytes, expect) in cases {
        let mut c = Client::start(dir.path());
        c.raw(&bytes);
        match expect {
            Expect::Error(code, id) => {
                let r = c.response(&id, WAIT);
                assert_eq!(r["error"]["code"], code, "{case}: {r}");
            }
            Expect::Answer(id) => {
                let r = c.response(&id, WAIT);
                assert!(r.get("result").is_some(), "{case}: {r}");
            }
            Expect::Skip => {}
        }
        c.assert_alive(case);
        // The server also leaves cleanly afterwards.
        let r = c.call("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{case}: {r}");
        c.notify("exit", Value::Null);
        let status = c.close_and_wait();
        assert!(
            status.success(),
            "{case}: {status}; stderr: {}",
            c.stderr_text()
        );
    }
}

/// A frame over the size limit is skipped without being held in memory, and
/// the next frame is served.
#[test]
fn an_oversized_frame_is_drained_not_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path());
    let len = MAX_FRAME + 1;
    c.raw(format!("Content-Length: {len}\r\n\r\n").as_bytes());
    let chunk = vec![b' '; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        c.raw(&chunk[..n]);
        left -= n;
    }
    c.assert_alive("oversized frame");
    let note = c.next_where(WAIT, "showMessage about the skipped frame", |m| {
        m["method"] == "window/showMessage"
    });
    assert!(
        note["params"]["message"]
            .as_str()
            .unwrap()
            .contains("64 MiB"),
        "{note}"
    );
    assert!(c.stderr_text().contains("64 MiB"), "{}", c.stderr_text());
    if let Some(peak) = c.peak_rss() {
        assert!(peak < 48 * 1024 * 1024, "peak RSS {peak} bytes");
    }
}

/// `Content-Length: 8000000000` does not abort the server; when the stream
/// then ends, it exits with a message rather than a signal.
#[test]
fn a_huge_content_length_then_eof_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start(dir.path());
    c.raw(b"Content-Length: 8000000000\r\n\r\n{\"jsonrpc\":");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "died: {}",
        c.stderr_text()
    );
    if let Some(peak) = c.peak_rss() {
        assert!(peak < 48 * 1024 * 1024, "peak RSS {peak} bytes");
    }
    let status = c.close_and_wait();
    assert!(status.code().is_some(), "killed by a signal: {status}");
    let err = c.stderr_text();
    assert!(err.contains("ended inside a message"), "{err}");
}

/// EOF in the middle of a body or a header: a clean exit with a message.
#[test]
fn eof_mid_frame_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    for (case, bytes) in [
        ("mid-body", b"Content-Length: 100\r\n\r\n{\"js".as_slice()),
        ("mid-header", b"Content-Len".as_slice()),
    ] {
        let mut c = Client::start(dir.path());
        c.raw(bytes);
        let status = c.close_and_wait();
        assert!(status.code().is_some(), "{case}: {status}");
        let err = c.stderr_text();
        assert!(err.contains("ended inside a message"), "{case}: {err}");
    }
}

/// A scratch file outside any package is checked with its directory's own
/// `.vox` files only: not subdirectories, not through symlinked
/// directories, and at most 256 of them.
#[cfg(unix)]
#[test]
fn a_file_outside_any_package_takes_only_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        !root.ancestors().any(|d| d.join("Cargo.toml").exists()),
        "the temp dir is inside a package"
    );
    let scratch = root.join("scratch");
    std::fs::create_dir_all(scratch.join("sub")).unwrap();
    std::fs::create_dir_all(root.join("elsewhere")).unwrap();
    std::fs::write(
        scratch.join("b.vox"),
        "fn from_b() to int {\n    return 1\n}\n",
    )
    .unwrap();
    std::fs::write(
        scratch.join("sub/c.vox"),
        "fn from_sub() to int {\n    return nope\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("elsewhere/d.vox"),
        "fn from_link() to int {\n    return nope\n}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), scratch.join("linked")).unwrap();
    // Past the cap: 300 more files, the last in name order defining `from_z`.
    for i in 0..300 {
        std::fs::write(
            scratch.join(format!("m{i:03}.vox")),
            format!("fn f{i}() to int {{\n    return {i}\n}}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        scratch.join("zz.vox"),
        "fn from_z() to int {\n    return 2\n}\n",
    )
    .unwrap();
    let a = scratch.join("a.vox");
    let text = "fn go() to int {\n    return from_b() + from_sub() + from_link() + from_z()\n}\n";
    std::fs::write(&a, text).unwrap();

    let mut c = Client::start(&root);
    c.open(&uri(&a), text);
    let diags = c.diagnostics(&uri(&a));
    let unknown: Vec<&str> = diags
        .iter()
        .filter(|d| d["code"] == "vox/name/unknown")
        .filter_map(|d| d["message"].as_str())
        .collect();
    for name in ["from_sub", "from_link", "from_z"] {
        assert!(
            unknown.iter().any(|m| m.contains(name)),
            "{name} should be unknown: {diags:?}"
        );
    }
    assert!(
        !unknown
            .iter()
            .any(|m| m.starts_with("cannot find function `from_b`")),
        "from_b is in the same directory: {diags:?}"
    );
    let note = c.next_where(WAIT, "showMessage about the cap", |m| {
        m["method"] == "window/showMessage"
    });
    let msg = note["params"]["message"].as_str().unwrap();
    assert!(msg.contains("256"), "{msg}");
    c.drain(Duration::from_millis(300));
    for m in &c.notes {
        if m["method"] == "textDocument/publishDiagnostics" {
            let u = m["params"]["uri"].as_str().unwrap();
            assert!(
                !u.contains("/sub/") && !u.contains("elsewhere") && !u.contains("linked"),
                "{u}"
            );
        }
    }
}

/// 20,000 watcher events (files created that do not exist, files created
/// and deleted) and then a hover: the hover is answered, and the files that
/// are gone are not checked.
#[test]
fn a_flood_of_watched_file_events_does_not_stall_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let a = root.join("a.vox");
    let text = "fn go() to int {\n    return 1\n}\n";
    std::fs::write(&a, text).unwrap();
    let mut c = Client::start(&root);
    c.open(&uri(&a), text);
    // A file that exists when it is announced and is deleted afterwards.
    let real = root.join("real.vox");
    std::fs::write(&real, "fn broken( {").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&real), "type": 1}]}),
    );
    let start = Instant::now();
    for batch in 0..20 {
        let changes: Vec<Value> = (0..1000)
            .map(|i| {
                let n = batch * 1000 + i;
                json!({"uri": uri(&root.join(format!("gone{n:05}.vox"))), "type": 1 + (n % 3)})
            })
            .collect();
        c.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": changes}),
        );
    }
    std::fs::remove_file(&real).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&real), "type": 3}]}),
    );
    // A generous bound: the unfixed server took minutes here.
    let r = c.call_within(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&a)}, "position": {"line": 1, "character": 11}}),
        Duration::from_secs(30),
    );
    assert!(r.get("error").is_none(), "{r}");
    eprintln!("hover after 20,000 watcher events: {:?}", start.elapsed());
    // Nothing of the never-existing files is published, and the deleted
    // file's diagnostics (if it was checked while it existed) are cleared.
    c.drain(Duration::from_millis(500));
    let mut last_real = None;
    for m in &c.notes {
        if m["method"] == "textDocument/publishDiagnostics" {
            let u = m["params"]["uri"].as_str().unwrap();
            assert!(!u.contains("gone"), "{m}");
            if u == uri(&real) {
                last_real = Some(m["params"]["diagnostics"].clone());
            }
        }
    }
    if let Some(d) = last_real {
        assert_eq!(d, json!([]), "the deleted file keeps its diagnostics");
    }
}

/// A symlinked file opened by its link: diagnostics come for the URI the
/// editor opened.
#[cfg(unix)]
#[test]
fn a_symlinked_file_gets_diagnostics_under_its_own_uri() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("real")).unwrap();
    let target = root.join("real/t.vox");
    let text = "fn go() to int {\n    return nope\n}\n";
    std::fs::write(&target, text).unwrap();
    let link = root.join("link.vox");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut c = Client::start(&root);
    c.open(&uri(&link), text);
    let diags = c.diagnostics(&uri(&link));
    assert!(
        diags.iter().any(|d| d["code"] == "vox/name/unknown"),
        "{diags:?}"
    );
    c.drain(Duration::from_millis(300));
    for m in &c.notes {
        if m["method"] == "textDocument/publishDiagnostics" {
            assert_ne!(
                m["params"]["uri"],
                uri(&target),
                "published for the target: {m}"
            );
        }
    }
}

/// Rename in a package with a committed symlink leading out of it: the
/// server refuses to propose edits there, as `cargo vox fmt` refuses to
/// write (README, "Security notes", "What `fmt` and `fix` write").
#[cfg(unix)]
#[test]
fn rename_refuses_edits_through_a_symlink_out_of_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let pkg = base.join("pkg");
    std::fs::create_dir_all(pkg.join("vox")).unwrap();
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::create_dir_all(base.join("other")).unwrap();
    std::fs::write(pkg.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        pkg.join("Cargo.toml"),
        "[package]\nname = \"victim\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    let m = pkg.join("vox/m.vox");
    let text = "fn helper() to int {\n    return 1\n}\n";
    std::fs::write(&m, text).unwrap();
    std::fs::write(
        base.join("other/x.vox"),
        "fn user() to int {\n    return helper()\n}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../../other/x.vox", pkg.join("vox/linked.vox")).unwrap();

    let mut c = Client::start(&pkg);
    c.open(&uri(&m), text);
    let r = c.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri(&m)}, "position": {"line": 0, "character": 4}, "newName": "aide"}),
    );
    let err = r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("rename was not refused: {r}"));
    assert!(
        err.contains("linked.vox") && err.contains("outside the package"),
        "{err}"
    );
    // Inside the package only, the same rename is proposed.
    std::fs::remove_file(pkg.join("vox/linked.vox")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&pkg.join("vox/linked.vox")), "type": 3}]}),
    );
    let r = c.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri(&m)}, "position": {"line": 0, "character": 4}, "newName": "aide"}),
    );
    assert!(r["result"]["changes"][uri(&m)].is_array(), "{r}");
}

/// 49 keystrokes 40 ms apart: one re-check after the last, not one every
/// 150 ms of the burst.
#[test]
fn a_burst_of_edits_is_checked_once_after_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let a = uri(&root.join("a.vox"));
    let mut text = String::from("fn go() to int {\n    return nope\n}\n");
    let mut c = Client::start(&root);
    c.open(&a, &text);
    let _ = c.diagnostics(&a);
    for v in 0..49 {
        text.push('\n');
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": a, "version": v + 2}, "contentChanges": [{"text": text}]}),
        );
        std::thread::sleep(Duration::from_millis(40));
    }
    let _ = c.diagnostics(&a);
    c.drain(Duration::from_millis(800));
    let publishes = 1 + c
        .notes
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .count();
    // One; a loaded machine may stall a keystroke past 150 ms now and then.
    assert!(publishes <= 3, "{publishes} re-checks for one burst");
}

/// A buffer over the 8 MiB source limit is not checked; the editor is told
/// why, and a smaller buffer is checked again.
#[test]
fn an_open_buffer_over_the_source_limit_is_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let a = uri(&root.join("big.vox"));
    let line = "fn f() to int {\n    return nope\n}\n";
    let big = line.repeat(9 * 1024 * 1024 / line.len());
    let mut c = Client::start(&root);
    let start = Instant::now();
    c.open(&a, &big);
    let diags = c.diagnostics(&a);
    eprintln!("9 MiB didOpen answered in {:?}", start.elapsed());
    assert_eq!(diags.len(), 1, "{:?}", &diags[..diags.len().min(3)]);
    let msg = diags[0]["message"].as_str().unwrap();
    assert!(msg.contains("8 MiB"), "{msg}");
    let note = c.next_where(WAIT, "showMessage about the size", |m| {
        m["method"] == "window/showMessage"
    });
    assert!(
        note["params"]["message"]
            .as_str()
            .unwrap()
            .contains("8 MiB"),
        "{note}"
    );
    if let Some(peak) = c.peak_rss() {
        assert!(peak < 256 * 1024 * 1024, "peak RSS {peak} bytes");
    }
    // Back under the limit: checked again.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": a, "version": 2}, "contentChanges": [{"text": line}]}),
    );
    let diags = c.diagnostics(&a);
    assert!(
        diags.iter().any(|d| d["code"] == "vox/name/unknown"),
        "{diags:?}"
    );
}
