use gatehouse_chat::Platforms;
use gatehouse_chat::config::{
    ChatApprovalSettings, ForwardTarget, ForwardingSettings, NativeClientSettings, NativeEnabled,
};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::filter::{AgentFilter, MAX_PATTERN_CHARS, SessionFilter};
use pretty_assertions::assert_eq;

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

fn sessions(entries: &[&str]) -> SessionFilter {
    SessionFilter::new(Some(&strings(entries))).unwrap()
}

#[test]
fn agent_filter_matches_exactly() {
    let filter = AgentFilter::new(Some(&strings(&["main", "ops"])));
    assert!(filter.admits(Some("main")));
    assert!(!filter.admits(Some("mai")));
    assert!(!filter.admits(Some("main2")));
    assert!(!filter.admits(Some("MAIN")));
    assert!(!filter.admits(None));
    assert!(AgentFilter::new(None).admits(None));
    assert!(AgentFilter::new(Some(&[])).admits(Some("any")));
}

#[test]
fn session_filter_matches_substrings_and_regexes() {
    let filter = sessions(&["discord:", "re:^agent:main:(telegram|slack):"]);
    assert!(filter.admits(Some("agent:work:discord:123")));
    assert!(filter.admits(Some("agent:main:telegram:42")));
    assert!(!filter.admits(Some("agent:work:telegram:42")));
    assert!(!filter.admits(Some("xagent:main:slack:1")));
    assert!(!filter.admits(None));
    assert!(SessionFilter::new(None).unwrap().admits(None));
}

#[test]
fn session_filter_substrings_are_literal() {
    let filter = sessions(&["a.c"]);
    assert!(filter.admits(Some("xa.cx")));
    assert!(!filter.admits(Some("abc")));
}

#[test]
fn denies_invalid_empty_and_oversized_regexes() {
    let err = SessionFilter::new(Some(&strings(&["re:(unclosed"]))).unwrap_err();
    assert!(
        matches!(err, ChatError::InvalidFilterRegex { ref pattern, .. } if pattern == "(unclosed")
    );
    assert_eq!(
        SessionFilter::new(Some(&strings(&["re:"]))).unwrap_err(),
        ChatError::EmptyFilter
    );
    assert_eq!(
        SessionFilter::new(Some(&strings(&[""]))).unwrap_err(),
        ChatError::EmptyFilter
    );
    let long = format!("re:{}", "a".repeat(MAX_PATTERN_CHARS + 1));
    assert_eq!(
        SessionFilter::new(Some(&[long])).unwrap_err(),
        ChatError::FilterTooLong {
            len: MAX_PATTERN_CHARS + 1,
            max: MAX_PATTERN_CHARS
        }
    );
    // Short but explosive: repetition that compiles past the size limit.
    let err = SessionFilter::new(Some(&strings(&["re:(\\w{100}){100}"]))).unwrap_err();
    assert!(
        matches!(err, ChatError::InvalidFilterRegex { .. }),
        "{err:?}"
    );
}

fn native(enabled: NativeEnabled, approvers: &[&str]) -> NativeClientSettings {
    NativeClientSettings {
        channel: "discord".into(),
        enabled,
        approvers: strings(approvers),
        ..NativeClientSettings::default()
    }
}

fn validate_native(client: NativeClientSettings) -> Result<bool, ChatError> {
    let settings = ChatApprovalSettings {
        native: vec![client],
        ..ChatApprovalSettings::default()
    };
    settings
        .validate(&Platforms::default())
        .map(|config| config.native_client("discord").is_some())
}

#[test]
fn native_client_activation() {
    assert_eq!(validate_native(native(NativeEnabled::Auto, &[])), Ok(false));
    assert_eq!(
        validate_native(native(NativeEnabled::Auto, &["1"])),
        Ok(true)
    );
    assert_eq!(
        validate_native(native(NativeEnabled::Off, &["1"])),
        Ok(false)
    );
    assert_eq!(validate_native(native(NativeEnabled::On, &["1"])), Ok(true));
    assert_eq!(
        validate_native(native(NativeEnabled::On, &[])),
        Err(ChatError::NoApprovers {
            channel: "discord".into()
        })
    );
    assert!(matches!(
        validate_native(native(NativeEnabled::Auto, &["user:"])),
        Err(ChatError::InvalidTarget { .. })
    ));
}

