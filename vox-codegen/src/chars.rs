//! Characters worth naming in a diagnostic: invisible ones (a zero-width
//! space, a byte order mark in mid-file, a bidirectional control), unusual
//! spaces (a no-break space), and look-alikes of the ASCII characters Vox
//! is written in (smart quotes, dashes, fullwidth forms, Cyrillic and Greek
//! letters). Quoting such a character shows the reader nothing or the
//! wrong thing, so diagnostics name it by code point and name instead and,
//! where there is one, say which ASCII character was probably meant
//! (docs/diagnostics.md, "Invisible and look-alike characters").

/// What is known about a notable character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharInfo {
    /// The Unicode name (for fullwidth forms, a description).
    pub name: String,
    /// What to write instead: the ASCII look-alike, or "" to remove the
    /// character (it is invisible); `None` when there is no single answer.
    pub instead: Option<&'static str>,
    /// Shows nothing (or only space) in an editor.
    pub invisible: bool,
}

/// `U+00A0` for `'\u{a0}'`.
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

/// `U+201C LEFT DOUBLE QUOTATION MARK` for a notable character, `U+00E9`
/// for any other non-ASCII one, and the character itself for ASCII.
pub fn describe(c: char) -> String {
    match notable(c) {
        Some(info) => format!("{} {}", code_point(c), info.name),
        None if c.is_ascii() && !c.is_ascii_control() => c.to_string(),
        None => code_point(c),
    }
}

