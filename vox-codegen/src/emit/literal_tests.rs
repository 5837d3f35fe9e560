//! The Rust string literals the emitter writes (strings, doc comments) are
//! accepted by rustc whatever characters the Vox text holds: a flow control
//! such as U+202E written as itself in a Rust literal is a hard error
//! (`text_direction_codepoint_in_literal`), so a Vox string holding one —
//! written as the escape `\u{202E}` — must not break the user's build.

use crate::emit::rust_str;

#[test]
fn rustc_accepts_every_emitted_literal() {
    let mut texts: Vec<String> = (0x80..=0x3000_u32)
        .chain(0xFE00..=0xFFFF)
        .chain(0xE0000..=0xE007F)
        .filter_map(char::from_u32)
        .filter(|&c| crate::chars::notable(c).is_some() || c.is_control())
        .map(|c| format!("a{c}b"))
        .collect();
    texts.push("\u{202E}\u{2066}admin\u{2069}\u{202C}".to_string());
    texts.push("\0\u{1b}[2J\u{7f}".to_string());
    let mut src = String::from("#![deny(warnings)]\n");
    for (i, t) in texts.iter().enumerate() {
        src.push_str(&format!(
            "#[doc = {}]\npub const S{i}: &str = {};\n",
            rust_str(t),
            rust_str(t)
        ));
    }
    let dir = std::env::temp_dir().join(format!("vox-rust-literals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lits.rs");
    std::fs::write(&file, &src).unwrap();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .args([
            "--crate-type=lib",
            "--emit=metadata",
            "--edition=2021",
            "--out-dir",
        ])
        .arg(&dir)
        .arg(&file)
        .output()
        .expect("run rustc");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "rustc refused an emitted literal:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
