//! Source collection and reading on trees nobody vetted: FIFOs, device
//! files, huge sparse files, symlink loops and files reached by several
//! paths (docs/language.md, "Source files").
//!
//! Each hostile case runs in a child process (this test binary, re-run on
//! that one test) with a deadline and, where the shell allows, an
//! address-space cap: a regression fails the test instead of hanging it or
//! exhausting the machine's memory.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vox_build::layout::{read_source, LayoutError, VoxFiles, MAX_SOURCE_BYTES};
use vox_build::{Builder, Error, SourceLayout};

const VALID: &str = "type Point {\n    x: int\n    y: int\n}\n\nfn norm(p: Point) to int {\n    return p.x + p.y\n}\n";

/// Set in the child that runs one test's body.
const CHILD: &str = "VOX_BUILD_HOSTILE_CHILD";
const LIMIT: Duration = Duration::from_secs(20);
/// `ulimit -v` for the child, KiB: 3 GiB.
const MEMORY_KIB: u64 = 3 * 1024 * 1024;

/// Runs `body` in a child process limited in time and memory (unix), or
/// directly (elsewhere, and in that child).
fn guarded(name: &str, body: impl FnOnce()) {
    if !cfg!(unix) || std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB} 2>/dev/null; exec \"$0\" \"$@\""
        ))
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the test binary");
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() && out.contains("1 passed") => {}
        Some(s) => panic!("`{name}` failed in its child ({s})\n{out}\n{err}"),
        None => panic!("`{name}` did not finish within {LIMIT:?}\n{out}\n{err}"),
    }
}

