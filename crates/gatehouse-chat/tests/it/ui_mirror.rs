//! The Control UI marks hidden characters from a copy of the chat core's definition
//! (`gatehouse-gateway/ui/js/hidden.js`): this holds the copy equal to
//! [`hidden_ranges`], so the UI, the CLI and chat cards mark exactly the same characters.
//! `GATEHOUSE_REGENERATE=1 cargo test -p gatehouse-chat ui_mirror` rewrites the copy.

use std::path::PathBuf;

use gatehouse_chat::sanitize::hidden_ranges;

/// The JavaScript the definition generates.
fn generated() -> String {
    let mut out = String::from(
        "// Generated from gatehouse-chat's `sanitize::is_hidden` (Unicode's Cc, Cf, Zl, Zp, Zs but\n\
         // the ASCII space, and Default_Ignorable_Code_Point): the characters every surface marks.\n\
         // Do not edit: `GATEHOUSE_REGENERATE=1 cargo test -p gatehouse-chat ui_mirror` rewrites it,\n\
         // and that test fails while this copy and the definition differ.\n\
         const HIDDEN_RANGES = [\n",
    );
    for chunk in hidden_ranges().chunks(6) {
        let line: Vec<String> = chunk
            .iter()
            .map(|(start, end)| format!("[0x{start:x}, 0x{end:x}]"))
            .collect();
        out.push_str(&format!("  {},\n", line.join(", ")));
    }
    out.push_str("];\n");
    out
}

#[test]
fn the_control_ui_marks_exactly_the_characters_the_chat_core_marks() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gatehouse-gateway/ui/js/hidden.js");
    let expected = generated();
    if std::env::var_os("GATEHOUSE_REGENERATE").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let copy = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        copy == expected,
        "{} differs from the chat core's definition; regenerate it with \
         GATEHOUSE_REGENERATE=1 cargo test -p gatehouse-chat ui_mirror",
        path.display()
    );
}

#[test]
fn the_definition_covers_the_characters_issue_36_named() {
    let hidden = |c: char| {
        hidden_ranges()
            .iter()
            .any(|(start, end)| (*start..=*end).contains(&(c as u32)))
    };
    for c in [
        '\u{00AD}',
        '\u{034F}',
        '\u{061C}',
        '\u{115F}',
        '\u{180E}',
        '\u{200B}',
        '\u{202E}',
        '\u{2066}',
        '\u{3164}',
        '\u{FE0F}',
        '\u{FEFF}',
        '\u{FFA0}',
        '\u{1D173}',
        '\u{E0001}',
        '\u{E0041}',
        '\u{E0100}',
        '\u{00A0}',
        '\u{2028}',
    ] {
        assert!(hidden(c), "{c:?}");
    }
    for c in ['a', ' ', 'é', '€', '中'] {
        assert!(!hidden(c), "{c:?}");
    }
}

mod visible_properties {
    use gatehouse_chat::sanitize::{is_hidden, make_visible, one_line};
    use proptest::prelude::*;

    proptest! {
        /// Issue 36: whatever a command holds, what a card or the CLI shows carries no hidden
        /// character but the newlines and tabs a multi-line command keeps, and text with none
        /// is shown unchanged.
        #[test]
        fn shown_text_carries_no_hidden_character(text in any::<String>()) {
            let shown = make_visible(&text);
            prop_assert!(
                shown.chars().all(|c| !is_hidden(c) || c == '\n' || c == '\t'),
                "{:?}", shown
            );
            prop_assert!(one_line(&text, 4096).chars().all(|c| !is_hidden(c)));
            if !text.chars().any(is_hidden) {
                prop_assert_eq!(shown, text);
            }
        }
    }
}
