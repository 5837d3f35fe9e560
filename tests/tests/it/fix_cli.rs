//! `cargo vox fix`: applies machine-applicable fixes to real files until
//! none applies, writes only files that change, `--dry-run` prints a
//! unified diff and writes nothing, `--json` prints one `"command":"fix"`
//! envelope with the applied fixes and what remains, and the exit status
//! says whether errors remain.

use vox_e2e::{
    copy_fixture, json_lines, only_envelope, vox, vox_files, work_dir, workspace_root, Run,
};
use vox_metadata::Envelope;

fn envelope(r: &Run) -> Envelope {
    only_envelope(r, "fix")
}

const BROKEN: &str = "struct Point {\n    x: int\n    y: int\n}\n\ndef norm(p: Point): int {\n    if p.x > p.y {\n        return p.x\n    } elif p.y > 0 {\n        return p.y\n    }\n    return 0\n}\n";
const FIXED: &str = "type Point {\n    x: int\n    y: int\n}\n\nfn norm(p: Point) to int {\n    if p.x > p.y {\n        return p.x\n    } else if p.y > 0 {\n        return p.y\n    }\n    return 0\n}\n";

#[test]
fn fix_applies_every_fix_until_clean() {
    let dir = work_dir("fix-apply");
    let file = dir.join("a.vox");
    std::fs::write(&file, BROKEN).unwrap();
    std::fs::write(
        dir.join("clean.vox"),
        "fn one() to int {\n    return 1\n}\n",
    )
    .unwrap();
    let clean_mtime = std::fs::metadata(dir.join("clean.vox"))
        .unwrap()
        .modified()
        .unwrap();
    let r = vox(&dir, &["fix", "a.vox", "clean.vox"]);
    r.assert_code(0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), FIXED);
    assert!(
        r.stderr
            .contains("fixed a.vox:1: replace `struct` with `type`"),
        "{}",
        r.dump()
    );
    assert!(
        r.stderr.contains("replace `elif` with `else if`"),
        "{}",
        r.dump()
    );
    assert!(
        r.stderr
            .contains("ok: applied 4 fixes in 1 file of 2 Vox files"),
        "{}",
        r.dump()
    );
    assert_eq!(r.stdout, "", "{}", r.dump());
    assert_eq!(
        std::fs::metadata(dir.join("clean.vox"))
            .unwrap()
            .modified()
            .unwrap(),
        clean_mtime,
        "a file without fixes is not rewritten"
    );
    // Nothing left to do: a second run changes nothing.
    let r = vox(&dir, &["--json", "fix", "."]);
    r.assert_code(0);
    let env = envelope(&r);
    assert!(env.ok, "{env:?}");
    assert_eq!(env.applied_fixes, Some(vec![]), "{env:?}");
    assert_eq!(env.changed_files, Some(vec![]), "{env:?}");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
}