/// A bidirectional formatting control: what makes text display in an order
/// other than the one it is stored in (the "Trojan Source" characters).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// The embeddings, overrides and isolates that reorder how the text after
/// them is displayed (not the marks U+200E/U+200F/U+061C, which only
/// change how neutral characters around them are grouped): written as
/// themselves in a string or comment, they can make code read differently
/// from how it runs. rustc refuses them in literals and comments too.
pub fn is_text_flow_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The name and the likely intended character of `c`, if it is one worth
/// naming; `None` for ordinary characters (ASCII, letters of any script
/// that resemble no ASCII letter, symbols).
pub fn notable(c: char) -> Option<CharInfo> {
    let named = |name: &str, instead: Option<&'static str>, invisible: bool| {
        Some(CharInfo {
            name: name.to_string(),
            instead,
            invisible,
        })
    };
    let space = |name: &str| named(name, Some(" "), true);
    let hidden = |name: &str| named(name, Some(""), true);
    let looks = |name: &str, ascii: &'static str| named(name, Some(ascii), false);
    match c {
        // Spaces other than U+0020.
        '\u{00A0}' => space("NO-BREAK SPACE"),
        '\u{1680}' => space("OGHAM SPACE MARK"),
        '\u{2000}' => space("EN QUAD"),
        '\u{2001}' => space("EM QUAD"),
        '\u{2002}' => space("EN SPACE"),
        '\u{2003}' => space("EM SPACE"),
        '\u{2004}' => space("THREE-PER-EM SPACE"),
        '\u{2005}' => space("FOUR-PER-EM SPACE"),
        '\u{2006}' => space("SIX-PER-EM SPACE"),
        '\u{2007}' => space("FIGURE SPACE"),
        '\u{2008}' => space("PUNCTUATION SPACE"),
        '\u{2009}' => space("THIN SPACE"),
        '\u{200A}' => space("HAIR SPACE"),
        '\u{202F}' => space("NARROW NO-BREAK SPACE"),
        '\u{205F}' => space("MEDIUM MATHEMATICAL SPACE"),
        '\u{3000}' => space("IDEOGRAPHIC SPACE"),
        '\u{000B}' => space("LINE TABULATION"),
        '\u{000C}' => space("FORM FEED"),
        // Line breaks other than `\n`.
        '\u{0085}' => named("NEXT LINE", None, true),
        '\u{2028}' => named("LINE SEPARATOR", None, true),
        '\u{2029}' => named("PARAGRAPH SEPARATOR", None, true),
        // Zero-width and other invisible characters.
        '\u{FEFF}' => hidden("BYTE ORDER MARK (ZERO WIDTH NO-BREAK SPACE)"),
        '\u{200B}' => hidden("ZERO WIDTH SPACE"),
        '\u{200C}' => hidden("ZERO WIDTH NON-JOINER"),
        '\u{200D}' => hidden("ZERO WIDTH JOINER"),
        '\u{2060}' => hidden("WORD JOINER"),
        '\u{2061}' => hidden("FUNCTION APPLICATION"),
        '\u{2062}' => hidden("INVISIBLE TIMES"),
        '\u{2063}' => hidden("INVISIBLE SEPARATOR"),
        '\u{2064}' => hidden("INVISIBLE PLUS"),
        '\u{00AD}' => hidden("SOFT HYPHEN"),
        '\u{034F}' => hidden("COMBINING GRAPHEME JOINER"),
        '\u{180E}' => hidden("MONGOLIAN VOWEL SEPARATOR"),
        '\u{115F}' => hidden("HANGUL CHOSEONG FILLER"),
        '\u{1160}' => hidden("HANGUL JUNGSEONG FILLER"),
        '\u{3164}' => hidden("HANGUL FILLER"),
        '\u{FFA0}' => hidden("HALFWIDTH HANGUL FILLER"),
        '\u{FE00}'..='\u{FE0F}' => hidden(&format!("VARIATION SELECTOR-{}", c as u32 - 0xFE00 + 1)),
        '\u{E0000}'..='\u{E007F}' => hidden("TAG CHARACTER"),
        // Bidirectional controls.
        '\u{061C}' => hidden("ARABIC LETTER MARK"),
        '\u{200E}' => hidden("LEFT-TO-RIGHT MARK"),
        '\u{200F}' => hidden("RIGHT-TO-LEFT MARK"),
        '\u{202A}' => hidden("LEFT-TO-RIGHT EMBEDDING"),
        '\u{202B}' => hidden("RIGHT-TO-LEFT EMBEDDING"),
        '\u{202C}' => hidden("POP DIRECTIONAL FORMATTING"),
        '\u{202D}' => hidden("LEFT-TO-RIGHT OVERRIDE"),
        '\u{202E}' => hidden("RIGHT-TO-LEFT OVERRIDE"),
        '\u{2066}' => hidden("LEFT-TO-RIGHT ISOLATE"),
        '\u{2067}' => hidden("RIGHT-TO-LEFT ISOLATE"),
        '\u{2068}' => hidden("FIRST STRONG ISOLATE"),
        '\u{2069}' => hidden("POP DIRECTIONAL ISOLATE"),
        // Quotation marks (Vox strings use `"`).
        '\u{2018}' => looks("LEFT SINGLE QUOTATION MARK", "\""),
        '\u{2019}' => looks("RIGHT SINGLE QUOTATION MARK", "\""),
        '\u{201A}' => looks("SINGLE LOW-9 QUOTATION MARK", "\""),
        '\u{201B}' => looks("SINGLE HIGH-REVERSED-9 QUOTATION MARK", "\""),
        '\u{201C}' => looks("LEFT DOUBLE QUOTATION MARK", "\""),
        '\u{201D}' => looks("RIGHT DOUBLE QUOTATION MARK", "\""),
        '\u{201E}' => looks("DOUBLE LOW-9 QUOTATION MARK", "\""),
        '\u{201F}' => looks("DOUBLE HIGH-REVERSED-9 QUOTATION MARK", "\""),
        '\u{00AB}' => looks("LEFT-POINTING DOUBLE ANGLE QUOTATION MARK", "\""),
        '\u{00BB}' => looks("RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK", "\""),
        '\u{2032}' => looks("PRIME", "\""),
        '\u{2033}' => looks("DOUBLE PRIME", "\""),
        '\u{00B4}' => looks("ACUTE ACCENT", "\""),
        '\u{02BC}' => looks("MODIFIER LETTER APOSTROPHE", "\""),
        // Dashes and operators.
        '\u{2010}' => looks("HYPHEN", "-"),
        '\u{2011}' => looks("NON-BREAKING HYPHEN", "-"),
        '\u{2012}' => looks("FIGURE DASH", "-"),
        '\u{2013}' => looks("EN DASH", "-"),
        '\u{2014}' => looks("EM DASH", "-"),
        '\u{2015}' => looks("HORIZONTAL BAR", "-"),
        '\u{2212}' => looks("MINUS SIGN", "-"),
        '\u{FE63}' => looks("SMALL HYPHEN-MINUS", "-"),
        '\u{00D7}' => looks("MULTIPLICATION SIGN", "*"),
        '\u{2217}' => looks("ASTERISK OPERATOR", "*"),
        '\u{00F7}' => looks("DIVISION SIGN", "/"),
        '\u{2215}' => looks("DIVISION SLASH", "/"),
        '\u{2044}' => looks("FRACTION SLASH", "/"),
        '\u{2264}' => looks("LESS-THAN OR EQUAL TO", "<="),
        '\u{2265}' => looks("GREATER-THAN OR EQUAL TO", ">="),
        '\u{2260}' => looks("NOT EQUAL TO", "!="),
        '\u{21D2}' => looks("RIGHTWARDS DOUBLE ARROW", "=>"),
        '\u{037E}' => looks("GREEK QUESTION MARK", ";"),
        '\u{2024}' => looks("ONE DOT LEADER", "."),
        '\u{00B7}' => looks("MIDDLE DOT", "."),
        '\u{3001}' => looks("IDEOGRAPHIC COMMA", ","),
        '\u{3002}' => looks("IDEOGRAPHIC FULL STOP", "."),
        '\u{FF01}'..='\u{FF5E}' => {
            let ascii = char::from_u32(c as u32 - 0xFEE0)?;
            Some(CharInfo {
                name: format!("FULLWIDTH `{ascii}`"),
                instead: ascii_str(ascii),
                invisible: false,
            })
        }
        _ => letter_lookalike(c),
    }
}

