//! A chat-core [`Card`] as a Discord message: one embed (title, command block, fields, native
//! `<t:…:R>` expiry, colour by state) and one action row of decision buttons whose `custom_id`s
//! are the core's opaque tokens. Notices are plain content. Mentions are always disabled, so
//! nothing a requester controls can ping anyone.
//!
//! Every text is clipped to Discord's limits here, so an oversized card fails nowhere.

use gatehouse_chat::render::{ButtonStyle, Card, CardState, CommandBlock, FieldKind};
use gatehouse_chat::sanitize::clip;
use gatehouse_policy::ApprovalDecision;
use serenity::all::{
    ButtonStyle as DiscordButtonStyle, CreateActionRow, CreateAllowedMentions, CreateButton,
    CreateEmbed, CreateEmbedFooter, CreateMessage, EditMessage,
};

const CONTENT_MAX: usize = 2000;
const TITLE_MAX: usize = 256;
const DESCRIPTION_MAX: usize = 4096;
const FIELD_VALUE_MAX: usize = 1024;
const FOOTER_MAX: usize = 2048;
/// Room the fence and the truncation note take in the description.
const DESCRIPTION_OVERHEAD: usize = 200;

const PENDING: u32 = 0x5865F2;
const ALLOWED: u32 = 0x57F287;
const DENIED: u32 = 0xED4245;
const CLOSED: u32 = 0x99AAB5;

/// The message for a new card.
pub(crate) fn create_message(card: &Card) -> CreateMessage {
    let message = CreateMessage::new()
        .allowed_mentions(CreateAllowedMentions::new())
        .components(components(card));
    match embed(card) {
        Some(embed) => message.embed(embed),
        None => message.content(clip(&card.title, CONTENT_MAX)),
    }
}

/// The edit that turns a delivered message into `card`: content, embeds and buttons are all
/// replaced, so a receipt never keeps a stale button.
pub(crate) fn edit_message(card: &Card) -> EditMessage {
    let edit = EditMessage::new()
        .allowed_mentions(CreateAllowedMentions::new())
        .components(components(card));
    match embed(card) {
        Some(embed) => edit.content("").embeds(vec![embed]),
        None => edit.content(clip(&card.title, CONTENT_MAX)).embeds(vec![]),
    }
}

/// An ephemeral or follow-up text, clipped.
pub(crate) fn reply_text(text: &str) -> String {
    clip(text, CONTENT_MAX)
}

fn embed(card: &Card) -> Option<CreateEmbed> {
    let colour = match &card.state {
        CardState::Notice => return None,
        CardState::Pending => PENDING,
        CardState::Resolved(outcome) => match outcome.decision {
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowAlways => ALLOWED,
            ApprovalDecision::Deny => DENIED,
        },
        CardState::Expired | CardState::Cancelled => CLOSED,
    };
    let mut embed = CreateEmbed::new()
        .title(clip(&card.title, TITLE_MAX))
        .colour(colour);
    if let Some(command) = &card.command {
        embed = embed.description(description(command));
    }
    for field in &card.fields {
        let value = match (field.kind, card.expires_at_ms) {
            // Discord renders the relative time in each reader's clock and locale.
            (FieldKind::Expires, Some(at_ms)) => format!("<t:{}:R>", at_ms / 1000),
            _ if field.value.trim().is_empty() => "-".to_owned(),
            _ => clip(&field.value, FIELD_VALUE_MAX),
        };
        embed = embed.field(field.label, value, false);
    }
    if let Some(note) = &card.note {
        embed = embed.footer(CreateEmbedFooter::new(clip(note, FOOTER_MAX)));
    }
    Some(embed)
}

/// The command in a three-backtick block (Discord has no longer fences), backticks inside
/// replaced by the core's look-alike, so the block cannot be closed from inside.
fn description(command: &CommandBlock) -> String {
    let budget = DESCRIPTION_MAX - DESCRIPTION_OVERHEAD;
    let kept: String = command.text.chars().take(budget).collect();
    let dropped = command.text.chars().count() - kept.chars().count();
    let block = CommandBlock {
        text: kept,
        truncated_chars: command.truncated_chars + dropped,
    };
    match block.truncation_note() {
        Some(note) => format!("{}\n{note}", block.fenced_neutralized()),
        None => block.fenced_neutralized(),
    }
}

