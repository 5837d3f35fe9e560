//! The stdio transport: reads the editor's frames (`Content-Length` headers,
//! then a JSON body) and writes the server's, in place of `lsp-server`'s own
//! stdio threads, which end the session on the first bad frame and allocate
//! whatever length a header claims (README, "Editors", "Limits of the
//! server").
//!
//! A bad frame costs only itself:
//! - a body that is not JSON (or not UTF-8) is answered with a JSON-RPC
//!   parse error (-32700, id `null`); JSON that is not a request, response
//!   or notification, with an invalid-request error (-32600, with its id
//!   when it has a usable one);
//! - a frame whose length cannot be known (no `Content-Length`, one that is
//!   not a number, two that disagree, a malformed header line) is reported
//!   on stderr and skipped: reading resumes at the next `Content-Length`
//!   header;
//! - a frame over [`MAX_FRAME_BYTES`] is read past in small chunks, never
//!   held, and reported on stderr and to the editor (`window/showMessage`);
//! - input that ends inside a frame ends the session with a message on
//!   stderr.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread;

use crossbeam_channel::{bounded, Sender};
use lsp_server::{Connection, Message};
use serde_json::{json, Value};

/// The largest frame body read: 64 MiB (README, "Limits of the server").
/// Larger frames are skipped without being read into memory.
pub const MAX_FRAME_BYTES: u64 = 64 * 1024 * 1024;

/// The longest header line after `Content-Length:`, and the most header
/// lines in one frame.
const MAX_HEADER_LINE: usize = 8 * 1024;
const MAX_HEADER_LINES: usize = 32;

/// The name every frame is found by; matched without regard to case.
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// What reading the next frame gave.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A frame's body, at most [`MAX_FRAME_BYTES`] long.
    Body(Vec<u8>),
    /// A frame whose length could not be known: why. Reading goes on at the
    /// next `Content-Length` header.
    Unframed(String),
    /// A frame over [`MAX_FRAME_BYTES`], read past: its length.
    Oversized(u64),
    /// The input ended between frames.
    End,
    /// The input ended inside a frame: where.
    Truncated(&'static str),
}

/// Reads frames from `input`, resynchronizing after bad ones.
pub struct FrameReader<R> {
    input: R,
    /// Bytes skipped looking for the last frame, and the first of them.
    skipped: u64,
    skipped_sample: Vec<u8>,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> FrameReader<R> {
        FrameReader {
            input,
            skipped: 0,
            skipped_sample: Vec::new(),
        }
    }

