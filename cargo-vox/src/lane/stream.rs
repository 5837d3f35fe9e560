//! Reading cargo's `--message-format=json` stream.
//!
//! Pure: bytes in, a [`BuildOutcome`] out. Lines that are not cargo messages
//! (a truncated line, a program's own output, invalid UTF-8) are kept as
//! text and never stop the reading, so one bad line cannot lose the result.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use cargo_metadata::Message;

use crate::envelope::DiagnosticPayload;
use crate::lane::rustc;

/// Where rustc's relative file names are rooted. Asked for only when the
/// stream carries a diagnostic, so a lookup behind it (see
/// `workspace::PendingWorkspace`) may still be running when reading starts.
pub trait WorkspaceRoot {
    fn workspace_root(&self) -> &Path;
}

impl WorkspaceRoot for Path {
    fn workspace_root(&self) -> &Path {
        self
    }
}

impl WorkspaceRoot for crate::workspace::PendingWorkspace {
    fn workspace_root(&self) -> &Path {
        self.root()
    }
}

/// Identity of a diagnostic for de-duplication: file, byte span, code, message.
type DiagnosticKey = (String, Option<usize>, Option<usize>, Option<String>, String);

/// An executable cargo produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Executable {
    pub package: String,
    pub target: String,
    pub kinds: Vec<String>,
    /// Built with the test harness (`cargo test --no-run`).
    pub test: bool,
    pub path: PathBuf,
}

/// Everything a build stream said.
#[derive(Debug, Default, Clone)]
pub struct BuildOutcome {
    /// rustc diagnostics, de-duplicated, in stream order.
    pub diagnostics: Vec<DiagnosticPayload>,
    /// Rendered rustc output for people (`rendered` fields).
    pub rendered: Vec<String>,
    /// `(package name, OUT_DIR)` of every build script that ran or was fresh.
    pub out_dirs: Vec<(String, PathBuf)>,
    pub executables: Vec<Executable>,
    /// The package id of each of `diagnostics`, in the same order.
    pub diagnostic_packages: Vec<String>,
    /// `build-finished.success`, if the stream got that far.
    pub finished: Option<bool>,
    /// `(package id, manifest path)` of every artifact, fresh or built
    /// (see `workspace::cache`, which checks its members against them).
    pub artifact_packages: Vec<(String, PathBuf)>,
    /// Lines that were not cargo messages.
    pub text_lines: Vec<String>,
    /// Keys of the diagnostics kept, for de-duplication.
    seen: std::collections::HashSet<DiagnosticKey>,
}

/// Reads a whole stream; `on_text` sees every non-message line as it arrives.
pub fn read_stream<R: WorkspaceRoot + ?Sized>(
    input: impl BufRead,
    workspace_root: &R,
    mut on_text: impl FnMut(&str),
) -> BuildOutcome {
    read_stream_marked(input, workspace_root, None, |line, _| on_text(line))
}

/// [`read_stream`] for `cargo test`, whose test binaries print between the
/// lines of `marker` (see `lane::testrun`): those lines are dropped, and
/// every line between them goes to `on_text` as a binary's (`true`), never
/// read as a cargo message.
pub fn read_stream_marked<R: WorkspaceRoot + ?Sized>(
    input: impl BufRead,
    workspace_root: &R,
    marker: Option<&str>,
    mut on_text: impl FnMut(&str, bool),
) -> BuildOutcome {
    let mut out = BuildOutcome::default();
    let mut reader = input;
    let mut buf = Vec::new();
    let (begin, end) = marker.map(crate::lane::testrun::marker_lines).unzip();
    let mut in_binary = false;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            // A read error ends the stream; what was read so far stands.
            Err(_) => break,
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if begin.as_deref() == Some(line) {
            in_binary = true;
        } else if end.as_deref() == Some(line) {
            in_binary = false;
        } else if in_binary {
            on_text(line, true);
        } else {
            handle_line(line, workspace_root, &mut out, &mut |l: &str| {
                on_text(l, false)
            });
        }
    }
    out
}