/// `c` as a `&'static str` when it is printable ASCII.
fn ascii_str(c: char) -> Option<&'static str> {
    const PRINTABLE: &str = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
    let i = PRINTABLE.find(c)?;
    PRINTABLE.get(i..i + 1)
}

/// Cyrillic and Greek letters drawn like a Latin one.
fn letter_lookalike(c: char) -> Option<CharInfo> {
    let (name, latin) = match c {
        '\u{0430}' => ("CYRILLIC SMALL LETTER A", 'a'),
        '\u{0435}' => ("CYRILLIC SMALL LETTER IE", 'e'),
        '\u{043E}' => ("CYRILLIC SMALL LETTER O", 'o'),
        '\u{0440}' => ("CYRILLIC SMALL LETTER ER", 'p'),
        '\u{0441}' => ("CYRILLIC SMALL LETTER ES", 'c'),
        '\u{0443}' => ("CYRILLIC SMALL LETTER U", 'y'),
        '\u{0445}' => ("CYRILLIC SMALL LETTER HA", 'x'),
        '\u{0455}' => ("CYRILLIC SMALL LETTER DZE", 's'),
        '\u{0456}' => ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", 'i'),
        '\u{0458}' => ("CYRILLIC SMALL LETTER JE", 'j'),
        '\u{0410}' => ("CYRILLIC CAPITAL LETTER A", 'A'),
        '\u{0412}' => ("CYRILLIC CAPITAL LETTER VE", 'B'),
        '\u{0415}' => ("CYRILLIC CAPITAL LETTER IE", 'E'),
        '\u{041A}' => ("CYRILLIC CAPITAL LETTER KA", 'K'),
        '\u{041C}' => ("CYRILLIC CAPITAL LETTER EM", 'M'),
        '\u{041D}' => ("CYRILLIC CAPITAL LETTER EN", 'H'),
        '\u{041E}' => ("CYRILLIC CAPITAL LETTER O", 'O'),
        '\u{0420}' => ("CYRILLIC CAPITAL LETTER ER", 'P'),
        '\u{0421}' => ("CYRILLIC CAPITAL LETTER ES", 'C'),
        '\u{0422}' => ("CYRILLIC CAPITAL LETTER TE", 'T'),
        '\u{0425}' => ("CYRILLIC CAPITAL LETTER HA", 'X'),
        '\u{03B1}' => ("GREEK SMALL LETTER ALPHA", 'a'),
        '\u{03BD}' => ("GREEK SMALL LETTER NU", 'v'),
        '\u{03BF}' => ("GREEK SMALL LETTER OMICRON", 'o'),
        '\u{0391}' => ("GREEK CAPITAL LETTER ALPHA", 'A'),
        '\u{0392}' => ("GREEK CAPITAL LETTER BETA", 'B'),
        '\u{0395}' => ("GREEK CAPITAL LETTER EPSILON", 'E'),
        '\u{0396}' => ("GREEK CAPITAL LETTER ZETA", 'Z'),
        '\u{0397}' => ("GREEK CAPITAL LETTER ETA", 'H'),
        '\u{0399}' => ("GREEK CAPITAL LETTER IOTA", 'I'),
        '\u{039A}' => ("GREEK CAPITAL LETTER KAPPA", 'K'),
        '\u{039C}' => ("GREEK CAPITAL LETTER MU", 'M'),
        '\u{039D}' => ("GREEK CAPITAL LETTER NU", 'N'),
        '\u{039F}' => ("GREEK CAPITAL LETTER OMICRON", 'O'),
        '\u{03A1}' => ("GREEK CAPITAL LETTER RHO", 'P'),
        '\u{03A4}' => ("GREEK CAPITAL LETTER TAU", 'T'),
        '\u{03A5}' => ("GREEK CAPITAL LETTER UPSILON", 'Y'),
        '\u{03A7}' => ("GREEK CAPITAL LETTER CHI", 'X'),
        _ => return None,
    };
    Some(CharInfo {
        name: name.to_string(),
        instead: ascii_str(latin),
        invisible: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suggestion_is_ascii_and_every_invisible_one_is_a_space_or_nothing() {
        for cp in 0..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let Some(info) = notable(c) else { continue };
            assert!(!c.is_ascii() || c.is_ascii_control(), "{cp:04X}");
            assert!(!info.name.is_empty(), "{cp:04X}");
            if let Some(s) = info.instead {
                assert!(s.is_ascii(), "{cp:04X}: {s:?}");
                if info.invisible {
                    assert!(s.is_empty() || s == " ", "{cp:04X}: {s:?}");
                }
            }
        }
        // Every Unicode whitespace character but the ASCII ones is named.
        for cp in 0x80..=0x10FFFF_u32 {
            if let Some(c) = char::from_u32(cp).filter(|c| c.is_whitespace()) {
                assert!(notable(c).is_some_and(|i| i.invisible), "{cp:04X}");
            }
        }
        // And every bidi control.
        for cp in 0..=0x10FFFF_u32 {
            if let Some(c) = char::from_u32(cp).filter(|&c| is_bidi_control(c)) {
                assert_eq!(notable(c).and_then(|i| i.instead), Some(""), "{cp:04X}");
            }
        }
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            describe('\u{FEFF}'),
            "U+FEFF BYTE ORDER MARK (ZERO WIDTH NO-BREAK SPACE)"
        );
        assert_eq!(describe('\u{201C}'), "U+201C LEFT DOUBLE QUOTATION MARK");
        assert_eq!(describe('\u{FF1B}'), "U+FF1B FULLWIDTH `;`");
        assert_eq!(describe('é'), "U+00E9");
        assert_eq!(describe('\u{1}'), "U+0001");
        assert_eq!(describe('$'), "$");
        assert_eq!(notable('\u{0430}').and_then(|i| i.instead), Some("a"));
    }
}
