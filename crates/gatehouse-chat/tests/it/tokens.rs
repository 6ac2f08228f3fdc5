use gatehouse_chat::error::ChatError;
use gatehouse_chat::route::MessageLocator;
use gatehouse_chat::token::{TOKEN_LEN, TokenClaim, TokenRegistry, token_key};
use gatehouse_policy::ApprovalDecision::{AllowAlways, AllowOnce, Deny};
use pretty_assertions::assert_eq;

const EXPIRES: u64 = 1_000_000;

fn locator(chat: &str, message: &str) -> MessageLocator {
    MessageLocator {
        channel: "telegram".into(),
        account_id: None,
        chat_id: chat.into(),
        message_id: message.into(),
        thread_id: None,
    }
}

fn delivered(registry: &TokenRegistry) -> Vec<(gatehouse_policy::ApprovalDecision, String)> {
    let tokens = registry.issue(
        "appr-1",
        "telegram",
        &[AllowOnce, AllowAlways, Deny],
        EXPIRES,
    );
    registry
        .bind_delivery(&tokens, &locator("chat-1", "msg-1"))
        .unwrap();
    tokens
}

#[test]
fn tokens_fit_platform_limits_and_are_distinct() {
    let registry = TokenRegistry::in_memory();
    let tokens = delivered(&registry);
    for (_, token) in &tokens {
        assert_eq!(token.len(), TOKEN_LEN);
        assert!(
            token.len() <= 64,
            "Telegram callback_data is at most 64 bytes"
        );
        assert!(token.is_ascii());
        assert!(!token.contains("appr-1"), "tokens are opaque");
    }
    assert_ne!(tokens[0].1, tokens[1].1);
    assert_ne!(tokens[1].1, tokens[2].1);
}

#[test]
fn allows_the_delivered_token_on_its_message() {
    let registry = TokenRegistry::in_memory();
    let tokens = delivered(&registry);
    for (decision, token) in &tokens {
        assert_eq!(
            registry.verify(token, &locator("chat-1", "msg-1"), 10),
            Ok(TokenClaim {
                approval_id: "appr-1".into(),
                decision: *decision,
            })
        );
    }
}

#[test]
fn denies_a_token_from_another_chat() {
    let registry = TokenRegistry::in_memory();
    let (_, token) = &delivered(&registry)[0];
    let wrong = ChatError::TokenWrongChat {
        approval_id: "appr-1".into(),
    };
    assert_eq!(
        registry.verify(token, &locator("chat-2", "msg-1"), 10),
        Err(wrong.clone())
    );
    let mut other_channel = locator("chat-1", "msg-1");
    other_channel.channel = "discord".into();
    assert_eq!(
        registry.verify(token, &other_channel, 10),
        Err(wrong.clone())
    );
    let mut other_account = locator("chat-1", "msg-1");
    other_account.account_id = Some("second-bot".into());
    assert_eq!(registry.verify(token, &other_account, 10), Err(wrong));
}

#[test]
fn denies_a_token_from_another_message() {
    let registry = TokenRegistry::in_memory();
    let (_, token) = &delivered(&registry)[0];
    assert_eq!(
        registry.verify(token, &locator("chat-1", "msg-2"), 10),
        Err(ChatError::TokenWrongMessage {
            approval_id: "appr-1".into()
        })
    );
}

#[test]
fn denies_a_token_never_bound_to_a_delivery() {
    let registry = TokenRegistry::in_memory();
    let tokens = registry.issue("appr-2", "telegram", &[Deny], EXPIRES);
    assert_eq!(
        registry.verify(&tokens[0].1, &locator("chat-1", "msg-1"), 10),
        Err(ChatError::TokenWrongMessage {
            approval_id: "appr-2".into()
        })
    );
}

#[test]
fn denies_a_token_of_an_expired_approval() {
    let registry = TokenRegistry::in_memory();
    let (_, token) = &delivered(&registry)[0];
    assert_eq!(
        registry.verify(token, &locator("chat-1", "msg-1"), EXPIRES),
        Err(ChatError::TokenExpired {
            approval_id: "appr-1".into()
        })
    );
}

#[test]
fn denies_unknown_and_forged_tokens() {
    let registry = TokenRegistry::in_memory();
    let (_, token) = &delivered(&registry)[0];
    let at = locator("chat-1", "msg-1");
    let mut forged_secret = token.clone();
    let last = forged_secret.pop().unwrap();
    forged_secret.push(if last == 'A' { 'B' } else { 'A' });
    for forged in [
        "",
        "approve:appr-1",
        "g1.AAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA",
        "g2.x.y",
        forged_secret.as_str(),
        &token[..token.len() - 4],
        &format!("{token}.extra"),
        &token.replacen("g1", "g2", 1),
    ] {
        assert_eq!(
            registry.verify(forged, &at, 10),
            Err(ChatError::TokenUnknown),
            "{forged:?}"
        );
    }
}

#[test]
fn purge_forgets_long_expired_tokens_only() {
    let registry = TokenRegistry::in_memory();
    let (_, old) = &delivered(&registry)[0];
    let fresh = registry.issue("appr-9", "telegram", &[Deny], EXPIRES * 10);
    assert_eq!(registry.purge(EXPIRES + 500, 1_000), 0);
    assert_eq!(registry.purge(EXPIRES + 2_000, 1_000), 3);
    assert_eq!(
        registry.verify(old, &locator("chat-1", "msg-1"), 0),
        Err(ChatError::TokenUnknown)
    );
    assert_eq!(
        registry.verify(&fresh[0].1, &locator("chat-1", "msg-1"), 0),
        Err(ChatError::TokenWrongMessage {
            approval_id: "appr-9".into()
        })
    );
}

/// A gateway that keeps no tokens reads the one a press names from a shared store by its key:
/// an issued token names its key, and anything without a token's shape names none.
#[test]
fn an_issued_token_names_its_lookup_key_and_a_malformed_one_none() {
    let registry = TokenRegistry::in_memory();
    let tokens = delivered(&registry);
    let keys: Vec<&str> = tokens
        .iter()
        .map(|(_, token)| token_key(token).unwrap())
        .collect();
    assert_eq!(keys.len(), 3);
    for (key, (_, token)) in keys.iter().zip(&tokens) {
        assert!(token.starts_with(&format!("g1.{key}.")), "{token}");
    }
    for malformed in ["", "g1", "g1.key", "g2.key.secret", "g1.key.secret.more"] {
        assert_eq!(token_key(malformed), None, "{malformed}");
    }
}
