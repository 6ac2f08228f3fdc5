//! A [`Card`] as a Telegram message: HTML text and an inline keyboard.
//!
//! HTML parse mode, not MarkdownV2 or entities: HTML needs only `&`, `<` and `>` escaped, the
//! same three everywhere (MarkdownV2 has eighteen special characters with different rules inside
//! code), and with those escaped nothing in the command can close its `<pre>` block. Explicit
//! entities would need UTF-16 offsets computed by hand for every field.

use gatehouse_chat::ChatError;
use gatehouse_chat::render::Card;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup};

use crate::classify::CHANNEL;

/// Telegram's limit on `callback_data`.
pub(crate) const MAX_CALLBACK_DATA_BYTES: usize = 64;

/// The card's text in Telegram HTML: bold title, the command in `<pre>`, labelled fields, note.
pub(crate) fn card_html(card: &Card) -> String {
    let mut lines = vec![format!("<b>{}</b>", escape(&card.title))];
    if let Some(command) = &card.command {
        lines.push(format!("<pre>{}</pre>", escape(&command.text)));
        lines.extend(
            command
                .truncation_note()
                .map(|note| format!("<i>{}</i>", escape(&note))),
        );
    }
    lines.extend(
        card.fields
            .iter()
            .map(|field| format!("<b>{}:</b> {}", escape(field.label), escape(&field.value))),
    );
    lines.extend(card.note.as_deref().map(escape));
    lines.join("\n")
}

/// One row of decision buttons whose `callback_data` is the core's opaque token, or `None` for
/// a card without buttons (which, on an edit, removes the keyboard). A token over Telegram's
/// 64-byte limit is refused here rather than sent and rejected.
pub(crate) fn keyboard(card: &Card) -> Result<Option<InlineKeyboardMarkup>, ChatError> {
    if card.buttons.is_empty() {
        return Ok(None);
    }
    let row = card
        .buttons
        .iter()
        .map(|button| {
            if button.token.len() > MAX_CALLBACK_DATA_BYTES {
                return Err(ChatError::Permanent {
                    channel: CHANNEL.to_owned(),
                    reason: format!(
                        "button token is {} bytes; Telegram allows {MAX_CALLBACK_DATA_BYTES}",
                        button.token.len()
                    ),
                });
            }
            Ok(InlineKeyboardButton::callback(
                button.label,
                button.token.clone(),
            ))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(InlineKeyboardMarkup::new([row])))
}

/// Escapes the characters Telegram's HTML parser treats specially (quotes too, for safety in
/// any future attribute).
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_chat::render::{ApprovalView, render_prompt};
    use gatehouse_policy::ApprovalDecision;

    fn view(command: &str) -> ApprovalView {
        ApprovalView {
            id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
            command: command.into(),
            cwd: Some("/srv/<app>".into()),
            agent_id: Some("main".into()),
            host: None,
            resolved_path: None,
            env_keys: vec![],
            expires_at_ms: 60_000,
            allow_always_offered: false,
            chain: None,
            tool: None,
        }
    }

    #[test]
    fn escapes_everything_that_could_close_the_pre_block() {
        let card = render_prompt(&view("echo '</pre><b>x</b>' && a & b"), 0, 1200);
        let html = card_html(&card);
        assert!(
            html.contains(
                "<pre>echo '&lt;/pre&gt;&lt;b&gt;x&lt;/b&gt;' &amp;&amp; a &amp; b</pre>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<b>Working directory:</b> /srv/&lt;app&gt;"),
            "{html}"
        );
        assert_eq!(html.matches("<pre>").count(), 1);
        assert_eq!(html.matches("</pre>").count(), 1);
    }

    #[test]
    fn refuses_button_data_over_64_bytes() {
        let card = render_prompt(&view("ls"), 0, 1200)
            .with_buttons(vec![(ApprovalDecision::Deny, "x".repeat(65))]);
        assert!(matches!(keyboard(&card), Err(ChatError::Permanent { .. })));
    }

    #[test]
    fn has_no_keyboard_without_buttons() {
        assert_eq!(keyboard(&render_prompt(&view("ls"), 0, 1200)), Ok(None));
    }
}
