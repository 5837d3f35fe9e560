//! `docs/diagnostics.md` documents every stable diagnostic code, one line each.
//! Regenerate with `VOX_BLESS=1 cargo test -p vox-codegen --test it docs_codes`.

use vox_codegen::Code;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/diagnostics.md");

fn expected() -> String {
    let mut out = String::from(
        "# Vox diagnostic codes\n\n\
         Every diagnostic the Vox frontend reports carries one of these stable codes\n\
         (in `cargo vox check --json` envelopes as `error_code`). Codes are never\n\
         renamed or reused; new ones are only added. Each code has one severity,\n\
         declared beside it in `vox-codegen/src/diagnostic.rs`; this file is\n\
         generated from that table.\n\n\
         | code | severity | reported when |\n|---|---|---|\n",
    );
    for c in Code::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.as_str(),
            c.severity().as_str(),
            c.description()
        ));
    }
    out.push_str(FIXES);
    out
}

/// The fixes section (applicability levels and what `cargo vox fix` does).
const FIXES: &str = include_str!("docs_fixes.md");

#[test]
fn docs_list_every_code() {
    let want = expected();
    if std::env::var_os("VOX_BLESS").is_some() {
        std::fs::write(DOC, &want).unwrap();
    }
    let have = std::fs::read_to_string(DOC).unwrap_or_default();
    assert_eq!(
        have, want,
        "docs/diagnostics.md is stale: rerun with VOX_BLESS=1"
    );
}
