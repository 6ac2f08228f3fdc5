use std::path::Path;

use gatehouse_config::{ConfigError, load_str};
use proptest::prelude::*;

/// Fragments that steer generated text into the loader's deeper paths: real keys, unknown keys,
/// OpenClaw keys, wrong types, unclosed brackets and comments.
fn fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "'",
        "\"",
        "//",
        "/*",
        "*/",
        "null",
        "true",
        "-1",
        "0x1F",
        "1e999",
        "tools",
        "exec",
        "security",
        "'full'",
        "agents",
        "list",
        "id",
        "'a'",
        "gateway",
        "auth",
        "tokens",
        "channels",
        "telegram",
        "botToken",
        "tokenEnv",
        "models",
        "securty",
        "byProvider",
        "allow",
        "alsoAllow",
        "safeBinProfiles",
        "maxSpawnDepth",
        "execApprovals",
        "enabled",
        "'auto'",
        "approvers",
        "\\u0000",
        "é",
    ])
}

/// Well-formed JSON over the config's own vocabulary, so most cases reach the typed pass,
/// the unknown-key classification and the cross-field rules.
fn document() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let key = prop::sample::select(vec![
        "tools",
        "exec",
        "security",
        "ask",
        "agents",
        "list",
        "defaults",
        "subagents",
        "maxSpawnDepth",
        "id",
        "gateway",
        "auth",
        "tokens",
        "name",
        "token",
        "tokenEnv",
        "scopes",
        "channels",
        "telegram",
        "slack",
        "botToken",
        "tokenFile",
        "execApprovals",
        "enabled",
        "approvers",
        "allow",
        "alsoAllow",
        "deny",
        "byProvider",
        "openai",
        "safeBins",
        "models",
        "mode",
        "web",
        "unknownThing",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..10).prop_map(Value::from),
        prop::sample::select(vec!["full", "deny", "on-miss", "auto", "agent", "", "x"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..5).prop_map(|m| json!(
                m.into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect::<serde_json::Map<_, _>>()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn loading_any_text_never_panics(parts in prop::collection::vec(fragment(), 0..40)) {
        let text = parts.concat();
        match load_str(&text, Path::new("fuzz.json5")) {
            Ok(_) => {}
            Err(error) => check_report(&error)?,
        }
    }

    #[test]
    fn loading_any_document_never_panics(doc in document()) {
        if let Err(error) = load_str(&doc.to_string(), Path::new("fuzz.json5")) {
            check_report(&error)?;
        }
    }

    #[test]
    fn loading_arbitrary_unicode_never_panics(text in "\\PC{0,200}") {
        if let Err(error) = load_str(&text, Path::new("fuzz.json5")) {
            check_report(&error)?;
        }
    }
}

/// A load error is a non-empty list of placed problems in file order, and its report renders.
fn check_report(error: &ConfigError) -> Result<(), TestCaseError> {
    let ConfigError::Invalid { diagnostics, .. } = error else {
        return Err(TestCaseError::fail(format!(
            "unexpected error kind: {error}"
        )));
    };
    prop_assert!(!diagnostics.is_empty());
    for found in diagnostics {
        prop_assert!(found.line >= 1 && found.column >= 1);
    }
    let places: Vec<_> = diagnostics.iter().map(|d| (d.line, d.column)).collect();
    prop_assert!(places.is_sorted(), "{places:?}");
    prop_assert!(error.to_string().starts_with("fuzz.json5:"));
    Ok(())
}