    /// The next frame.
    pub fn next_frame(&mut self) -> io::Result<Frame> {
        self.skipped = 0;
        self.skipped_sample.clear();
        match self.find_content_length()? {
            Found::Yes => {}
            Found::No => return Ok(Frame::End),
            Found::Partly => return Ok(Frame::Truncated("in its headers")),
        }
        let mut values = Vec::new();
        let mut problem = None;
        let first = match self.read_line()? {
            Some(line) => line,
            None => return Ok(Frame::Truncated("in its headers")),
        };
        match first {
            Line::Text(v) => values.push(v),
            Line::TooLong => problem = Some("a `Content-Length` header line over 8 KiB".into()),
        }
        let mut lines = 1;
        loop {
            let line = match self.read_line()? {
                Some(Line::Text(l)) => l,
                Some(Line::TooLong) => {
                    problem.get_or_insert_with(|| "a header line over 8 KiB".into());
                    continue;
                }
                None => return Ok(Frame::Truncated("in its headers")),
            };
            if line.is_empty() {
                break;
            }
            lines += 1;
            if lines > MAX_HEADER_LINES {
                // Not a header block: what follows is looked through for
                // the next frame.
                return Ok(Frame::Unframed(format!(
                    "more than {MAX_HEADER_LINES} header lines"
                )));
            }
            let Some((name, value)) = line.split_once(':') else {
                return Ok(Frame::Unframed(format!(
                    "a header line with no `:` ({})",
                    shorten(&line)
                )));
            };
            let name = name.trim();
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                return Ok(Frame::Unframed(format!(
                    "a malformed header line ({})",
                    shorten(&line)
                )));
            }
            if name.eq_ignore_ascii_case("content-length") {
                values.push(value.to_string());
            }
        }
        if let Some(why) = problem {
            return Ok(Frame::Unframed(why));
        }
        let len = match frame_length(&values) {
            Ok(len) => len,
            Err(why) => return Ok(Frame::Unframed(why)),
        };
        if len > MAX_FRAME_BYTES {
            let drained = io::copy(&mut (&mut self.input).take(len), &mut io::sink())?;
            if drained < len {
                return Ok(Frame::Truncated("in the body of an oversized frame"));
            }
            return Ok(Frame::Oversized(len));
        }
        // At most MAX_FRAME_BYTES (checked just above), so this fits.
        let mut body = Vec::with_capacity(len as usize);
        (&mut self.input).take(len).read_to_end(&mut body)?;
        if (body.len() as u64) < len {
            return Ok(Frame::Truncated("in its body"));
        }
        Ok(Frame::Body(body))
    }

    /// Skips to just past the next `Content-Length:` (any case).
    fn find_content_length(&mut self) -> io::Result<Found> {
        let mut matched = 0;
        let FrameReader {
            input,
            skipped,
            skipped_sample,
        } = self;
        let mut skip = |bytes: &[u8]| {
            *skipped += bytes.len() as u64;
            let room = MAX_HEADER_LINE.saturating_sub(skipped_sample.len());
            skipped_sample.extend_from_slice(&bytes[..bytes.len().min(room)]);
        };
        loop {
            let buf = match input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(if matched > 0 {
                    Found::Partly
                } else {
                    Found::No
                });
            }
            let mut used = 0;
            let mut found = false;
            for &b in buf {
                used += 1;
                let b = b.to_ascii_lowercase();
                if b == CONTENT_LENGTH[matched] {
                    matched += 1;
                    if matched == CONTENT_LENGTH.len() {
                        found = true;
                        break;
                    }
                } else {
                    // Only the first byte of the name starts it (no other
                    // `c` in it), so no partial match is lost here.
                    skip(&CONTENT_LENGTH[..matched]);
                    if b == CONTENT_LENGTH[0] {
                        matched = 1;
                    } else {
                        matched = 0;
                        skip(&[b]);
                    }
                }
            }
            input.consume(used);
            if found {
                return Ok(Found::Yes);
            }
        }
    }

    /// How many bytes before the last frame found were neither whitespace
    /// nor header lines (such as a `Content-Type` before `Content-Length`).
    pub fn skipped_junk(&self) -> u64 {
        if self.skipped as usize == self.skipped_sample.len() {
            let text = String::from_utf8_lossy(&self.skipped_sample);
            let header_like = text.split('\n').all(|l| {
                let l = l.trim();
                l.is_empty()
                    || l.split_once(':').is_some_and(|(name, _)| {
                        !name.is_empty()
                            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    })
            });
            if header_like {
                return 0;
            }
        }
        let blank = self
            .skipped_sample
            .iter()
            .filter(|b| b.is_ascii_whitespace())
            .count() as u64;
        self.skipped.saturating_sub(blank)
    }

    /// One header line without its `\r\n` or `\n`, or [`Line::TooLong`]
    /// (read past to its end); `None` at the end of the input.
    fn read_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(None);
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if !too_long {
                if line.len() + chunk.len() > MAX_HEADER_LINE {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(buf.len());
            self.input.consume(used);
            if done.is_some() {
                break;
            }
        }
        if too_long {
            return Ok(Some(Line::TooLong));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(Line::Text(
            String::from_utf8_lossy(&line).into_owned(),
        )))
    }
}

/// Whether a `Content-Length` header was found: yes, not before the end
/// of the input, or the input ended inside its name.
enum Found {
    Yes,
    No,
    Partly,
}

enum Line {
    Text(String),
    TooLong,
}

/// The frame's length from its `Content-Length` values (the first one is
/// what followed the name found).
fn frame_length(values: &[String]) -> Result<u64, String> {
    let mut len = None;
    for v in values {
        let v = v.trim();
        let n: u64 = v
            .parse()
            .map_err(|_| format!("a `Content-Length` that is not a length ({})", shorten(v)))?;
        match len {
            Some(l) if l != n => {
                return Err(format!("two different `Content-Length`s ({l} and {n})"));
            }
            _ => len = Some(n),
        }
    }
    len.ok_or_else(|| "no `Content-Length`".to_string())
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    format!("{out:?}")
}

