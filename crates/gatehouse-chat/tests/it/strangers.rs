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