#[test]
fn json_lists_applied_fixes_and_remaining_errors() {
    let dir = work_dir("fix-json");
    let file = dir.join("a.vox");
    let src = "fn f(a: bool, b: bool) -> bool {\n    return a && b\n}\n\nfn g() to int {\n    return \"no\"\n}\n";
    std::fs::write(&file, src).unwrap();
    let r = vox(&dir, &["--json", "fix", "a.vox"]);
    r.assert_code(1);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert_eq!(env.error_count, 1, "{env:?}");
    assert_eq!(
        env.diagnostics[0].error_code.as_deref(),
        Some("vox/type/mismatch"),
        "{env:?}"
    );
    assert_eq!(env.changed_files, Some(vec!["a.vox".into()]), "{env:?}");
    let applied = env.applied_fixes.as_ref().unwrap();
    assert_eq!(applied.len(), 2, "{env:?}");
    assert_eq!(applied[0].file_path, "a.vox");
    assert_eq!(applied[0].line, 1);
    assert_eq!(applied[0].error_code, "vox/syntax/unexpected-token");
    assert_eq!(applied[0].message, "replace `->` with `to`");
    assert_eq!(applied[0].edits[0].replacement, "to");
    assert_eq!(applied[0].edits[0].span.start_col, 24);
    assert_eq!(applied[1].message, "replace `&&` with `and`");
    assert!(json_lines(&r)[0].get("diff").is_none(), "{env:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        src.replace("->", "to").replace("&&", "and")
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let dir = work_dir("fix-dry-run");
    let file = dir.join("a.vox");
    std::fs::write(&file, BROKEN).unwrap();
    let r = vox(&dir, &["fix", "--dry-run", "a.vox"]);
    r.assert_code(0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), BROKEN);
    assert!(
        r.stdout.starts_with("--- a/a.vox\n+++ b/a.vox\n@@ -1,"),
        "{}",
        r.dump()
    );
    assert!(
        r.stdout.contains("\n-struct Point {\n+type Point {\n"),
        "{}",
        r.dump()
    );
    assert!(
        r.stdout
            .contains("\n-    } elif p.y > 0 {\n+    } else if p.y > 0 {\n"),
        "{}",
        r.dump()
    );
    assert!(r.stderr.contains("would fix a.vox:1"), "{}", r.dump());
    let r = vox(&dir, &["--json", "fix", "--dry-run", "a.vox"]);
    r.assert_code(0);
    let env = envelope(&r);
    assert_eq!(env.changed_files, Some(vec!["a.vox".into()]), "{env:?}");
    let diff = env.diff.as_deref().unwrap();
    assert!(diff.contains("+fn norm(p: Point) to int {\n"), "{diff}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), BROKEN);
}

#[test]
fn placeholders_are_shown_not_applied_and_usage_errors_exit_2() {
    let root = workspace_root();
    let case = root.join("fixtures/fix/placeholder_missing_field.vox");
    let dir = work_dir("fix-placeholders");
    let file = dir.join("p.vox");
    let src = std::fs::read_to_string(case).unwrap();
    std::fs::write(&file, &src).unwrap();
    let r = vox(&dir, &["--json", "fix", "p.vox"]);
    r.assert_code(1);
    let env = envelope(&r);
    assert_eq!(env.applied_fixes, Some(vec![]), "{env:?}");
    let fix = &env.diagnostics[0].suggested_fixes[0];
    assert_eq!(fix.applicability, "has-placeholders", "{env:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), src);
    vox(&dir, &["fix", "missing.vox"]).assert_code(2);
    vox(&dir, &["fix", "--no-such-flag"]).assert_code(2);
}

#[test]
fn fix_without_paths_fixes_the_package_sources() {
    let root = copy_fixture("kitchen-sink", "fix-package");
    let first = vox_files(&root.join("vox"))[0].clone();
    let original = std::fs::read_to_string(&first).unwrap();
    let broken = format!("{original}\ndef answer() -> int {{\n    return 42\n}}\n");
    std::fs::write(&first, &broken).unwrap();
    let r = vox(&root, &["--json", "fix"]);
    r.assert_code(0);
    let env = envelope(&r);
    assert_eq!(env.applied_fixes.as_ref().unwrap().len(), 2, "{env:?}");
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        format!("{original}\nfn answer() to int {{\n    return 42\n}}\n")
    );
}

#[test]
fn help_lists_fmt_and_fix() {
    let r = vox(&workspace_root(), &["--help"]);
    r.assert_code(0);
    for line in [
        "fmt     Rewrite Vox sources in the canonical layout",
        "fix     Apply every machine-applicable fix",
    ] {
        assert!(r.stdout.contains(line), "{}", r.dump());
    }
    let r = vox(&workspace_root(), &["fix", "--help"]);
    r.assert_code(0);
    assert!(r.stdout.contains("--dry-run"), "{}", r.dump());
    assert!(r.stdout.contains("never applied"), "{}", r.dump());
    let r = vox(&workspace_root(), &["fmt", "--help"]);
    assert!(r.stdout.contains("--check"), "{}", r.dump());
}