#[test]
fn only_configured_approvers_may_decide() {
    let settings = ChatApprovalSettings {
        native: vec![native(
            NativeEnabled::Auto,
            &["111", "user:222", "<@333>", "<@!444>", "discord:555"],
        )],
        ..ChatApprovalSettings::default()
    };
    let config = settings.validate(&Platforms::default()).unwrap();
    for id in ["111", "222", "333", "444", "555", "<@111>", "user:222"] {
        assert!(config.is_approver("discord", id), "{id}");
    }
    for id in ["", "11", "1111", "999", "telegram:111", "<@>"] {
        assert!(!config.is_approver("discord", id), "{id}");
    }
    assert!(
        !config.is_approver("telegram", "111"),
        "approvers are per channel"
    );
}

#[test]
fn approvers_of_a_channel_with_cards_off_still_decide_by_command() {
    let settings = ChatApprovalSettings {
        native: vec![native(NativeEnabled::Off, &["111"])],
        ..ChatApprovalSettings::default()
    };
    let config = settings.validate(&Platforms::default()).unwrap();
    assert!(config.native_client("discord").is_none());
    assert!(config.is_approver("discord", "111"));
    assert!(!config.is_approver("discord", "112"));
}

#[test]
fn decides_undelivered_approvals_only_where_configured() {
    let mut open = native(NativeEnabled::Off, &["111"]);
    open.decide_undelivered = true;
    let settings = ChatApprovalSettings {
        native: vec![open],
        ..ChatApprovalSettings::default()
    };
    let config = settings.validate(&Platforms::default()).unwrap();
    assert!(config.decides_undelivered("discord"));
    assert!(!config.decides_undelivered("telegram"));
    let closed = ChatApprovalSettings {
        native: vec![native(NativeEnabled::Auto, &["111"])],
        ..ChatApprovalSettings::default()
    };
    let closed = closed.validate(&Platforms::default()).unwrap();
    assert!(!closed.decides_undelivered("discord"), "off by default");
}

#[test]
fn refuses_a_stranger_reply_window_of_zero() {
    let mut flood_open = native(NativeEnabled::Auto, &["111"]);
    flood_open.stranger_replies.chat_quiet_secs = 0;
    let settings = ChatApprovalSettings {
        native: vec![flood_open],
        ..ChatApprovalSettings::default()
    };
    assert!(matches!(
        settings.validate(&Platforms::default()),
        Err(ChatError::InvalidTarget { ref field, .. })
            if field == "channels.discord.execApprovals.strangerReplies.chatQuietSeconds"
    ));
}

#[test]
fn denies_forwarding_targets_without_a_destination() {
    let settings = ChatApprovalSettings {
        forwarding: ForwardingSettings {
            enabled: true,
            targets: vec![ForwardTarget {
                channel: "telegram".into(),
                to: "user:".into(),
                account_id: None,
                thread_id: None,
            }],
            ..ForwardingSettings::default()
        },
        ..ChatApprovalSettings::default()
    };
    assert!(matches!(
        settings.validate(&Platforms::default()),
        Err(ChatError::InvalidTarget { ref field, .. }) if field == "approvals.exec.targets[0]"
    ));
}

#[test]
fn disabled_forwarding_is_not_validated_further() {
    let settings = ChatApprovalSettings {
        forwarding: ForwardingSettings {
            enabled: false,
            session_filter: Some(strings(&["re:("])),
            ..ForwardingSettings::default()
        },
        ..ChatApprovalSettings::default()
    };
    assert!(settings.validate(&Platforms::default()).is_ok());
}
