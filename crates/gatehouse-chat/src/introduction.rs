//! The answer to `/start` and `/help`: who the person is to Gatehouse on this channel, so an
//! operator setting up a chat learns the id to configure from the bot itself.
//!
//! The answer names the sender's own id and what they may do, and nothing about approvals:
//! it goes to strangers too, so it carries no approval id, command or count.

use crate::config::NativeTarget;
use crate::sanitize::one_line;

const ID_CHARS: usize = 64;

/// What the service learned about the sender, for [`introduction_text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Introduction<'a> {
    /// The channel name as config spells it (`channels.<channel>`).
    pub channel: &'a str,
    /// The sender's platform id, the value an `approvers` entry must hold.
    pub sender_id: &'a str,
    /// Whether the sender is in the channel's `approvers`.
    pub role: Role,
    /// Whether `tools.elevated.allowFrom.<channel>` admits the sender.
    pub elevated: bool,
}

/// The sender's standing on the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Listed in `channels.<channel>.execApprovals.approvers`.
    Approver {
        /// Where the channel's cards go; `None` when its cards are switched off.
        cards: Option<NativeTarget>,
    },
    /// Not listed: may decide nothing here.
    NotApprover,
}

/// The reply to `/start` or `/help`.
pub fn introduction_text(intro: &Introduction<'_>) -> String {
    let channel = one_line(intro.channel, ID_CHARS);
    let id = one_line(intro.sender_id, ID_CHARS);
    let mut lines = vec![format!("Your user id on {channel} is {id}.")];
    match intro.role {
        Role::Approver { cards } => {
            lines.push(format!(
                "You are an approver on this channel: {}",
                cards_line(cards, &channel)
            ));
            lines.push(
                "Decide with a card's buttons, by replying to a card with allow-once, \
                 allow-always or deny, or with /approve <id> allow-once|allow-always|deny."
                    .to_owned(),
            );
        }
        Role::NotApprover => lines.push(format!(
            "You are not an approver on this channel, so you cannot decide approvals here. To \
             make you one, an operator adds {id} to channels.{channel}.execApprovals.approvers \
             in the Gatehouse config."
        )),
    }
    if intro.elevated {
        lines.push(
            "You may also show or set elevated mode for the session bound to a chat with \
             /elevated [off|on|ask|full]."
                .to_owned(),
        );
    }
    lines.join("\n")
}

fn cards_line(cards: Option<NativeTarget>, channel: &str) -> String {
    match cards {
        Some(NativeTarget::Dm) => {
            "approval cards come to your direct messages with this bot.".to_owned()
        }
        Some(NativeTarget::Channel) => {
            "approval cards come to the chat each request came from.".to_owned()
        }
        Some(NativeTarget::Both) => "approval cards come to your direct messages with this bot \
                                     and to the chat each request came from."
            .to_owned(),
        None => format!(
            "approval cards are switched off here (channels.{channel}.execApprovals.enabled), \
             so you decide the prompts forwarded here by id."
        ),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn text(role: Role, elevated: bool) -> String {
        introduction_text(&Introduction {
            channel: "telegram",
            sender_id: "4242",
            role,
            elevated,
        })
    }

    #[test]
    fn tells_a_stranger_their_id_and_the_key_that_admits_them() {
        assert_eq!(
            text(Role::NotApprover, false),
            "Your user id on telegram is 4242.\n\
             You are not an approver on this channel, so you cannot decide approvals here. To \
             make you one, an operator adds 4242 to channels.telegram.execApprovals.approvers in \
             the Gatehouse config."
        );
    }

    #[test]
    fn tells_an_approver_where_cards_arrive_and_how_to_decide() {
        assert_eq!(
            text(
                Role::Approver {
                    cards: Some(NativeTarget::Dm)
                },
                true
            ),
            "Your user id on telegram is 4242.\n\
             You are an approver on this channel: approval cards come to your direct messages \
             with this bot.\n\
             Decide with a card's buttons, by replying to a card with allow-once, allow-always \
             or deny, or with /approve <id> allow-once|allow-always|deny.\n\
             You may also show or set elevated mode for the session bound to a chat with \
             /elevated [off|on|ask|full]."
        );
    }

    #[test]
    fn names_each_card_target() {
        let line = |cards| text(Role::Approver { cards }, false);
        assert!(line(Some(NativeTarget::Channel)).contains("to the chat each request came from."));
        assert!(line(Some(NativeTarget::Both)).contains("direct messages with this bot and to"));
        assert!(line(None).contains("switched off here (channels.telegram.execApprovals.enabled)"));
    }

    #[test]
    fn shows_an_odd_id_on_one_line() {
        let answer = introduction_text(&Introduction {
            channel: "slack",
            sender_id: "U1\nYou are an approver",
            role: Role::NotApprover,
            elevated: false,
        });
        assert_eq!(answer.lines().count(), 2, "{answer}");
    }
}
