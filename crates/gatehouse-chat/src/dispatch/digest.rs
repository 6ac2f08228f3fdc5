//! The digest card: one message standing for every approval held back in a conversation whose
//! queue ran deeper than the platform's limits allow to clear quickly.

use crate::render::{ApprovalView, Card, CardState, Field, FieldKind, SHORT_ID_LEN};
use crate::sanitize::one_line;

/// Approvals listed by id in a digest; the count covers the rest.
const LISTED: usize = 10;

/// Characters of each listed command.
const COMMAND_CHARS: usize = 60;

/// The digest for `waiting` (oldest first); once `closing`, the form that ends it, which no
/// longer depends on what waits (the held messages are then on their way as cards).
pub(super) fn render_digest(waiting: &[&ApprovalView], closing: bool) -> Card {
    if closing {
        return Card {
            state: CardState::Notice,
            title: "Caught up: no approvals are held back here any more; any approval still \
                    waiting has a card of its own."
                .to_owned(),
            fields: Vec::new(),
            command: None,
            note: None,
            buttons: Vec::new(),
            expires_at_ms: None,
        };
    }
    let count = waiting.len();
    let title = match count {
        1 => "1 approval waiting".to_owned(),
        n => format!("{n} approvals waiting"),
    };
    let fields = waiting
        .iter()
        .take(LISTED)
        .map(|view| Field {
            kind: FieldKind::Id,
            label: FieldKind::Id.label(),
            value: format!(
                "{} {}",
                one_line(&view.short_id(), SHORT_ID_LEN),
                one_line(&view.command, COMMAND_CHARS)
            ),
        })
        .collect();
    let more = count.saturating_sub(LISTED);
    let mut note = "Too many to post one by one within this chat's rate limits. Decide in the \
                    Control UI, or here with /approve <id> allow-once|allow-always|deny. This \
                    message is kept current."
        .to_owned();
    if more > 0 {
        note = format!("…and {more} more. {note}");
    }
    Card {
        state: CardState::Pending,
        title,
        fields,
        command: None,
        note: Some(note),
        buttons: Vec::new(),
        expires_at_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: &str, command: &str) -> ApprovalView {
        ApprovalView {
            id: id.into(),
            command: command.into(),
            cwd: None,
            agent_id: None,
            host: None,
            resolved_path: None,
            env_keys: vec![],
            expires_at_ms: 0,
            allow_always_offered: false,
            chain: None,
            tool: None,
        }
    }

    #[test]
    fn counts_every_waiting_approval_and_lists_the_first_ten() {
        let views: Vec<ApprovalView> = (0..12)
            .map(|i| view(&format!("{i:08x}-0000"), "make deploy\u{202e}"))
            .collect();
        let refs: Vec<&ApprovalView> = views.iter().collect();
        let card = render_digest(&refs, false);
        assert_eq!(card.title, "12 approvals waiting");
        assert_eq!(card.fields.len(), 10);
        assert_eq!(card.fields[0].value, "00000000 make deploy[U+202E RLO]");
        assert!(card.note.as_deref().unwrap().starts_with("…and 2 more."));
        assert!(card.buttons.is_empty());
    }

    #[test]
    fn closes_with_one_fixed_text() {
        let card = render_digest(&[], true);
        assert_eq!(card.state, CardState::Notice);
        assert_eq!(card, render_digest(&[&view("a", "ls")], true));
    }
}
