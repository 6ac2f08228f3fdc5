use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use gatehouse_config::{ConfigError, Secret, SecretSource, load_str};

#[test]
fn config_debug_output_redacts_inline_tokens() {
    let text = "{ channels: { telegram: { botToken: '123:abc-secret' } } }";
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    let dumped = format!("{config:?}");
    assert!(!dumped.contains("abc-secret"), "{dumped}");
    assert!(dumped.contains("**REDACTED**"));
}

#[test]
fn resolves_token_file_and_trims_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "tok-123\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let resolved = SecretSource::File(file)
        .resolve("gateway.auth.tokens[0].tokenFile")
        .unwrap();
    assert_eq!(resolved.secret, Secret::new("tok-123"));
    assert_eq!(resolved.warning, None);
}

#[test]
fn warns_when_token_file_is_group_or_world_readable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "tok").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let resolved = SecretSource::File(file)
        .resolve("channels.slack.tokenFile")
        .unwrap();
    let warning = resolved.warning.unwrap();
    assert!(warning.contains("mode 0644"), "{warning}");
    assert!(warning.contains("channels.slack.tokenFile"), "{warning}");
}

#[test]
fn fails_clearly_when_token_file_is_missing_or_empty() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = SecretSource::File(missing.clone())
        .resolve("channels.discord.tokenFile")
        .unwrap_err();
    let ConfigError::Secret { key, message } = err else {
        panic!("wrong error")
    };
    assert_eq!(key, "channels.discord.tokenFile");
    assert!(
        message.contains(&missing.display().to_string()),
        "{message}"
    );

    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let err = SecretSource::File(empty)
        .resolve("k")
        .unwrap_err()
        .to_string();
    assert!(err.contains("is empty"), "{err}");
}

#[test]
fn fails_clearly_when_token_env_is_unset() {
    let var = "GATEHOUSE_TEST_SURELY_UNSET_VARIABLE";
    let err = SecretSource::Env(var.to_owned())
        .resolve("channels.telegram.tokenEnv")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("`channels.telegram.tokenEnv`: environment variable {var} is not set")
    );
}

#[test]
fn lists_every_configured_secret_by_the_key_that_holds_it() {
    let text = r#"{
      gateway: { auth: { tokens: [
        { name: 'a', tokenEnv: 'A', scopes: ['agent'] },
        { name: 'b', tokenFile: '/run/b', scopes: ['agent'] },
      ] } },
      channels: {
        telegram: { botToken: 'inline', webhookSecretEnv: 'W' },
        slack: { tokenEnv: 'S', signingSecretFile: '/run/sig' },
      },
    }"#;
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    let keys: Vec<String> = config.secrets().into_iter().map(|s| s.key).collect();
    assert_eq!(
        keys,
        [
            "gateway.auth.tokens[0].tokenEnv",
            "gateway.auth.tokens[1].tokenFile",
            "channels.telegram.botToken",
            "channels.telegram.webhookSecretEnv",
            "channels.slack.tokenEnv",
            "channels.slack.signingSecretFile",
        ]
    );
    let inline = &config.secrets()[2];
    assert_eq!(inline.source, SecretSource::Inline(Secret::new("inline")));
}
