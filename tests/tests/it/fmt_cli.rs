//! `cargo vox fmt`: the repository's own Vox sources are formatted (CI runs
//! this), files are rewritten in place only when they change, `--check`
//! lists what would change, `--json` prints one `"command":"fmt"` envelope,
//! and files with syntax errors are left untouched.

use vox_e2e::{copy_fixture, only_envelope, vox, vox_files, work_dir, workspace_root, Run};
use vox_metadata::Envelope;

fn envelope(r: &Run) -> Envelope {
    only_envelope(r, "fmt")
}

/// Every valid `.vox` file of the repository (not `fixtures/invalid`, whose
/// files are deliberately broken and whose spans are pinned).
const FORMATTED: &[&str] = &[
    "fixtures/valid",
    "fixtures/kitchen-sink",
    "fixtures/invoice-app",
    "fixtures/lane",
    "fixtures/soundness/vox",
];

/// The committed `.vox` files under [`FORMATTED`] (files being written in
/// the checkout are not judged before they are committed); all of them when
/// this is not a git checkout.
fn committed_vox_files() -> Vec<String> {
    let out = std::process::Command::new("git")
        .current_dir(workspace_root())
        .args(["ls-files", "-z", "--"])
        .args(FORMATTED)
        .output();
    match out {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => String::from_utf8_lossy(&o.stdout)
            .split('\0')
            .filter(|f| f.ends_with(".vox"))
            .map(str::to_string)
            .collect(),
        _ => FORMATTED.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn the_repositorys_vox_files_are_formatted() {
    let files = committed_vox_files();
    assert!(files.len() > 10, "{files:?}");
    let mut args = vec!["fmt", "--check"];
    args.extend(files.iter().map(String::as_str));
    let r = vox(&workspace_root(), &args);
    assert_eq!(
        r.code(),
        Some(0),
        "run `cargo vox fmt` on the files listed and commit the result\n{}",
        r.dump()
    );
    assert_eq!(r.stdout, "", "{}", r.dump());
}

const MESSY: &str = "// A comment that stays.\ntype  Item {\n  name :str,   // the name\n\n\n  qty: int }\nfn total( items : list [ Item ] )to int{\nlet mut n=0\n    for it in items {\n n = n+it.qty\n    }\n  if n>100 {\n return -1\n }\n else { return n }\n}\n";

const TIDY: &str = "// A comment that stays.\ntype Item {\n    name: str, // the name\n\n    qty: int }\n\nfn total(items: list[Item]) to int {\n    let mut n = 0\n    for it in items {\n        n = n + it.qty\n    }\n    if n > 100 {\n        return -1\n    } else { return n }\n}\n";

#[test]
fn fmt_rewrites_in_place_only_when_needed() {
    let dir = work_dir("fmt-in-place");
    let file = dir.join("a.vox");
    std::fs::write(&file, MESSY).unwrap();
    std::fs::write(dir.join("b.vox"), TIDY).unwrap();

    // --check: lists the file on stdout, writes nothing, exit 1.
    let r = vox(&dir, &["fmt", "--check", "."]);
    r.assert_code(1);
    assert_eq!(r.stdout.trim(), "./a.vox", "{}", r.dump());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MESSY);
    let r = vox(&dir, &["--json", "fmt", "--check", "."]);
    r.assert_code(1);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert_eq!(env.changed_files, Some(vec!["./a.vox".into()]), "{env:?}");

    // Rewrite: exactly the canonical text; b.vox is not touched.
    let b_mtime = std::fs::metadata(dir.join("b.vox"))
        .unwrap()
        .modified()
        .unwrap();
    let r = vox(&dir, &["--json", "fmt", "."]);
    r.assert_code(0);
    let env = envelope(&r);
    assert!(env.ok, "{env:?}");
    assert_eq!(env.changed_files, Some(vec!["./a.vox".into()]), "{env:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), TIDY);
    assert_eq!(
        std::fs::metadata(dir.join("b.vox"))
            .unwrap()
            .modified()
            .unwrap(),
        b_mtime,
        "an unchanged file is not rewritten"
    );
    // No temporary files left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // Idempotent: a second run changes nothing.
    let r = vox(&dir, &["fmt", "--check", "a.vox"]);
    r.assert_code(0);
    assert!(
        r.stderr.contains("would reformat 0 of 1 Vox file"),
        "{}",
        r.dump()
    );
    let r = vox(&dir, &["fmt", "a.vox"]);
    r.assert_code(0);
    assert!(r.stderr.contains("reformatted 0 of 1"), "{}", r.dump());
}

#[test]
fn files_with_syntax_errors_are_left_untouched() {
    let dir = work_dir("fmt-syntax-error");
    let broken = "fn f( {\n  let x=1\n}\n";
    std::fs::write(dir.join("broken.vox"), broken).unwrap();
    std::fs::write(dir.join("ok.vox"), "fn g()  {\n}\n").unwrap();
    let r = vox(&dir, &["--json", "fmt", "."]);
    r.assert_code(1);
    let env = envelope(&r);
    assert!(!env.ok, "{env:?}");
    assert!(env.error_count >= 1, "{env:?}");
    assert_eq!(env.diagnostics[0].file_path, "./broken.vox", "{env:?}");
    assert_eq!(env.changed_files, Some(vec!["./ok.vox".into()]), "{env:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("broken.vox")).unwrap(),
        broken
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ok.vox")).unwrap(),
        "fn g() {\n}\n"
    );
    // Human mode: the diagnostic is rendered on stderr.
    let r = vox(&dir, &["fmt", "broken.vox"]);
    r.assert_code(1);
    assert!(r.stderr.contains("error[vox/syntax/"), "{}", r.dump());
    assert!(r.stderr.contains("left unchanged"), "{}", r.dump());
    // A missing path is a usage error.
    vox(&dir, &["fmt", "nope.vox"]).assert_code(2);
}

#[test]
fn fmt_without_paths_formats_the_package_sources() {
    let root = copy_fixture("kitchen-sink", "fmt-package");
    let first = vox_files(&root.join("vox"))[0].clone();
    let original = std::fs::read_to_string(&first).unwrap();
    let messy = original.replace("\n    ", "\n  ");
    assert_ne!(messy, original);
    std::fs::write(&first, &messy).unwrap();
    let r = vox(&root, &["--json", "fmt"]);
    r.assert_code(0);
    let env = envelope(&r);
    assert_eq!(env.changed_files.as_ref().unwrap().len(), 1, "{env:?}");
    assert_eq!(std::fs::read_to_string(&first).unwrap(), original);
}

/// A symlinked source is written through to its target (the link stays a
/// link), and the rewritten file keeps its permissions.
#[cfg(unix)]
#[test]
fn fmt_writes_through_symlinks_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = work_dir("fmt-symlink");
    std::fs::create_dir(dir.join("real")).unwrap();
    let target = dir.join("real").join("a.vox");
    std::fs::write(&target, "fn g()  {\n}\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("real/a.vox", dir.join("link.vox")).unwrap();
    let r = vox(&dir, &["fmt", "link.vox"]);
    r.assert_code(0);
    assert!(std::fs::symlink_metadata(dir.join("link.vox"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "fn g() {\n}\n");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

/// A file saved with a byte order mark (as some Windows editors do) checks
/// and formats like any other, and keeps its mark; invisible and look-alike
/// characters elsewhere are named by code point, and `fix` removes the
/// invisible ones.
#[test]
fn a_byte_order_mark_is_accepted_and_invisible_characters_are_named() {
    let dir = work_dir("fmt-bom");
    let file = dir.join("a.vox");
    std::fs::write(&file, "\u{FEFF}fn g()  {\n}\n").unwrap();
    let r = vox(&dir, &["--json", "check", "a.vox"]);
    r.assert_code(0);
    vox(&dir, &["fmt", "a.vox"]).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "\u{FEFF}fn g() {\n}\n"
    );

    let text = "fn g() to int {\n    let x\u{00A0}= 1\u{200B}\n    return x \u{2212} 1\n}\n";
    std::fs::write(&file, text).unwrap();
    let r = vox(&dir, &["--json", "check", "a.vox"]);
    r.assert_code(1);
    let env = only_envelope(&r, "check");
    let messages: Vec<&str> = env
        .diagnostics
        .iter()
        .filter(|d| d.error_code.as_deref() == Some("vox/syntax/unexpected-char"))
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "unexpected invisible character: U+00A0 NO-BREAK SPACE",
            "unexpected invisible character: U+200B ZERO WIDTH SPACE",
            "unexpected character `\u{2212}` (U+2212 MINUS SIGN)",
        ],
        "{}",
        r.dump()
    );
    assert_eq!(
        (
            env.diagnostics[0].span.start_line,
            env.diagnostics[0].span.start_col
        ),
        (2, 10)
    );
    // `fix` applies the machine-applicable ones; the look-alike stays for a person.
    let r = vox(&dir, &["fix", "a.vox"]);
    r.assert_code(1);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn g() to int {\n    let x = 1\n    return x \u{2212} 1\n}\n"
    );
}
