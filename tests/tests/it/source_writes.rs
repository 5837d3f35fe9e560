//! What `cargo vox fmt` and `cargo vox fix` may write, attacked as a
//! hostile repository and a careless user would (README, "Security notes"):
//! a committed symlink leading out of the package (to a file, through a
//! directory), a read-only file, a private file owned by someone else, and
//! an editor saving while the new text is written.
#![cfg(unix)]

use std::os::unix::fs::{symlink, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use vox_e2e::{cargo_vox, only_envelope, read, run, unique, vox, work_dir, Run, QUICK};

const MESSY: &str = "fn g()  {\n}\n";
const TIDY: &str = "fn g() {\n}\n";
const BROKEN: &str = "def g(): int {\n    return 1\n}\n";
const FIXED: &str = "fn g() to int {\n    return 1\n}\n";

/// `<tag>/pkg` (a package whose `vox/m.vox` holds `m`) and `<tag>/other/vox/x.vox`
/// (holding `x`) beside it. Returns (package root, the outside file).
fn package_and_outside(tag: &str, m: &str, x: &str) -> (PathBuf, PathBuf) {
    let base = work_dir(&unique(tag));
    let pkg = base.join("pkg");
    std::fs::create_dir_all(pkg.join("vox")).unwrap();
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::create_dir_all(base.join("other/vox")).unwrap();
    std::fs::write(pkg.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        pkg.join("Cargo.toml"),
        "[package]\nname = \"victim\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(pkg.join("vox/m.vox"), m).unwrap();
    let outside = base.join("other/vox/x.vox");
    std::fs::write(&outside, x).unwrap();
    (pkg, outside)
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Exit 1, `needle` on stderr.
fn assert_refused(r: &Run, needle: &str) {
    r.assert_code(1);
    assert!(r.stderr.contains(needle), "{}", r.dump());
}

#[test]
fn a_committed_symlink_out_of_the_package_is_not_written_through() {
    for (how, link, to) in [
        ("file", "vox/linked.vox", "../../other/vox/x.vox"),
        ("directory", "vox/shared", "../../other/vox"),
    ] {
        let (pkg, outside) = package_and_outside(&format!("write-out-{how}"), MESSY, MESSY);
        symlink(to, pkg.join(link)).unwrap();
        let shown = if how == "file" {
            "vox/linked.vox"
        } else {
            "vox/shared/x.vox"
        };
        let before = std::fs::metadata(&outside).unwrap().modified().unwrap();

        let r = vox(&pkg, &["fmt"]);
        assert_refused(
            &r,
            &format!("error: {shown} leads outside the package, to "),
        );
        assert!(
            r.stderr.contains("other/vox/x.vox: not rewritten"),
            "{}",
            r.dump()
        );
        assert_eq!(
            read(&outside),
            MESSY,
            "{how}: the outside file was rewritten"
        );
        assert_eq!(
            std::fs::metadata(&outside).unwrap().modified().unwrap(),
            before
        );
        // Nothing is written unless everything may be.
        assert_eq!(read(&pkg.join("vox/m.vox")), MESSY, "{how}");

        let r = vox(&pkg, &["--json", "fmt"]);
        let env = only_envelope(&r, "fmt");
        assert!(!env.ok, "{env:?}");
        assert_eq!(env.changed_files, Some(vec![]), "{env:?}");
        assert!(
            env.message
                .as_deref()
                .unwrap_or("")
                .contains("leads outside the package"),
            "{env:?}"
        );

        // `fmt vox/*.vox` (a shell glob takes the link too) and `fix`: the same.
        if how == "file" {
            let r = vox(&pkg, &["fmt", "vox/linked.vox", "vox/m.vox"]);
            assert_refused(&r, "vox/linked.vox leads outside the directories");
        }
        // --check only reads: it still reports the file.
        let r = vox(&pkg, &["fmt", "--check"]);
        r.assert_code(1);
        assert!(r.stdout.contains(shown), "{}", r.dump());

        std::fs::write(&outside, BROKEN).unwrap();
        let r = vox(&pkg, &["fix"]);
        assert_refused(&r, "leads outside the package");
        assert_eq!(read(&outside), BROKEN, "{how}: fix wrote outside");

        // The way out the message suggests: format it by its own path.
        std::fs::write(&outside, MESSY).unwrap();
        vox(&pkg, &["fmt", outside.to_str().unwrap()]).assert_code(0);
        assert_eq!(read(&outside), TIDY);
        // Then nothing needs writing through the link, and the package formats.
        vox(&pkg, &["fmt"]).assert_code(0);
        assert_eq!(read(&pkg.join("vox/m.vox")), TIDY);
        assert!(std::fs::symlink_metadata(pkg.join(link))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn a_read_only_file_is_reported_not_replaced() {
    let (pkg, _) = package_and_outside("write-read-only", MESSY, MESSY);
    let m = pkg.join("vox/m.vox");
    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = vox(&pkg, &["fmt"]);
    assert_refused(
        &r,
        "error: vox/m.vox is read-only (mode 0444): not rewritten",
    );
    assert_eq!((read(&m).as_str(), mode(&m)), (MESSY, 0o444));

    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&m, BROKEN).unwrap();
    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = vox(&pkg, &["fix"]);
    assert_refused(&r, "vox/m.vox is read-only (mode 0444)");
    assert_eq!((read(&m).as_str(), mode(&m)), (BROKEN, 0o444));
}

/// A private file stays private (the new file is never readable by others,
/// not even between its creation and the rename) and keeps its owner and
/// group when root rewrites it (checked only where this process may give
/// a file away, i.e. as root).
#[test]
fn a_private_file_keeps_its_mode_owner_and_group() {
    let (pkg, _) = package_and_outside("write-private", MESSY, MESSY);
    let m = pkg.join("vox/m.vox");
    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o600)).unwrap();
    let can_chown = std::os::unix::fs::chown(&m, Some(4242), Some(4343)).is_ok();
    if !can_chown {
        eprintln!("owner and group not checked: this process may not give a file away (not root)");
    }
    let before = std::fs::metadata(&m).unwrap();
    vox(&pkg, &["fmt"]).assert_code(0);
    let after = std::fs::metadata(&m).unwrap();
    assert_eq!(read(&m), TIDY);
    assert_eq!(mode(&m), 0o600);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_ne!(after.ino(), before.ino(), "written by a rename");

    std::fs::write(&m, BROKEN).unwrap();
    vox(&pkg, &["fix"]).assert_code(0);
    let after = std::fs::metadata(&m).unwrap();
    assert_eq!(read(&m), FIXED);
    assert_eq!(mode(&m), 0o600);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
}

/// An editor saves the file after `fmt` read it and before it replaces it:
/// the save is kept and `fmt` says so. The moment is made exact by the
/// debug-build pause `VOX_DEBUG_PAUSE_BEFORE_REPLACE` (cargo-vox's
/// `source_write::before_compare_hook`).
#[test]
fn an_edit_saved_while_fmt_writes_is_kept() {
    if vox_e2e::profile_dir().file_name() == Some(std::ffi::OsStr::new("release")) {
        eprintln!("skipped: the pause before the replace exists only in debug builds");
        return;
    }
    for (command, before, edit) in [
        ("fmt", MESSY, "fn mine()  {\n}\n"),
        ("fix", BROKEN, "def mine(): int {\n    return 2\n}\n"),
    ] {
        let (pkg, _) = package_and_outside(&format!("write-race-{command}"), before, MESSY);
        let m = pkg.join("vox/m.vox");
        let pause = pkg.join("pause");
        std::fs::create_dir(&pause).unwrap();
        let mut cmd = cargo_vox(&pkg);
        cmd.arg(command)
            .env("VOX_DEBUG_PAUSE_BEFORE_REPLACE", &pause);
        let child = std::thread::spawn(move || run(&mut cmd, QUICK));
        let deadline = std::time::Instant::now() + QUICK;
        while !pause.join("paused").exists() {
            assert!(
                std::time::Instant::now() < deadline && !child.is_finished(),
                "{command} never paused before replacing the file"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::write(&m, edit).unwrap();
        std::fs::write(pause.join("resume"), "").unwrap();
        let r = child.join().unwrap();
        assert_refused(&r, "vox/m.vox changed while it was being rewritten (its content changed): left as it is now",
        );
        assert_eq!(read(&m), edit, "{command}: the edit was lost");
        let leftovers: Vec<_> = std::fs::read_dir(pkg.join("vox"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "m.vox")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

/// In a workspace run every selected package may be written: a member's
/// symlink into another selected member is written once (the same file is
/// reached by two paths), while the member on its own still refuses it.
#[test]
fn a_link_between_selected_members_is_written_once() {
    let base = work_dir(&unique("write-workspace"));
    std::fs::write(
        base.join("Cargo.toml"),
        "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    for m in ["a", "b"] {
        std::fs::create_dir_all(base.join(m).join("vox")).unwrap();
        std::fs::create_dir_all(base.join(m).join("src")).unwrap();
        std::fs::write(base.join(m).join("src/lib.rs"), "").unwrap();
        std::fs::write(
            base.join(m).join("Cargo.toml"),
            format!("[package]\nname = \"{m}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        )
        .unwrap();
    }
    let x = base.join("b/vox/x.vox");
    std::fs::write(&x, MESSY).unwrap();
    symlink("../../b/vox/x.vox", base.join("a/vox/linked.vox")).unwrap();

    let r = vox(&base, &["-p", "a", "fmt"]);
    assert_refused(&r, "a/vox/linked.vox leads outside the package");
    assert_eq!(read(&x), MESSY);

    let r = vox(&base, &["--json", "fmt"]);
    r.assert_code(0);
    let env = only_envelope(&r, "fmt");
    assert!(env.ok, "{env:?}");
    assert_eq!(env.changed_files.as_ref().map(Vec::len), Some(2), "{env:?}");
    assert_eq!(read(&x), TIDY);
    assert!(std::fs::symlink_metadata(base.join("a/vox/linked.vox"))
        .unwrap()
        .file_type()
        .is_symlink());

    std::fs::write(&x, BROKEN).unwrap();
    vox(&base, &["fix"]).assert_code(0);
    assert_eq!(read(&x), FIXED);
}
