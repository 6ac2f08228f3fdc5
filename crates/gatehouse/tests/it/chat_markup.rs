//! Issue 36, "what approvers see is exactly what was sent", on every platform: agent-controlled
//! card fields and echoed sender text never render as markup (links, spoilers, mentions,
//! HTML), hidden characters are marked as the shared definition says, and a card whose command
//! was cut says so in its title and offers no allow-always, while a card showing its whole
//! command still does.

use serde_json::{Value, json};

use crate::chat_support::{eventually, request};

/// An argument long enough that the command passes the 1200-character card limit.
fn long_arg() -> String {
    "a".repeat(1500)
}

/// An allowlist miss on a program the policy resolves: allow-always would help, so it is
/// offered when the card shows the whole command.
fn short_command() -> Value {
    json!({"command": "ls -la", "argv": ["ls", "-la"]})
}

fn cut_command() -> Value {
    let arg = long_arg();
    json!({"command": format!("ls {arg}"), "argv": ["ls", arg]})
}

fn with_host(mut params: Value, host: &str) -> Value {
    params["host"] = json!(host);
    params
}

const CUT_TITLE: &str = "Exec approval needed: command cut, ";

mod telegram {
    use super::*;
    use crate::telegram::{APPROVER, Telegram, buttons};

    #[tokio::test]
    async fn telegram_escapes_card_fields_and_says_when_a_command_was_cut() {
        let t = Telegram::start(&format!("approvers: [{APPROVER}]"), "").await;
        let hostile = "<a href=\"https://evil.example\">x</a>\u{1D173}";
        t.request(with_host(short_command(), hostile)).await;
        let sent = t.calls("sendMessage", 1).await;
        let text = sent[0].body["text"].as_str().unwrap_or_default();
        assert!(
            text.contains(
                "<b>Host:</b> &lt;a href=&quot;https://evil.example&quot;&gt;x&lt;/a&gt;\
                 [U+1D173 FORMAT]"
            ),
            "{text}"
        );
        assert_eq!(buttons(&sent[0]).len(), 3, "allow-always offered in full");

        t.request(cut_command()).await;
        let sent = t.calls("sendMessage", 2).await;
        let text = sent[1].body["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(&format!("<b>{CUT_TITLE}")), "{text}");
        let labels: Vec<String> = buttons(&sent[1]).into_iter().map(|(l, _)| l).collect();
        assert_eq!(labels.len(), 2, "{labels:?}");
        assert!(!labels.iter().any(|l| l.contains("always")), "{labels:?}");
    }
}

mod discord {
    use super::*;
    use crate::discord::{APPROVER, Discord, posted};

