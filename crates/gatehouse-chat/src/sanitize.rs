//! Making untrusted text safe to show an approver: what they read must be what would run.
//!
//! Control characters (so ANSI escapes), bidi overrides and invisible characters are replaced by
//! visible markers, because each can make a command look different from what it is (a
//! right-to-left override can reverse `rm -rf ~ #` into something harmless-looking). Code fences
//! are chosen longer than any backtick run, so the text cannot close its own block.
//!
//! Which characters count as hidden is one definition, [`is_hidden`], taken from the Unicode
//! data ICU4X compiles in (the same data the policy core judges paths with): every control
//! (`Cc`), format (`Cf`) and default-ignorable character (`Default_Ignorable_Code_Point`: tags,
//! variation selectors, Hangul fillers, the soft hyphen…), line and paragraph separators, and
//! every space but the ASCII one. Chat cards and the CLI call it; the Control UI carries a
//! generated copy (`ui/js/hidden.js` in the gateway) that a test holds equal to
//! [`hidden_ranges`].

use std::sync::OnceLock;

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
use icu_properties::{CodePointMapData, CodePointSetData};

/// Replaces every character that could hide or disguise text with a visible marker; newlines and
/// tabs stay, since multi-line commands are legitimate.
pub fn make_visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    out
}

/// Like [`make_visible`], additionally limited to `max_chars` output characters; returns the text
/// and how many input characters were left out. Markers are never cut in half.
pub fn make_visible_bounded(text: &str, max_chars: usize) -> (String, usize) {
    let mut out = String::new();
    let mut shown = 0;
    let mut piece = String::new();
    for (index, c) in text.chars().enumerate() {
        piece.clear();
        push_visible(&mut piece, c);
        let width = piece.chars().count();
        if shown + width > max_chars {
            return (out, text.chars().count() - index);
        }
        out.push_str(&piece);
        shown += width;
    }
    (out, 0)
}

/// Shows a short, untrusted value on one line (an echoed word, a path, an id): visible markers,
/// newlines shown as `\n`, at most `max_chars` characters with an ellipsis.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let flattened = make_visible(text).replace('\n', "\\n").replace('\t', "\\t");
    clip(&flattened, max_chars)
}

/// Cuts already-safe text to a platform's length limit, counted in characters, ending a cut
/// with an ellipsis; every adapter clips titles and replies the same way, so it lives here.
pub fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let Some(kept) = max_chars.checked_sub(1) else {
        return String::new();
    };
    let mut cut: String = text.chars().take(kept).collect();
    cut.push('…');
    cut
}

/// A Markdown code fence that `text` cannot close: three backticks, or one more than the longest
/// backtick run in it.
pub fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

/// Replaces backticks with a look-alike (U+02CB), for platforms whose code blocks only know the
/// three-backtick fence.
pub fn neutralize_backticks(text: &str) -> String {
    text.replace('`', "\u{2CB}")
}

/// Whether `c` hides, reorders or disguises text: the one definition every surface marks.
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || matches!(
            CodePointMapData::<GeneralCategory>::new().get(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::SpaceSeparator
        )
}

/// [`is_hidden`] as inclusive ranges of code points, in order: what the Control UI's copy of
/// the definition must equal.
pub fn hidden_ranges() -> &'static [(u32, u32)] {
    static RANGES: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    RANGES.get_or_init(|| {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            if !is_hidden(c) {
                continue;
            }
            let code = c as u32;
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == code => *end = code,
                _ => ranges.push((code, code)),
            }
        }
        ranges
    })
}

fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' | '\t' => out.push(c),
        '\r' => out.push_str("\\r"),
        '\u{1b}' => out.push_str("\\e"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if ('\u{80}'..='\u{9f}').contains(&c) => {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
        c if is_hidden(c) => {
            out.push_str(&format!("[U+{:04X} {}]", c as u32, hidden_name(c)));
        }
        c => out.push(c),
    }
}

/// The name a hidden character's marker carries: a short name for the familiar ones, else what
/// kind of character it is.
fn hidden_name(c: char) -> &'static str {
    if let Some(name) = familiar_name(c) {
        return name;
    }
    match CodePointMapData::<GeneralCategory>::new().get(c) {
        GeneralCategory::Format => "FORMAT",
        GeneralCategory::SpaceSeparator => "SPACE",
        _ => "IGNORABLE",
    }
}

/// Names the familiar characters that render as nothing, look like a space or reorder text.
fn familiar_name(c: char) -> Option<&'static str> {
    let name = match c {
        '\u{00A0}' => "NBSP",
        '\u{00AD}' => "SHY",
        '\u{034F}' => "CGJ",
        '\u{061C}' => "ALM",
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => "FILLER",
        '\u{180E}' => "MVS",
        '\u{200B}' => "ZWSP",
        '\u{200C}' => "ZWNJ",
        '\u{200D}' => "ZWJ",
        '\u{200E}' => "LRM",
        '\u{200F}' => "RLM",
        '\u{2028}' => "LSEP",
        '\u{2029}' => "PSEP",
        '\u{202A}' => "LRE",
        '\u{202B}' => "RLE",
        '\u{202C}' => "PDF",
        '\u{202D}' => "LRO",
        '\u{202E}' => "RLO",
        '\u{2060}' => "WJ",
        '\u{2061}'..='\u{2064}' => "INVISIBLE",
        '\u{2066}' => "LRI",
        '\u{2067}' => "RLI",
        '\u{2068}' => "FSI",
        '\u{2069}' => "PDI",
        '\u{206A}'..='\u{206F}' => "FORMAT",
        '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' => "VS",
        '\u{FEFF}' => "BOM",
        '\u{FFF9}'..='\u{FFFB}' => "ANNOTATION",
        '\u{E0000}'..='\u{E007F}' => "TAG",
        _ => return None,
    };
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_to_the_limit_in_characters_with_an_ellipsis() {
        assert_eq!(clip("short", 200), "short");
        let cut = clip(&"é".repeat(250), 200);
        assert_eq!(cut.chars().count(), 200);
        assert!(cut.ends_with('…'));
        assert_eq!(clip("abc", 1), "…");
        assert_eq!(clip("abc", 0), "");
    }

    #[test]
    fn fence_outgrows_backtick_runs() {
        assert_eq!(fence_for("ls"), "```");
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("`````"), "``````");
    }

    #[test]
    fn marks_every_format_and_ignorable_character_with_its_kind() {
        for (c, marker) in [
            ('\u{202E}', "[U+202E RLO]"),
            ('\u{00A0}', "[U+00A0 NBSP]"),
            ('\u{2007}', "[U+2007 SPACE]"),
            ('\u{1D173}', "[U+1D173 FORMAT]"),
            ('\u{13430}', "[U+13430 FORMAT]"),
            ('\u{2065}', "[U+2065 IGNORABLE]"),
            ('\u{180B}', "[U+180B IGNORABLE]"),
            ('\u{1BCA0}', "[U+1BCA0 FORMAT]"),
            ('\u{E0FFF}', "[U+E0FFF IGNORABLE]"),
        ] {
            assert_eq!(
                make_visible(&format!("a{c}b")),
                format!("a{marker}b"),
                "{c:?}"
            );
        }
        assert_eq!(make_visible("plain text, été"), "plain text, été");
    }

    #[test]
    fn bounded_never_splits_a_marker() {
        let (text, left) = make_visible_bounded("ab\u{1b}cd", 3);
        assert_eq!(text, "ab");
        assert_eq!(left, 3);
    }
}
