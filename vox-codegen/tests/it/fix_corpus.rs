//! The fix corpus: each `fixtures/fix/NAME.vox` is a broken file and
//! `NAME.vox.fixed` the exact file a fix must turn it into.
//!
//! - For the machine-applicable fixes, [`fix_module`] (what `cargo vox fix`
//!   runs) must produce the `.fixed` text, which checks clean.
//! - For `placeholder_*.vox`, whose fixes are `has-placeholders`,
//!   `fix_module` must change nothing; applying the suggested fixes by hand
//!   gives the `.fixed` text, which checks clean once its placeholders
//!   (`<int>`, `<str>`, `<value>`…) are filled in.
//!
//! `VOX_BLESS=1` rewrites the `.fixed` files from the current output.

use crate::support;

use std::path::PathBuf;

use support::fixtures;
use vox_codegen::diagnostic::{Applicability, Edit};
use vox_codegen::fix::{fix_module, FixFile};
use vox_codegen::{check, SourceFile, SourceMap};

fn cases() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("fix"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vox"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "fix corpus not found");
    files
}

/// Every `.vox` file of the invalid and fix corpora, sorted.
fn corpus_files() -> Vec<PathBuf> {
    let mut dirs = vec![fixtures().join("invalid"), fixtures().join("fix")];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "vox") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn checked(text: &str) -> vox_codegen::Checked {
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("case.vox", text));
    check(sources)
}

/// Fills the placeholders a has-placeholders fix leaves.
fn fill(text: &str) -> String {
    text.replace("<value>", "0")
        .replace("<int>", "0")
        .replace("<float>", "0.0")
        .replace("<bool>", "false")
        .replace("<str>", "\"\"")
}

#[test]
fn every_fix_gives_the_expected_file_which_checks_clean() {
    let bless = std::env::var_os("VOX_BLESS").is_some();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let broken = std::fs::read_to_string(&case).unwrap();
        let expected_path = PathBuf::from(format!("{}.fixed", case.display()));
        let before = checked(&broken);
        assert!(before.has_errors(), "{name}: the broken file checks clean");
        let outcome = fix_module(&[FixFile {
            name: name.clone(),
            text: broken.clone(),
            editable: true,
        }]);
        let (fixed, clean) = if name.starts_with("placeholder_") {
            assert_eq!(
                outcome.texts[0], broken,
                "{name}: has-placeholders fixes must not be applied"
            );
            let edits: Vec<&Edit> = before
                .diagnostics()
                .iter()
                .flat_map(|d| &d.fixes)
                .filter(|f| f.applicability == Applicability::HasPlaceholders)
                .flat_map(|f| &f.edits)
                .collect();
            assert!(!edits.is_empty(), "{name}: no has-placeholders fix");
            let fixed = vox_codegen::diagnostic::apply_fixes(&broken, &edits);
            (fixed.clone(), fill(&fixed))
        } else {
            assert!(outcome.settled, "{name}: fixes did not settle");
            assert!(!outcome.applied.is_empty(), "{name}: no fix applied");
            (outcome.texts[0].clone(), outcome.texts[0].clone())
        };
        if bless {
            std::fs::write(&expected_path, &fixed).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        assert_eq!(fixed, expected, "{name}: fixed text differs");
        let after = checked(&clean);
        assert!(
            after.diagnostics().is_empty(),
            "{name}: the fixed file does not check clean: {:?}",
            after.diagnostics()
        );
    }
}

/// Every file of the invalid corpus (and of the fix corpus) through
/// [`fix_module`]: the machine-applicable fixes settle, and applying them
/// never leaves more errors than there were — a fix that changes meaning
/// usually shows up as new errors (a rename that leaves its uses behind, a
/// conversion of an expression the parser cut short).
#[test]
fn machine_fixes_never_add_errors() {
    let files = corpus_files();
    assert!(files.len() > 100, "corpus not found");
    for case in files {
        // The invalid-UTF-8 case is not text to fix.
        let Ok(text) = std::fs::read_to_string(&case) else {
            continue;
        };
        let errors =
            |c: &vox_codegen::Checked| c.diagnostics().iter().filter(|d| d.is_error()).count();
        let before = errors(&checked(&text));
        let outcome = fix_module(&[FixFile {
            name: "case.vox".into(),
            text: text.clone(),
            editable: true,
        }]);
        assert!(outcome.settled, "{}: fixes did not settle", case.display());
        let after = errors(&outcome.checked);
        assert!(
            after <= before,
            "{}: {before} errors before the fixes, {after} after:\n{}\n{:?}",
            case.display(),
            outcome.texts[0],
            outcome.checked.diagnostics()
        );
    }
}