    fn field(body: &Value, name: &str) -> String {
        body["embeds"][0]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|f| f["name"] == name)
            .and_then(|f| f["value"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    fn button_count(body: &Value) -> usize {
        body["components"][0]["components"]
            .as_array()
            .map_or(0, Vec::len)
    }

    #[tokio::test]
    async fn discord_shows_fields_and_echoes_literally_and_says_when_a_command_was_cut() {
        let d = Discord::start(&format!("approvers: ['{APPROVER}']")).await;
        let hostile = "[docs](https://evil.example) ||spoiler|| @everyone\u{1D173}";
        request(&d.server, with_host(short_command(), hostile)).await;
        let sent = d.calls("createMessage", 1).await;
        assert_eq!(
            field(&sent[0].body, "Host"),
            "\\[docs\\](https://evil.example) \\|\\|spoiler\\|\\| \\@everyone\\[U+1D173 FORMAT\\]"
        );
        assert_eq!(
            button_count(&sent[0].body),
            3,
            "allow-always offered in full"
        );

        request(&d.server, cut_command()).await;
        let sent = d.calls("createMessage", 2).await;
        let title = sent[1].body["embeds"][0]["title"]
            .as_str()
            .unwrap_or_default();
        assert!(title.starts_with(CUT_TITLE), "{title}");
        assert_eq!(
            button_count(&sent[1].body),
            2,
            "no allow-always on a cut command"
        );

        // A sender's words come back escaped, never as a live link.
        let dm = d.dm(APPROVER).await;
        d.inject(
            "MESSAGE_CREATE",
            json!({"channel_id": dm, "author": {"id": APPROVER.to_string()},
                "content": "/approve [x](https://evil.example) deny"}),
        )
        .await;
        let replies = eventually("a reply in the DM", async || {
            Some(posted(&d, &dm)).filter(|texts| !texts.is_empty())
        })
        .await;
        assert!(
            replies[0].contains("\\[x\\](https://evil.example)"),
            "{replies:?}"
        );
    }
}

mod slack {
    use super::*;
    use crate::slack::{APPROVER, ORIGIN, Slack};

    fn blocks_of<'a>(body: &'a Value, kind: &str) -> Vec<&'a Value> {
        body["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == kind)
            .collect()
    }

    fn button_count(body: &Value) -> usize {
        blocks_of(body, "actions")
            .first()
            .and_then(|b| b["elements"].as_array())
            .map_or(0, Vec::len)
    }

    #[tokio::test]
    async fn slack_shows_fields_and_answers_literally_and_says_when_a_command_was_cut() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}']"), true).await;
        let hostile = "<!channel> *bold* <https://evil.example|docs>\u{1D173}";
        request(&s.server, with_host(short_command(), hostile)).await;
        let sent = s.calls("chat.postMessage", 1).await;
        let host = blocks_of(&sent[0].body, "context")
            .into_iter()
            .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
            .find(|e| e["text"].as_str().unwrap_or_default().starts_with("Host: "))
            .unwrap_or_default();
        assert_eq!(
            host,
            json!({"type": "plain_text",
                "text": "Host: <!channel> *bold* <https://evil.example|docs>[U+1D173 FORMAT]"})
        );
        let fallback = sent[0].body["text"].as_str().unwrap_or_default();
        assert!(!fallback.contains("<!channel>"), "{fallback}");
        assert_eq!(
            button_count(&sent[0].body),
            3,
            "allow-always offered in full"
        );

        request(&s.server, cut_command()).await;
        let sent = s.calls("chat.postMessage", 2).await;
        let header = blocks_of(&sent[1].body, "header")[0]["text"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(header.starts_with(CUT_TITLE), "{header}");
        assert_eq!(
            button_count(&sent[1].body),
            2,
            "no allow-always on a cut command"
        );

        // The answer to a slash command echoes the sender's words as plain text.
        let answered = s
            .inject(
                json!({"type": "slash_commands", "payload": {"command": "/approve",
                "text": "<!channel> *x*", "user_id": APPROVER, "channel_id": ORIGIN}}),
            )
            .await;
        let body: Value =
            serde_json::from_str(answered["result"]["body"].as_str().unwrap_or_default()).unwrap();
        assert_eq!(body["blocks"][0]["text"]["type"], "plain_text", "{body}");
        assert!(
            !body["text"]
                .as_str()
                .unwrap_or_default()
                .contains("<!channel>"),
            "{body}"
        );
    }

    /// Escaping makes `&` five characters long: 1000 of them, which the core shows in full, no
    /// longer fit one Slack section. They continue in a second block instead of being cut
    /// while the card offered allow-always for them.
    #[tokio::test]
    async fn slack_shows_a_command_escaping_lengthened_in_full() {
        let s = Slack::start(&format!("approvers: ['{APPROVER}']"), true).await;
        let amps = "&".repeat(1000);
        let command = json!({"command": format!("ls \"{amps}\""), "argv": ["ls", amps]});
        request(&s.server, command).await;
        let sent = s.calls("chat.postMessage", 1).await;
        let code: String = blocks_of(&sent[0].body, "section")
            .iter()
            .filter_map(|b| b["text"]["text"].as_str())
            .collect();
        assert_eq!(code.matches("&amp;").count(), 1000, "{code}");
        assert!(!sent[0].body.to_string().contains("truncated"));
        assert_eq!(button_count(&sent[0].body), 3);
    }
}
