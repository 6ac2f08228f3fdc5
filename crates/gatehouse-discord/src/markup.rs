//! A chat-core [`Card`] as a Discord message: one embed (title, command block, fields, native
//! `<t:…:R>` expiry, colour by state) and one action row of decision buttons whose `custom_id`s
//! are the core's opaque tokens. Notices are plain content. Mentions are always disabled, so
//! nothing a requester controls can ping anyone.
//!
//! Every text is clipped to Discord's limits here, so an oversized card fails nowhere.
//!
//! Every title, reply and field goes through [`escape_markdown`], every field whatever its kind
//! (only the expiry, which the adapter writes itself as a native timestamp, is not taken from a
//! field's text): what an approver reads is what was sent, never a masked link, a spoiler, a
//! heading or a mention an agent or a sender slipped into a value. The command sits in a code
//! block, and notes are the core's own wording.

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
        None => message.content(text(&card.title, CONTENT_MAX)),
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
        None => edit.content(text(&card.title, CONTENT_MAX)).embeds(vec![]),
    }
}

/// An ephemeral or follow-up text, escaped and clipped.
pub(crate) fn reply_text(reply: &str) -> String {
    text(reply, CONTENT_MAX)
}

/// `value` as literal Discord text within `max` characters: escaped, then clipped without
/// cutting an escape in half.
fn text(value: &str, max: usize) -> String {
    let escaped = escape_markdown(value);
    if escaped.chars().count() <= max {
        return escaped;
    }
    let mut cut = clip(&escaped, max);
    // A clip that ends right after a lone backslash would escape the ellipsis instead.
    let ellipsis = cut.pop();
    if cut.ends_with('\\') && !cut.ends_with("\\\\") {
        cut.pop();
    }
    cut.extend(ellipsis);
    cut
}