/// A frame body as a message, or the error response it gets.
pub fn classify(body: &[u8]) -> Result<Message, Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            let why = if std::str::from_utf8(body).is_err() {
                "the message is not UTF-8".to_string()
            } else {
                format!("the message is not JSON: {e}")
            };
            return Err(error_response(Value::Null, -32700, &why));
        }
    };
    let Some(obj) = value.as_object() else {
        let why = if value.is_array() {
            "batches are not part of the Language Server Protocol"
        } else {
            "a message is a JSON object"
        };
        return Err(error_response(Value::Null, -32600, why));
    };
    // An id this server could answer under: a number or a string.
    let id = match obj.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(id @ Value::Number(n)) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {
            id.clone()
        }
        _ => Value::Null,
    };
    let shape_ok = match obj.get("method") {
        Some(Value::String(_)) => obj.get("id").is_none_or(|_| !id.is_null()),
        Some(_) => false,
        None => !id.is_null() && (obj.contains_key("result") || obj.contains_key("error")),
    };
    if !shape_ok {
        return Err(error_response(
            id,
            -32600,
            "not a request, response or notification",
        ));
    }
    serde_json::from_value::<Message>(value)
        .map_err(|e| error_response(Value::Null, -32600, &format!("not a valid message: {e}")))
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Where frames are written: stdout, shared by the reader (for its error
/// answers) and the writer thread.
type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn write_raw(out: &Out, v: &Value) -> io::Result<()> {
    let text = v.to_string();
    // A poisoned lock only means another writer panicked mid-frame; the
    // stream is as good as it will get.
    let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
    write!(w, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    w.flush()
}

/// The transport's threads.
pub struct IoThreads {
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Waits for the writer to send what the server left it. The reader is
    /// not waited for: it may be blocked on input that never comes.
    pub fn join(self) -> io::Result<()> {
        match self.writer.join() {
            Ok(r) => r,
            Err(_) => Err(io::Error::other("the LSP writer thread panicked")),
        }
    }
}

/// A connection over stdin and stdout.
pub fn stdio() -> io::Result<(Connection, IoThreads)> {
    let out: Out = Arc::new(Mutex::new(Box::new(io::stdout())));
    let (to_server, from_client) = bounded::<Message>(0);
    let (to_client, from_server) = bounded::<Message>(0);
    let writer_out = out.clone();
    let writer = thread::Builder::new()
        .name("vox-lsp-writer".into())
        .spawn(move || {
            for msg in from_server {
                let mut w = writer_out.lock().unwrap_or_else(|p| p.into_inner());
                msg.write(&mut *w)?;
            }
            Ok(())
        })?;
    thread::Builder::new()
        .name("vox-lsp-reader".into())
        .spawn(move || {
            let stdin = io::stdin();
            read_loop(stdin.lock(), &out, &to_server);
        })?;
    Ok((
        Connection {
            sender: to_client,
            receiver: from_client,
        },
        IoThreads { writer },
    ))
}

/// Reads frames from `input` and hands the messages to the server until
/// the input ends, the `exit` notification, or the server goes away.
fn read_loop(input: impl BufRead, out: &Out, server: &Sender<Message>) {
    let mut frames = FrameReader::new(input);
    loop {
        let frame = match frames.next_frame() {
            Ok(f) => f,
            Err(e) => {
                eprintln!("cargo vox lsp: cannot read the input ({e}): stopping");
                return;
            }
        };
        let junk = frames.skipped_junk();
        if junk > 0 {
            eprintln!("cargo vox lsp: skipped {junk} bytes that were not part of a message");
        }
        let msg = match frame {
            Frame::Body(body) => match classify(&body) {
                Ok(msg) => msg,
                Err(answer) => {
                    eprintln!(
                        "cargo vox lsp: a bad message: {}",
                        answer["error"]["message"].as_str().unwrap_or_default()
                    );
                    if write_raw(out, &answer).is_err() {
                        return;
                    }
                    continue;
                }
            },
            Frame::Unframed(why) => {
                eprintln!(
                    "cargo vox lsp: skipped a message with {why}; reading on from the next \
                     `Content-Length` header"
                );
                continue;
            }
            Frame::Oversized(len) => {
                let text = format!(
                    "cargo vox lsp: skipped a message of {len} bytes, over the 64 MiB limit \
                     for one message; a request in it is not answered"
                );
                eprintln!("{text}");
                let note = json!({"jsonrpc": "2.0", "method": "window/showMessage",
                                  "params": {"type": 1, "message": text}});
                if write_raw(out, &note).is_err() {
                    return;
                }
                continue;
            }
            Frame::End => return,
            Frame::Truncated(where_) => {
                eprintln!("cargo vox lsp: the input ended inside a message ({where_}): stopping");
                return;
            }
        };
        let is_exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
        if server.send(msg).is_err() || is_exit {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::new(input);
        let mut out = Vec::new();
        loop {
            let f = r.next_frame().unwrap();
            let last = matches!(f, Frame::End | Frame::Truncated(_));
            out.push(f);
            if last {
                return out;
            }
        }
    }

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn a_long_header_line_after_content_length_is_not_held() {
        let mut input = b"Content-Length: 2\r\nX-Long: ".to_vec();
        input.extend(std::iter::repeat_n(b'a', 1 << 20));
        input.extend(b"\r\n\r\n{}");
        input.extend(framed("{\"a\":1}"));
        let got = frames(&input);
        assert!(
            matches!(&got[0], Frame::Unframed(w) if w.contains("8 KiB")),
            "{got:?}"
        );
        assert_eq!(got[1], Frame::Body(b"{\"a\":1}".to_vec()));
    }

    #[test]
    fn an_oversized_frame_is_read_past() {
        let len = MAX_FRAME_BYTES + 3;
        let mut input = format!("Content-Length: {len}\r\n\r\n").into_bytes();
        input.resize(input.len() + len as usize, b'x');
        input.extend(framed("{}"));
        let got = frames(&input);
        assert_eq!(got[0], Frame::Oversized(len));
        assert_eq!(got[1], Frame::Body(b"{}".to_vec()));
        assert_eq!(got[2], Frame::End);
    }

    #[test]
    fn truncated_input_is_told_apart_from_an_end_between_frames() {
        assert_eq!(frames(b""), vec![Frame::End]);
        assert_eq!(frames(b"\r\n  \n"), vec![Frame::End]);
        assert!(matches!(
            frames(b"Content-Length: 9\r\n\r\n{}")[0],
            Frame::Truncated(_)
        ));
        assert!(matches!(
            frames(b"Content-Length: 9\r\n")[0],
            Frame::Truncated(_)
        ));
        assert!(matches!(frames(b"Content-Len")[0], Frame::Truncated(_)));
        assert!(matches!(frames(b"junk")[0], Frame::End));
        assert!(matches!(
            frames(b"Content-Length: 8000000000\r\n\r\n{")[0],
            Frame::Truncated(_)
        ));
    }

    #[test]
    fn too_many_header_lines_are_not_a_frame() {
        let mut input = b"Content-Length: 2\r\n".to_vec();
        for _ in 0..40 {
            input.extend(b"X: y\r\n");
        }
        input.extend(b"\r\n{}");
        input.extend(framed("[]"));
        let got = frames(&input);
        assert!(matches!(&got[0], Frame::Unframed(_)), "{got:?}");
        assert_eq!(got[1], Frame::Body(b"[]".to_vec()));
    }

    /// Generated noise (no `:`, so no header name can form in it) before,
    /// between and inside the header blocks of valid frames: every valid
    /// frame is recovered, in order, and nothing else is taken for one.
    #[test]
    fn every_valid_frame_survives_noise_around_it() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz -{}[]\"\r\n\t\x00\xff0123456789";
        for round in 0..200 {
            let mut input = Vec::new();
            let mut want = Vec::new();
            for i in 0..(1 + next() % 6) {
                let noise_len = next() % 64;
                for _ in 0..noise_len {
                    input.push(ALPHABET[(next() % ALPHABET.len() as u64) as usize]);
                }
                // An end of line, so the noise is not taken into a header.
                input.extend(b"\r\n");
                let body = format!("{{\"round\":{round},\"i\":{i}}}");
                input.extend(framed(&body));
                want.push(body.into_bytes());
            }
            let got: Vec<Vec<u8>> = frames(&input)
                .into_iter()
                .filter_map(|f| match f {
                    Frame::Body(b) => Some(b),
                    _ => None,
                })
                .collect();
            assert_eq!(
                got,
                want,
                "round {round}: {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }

    #[test]
    fn bodies_are_classified_as_json_rpc_says() {
        let code = |b: &[u8]| {
            classify(b)
                .err()
                .map(|e| (e["error"]["code"].clone(), e["id"].clone()))
        };
        assert_eq!(code(b"{"), Some((json!(-32700), Value::Null)));
        assert_eq!(code(b"\xff"), Some((json!(-32700), Value::Null)));
        assert_eq!(code(b"[]"), Some((json!(-32600), Value::Null)));
        assert_eq!(code(b"1"), Some((json!(-32600), Value::Null)));
        assert_eq!(code(br#"{"id":3}"#), Some((json!(-32600), json!(3))));
        assert_eq!(
            code(br#"{"id":3,"method":[]}"#),
            Some((json!(-32600), json!(3)))
        );
        assert_eq!(
            code(br#"{"id":1.5,"method":"x"}"#),
            Some((json!(-32600), Value::Null))
        );
        assert_eq!(
            code(br#"{"id":99999999999,"method":"x"}"#),
            Some((json!(-32600), Value::Null))
        );
        assert_eq!(code(br#"{"id":"a","method":"x","params":3}"#), None);
        assert_eq!(code(br#"{"method":"x"}"#), None);
        assert_eq!(code(br#"{"id":2,"result":null}"#), None);
    }
}
