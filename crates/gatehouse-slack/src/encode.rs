//! A chat core [`Card`] as Block Kit: a header, the command in a code block, a context block of
//! labelled metadata, the decision buttons; the `text` fallback mirrors it for notifications.
//!
//! Untrusted text reaches Slack either as `plain_text` (never formatted) or as `mrkdwn` with
//! `&`, `<` and `>` escaped, so a command cannot mention `@channel`, link, or close its block.

use gatehouse_chat::render::{Button, ButtonStyle, Card, CardState, CommandBlock};
use gatehouse_chat::sanitize::neutralize_backticks;
use slack_morphism::prelude::*;

/// Block Kit's limits (https://docs.slack.dev/reference/block-kit/blocks).
const HEADER_MAX_CHARS: usize = 150;
const SECTION_MAX_CHARS: usize = 3000;
const CONTEXT_MAX_ELEMENTS: usize = 10;
const TEXT_MAX_CHARS: usize = 40_000;

/// The fence and newlines around the command take this many characters of a section.
const FENCE_CHARS: usize = "```\n\n```".len();

/// The `block_id` of the actions block, so a press can be told from other apps' blocks.
const ACTIONS_BLOCK_ID: &str = "gatehouse-decision";

/// The message content for `card`, for `chat.postMessage` and `chat.update` alike. Blocks are
/// always sent, since `chat.update` without blocks would keep the old buttons.
pub fn encode_card(card: &Card) -> SlackMessageContent {
    SlackMessageContent::new()
        .with_text(cap_chars(
            &escape_mrkdwn(&card.plain_text()),
            TEXT_MAX_CHARS,
        ))
        .with_blocks(blocks(card))
}

/// Slack's three characters that mrkdwn (and the `text` fallback) would interpret.
fn escape_mrkdwn(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        other => out.push(other),
    }
}

fn blocks(card: &Card) -> Vec<SlackBlock> {
    let mut blocks: Vec<SlackBlock> = vec![title_block(card)];
    if let Some(command) = &card.command {
        let (section, cut_here) = command_section(command);
        blocks.push(section);
        let note = match (command.truncation_note(), cut_here) {
            (Some(note), _) => Some(note),
            (None, true) => {
                Some("(truncated to fit Slack; the full command is in the Control UI)".to_owned())
            }
            (None, false) => None,
        };
        blocks.extend(note.map(|note| context(vec![note])));
    }
    let fields: Vec<String> = card
        .fields
        .iter()
        .map(|field| format!("{}: {}", field.label, field.value))
        .collect();
    for chunk in fields.chunks(CONTEXT_MAX_ELEMENTS) {
        blocks.push(context(chunk.to_vec()));
    }
    blocks.extend(card.note.clone().map(|note| context(vec![note])));
    if !card.buttons.is_empty() {
        let buttons = card.buttons.iter().map(button).collect();
        blocks.push(
            SlackActionsBlock::new(buttons)
                .with_block_id(ACTIONS_BLOCK_ID.into())
                .into(),
        );
    }
    blocks
}

/// A header for cards; notices can be long and multi-line, so they get a plain section.
fn title_block(card: &Card) -> SlackBlock {
    match card.state {
        CardState::Notice => SlackSectionBlock::new()
            .with_text(plain(cap_chars(&card.title, SECTION_MAX_CHARS)))
            .into(),
        CardState::Pending | CardState::Resolved(_) | CardState::Expired | CardState::Cancelled => {
            let one_line = card.title.replace('\n', " ");
            SlackHeaderBlock::new(
                SlackBlockPlainText::new(cap_chars(&one_line, HEADER_MAX_CHARS)).into(),
            )
            .into()
        }
    }
}

/// The command in a three-backtick block (Slack knows no longer fences, so backticks inside are
/// replaced by a look-alike), escaped and cut to the section limit. Says whether it cut.
fn command_section(command: &CommandBlock) -> (SlackBlock, bool) {
    let budget = SECTION_MAX_CHARS - FENCE_CHARS - 1;
    let neutralized = neutralize_backticks(&command.text);
    let mut escaped = String::new();
    let mut used = 0;
    let mut cut = false;
    let mut piece = String::new();
    for c in neutralized.chars() {
        piece.clear();
        push_escaped(&mut piece, c);
        let width = piece.chars().count();
        if used + width > budget {
            cut = true;
            escaped.push('…');
            break;
        }
        escaped.push_str(&piece);
        used += width;
    }
    let text = format!("```\n{escaped}\n```");
    let section = SlackSectionBlock::new()
        .with_text(SlackBlockText::MarkDown(SlackBlockMarkDownText::new(text)))
        .into();
    (section, cut)
}

