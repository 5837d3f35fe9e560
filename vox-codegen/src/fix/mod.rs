//! Applying fixes, as `cargo vox fix` does (docs/diagnostics.md, "Fixes").
//!
//! [`fix_module`] checks a module, applies every `machine-applicable` fix
//! it can, checks again, and repeats until no fix applies (at most
//! [`MAX_PASSES`] rounds), like `cargo fix`. Within one round, a fix whose
//! edits overlap or touch an edit already taken waits for the next round,
//! when its diagnostic is found again on the new text. `maybe-incorrect` and
//! `has-placeholders` fixes are never applied. No I/O: the caller reads and
//! writes the files.
//!
//! The fixes themselves are computed by the suggestion engine (`suggest`),
//! which the checker runs on every module; this module is the loop that
//! applies them.

use crate::diagnostic::{apply_fixes, Applicability, Code, Edit};
use crate::source::{LineCol, SourceFile, SourceMap};
use crate::Checked;

mod guard;
mod suggest;

pub(crate) use guard::guard_warning_fixes;
pub(crate) use suggest::suggest;
pub(crate) use suggest::Toks;

/// Most check-and-fix rounds [`fix_module`] runs.
pub const MAX_PASSES: usize = 16;

/// One file of the module to fix.
#[derive(Debug, Clone)]
pub struct FixFile {
    pub name: String,
    pub text: String,
    /// False for a file that must not change (say, one that was not valid
    /// UTF-8 and so cannot be written back as read): fixes that edit it are
    /// skipped.
    pub editable: bool,
}

/// One edit of an applied fix, located in the text as it was before the
/// round that applied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedEdit {
    pub file: usize,
    pub start: LineCol,
    pub end: LineCol,
    pub start_byte: usize,
    pub end_byte: usize,
    pub replacement: String,
}

/// A fix that [`fix_module`] applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedFix {
    /// Index of the file of the diagnostic in the input.
    pub file: usize,
    /// 1-based line of the diagnostic, in the text of that round.
    pub line: usize,
    pub code: Code,
    pub message: String,
    pub edits: Vec<AppliedEdit>,
    /// The round (0-based) that applied it.
    pub pass: usize,
}

#[derive(Debug)]
pub struct FixOutcome {
    /// The final text of each input file, in input order.
    pub texts: Vec<String>,
    pub applied: Vec<AppliedFix>,
    /// The check of the final texts: what remains.
    pub checked: Checked,
    /// True when the rounds stopped because none applied (not at the bound).
    pub settled: bool,
}

fn sources_of(files: &[FixFile], texts: &[String]) -> SourceMap {
    let mut sources = SourceMap::new();
    for (f, t) in files.iter().zip(texts) {
        sources.add(SourceFile::new(f.name.clone(), t.clone()));
    }
    sources
}

/// `[a, b)` and `[c, d)` overlap or touch (two insertions at one place
/// included): their order would be ambiguous.
fn conflicts(a: &Edit, b: &Edit) -> bool {
    a.span.file == b.span.file && a.span.start <= b.span.end && b.span.start <= a.span.end
}

