use gatehouse_chat::strangers::{ReplyReach, StrangerReplies, StrangerReplySettings};

const SECOND: u64 = 1000;

fn limits() -> StrangerReplies {
    StrangerReplies::new([(
        "slack".to_owned(),
        StrangerReplySettings {
            sender_quiet_secs: 600,
            chat_quiet_secs: 60,
            per_minute: 3,
        },
    )])
}

#[test]
fn answers_a_stranger_once_then_stays_quiet_for_the_window() {
    let replies = limits();
    let allow =
        |sender: &str, at: u64| replies.allow("slack", "C1", sender, ReplyReach::Private, at);
    assert!(allow("U1", 0));
    for at in [1, 10 * SECOND, 599 * SECOND] {
        assert!(!allow("U1", at), "{at}");
    }
    assert!(allow("U1", 600 * SECOND));
}

#[test]
fn keeps_a_shared_chat_quiet_whoever_floods_it() {
    let replies = limits();
    let public = |sender: &str, chat: &str, at: u64| {
        replies.allow("slack", chat, sender, ReplyReach::Public, at)
    };
    assert!(public("U1", "C1", 0));
    assert!(
        !public("U2", "C1", SECOND),
        "a second stranger in the same chat"
    );
    assert!(
        public("U2", "C2", SECOND),
        "another chat has its own window"
    );
    assert!(public("U3", "C1", 60 * SECOND));
}

#[test]
fn caps_every_reply_to_strangers_per_channel_and_minute() {
    let replies = limits();
    let answered = (0..10)
        .filter(|n| replies.allow("slack", "C1", &format!("U{n}"), ReplyReach::Interaction, 0))
        .count();
    assert_eq!(answered, 3);
    assert!(replies.allow("slack", "C1", "U1", ReplyReach::Interaction, 60 * SECOND));
    assert!(
        replies.allow("telegram", "1", "2", ReplyReach::Interaction, 0),
        "channels are counted apart, with defaults where unset"
    );
}

#[test]
fn answers_interactions_without_the_sender_window() {
    let replies = limits();
    for at in 0..3 {
        assert!(replies.allow("slack", "C1", "U1", ReplyReach::Interaction, at));
    }
    assert_eq!(
        replies.settings("discord"),
        StrangerReplySettings::default()
    );
}

mod flood_properties {
    use gatehouse_chat::strangers::{ReplyReach, StrangerReplies, StrangerReplySettings};
    use proptest::prelude::*;

    const SENDER_QUIET: u64 = 30;
    const CHAT_QUIET: u64 = 10;
    const PER_MINUTE: usize = 4;

    fn reach() -> impl Strategy<Value = ReplyReach> {
        prop_oneof![
            Just(ReplyReach::Public),
            Just(ReplyReach::Private),
            Just(ReplyReach::Interaction)
        ]
    }

    proptest! {
        /// Issue 36: however strangers flood (any senders, chats, reaches and timing), a chat
        /// hears at most one public answer per chat window, a sender at most one answer per
        /// sender window outside interactions, and the channel at most `perMinute` a minute.
        #[test]
        fn a_flood_gets_no_more_answers_than_the_windows_allow(
            events in prop::collection::vec((0..4_u8, 0..3_u8, reach(), 0..8_000_u64), 1..120)
        ) {
            let replies = StrangerReplies::new([(
                "slack".to_owned(),
                StrangerReplySettings {
                    sender_quiet_secs: SENDER_QUIET,
                    chat_quiet_secs: CHAT_QUIET,
                    per_minute: PER_MINUTE as u32,
                },
            )]);
            let mut now = 0;
            let mut answered = Vec::new();
            for (sender, chat, reach, step) in events {
                now += step;
                if replies.allow("slack", &format!("C{chat}"), &format!("U{sender}"), reach, now) {
                    answered.push((sender, chat, reach, now));
                }
            }
            for (i, &(sender, chat, reach, at)) in answered.iter().enumerate() {
                let in_minute = answered[i..].iter().filter(|a| a.3 < at + 60_000).count();
                prop_assert!(in_minute <= PER_MINUTE, "{:?}", answered);
                for &(s2, c2, r2, at2) in &answered[i + 1..] {
                    let gap = at2 - at;
                    if reach == ReplyReach::Public && r2 == ReplyReach::Public && chat == c2 {
                        prop_assert!(gap >= CHAT_QUIET * 1000, "{:?}", answered);
                    }
                    let windowed = |r| r != ReplyReach::Interaction;
                    if windowed(reach) && windowed(r2) && sender == s2 {
                        prop_assert!(gap >= SENDER_QUIET * 1000, "{:?}", answered);
                    }
                }
            }
        }
    }
}
