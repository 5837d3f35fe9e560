//! Script input: the Vox builtins `args()`, `env(name)` and
//! `read_text(path)` (docs/language.md, "Script input").

/// Vox `args()`: the program's command-line arguments, without the
/// program's own name (`cargo vox run FILE.vox -- a b` gives `["a", "b"]`).
/// An argument that is not UTF-8 is read with U+FFFD in place of its bad
/// bytes.
pub fn args() -> Vec<String> {
    std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Vox `env(name)`: the environment variable's value, `None` when it is not
/// set (or is not UTF-8, or `name` is empty or holds `=` or a NUL, which no
/// variable's name can).
pub fn env(name: &str) -> Option<String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return None;
    }
    std::env::var(name).ok()
}

/// Vox `read_text(path)`: the file's text, or `Error("cannot read PATH:
/// REASON")` (missing, unreadable, a directory, not UTF-8).
pub fn read_text(path: &str) -> Result<String, String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| format!("cannot read {path}: the file is not UTF-8 text")),
        Err(e) => Err(format!("cannot read {path}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_of_names_no_variable_can_have_is_none() {
        assert_eq!(env(""), None);
        assert_eq!(env("A=B"), None);
        assert_eq!(env("A\0B"), None);
    }

    #[test]
    fn read_text_says_which_file_and_why() {
        let dir = std::env::temp_dir().join(format!("vox-read-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.txt");
        std::fs::write(&ok, "héllo\n").unwrap();
        assert_eq!(read_text(ok.to_str().unwrap()), Ok("héllo\n".to_string()));
        let bad = dir.join("bad.bin");
        std::fs::write(&bad, [0xff, 0xfe]).unwrap();
        let e = read_text(bad.to_str().unwrap()).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        let missing = dir.join("missing.txt");
        let e = read_text(missing.to_str().unwrap()).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read {}", missing.display())),
            "{e}"
        );
        let e = read_text(dir.to_str().unwrap()).unwrap_err();
        assert!(e.starts_with("cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
