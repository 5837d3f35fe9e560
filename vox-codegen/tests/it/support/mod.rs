//! Finding the fixtures' `.vox` files, for the test binaries that read them.

#![allow(dead_code)] // each test binary uses a different part of it

use std::path::{Path, PathBuf};

/// The repository's `fixtures/` directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Appends `path` if it is a file, else every `.vox` file below it,
/// recursively and sorted; a path that does not exist adds nothing.
pub fn vox_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        return out.push(path.to_path_buf());
    }
    if !path.exists() {
        return;
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            vox_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "vox") {
            out.push(p);
        }
    }
}
