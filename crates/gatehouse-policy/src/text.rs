//! Characters that must never reach a decision, and the folded form names are matched in.
//!
//! A path or URL is shown to a person (approval cards) and matched against lists (denied
//! files, globs, domains). Control characters, bidi overrides and other invisible format
//! characters make the text a person reads differ from the bytes a program opens, so they are
//! refused outright. Compatibility forms (fullwidth `．ｅｎｖ`, a no-break space) are not
//! refused, but folded before a *deny* list is consulted, so they cannot dodge it.

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;
use icu_properties::CodePointMapData;
use icu_properties::props::GeneralCategory;

/// The first character a path or URL may not contain, with its byte offset.
///
/// Refused: control characters (`Cc`, NUL and DEL included), format characters (`Cf`: bidi
/// embeddings, overrides and isolates, zero-width joiners, the byte-order mark), line and
/// paragraph separators (`Zl`, `Zp`), and unassigned code points (`Cn`, which include the
/// noncharacters), whose meaning a later Unicode version may change.
pub(crate) fn first_unsafe_char(text: &str) -> Option<(usize, char)> {
    let categories = CodePointMapData::<GeneralCategory>::new();
    text.char_indices().find(|&(_, c)| {
        if c.is_ascii() {
            return c.is_ascii_control();
        }
        matches!(
            categories.get(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::Unassigned
        )
    })
}

/// The form deny lists are matched in: NFKC, every Unicode space as an ASCII space, lower
/// case. Folding only ever makes more names equal, so it can widen a deny list's reach but
/// never an allow list's; allow lists are matched against the exact text.
pub(crate) fn fold(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(text.to_ascii_lowercase());
        }
        return Cow::Borrowed(text);
    }
    let normalized = ComposingNormalizerBorrowed::new_nfkc().normalize(text);
    let categories = CodePointMapData::<GeneralCategory>::new();
    let spaced: String = normalized
        .chars()
        .map(|c| {
            if categories.get(c) == GeneralCategory::SpaceSeparator {
                ' '
            } else {
                c
            }
        })
        .collect();
    Cow::Owned(spaced.to_lowercase())
}

/// A character for messages: printable ones as themselves, others as `U+XXXX`.
pub(crate) fn describe_char(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denies_controls_bidi_and_format_characters() {
        for (text, offset) in [
            ("a\0b", 1),
            ("a\nb", 1),
            ("a\u{7f}", 1),
            ("x\u{202e}gpj.exe", 1),
            ("\u{2066}a", 0),
            ("a\u{200b}b", 1),
            ("a\u{200d}b", 1),
            ("\u{feff}a", 0),
            ("a\u{2028}", 1),
            ("a\u{85}", 1),
            ("a\u{e0001}", 1),
            ("a\u{ffff}", 1),
        ] {
            assert_eq!(
                first_unsafe_char(text).map(|(at, _)| at),
                Some(offset),
                "{text:?}"
            );
        }
    }

    #[test]
    fn allows_ordinary_text_in_any_script() {
        for text in [
            "src/main.rs",
            "café ☕/notes.md",
            "日本語/ファイル",
            "a b",
            "a\u{a0}b",
        ] {
            assert_eq!(first_unsafe_char(text), None, "{text:?}");
        }
    }

    #[test]
    fn folds_compatibility_forms_spaces_and_case() {
        assert_eq!(fold("．ＥＮＶ"), ".env");
        assert_eq!(fold(".env\u{a0}"), ".env ");
        assert_eq!(fold(".env\u{3000}x"), ".env x");
        assert_eq!(fold("\u{1680}"), " ");
        assert_eq!(fold("ID_RSA"), "id_rsa");
        assert_eq!(fold("ﬁle"), "file");
        assert!(matches!(fold("plain"), Cow::Borrowed("plain")));
    }
}