/// A fresh package root with `vox/m.vox` ([`VALID`]).
fn package(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("vox-build-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("vox")).unwrap();
    std::fs::write(root.join("vox/m.vox"), VALID).unwrap();
    root
}

fn compile(root: &Path) -> Result<vox_build::Output, Error> {
    Builder::new()
        .manifest_dir(root)
        .out_dir(root.join("out"))
        .quiet()
        .try_compile()
}

fn vox_files(root: &Path) -> Vec<PathBuf> {
    SourceLayout::new(root, None).unwrap().vox_files().unwrap()
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[cfg(unix)]
fn assert_not_regular(r: Result<impl std::fmt::Debug, Error>, want: &str) {
    match r {
        Err(Error::Layout(LayoutError::NotRegular { kind, .. })) => assert_eq!(kind, want),
        other => panic!("want a `not a regular file ({want})` error, got {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn fifo_named_like_a_source_is_refused_not_opened() {
    guarded("fifo_named_like_a_source_is_refused_not_opened", || {
        let root = package("fifo");
        let fifo = root.join("vox/x.vox");
        mkfifo(&fifo);
        assert_not_regular(compile(&root), "a FIFO");
        let err = read_source(&fifo).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read {}: not a regular file (a FIFO)",
                fifo.display()
            )
        );
        std::fs::remove_dir_all(&root).unwrap();
    });
}

#[cfg(unix)]
#[test]
fn symlink_to_dev_zero_is_refused_not_read() {
    guarded("symlink_to_dev_zero_is_refused_not_read", || {
        let root = package("zero");
        std::os::unix::fs::symlink("/dev/zero", root.join("vox/x.vox")).unwrap();
        assert_not_regular(compile(&root), "a character device");
        assert!(matches!(
            read_source(&root.join("vox/x.vox")),
            Err(LayoutError::NotRegular { .. })
        ));
        std::fs::remove_dir_all(&root).unwrap();
    });
}

#[test]
fn huge_sparse_file_is_refused_without_reading_it() {
    guarded("huge_sparse_file_is_refused_without_reading_it", || {
        let root = package("sparse");
        let big = root.join("vox/big.vox");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(2 << 30) // 2 GiB, sparse: no disk used
            .unwrap();
        match compile(&root) {
            Err(Error::Layout(LayoutError::TooLarge { len, .. })) => assert_eq!(len, 2 << 30),
            other => panic!("want a too-large error, got {other:?}"),
        }
        let message = read_source(&big).unwrap_err().to_string();
        assert!(message.contains("8 MiB"), "{message}");
        std::fs::remove_dir_all(&root).unwrap();
    });
}

#[test]
fn size_cap_is_exact() {
    let root = package("cap");
    let f = root.join("vox/edge.vox");
    std::fs::File::create(&f)
        .unwrap()
        .set_len(MAX_SOURCE_BYTES)
        .unwrap();
    assert_eq!(read_source(&f).unwrap().len() as u64, MAX_SOURCE_BYTES);
    std::fs::File::create(&f)
        .unwrap()
        .set_len(MAX_SOURCE_BYTES + 1)
        .unwrap();
    assert!(matches!(
        read_source(&f),
        Err(LayoutError::TooLarge { len, .. }) if len == MAX_SOURCE_BYTES + 1
    ));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn directory_named_like_a_source_is_refused_when_named() {
    let root = package("dir");
    let err = read_source(&root.join("vox")).unwrap_err();
    assert!(
        matches!(
            err,
            LayoutError::NotRegular {
                kind: "a directory",
                ..
            }
        ),
        "{err:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[cfg(unix)]
#[test]
fn two_symlinks_to_the_directory_itself_are_walked_once() {
    guarded(
        "two_symlinks_to_the_directory_itself_are_walked_once",
        || {
            let root = package("dots");
            std::os::unix::fs::symlink(".", root.join("vox/a")).unwrap();
            std::os::unix::fs::symlink(".", root.join("vox/b")).unwrap();
            assert_eq!(vox_files(&root), vec![root.join("vox/m.vox")]);
            assert_eq!(compile(&root).unwrap().files, vec![root.join("vox/m.vox")]);
            std::fs::remove_dir_all(&root).unwrap();
        },
    );
}

#[cfg(unix)]
#[test]
fn self_symlink_gives_no_duplicate_definitions() {
    guarded("self_symlink_gives_no_duplicate_definitions", || {
        let root = package("self");
        std::os::unix::fs::symlink(".", root.join("vox/self")).unwrap();
        assert_eq!(vox_files(&root), vec![root.join("vox/m.vox")]);
        // No "defined more than once" errors: the module compiles.
        assert_eq!(compile(&root).unwrap().files, vec![root.join("vox/m.vox")]);
        std::fs::remove_dir_all(&root).unwrap();
    });
}

#[cfg(unix)]
#[test]
fn file_reached_by_two_paths_is_one_file() {
    guarded("file_reached_by_two_paths_is_one_file", || {
        let root = package("twice");
        // `a.vox -> m.vox`: the real path is kept though `a` sorts first.
        std::os::unix::fs::symlink("m.vox", root.join("vox/a.vox")).unwrap();
        std::fs::hard_link(root.join("vox/m.vox"), root.join("vox/z.vox")).unwrap();
        assert_eq!(vox_files(&root), vec![root.join("vox/m.vox")]);
        assert_eq!(compile(&root).unwrap().files, vec![root.join("vox/m.vox")]);
        // The same through explicit paths, in any order.
        let mut files = VoxFiles::new();
        files.add_file(&root.join("vox/a.vox"));
        files.add_dir(&root.join("vox")).unwrap();
        files.add_file(&root.join("vox/z.vox"));
        assert_eq!(files.into_sorted(), vec![root.join("vox/m.vox")]);
        std::fs::remove_dir_all(&root).unwrap();
    });
}

#[test]
fn file_and_directory_given_twice_are_listed_once() {
    let root = package("given-twice");
    let mut files = VoxFiles::new();
    files.add_file(&root.join("vox/m.vox"));
    files.add_dir(&root.join("vox")).unwrap();
    files.add_dir(&root.join("vox/../vox")).unwrap();
    files.add_file(&root.join("vox/../vox/m.vox"));
    assert_eq!(files.into_sorted(), vec![root.join("vox/m.vox")]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[cfg(unix)]
#[test]
fn dangling_symlink_is_listed_and_its_read_fails() {
    let root = package("dangling");
    std::os::unix::fs::symlink("nowhere.vox", root.join("vox/gone.vox")).unwrap();
    std::os::unix::fs::symlink("loop.vox", root.join("vox/loop.vox")).unwrap();
    assert_eq!(
        vox_files(&root),
        vec![
            root.join("vox/gone.vox"),
            root.join("vox/loop.vox"),
            root.join("vox/m.vox")
        ]
    );
    assert!(matches!(
        compile(&root),
        Err(Error::Layout(LayoutError::Io { .. }))
    ));
    std::fs::remove_dir_all(&root).unwrap();
}