/// Discord markdown, mentions and masked links in `value` made literal, by a backslash before
/// each character that starts one (Discord shows an escaped punctuation character as itself):
/// the backslash, `*`, `_`, `~`, `|`, the backtick, `[`, `]`, `<`, `>` and `@` anywhere, and at
/// the start of a line (after any spaces) the characters that open a heading, quote or list:
/// `#`, `-`, `+`, and the `.` or `)` of `1.`.
pub(crate) fn escape_markdown(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + value.len() / 4);
    for line in value.split_inclusive('\n') {
        let start = line.len() - line.trim_start_matches(' ').len();
        let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
        for (index, c) in line.char_indices() {
            let opens_line = index == start && matches!(c, '#' | '-' | '+');
            let numbers_line = digits > 0 && index == start + digits && matches!(c, '.' | ')');
            let always = matches!(
                c,
                '\\' | '*' | '_' | '~' | '|' | '`' | '[' | ']' | '<' | '>' | '@'
            );
            if always || opens_line || numbers_line {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
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
        .title(text(&card.title, TITLE_MAX))
        .colour(colour);
    if let Some(command) = &card.command {
        embed = embed.description(description(command));
    }
    for field in &card.fields {
        let value = match (field.kind, card.expires_at_ms) {
            // Discord renders the relative time in each reader's clock and locale.
            (FieldKind::Expires, Some(at_ms)) => format!("<t:{}:R>", at_ms / 1000),
            _ if field.value.trim().is_empty() => "-".to_owned(),
            _ => text(&field.value, FIELD_VALUE_MAX),
        };
        embed = embed.field(field.label, value, false);
    }
    if let Some(note) = &card.note {
        // The note is the core's own wording around a validated id: nothing to escape, and
        // its `|` between decisions stays readable.
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

    /// Issue 36: agent-controlled fields rendered as markdown, so a masked link or a spoiler
    /// could appear on a card. Every field, whatever its kind, is literal now.
    #[test]
    fn renders_every_field_literally_whatever_its_kind() {
        let hostile =
            "[docs](https://evil.example) ||secret|| @everyone <@5001> **b** __u__ ~~s~~ `c`";
        let mut view = view();
        view.cwd = Some(hostile.into());
        view.agent_id = Some("# heading".into());
        view.host = Some("-# small".into());
        view.resolved_path = Some("> quote".into());
        view.env_keys = vec!["1. list".into()];
        let card = render_prompt(&view, 1_795_242_700_000, 1200);
        let body = json_of(create_message(&card));
        let fields = body["embeds"][0]["fields"].as_array().unwrap();
        let value = |label: &str| {
            fields
                .iter()
                .find(|f| f["name"] == label)
                .map(|f| f["value"].as_str().unwrap().to_owned())
                .unwrap()
        };
        assert_eq!(
            value("Working directory"),
            "\\[docs\\](https://evil.example) \\|\\|secret\\|\\| \\@everyone \\<\\@5001\\> \\*\\*b\\*\\* \\_\\_u\\_\\_ \\~\\~s\\~\\~ \\`c\\`"
        );
        assert_eq!(value("Agent"), "\\# heading");
        assert_eq!(value("Host"), "\\-# small");
        assert_eq!(value("Resolved path"), "\\> quote");
        assert_eq!(value("Env overrides"), "1\\. list");
        // Every kind of field, the ones added later included, takes the same path.
        for field in &card.fields {
            let shown = value(field.label);
            if field.kind != FieldKind::Expires {
                assert_eq!(
                    shown,
                    text(&field.value, FIELD_VALUE_MAX),
                    "{:?}",
                    field.kind
                );
            }
        }
        let notice = json_of(create_message(&render_origin_notice(&view)));
        assert!(!notice["content"].as_str().unwrap().contains("<@"));
    }

    #[test]
    fn escapes_replies_and_keeps_plain_text_plain() {
        assert_eq!(
            reply_text("Neither [x](https://e) nor @here is a decision."),
            "Neither \\[x\\](https://e) nor \\@here is a decision."
        );
        assert_eq!(
            reply_text("Approval 0f3c9a1e requested; the prompt was sent to the approvers' DMs."),
            "Approval 0f3c9a1e requested; the prompt was sent to the approvers' DMs."
        );
        assert!(text(&"*".repeat(3000), 2000).chars().count() <= 2000);
        assert!(!text(&"*".repeat(3000), 2000).ends_with("\\…"));
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

#[cfg(test)]
mod escape_properties {
    use proptest::prelude::*;

    use super::escape_markdown;

    /// Reads `escaped` as Discord does, returning the text a reader sees, or the first
    /// character that would start markup: a backslash makes the next character literal;
    /// outside that, the inline markers anywhere, and a heading, quote or list marker at a
    /// line's start, are markup.
    fn read_literal(escaped: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut chars = escaped.chars().peekable();
        let mut line_start = true;
        let mut digits = 0;
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some(next) => out.push(next),
                    None => return Err("a trailing backslash".to_owned()),
                }
                line_start = false;
                digits = 0;
                continue;
            }
            let inline = matches!(c, '*' | '_' | '~' | '|' | '`' | '[' | ']' | '<' | '>' | '@');
            let opens_line = line_start && matches!(c, '#' | '-' | '+');
            let numbers_line = digits > 0 && matches!(c, '.' | ')');
            if inline || opens_line || numbers_line {
                return Err(format!("{c:?} after {out:?}"));
            }
            out.push(c);
            let leading_space = c == ' ' && line_start;
            if c == '\n' {
                line_start = true;
                digits = 0;
            } else if c.is_ascii_digit() && (line_start || digits > 0) {
                line_start = false;
                digits += 1;
            } else if !leading_space {
                line_start = false;
                digits = 0;
            }
        }
        Ok(out)
    }

    proptest! {
        /// Issue 36, differential: whatever an agent or a sender writes, a reader of the escaped
        /// text meets no markup and sees exactly the original.
        #[test]
        fn escaped_text_reads_back_as_itself_with_no_markup(
            text in "([-#+.)0-9 \n*_~|`\\[\\]<>@\\\\a-z:/()]|https://x\\.y|\\|\\||\\*\\*){0,40}"
        ) {
            prop_assert_eq!(read_literal(&escape_markdown(&text)), Ok(text));
        }
    }
}