fn handle_line<R: WorkspaceRoot + ?Sized>(
    line: &str,
    workspace_root: &R,
    out: &mut BuildOutcome,
    on_text: &mut impl FnMut(&str),
) {
    let parsed = if line.starts_with('{') {
        serde_json::from_str::<Message>(line).ok()
    } else {
        None
    };
    match parsed {
        Some(Message::CompilerMessage(m)) => {
            if let Some(mut p) = rustc::payload(&m.message, workspace_root.workspace_root()) {
                p.package = Some(package_name(&m.package_id.repr));
                // The same diagnostic arrives once per target that compiles
                // the file (lib, bin, test): keep the first.
                let key = (
                    p.file_path.clone(),
                    p.span.start_byte,
                    p.span.end_byte,
                    p.error_code.clone(),
                    p.message.clone(),
                );
                if out.seen.insert(key) {
                    if let Some(r) = &m.message.rendered {
                        out.rendered.push(r.clone());
                    }
                    out.diagnostics.push(p);
                    out.diagnostic_packages.push(m.package_id.repr.clone());
                }
            }
        }
        Some(Message::BuildScriptExecuted(b)) => {
            out.out_dirs.push((
                package_name(&b.package_id.repr),
                b.out_dir.into_std_path_buf(),
            ));
        }
        Some(Message::CompilerArtifact(a)) => {
            let package = (
                a.package_id.repr.clone(),
                a.manifest_path.clone().into_std_path_buf(),
            );
            if !out.artifact_packages.contains(&package) {
                out.artifact_packages.push(package);
            }
            if let Some(exe) = a.executable {
                out.executables.push(Executable {
                    package: package_name(&a.package_id.repr),
                    target: a.target.name.clone(),
                    kinds: a.target.kind.iter().map(|k| k.to_string()).collect(),
                    test: a.profile.test,
                    path: exe.into_std_path_buf(),
                });
            }
        }
        Some(Message::BuildFinished(f)) => out.finished = Some(f.success),
        Some(_) => {}
        None => {
            on_text(line);
            out.text_lines.push(line.to_string());
        }
    }
}

/// The package name from a package id, in either of cargo's formats:
/// `name 0.1.0 (path+file:///…)` or `path+file:///…/dir#name@0.1.0`.
pub fn package_name(id: &str) -> String {
    if let Some((_, frag)) = id.rsplit_once('#') {
        let name = frag.split('@').next().unwrap_or(frag);
        // `…/dir#0.1.0`: the name is the directory.
        if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let path = id.split('#').next().unwrap_or("");
            return path.rsplit('/').next().unwrap_or(path).to_string();
        }
        return name.to_string();
    }
    id.split_whitespace().next().unwrap_or(id).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/ws";

    fn read(text: &str) -> BuildOutcome {
        read_stream(text.as_bytes(), std::path::Path::new(ROOT), |_| {})
    }

    #[test]
    fn package_names_from_both_id_formats() {
        assert_eq!(package_name("path+file:///ws/app#0.1.0"), "app");
        assert_eq!(package_name("path+file:///ws/x#my-app@0.1.0"), "my-app");
        assert_eq!(
            package_name("registry+https://example.invalid/index#serde@1.0.0"),
            "serde"
        );
        assert_eq!(package_name("app 0.1.0 (path+file:///ws/app)"), "app");
    }

    #[test]
    fn collects_messages_and_survives_junk() {
        let stream = concat!(
            r#"{"reason":"build-script-executed","package_id":"path+file:///ws/app#0.1.0","linked_libs":[],"linked_paths":[],"cfgs":[],"env":[],"out_dir":"/ws/target/debug/build/app-1/out"}"#,
            "\n",
            "not json at all\n",
            "{\"reason\":\"compiler-mess", // truncated line
            "\n\u{FFFD}\n",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///ws/app#0.1.0","manifest_path":"/ws/app/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"app","src_path":"/ws/app/src/main.rs","edition":"2021","doc":true,"doctest":false,"test":true},"profile":{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":false},"features":[],"filenames":["/ws/target/debug/app"],"executable":"/ws/target/debug/app","fresh":true}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        let out = read(stream);
        assert_eq!(
            out.out_dirs,
            vec![(
                "app".to_string(),
                PathBuf::from("/ws/target/debug/build/app-1/out")
            )]
        );
        assert_eq!(out.executables.len(), 1);
        assert_eq!(
            out.executables[0].path,
            PathBuf::from("/ws/target/debug/app")
        );
        assert_eq!(out.finished, Some(true));
        assert_eq!(out.text_lines.len(), 3);
    }

    #[test]
    fn invalid_utf8_is_text() {
        let bytes: &[u8] = b"\xff\xfe{\n";
        let out = read_stream(bytes, std::path::Path::new(ROOT), |_| {});
        assert_eq!(out.text_lines.len(), 1);
    }
}
