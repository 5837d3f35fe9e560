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