/// The warnings of `c` other than `skip`, as (code, message) with counts.
fn warnings_except(
    c: &vox_codegen::Checked,
    skip: Option<usize>,
    of_error: bool,
) -> std::collections::HashMap<(String, String), usize> {
    let mut out = std::collections::HashMap::new();
    for (j, d) in c.diagnostics().iter().enumerate() {
        let follows = of_error
            && matches!(
                d.code.as_str(),
                "vox/lint/unused-variable" | "vox/lint/unused-value"
            );
        if Some(j) != skip && !d.is_error() && !follows {
            *out.entry((d.code.as_str().to_string(), d.message.clone()))
                .or_default() += 1;
        }
    }
    out
}

/// A machine-applicable fix leaves the other diagnostics as they were or
/// fixes them: applied alone, to every file of the invalid and fix corpora
/// and the slip cases' kind of input, no machine-applicable fix loses
/// another warning (an error's fix may end the `unused` warnings that
/// followed from it). `cargo vox fix` applies such fixes unread; one that
/// hid a warning would leave a program whose problem `check` no longer
/// reports.
#[test]
fn machine_fixes_never_hide_a_warning() {
    let files = corpus_files();
    let mut tried = 0;
    for case in files {
        let Ok(text) = std::fs::read_to_string(&case) else {
            continue;
        };
        let before = checked(&text);
        for (i, d) in before.diagnostics().iter().enumerate() {
            for f in &d.fixes {
                if f.applicability != Applicability::MachineApplicable {
                    continue;
                }
                let kept = warnings_except(&before, Some(i), d.is_error());
                if kept.is_empty() {
                    continue;
                }
                tried += 1;
                let edits: Vec<&Edit> = f.edits.iter().collect();
                let after = checked(&vox_codegen::diagnostic::apply_fixes(&text, &edits));
                let found = warnings_except(&after, None, false);
                for (k, n) in &kept {
                    assert!(
                        found.get(k).copied().unwrap_or(0) >= *n,
                        "{}: the machine-applicable fix `{}` of {} hides {k:?}",
                        case.display(),
                        f.message,
                        d.code.as_str()
                    );
                }
            }
        }
    }
    eprintln!("{tried} machine-applicable fixes tried beside other warnings");
}

/// The case the issue names: `fix` renamed an unused `total` to `_total`,
/// which silenced the `{total}`-in-a-plain-string lint, and `check` then
/// said "no problems found" while the program printed `{total}`. Now the
/// rename is a suggestion, `fix` leaves the file, and both warnings stay.
#[test]
fn renaming_an_unused_variable_does_not_hide_its_braces_lint() {
    let text = "fn main() {\n    let total = 5\n    print(\"Total: {total}\")\n}\n";
    let before = checked(text);
    let codes: Vec<&str> = before
        .diagnostics()
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(
        codes,
        ["vox/lint/unused-variable", "vox/lint/braces-in-string"],
        "{:?}",
        before.diagnostics()
    );
    let rename = &before.diagnostics()[0].fixes[0];
    assert_eq!(rename.applicability, Applicability::MaybeIncorrect);
    let outcome = fix_module(&[FixFile {
        name: "case.vox".into(),
        text: text.into(),
        editable: true,
    }]);
    assert_eq!(outcome.texts[0], text, "nothing is applied unread");
    let after: Vec<&str> = outcome
        .checked
        .diagnostics()
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert!(after.contains(&"vox/lint/braces-in-string"), "{after:?}");
    // A build script's check tries nothing and offers the rename too.
    let mut sources = SourceMap::new();
    sources.add(SourceFile::new("case.vox", text));
    let built = vox_codegen::check_for_build(sources);
    assert_eq!(
        built.diagnostics()[0].fixes[0].applicability,
        Applicability::MaybeIncorrect
    );
    // The same rename beside no other warning stays machine-applicable.
    let alone = checked("fn main() {\n    let total = 5\n    print(\"Total\")\n}\n");
    assert_eq!(
        alone.diagnostics()[0].fixes[0].applicability,
        Applicability::MachineApplicable
    );
}
