//! Reads `[package.metadata.vox]` from `Cargo.toml` text.
//!
//! The build script must stay cheap, so instead of a TOML parser (or running
//! `cargo metadata`) this reads just the one setting it needs. It accepts the
//! table form documented in the README:
//!
//! ```toml
//! [package.metadata.vox]
//! sources = ["vox", "prompts"]
//! ```
//!
//! and says so clearly when the setting is written in a form it does not
//! read, rather than silently ignoring it. `cargo vox check` reads the same
//! setting through `cargo metadata`; a test keeps the two in agreement.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("Cargo.toml line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error(
        "Cargo.toml line {line}: vox-build reads `[package.metadata.vox]` only as a table; write it as\n[package.metadata.vox]\nsources = [\"vox\"]"
    )]
    UnsupportedForm { line: usize },
}

/// The `sources` list, if the manifest sets one.
pub fn sources_setting(toml: &str) -> Result<Option<Vec<String>>, ManifestError> {
    let mut in_table = false;
    let mut lines = toml.lines().enumerate().peekable();
    while let Some((i, raw)) = lines.next() {
        let line = strip_comment(raw).trim().to_string();
        if line.starts_with('[') {
            let header: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            in_table = header == "[package.metadata.vox]";
            if header == "[package.metadata]" {
                // `vox = { … }` inside [package.metadata] is the inline form.
                for (j, l) in lines.clone() {
                    let l = strip_comment(l).trim().to_string();
                    if l.starts_with('[') {
                        break;
                    }
                    if l.starts_with("vox") && l[3..].trim_start().starts_with(['=', '.']) {
                        return Err(ManifestError::UnsupportedForm { line: j + 1 });
                    }
                }
            }
            continue;
        }
        if line.starts_with("metadata.vox") || line.starts_with("package.metadata.vox") {
            return Err(ManifestError::UnsupportedForm { line: i + 1 });
        }
        if !in_table {
            continue;
        }
        let Some(rest) = line.strip_prefix("sources") else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(value) = rest.strip_prefix('=') else {
            continue;
        };
        // Gather the array, which may span lines.
        let mut text = value.trim().to_string();
        let start_line = i + 1;
        while !array_closed(&text) {
            match lines.next() {
                Some((_, more)) => {
                    text.push('\n');
                    text.push_str(strip_comment(more));
                }
                None => {
                    return Err(ManifestError::Syntax {
                        line: start_line,
                        message: "unterminated `sources = [` list".into(),
                    })
                }
            }
        }
        return parse_string_array(&text)
            .map(Some)
            .map_err(|message| ManifestError::Syntax {
                line: start_line,
                message,
            });
    }
    Ok(None)
}

/// Byte index of the first of `targets` that is not inside a TOML string.
fn find_unquoted(text: &str, targets: &[char]) -> Option<usize> {
    let mut in_str: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match in_str {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    in_str = None;
                }
            }
            None if c == '"' || c == '\'' => in_str = Some(c),
            None if targets.contains(&c) => return Some(i),
            None => {}
        }
    }
    None
}

/// Drops a `#` comment that is not inside a string.
fn strip_comment(line: &str) -> &str {
    find_unquoted(line, &['#']).map_or(line, |i| &line[..i])
}

fn array_closed(text: &str) -> bool {
    find_unquoted(text, &[']']).is_some()
}

fn parse_string_array(text: &str) -> Result<Vec<String>, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| {
            "`sources` must be a list of strings, e.g. sources = [\"vox\"]".to_string()
        })?;
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let Some(q) = chars.next() else { break };
        if q != '"' && q != '\'' {
            return Err(format!("`sources` entries must be strings, found `{q}`"));
        }
        let mut s = String::new();
        loop {
            match chars.next() {
                None => return Err("unterminated string in `sources`".into()),
                Some(c) if c == q => break,
                Some('\\') if q == '"' => match chars.next() {
                    Some('"') => s.push('"'),
                    Some('\\') => s.push('\\'),
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    other => {
                        return Err(format!(
                            "unsupported escape `\\{}` in `sources`",
                            other.unwrap_or(' ')
                        ))
                    }
                },
                Some(c) => s.push(c),
            }
        }
        out.push(s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_table_form() {
        let toml = "[package]\nname = \"x\"\n\n[package.metadata.vox] # comment\nsources = [\"vox\", 'more/dir', # c\n  \"a#b\"]\n\n[dependencies]\nsources = 1\n";
        assert_eq!(
            sources_setting(toml),
            Ok(Some(vec!["vox".into(), "more/dir".into(), "a#b".into()]))
        );
    }

    #[test]
    fn absent_setting_is_none() {
        assert_eq!(
            sources_setting("[package]\nname = \"x\"\n[package.metadata.vox]\n"),
            Ok(None)
        );
        assert_eq!(sources_setting(""), Ok(None));
    }

    #[test]
    fn unsupported_forms_are_errors_not_silence() {
        assert!(matches!(
            sources_setting("[package.metadata]\nvox = { sources = [\"a\"] }\n"),
            Err(ManifestError::UnsupportedForm { line: 2 })
        ));
        assert!(matches!(
            sources_setting("[package]\nmetadata.vox.sources = [\"a\"]\n"),
            Err(ManifestError::UnsupportedForm { .. })
        ));
        assert!(sources_setting("[package.metadata.vox]\nsources = \"vox\"\n").is_err());
        assert!(sources_setting("[package.metadata.vox]\nsources = [\"vox\"\n").is_err());
        assert!(sources_setting("[package.metadata.vox]\nsources = [1]\n").is_err());
    }
}