fn context(lines: Vec<String>) -> SlackBlock {
    let elements = lines
        .into_iter()
        .map(|line| {
            SlackContextBlockElement::Plain(SlackBlockPlainText::new(cap_chars(
                &line,
                SECTION_MAX_CHARS,
            )))
        })
        .collect();
    SlackContextBlock::new(elements).into()
}

fn button(button: &Button) -> SlackActionBlockElement {
    let element =
        SlackBlockButtonElement::new(SlackBlockPlainText::new(button.label.to_owned()).into())
            .with_action_id(button.decision.as_str().into())
            .with_value(button.token.clone());
    let element = match button.style {
        ButtonStyle::Success => element.with_style(SlackBlockButtonStyle::Primary),
        ButtonStyle::Danger => element.with_style(SlackBlockButtonStyle::Danger),
        ButtonStyle::Primary => element,
    };
    SlackActionBlockElement::Button(element)
}

fn plain(text: String) -> SlackBlockText {
    SlackBlockText::Plain(SlackBlockPlainText::new(text))
}

fn cap_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use gatehouse_chat::render::{ApprovalView, render_prompt};
    use gatehouse_policy::ApprovalDecision;
    use serde_json::{Value, json};

    use super::*;

    fn view(command: &str, allow_always: bool) -> ApprovalView {
        ApprovalView {
            id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
            command: command.into(),
            cwd: Some("/srv/app".into()),
            agent_id: Some("main".into()),
            host: None,
            resolved_path: None,
            env_keys: vec![],
            expires_at_ms: 300_000,
            allow_always_offered: allow_always,
            chain: None,
            tool: None,
        }
    }

    fn json_of(card: &Card) -> Value {
        serde_json::to_value(encode_card(card)).unwrap()
    }

    #[test]
    fn escapes_mentions_and_links_in_the_command() {
        let card = render_prompt(&view("echo <!channel> && cat <https://x>", false), 0, 1200);
        let body = json_of(&card);
        let code = body["blocks"][1]["text"]["text"].as_str().unwrap();
        assert_eq!(
            code,
            "```\necho &lt;!channel&gt; &amp;&amp; cat &lt;https://x&gt;\n```"
        );
        assert!(!body["text"].as_str().unwrap().contains("<!channel>"));
    }

    #[test]
    fn protects_the_fence_from_backticks() {
        let card = render_prompt(&view("echo ```\n*bold*", false), 0, 1200);
        let code = json_of(&card)["blocks"][1]["text"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(code.matches("```").count(), 2, "{code}");
    }

    #[test]
    fn caps_a_command_of_escaped_characters_at_the_section_limit() {
        let card = render_prompt(&view(&"<".repeat(1200), false), 0, 1200);
        let body = json_of(&card);
        let code = body["blocks"][1]["text"]["text"].as_str().unwrap();
        assert!(code.chars().count() <= SECTION_MAX_CHARS);
        assert_eq!(
            body["blocks"][2]["elements"][0]["text"],
            "(truncated to fit Slack; the full command is in the Control UI)"
        );
    }

    #[test]
    fn omits_allow_always_when_not_offered() {
        let card = render_prompt(&view("ls", false), 0, 1200).with_buttons(vec![
            (ApprovalDecision::AllowOnce, "t1".into()),
            (ApprovalDecision::Deny, "t3".into()),
        ]);
        let body = json_of(&card);
        let actions = body["blocks"].as_array().unwrap().last().unwrap();
        assert_eq!(
            actions,
            &json!({"type": "actions", "block_id": "gatehouse-decision", "elements": [
                {"type": "button", "action_id": "allow-once", "value": "t1", "style": "primary",
                 "text": {"type": "plain_text", "text": "Allow once"}},
                {"type": "button", "action_id": "deny", "value": "t3", "style": "danger",
                 "text": {"type": "plain_text", "text": "Deny"}}]})
        );
    }
}