/// Checks the module, applies its machine-applicable fixes, and repeats
/// until none applies or [`MAX_PASSES`] rounds ran.
pub fn fix_module(files: &[FixFile]) -> FixOutcome {
    let mut texts: Vec<String> = files.iter().map(|f| f.text.clone()).collect();
    let mut applied = Vec::new();
    for pass in 0..MAX_PASSES {
        let checked = crate::check(sources_of(files, &texts));
        let mut taken: Vec<&Edit> = Vec::new();
        let mut round = Vec::new();
        for d in &checked.diagnostics {
            let Some(fix) = d
                .fixes
                .iter()
                .find(|f| f.applicability == Applicability::MachineApplicable)
            else {
                continue;
            };
            let usable = !fix.edits.is_empty()
                && fix.edits.iter().all(|e| {
                    files.get(e.span.file.0 as usize).is_some_and(|f| f.editable)
                        && texts
                            .get(e.span.file.0 as usize)
                            .is_some_and(|t| t.get(e.span.range()).is_some())
                })
                && !fix
                    .edits
                    .iter()
                    .any(|e| taken.iter().any(|t| conflicts(e, t)))
                // A fix that changes nothing would be found again forever.
                && fix.edits.iter().any(|e| {
                    texts
                        .get(e.span.file.0 as usize)
                        .and_then(|t| t.get(e.span.range()))
                        != Some(&*e.replacement)
                });
            if !usable {
                continue;
            }
            taken.extend(fix.edits.iter());
            let file = checked.sources.get(d.span.file);
            round.push(AppliedFix {
                file: d.span.file.0 as usize,
                line: file.line_col(d.span.start as usize).line,
                code: d.code,
                message: fix.message.clone(),
                edits: fix
                    .edits
                    .iter()
                    .map(|e| {
                        let f = checked.sources.get(e.span.file);
                        AppliedEdit {
                            file: e.span.file.0 as usize,
                            start: f.line_col(e.span.start as usize),
                            end: f.line_col(e.span.end as usize),
                            start_byte: e.span.start as usize,
                            end_byte: e.span.end as usize,
                            replacement: e.replacement.clone(),
                        }
                    })
                    .collect(),
                pass,
            });
        }
        if round.is_empty() {
            return FixOutcome {
                texts,
                applied,
                checked,
                settled: true,
            };
        }
        for (i, text) in texts.iter_mut().enumerate() {
            let mine: Vec<&Edit> = taken
                .iter()
                .copied()
                .filter(|e| e.span.file.0 as usize == i)
                .collect();
            if !mine.is_empty() {
                *text = apply_fixes(text, &mine);
            }
        }
        applied.extend(round);
    }
    let checked = crate::check(sources_of(files, &texts));
    FixOutcome {
        texts,
        applied,
        checked,
        settled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> FixOutcome {
        fix_module(&[FixFile {
            name: "a.vox".into(),
            text: text.into(),
            editable: true,
        }])
    }

    #[test]
    fn applies_fixes_until_clean() {
        let out = one("fn f(a: bool, b: bool) -> bool {\n    return a && b\n}\n");
        assert_eq!(
            out.texts[0],
            "fn f(a: bool, b: bool) to bool {\n    return a and b\n}\n"
        );
        assert!(!out.checked.has_errors(), "{:?}", out.checked.diagnostics);
        assert_eq!(out.applied.len(), 2);
        assert!(out.settled);
    }

    /// Where the intent is not clear, nothing is fixed.
    #[test]
    fn ambiguous_cases_get_no_fix() {
        for src in [
            // Names that are fine in Vox.
            "fn f() to int {\n    let elif = 1\n    let null = 2\n    return elif + null\n}\n",
            "type Vec { x: int }\nfn f(v: Vec) to int {\n    return v.x\n}\n",
        ] {
            let out = one(src);
            assert!(out.applied.is_empty(), "{src}: {:?}", out.applied);
            assert!(
                !out.checked.has_errors(),
                "{src}: {:?}",
                out.checked.diagnostics
            );
        }
        for src in [
            // A comparison, not type arguments.
            "fn f(a: int, b: int, c: int) to bool {\n    return g(x: a < b > c)\n}\nfn g(x: bool) to bool {\n    return x\n}\n",
            // `len` of an `int` is not a length.
            "fn f(n: int) to int {\n    return n.len()\n}\n",
            // Positional enum payloads have no Vox field names.
            "enum E { A(int) }\n",
        ] {
            let out = one(src);
            assert!(out.applied.is_empty(), "{src}: {:?}", out.applied);
            assert!(out.checked.has_errors());
        }
    }

    #[test]
    fn read_only_files_are_not_edited() {
        let out = fix_module(&[FixFile {
            name: "a.vox".into(),
            text: "fn f(a: bool, b: bool) to bool {\n    return a && b\n}\n".into(),
            editable: false,
        }]);
        assert!(out.applied.is_empty());
        assert!(out.checked.has_errors());
    }
}