fn components(card: &Card) -> Vec<CreateActionRow> {
    if card.buttons.is_empty() {
        return Vec::new();
    }
    let buttons = card
        .buttons
        .iter()
        .map(|button| {
            let style = match button.style {
                ButtonStyle::Success => DiscordButtonStyle::Success,
                ButtonStyle::Primary => DiscordButtonStyle::Primary,
                ButtonStyle::Danger => DiscordButtonStyle::Danger,
            };
            CreateButton::new(button.token.clone())
                .label(button.label)
                .style(style)
        })
        .collect();
    vec![CreateActionRow::Buttons(buttons)]
}

#[cfg(test)]
mod tests {
    use gatehouse_chat::render::{
        ApprovalView, ResolveOutcome, render_origin_notice, render_prompt, render_receipt,
    };
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn view() -> ApprovalView {
        ApprovalView {
            id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
            command: "echo ```; rm -rf /".into(),
            cwd: Some("/srv/app".into()),
            agent_id: Some("main".into()),
            host: Some("build-1".into()),
            resolved_path: None,
            env_keys: vec!["PATH".into()],
            expires_at_ms: 1_795_243_000_000,
            allow_always_offered: false,
            chain: None,
            tool: None,
        }
    }

    fn json_of(value: impl serde::Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn renders_a_pending_card_with_neutralized_command_and_native_expiry() {
        let card = render_prompt(&view(), 1_795_242_700_000, 1200).with_buttons(vec![
            (ApprovalDecision::AllowOnce, "tok-once".into()),
            (ApprovalDecision::Deny, "tok-deny".into()),
        ]);
        let body = json_of(create_message(&card));
        let embed = &body["embeds"][0];
        assert_eq!(embed["title"], "Exec approval needed");
        let description = embed["description"].as_str().unwrap();
        assert!(description.starts_with("```\necho "));
        assert!(description.ends_with("; rm -rf /\n```"));
        assert_eq!(description.matches("```").count(), 2, "{description}");
        let fields: Vec<(String, String)> = embed["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().into(),
                    f["value"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert!(fields.contains(&("Expires".into(), "<t:1795243000:R>".into())));
        assert!(fields.contains(&(
            "ID".into(),
            "0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)".into()
        )));
        assert_eq!(body["allowed_mentions"]["parse"], json!([]));
        assert_eq!(
            body["components"],
            json!([{"type": 1, "components": [
                {"type": 2, "style": 3, "label": "Allow once", "custom_id": "tok-once", "disabled": false},
                {"type": 2, "style": 4, "label": "Deny", "custom_id": "tok-deny", "disabled": false}
            ]}])
        );
    }

    #[test]
    fn edits_a_receipt_with_colour_and_no_buttons() {
        let outcome = ResolveOutcome {
            decision: ApprovalDecision::Deny,
            decided_by: "carol".into(),
        };
        let body = json_of(edit_message(&render_receipt(&view(), &outcome, 1200)));
        assert_eq!(body["embeds"][0]["title"], "Denied by carol");
        assert_eq!(body["embeds"][0]["color"], DENIED);
        assert_eq!(body["components"], json!([]));
        assert_eq!(body["content"], "");
    }

    #[test]
    fn sends_notices_as_plain_content_without_buttons() {
        let body = json_of(create_message(&render_origin_notice(&view())));
        assert_eq!(
            body["content"],
            "Approval 0f3c9a1e requested; the prompt was sent to the approvers' DMs."
        );
        assert_eq!(body["embeds"], json!([]));
        assert_eq!(body.get("components"), Some(&json!([])));
        assert_eq!(body["allowed_mentions"]["parse"], json!([]));
    }

    #[test]
    fn clips_commands_to_the_description_limit() {
        let mut long = view();
        long.command = "x".repeat(10_000);
        let card = render_prompt(&long, 0, 10_000);
        let body = json_of(create_message(&card));
        let description = body["embeds"][0]["description"].as_str().unwrap();
        assert!(description.chars().count() <= DESCRIPTION_MAX);
        assert!(description.contains("(truncated: "), "{description}");
    }
}
