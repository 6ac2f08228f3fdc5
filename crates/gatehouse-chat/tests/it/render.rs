use gatehouse_chat::render::{
    ApprovalView, ButtonStyle, CardState, ChainView, FieldKind, ResolveOutcome, render_cancelled,
    render_expired, render_fallback, render_origin_notice, render_prompt, render_receipt,
};
use gatehouse_chat::sanitize::{fence_for, make_visible, one_line};
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;

const ID: &str = "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab";
const NOW: u64 = 1_795_242_000_000;

fn view(command: &str) -> ApprovalView {
    ApprovalView {
        id: ID.into(),
        command: command.into(),
        cwd: Some("/srv/app".into()),
        agent_id: Some("main".into()),
        host: Some("build-01".into()),
        resolved_path: Some("/usr/bin/git".into()),
        env_keys: vec!["GIT_DIR".into(), "PATH".into()],
        expires_at_ms: NOW + 300_000,
        allow_always_offered: true,
        chain: None,
        tool: None,
    }
}

fn command_text(command: &str) -> String {
    render_prompt(&view(command), NOW, 1200)
        .command
        .map(|block| block.text)
        .unwrap_or_default()
}

#[test]
fn shows_ansi_escapes_visibly() {
    assert_eq!(
        command_text("echo \u{1b}[2K\u{1b}[1Aok"),
        "echo \\e[2K\\e[1Aok"
    );
    assert_eq!(command_text("a\rb\u{7}c\u{0}"), "a\\rb\\x07c\\x00");
    assert_eq!(command_text("x\u{9b}31m"), "x\\u{9b}31m");
}

#[test]
fn shows_bidi_overrides_and_isolates_visibly() {
    assert_eq!(
        command_text("rm -rf ~ #\u{202e}gnp.tac"),
        "rm -rf ~ #[U+202E RLO]gnp.tac"
    );
    assert_eq!(
        make_visible("\u{2066}a\u{2069}\u{200f}\u{061c}"),
        "[U+2066 LRI]a[U+2069 PDI][U+200F RLM][U+061C ALM]"
    );
}

#[test]
fn shows_zero_width_and_invisible_characters_visibly() {
    assert_eq!(
        make_visible("r\u{200b}m \u{200d}\u{2060}\u{feff}\u{ad}"),
        "r[U+200B ZWSP]m [U+200D ZWJ][U+2060 WJ][U+FEFF BOM][U+00AD SHY]"
    );
    assert_eq!(make_visible("a\u{e0041}b"), "a[U+E0041 TAG]b");
    assert_eq!(make_visible("a\u{3164}b"), "a[U+3164 FILLER]b");
}

#[test]
fn keeps_ordinary_unicode_and_newlines() {
    assert_eq!(
        command_text("echo 'héllo wörld' ✓\nls"),
        "echo 'héllo wörld' ✓\nls"
    );
}

#[test]
fn fence_cannot_be_broken_out_of() {
    for attack in [
        "echo ```\nrm -rf /\n```",
        "````",
        "a`b``c```d````e",
        "```` ```",
        "`",
    ] {
        let block = render_prompt(&view(attack), NOW, 1200).command.unwrap();
        let fenced = block.fenced_markdown();
        let fence = fence_for(attack);
        assert!(fenced.starts_with(&format!("{fence}\n")));
        assert!(fenced.ends_with(&format!("\n{fence}")));
        let inner = &fenced[fence.len()..fenced.len() - fence.len()];
        assert!(
            !inner.contains(fence.as_str()),
            "{attack:?} contains its own fence"
        );
        assert!(fence.len() >= 3);
    }
}

#[test]
fn neutralized_fence_contains_no_backticks_inside() {
    let block = render_prompt(&view("echo ```\nx```"), NOW, 1200)
        .command
        .unwrap();
    let fenced = block.fenced_neutralized();
    assert_eq!(fenced.matches('`').count(), 6);
    assert!(fenced.contains("echo \u{2cb}\u{2cb}\u{2cb}"));
}

#[test]
fn truncates_long_commands_with_a_pointer_to_the_control_ui() {
    let long = "x".repeat(5000);
    let block = render_prompt(&view(&long), NOW, 1200).command.unwrap();
    assert_eq!(block.text.chars().count(), 1200);
    assert_eq!(block.truncated_chars, 3800);
    assert_eq!(
        block.truncation_note().as_deref(),
        Some("(truncated: 3800 more characters; the full command is in the Control UI)")
    );
    let short = render_prompt(&view("ls"), NOW, 1200).command.unwrap();
    assert_eq!(short.truncation_note(), None);
}

#[test]
fn truncation_counts_markers_and_never_splits_them() {
    let block = render_prompt(&view("ab\u{202e}cd"), NOW, 5)
        .command
        .unwrap();
    assert_eq!(block.text, "ab");
    assert_eq!(block.truncated_chars, 3);
}

#[test]
fn prompt_shows_every_field() {
    let card = render_prompt(&view("git status"), NOW, 1200);
    assert_eq!(card.state, CardState::Pending);
    assert_eq!(
        card.plain_text(),
        "Exec approval needed\n\
         ```\ngit status\n```\n\
         Working directory: /srv/app\n\
         Agent: main\n\
         Host: build-01\n\
         Resolved path: /usr/bin/git\n\
         Env overrides: GIT_DIR, PATH\n\
         ID: 0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)\n\
         Expires: in 5m (2026-11-21 06:25:00 UTC)\n\
         Reply /approve 0f3c9a1e allow-once|allow-always|deny"
    );
    assert_eq!(card.expires_at_ms, Some(NOW + 300_000));
}

#[test]
fn fields_carry_a_kind_whose_label_they_show() {
    let card = render_prompt(&view("git status"), NOW, 1200);
    let kinds: Vec<FieldKind> = card.fields.iter().map(|field| field.kind).collect();
    assert_eq!(
        kinds,
        vec![
            FieldKind::WorkingDirectory,
            FieldKind::Agent,
            FieldKind::Host,
            FieldKind::ResolvedPath,
            FieldKind::EnvOverrides,
            FieldKind::Id,
            FieldKind::Expires,
        ]
    );
    assert!(
        card.fields
            .iter()
            .all(|field| field.label == field.kind.label())
    );
    let closed = render_expired(&view("git status"), 1200);
    assert!(closed.fields.iter().all(|f| f.kind != FieldKind::Expires));
}

/// Issue 29: a card named only the first program of a chain. Each program gets a line, and
/// what allow-always would store is said, both made visible like every other field.
#[test]
fn shows_every_program_of_the_chain_and_what_allow_always_stores() {
    let mut v = view("git status && ./deploy.sh");
    v.chain = Some(ChainView {
        programs: vec![
            "1. git status [/usr/bin/git] — allowlist".into(),
            "2. ./deploy.sh [/srv/deploy.sh] — needs a person\u{202e}".into(),
        ],
        allow_always_patterns: vec!["/srv/deploy.sh".into()],
    });
    let card = render_prompt(&v, NOW, 1200);
    let shown: Vec<(FieldKind, &str)> = card
        .fields
        .iter()
        .filter(|field| {
            matches!(
                field.kind,
                FieldKind::Program | FieldKind::AllowAlwaysStores
            )
        })
        .map(|field| (field.kind, field.value.as_str()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (
                FieldKind::Program,
                "1. git status [/usr/bin/git] — allowlist"
            ),
            (
                FieldKind::Program,
                "2. ./deploy.sh [/srv/deploy.sh] — needs a person[U+202E RLO]"
            ),
            (FieldKind::AllowAlwaysStores, "/srv/deploy.sh"),
        ]
    );
    assert!(
        card.plain_text()
            .contains("Runs: 1. git status [/usr/bin/git] — allowlist\n"),
        "{}",
        card.plain_text()
    );
    v.chain = Some(ChainView::default());
    let nothing = render_prompt(&v, NOW, 1200);
    assert!(
        nothing
            .plain_text()
            .contains("Allow-always stores: nothing (approve this exact command)"),
        "{}",
        nothing.plain_text()
    );
}

#[test]
fn metadata_is_sanitized_and_kept_on_one_line() {
    let mut v = view("ls");
    v.cwd = Some("/tmp/\u{202e}evil\nline".into());
    v.env_keys = vec!["LD_PRELOAD\u{200b}".into()];
    let text = render_prompt(&v, NOW, 1200).plain_text();
    assert!(text.contains("Working directory: /tmp/[U+202E RLO]evil\\nline"));
    assert!(text.contains("Env overrides: LD_PRELOAD[U+200B ZWSP]"));
    assert_eq!(one_line(&"y".repeat(10), 5), "yyyy…");
}

#[test]
fn buttons_follow_offered_decisions() {
    let v = view("ls");
    let tokens = v
        .offered_decisions()
        .into_iter()
        .map(|d| (d, format!("tok-{d}")))
        .collect();
    let card = render_prompt(&v, NOW, 1200).with_buttons(tokens);
    let looks: Vec<_> = card.buttons.iter().map(|b| (b.label, b.style)).collect();
    assert_eq!(
        looks,
        vec![
            ("Allow once", ButtonStyle::Success),
            ("Allow always", ButtonStyle::Primary),
            ("Deny", ButtonStyle::Danger)
        ]
    );
    let mut no_always = view("ls");
    no_always.allow_always_offered = false;
    assert_eq!(
        no_always.offered_decisions(),
        vec![ApprovalDecision::AllowOnce, ApprovalDecision::Deny]
    );
    assert!(
        render_prompt(&no_always, NOW, 1200)
            .plain_text()
            .ends_with("allow-once|deny")
    );
}

#[test]
fn receipt_names_decision_and_decider() {
    let outcome = ResolveOutcome {
        decision: ApprovalDecision::AllowAlways,
        decided_by: "alice".into(),
    };
    let card = render_receipt(&view("ls"), &outcome, 1200);
    assert_eq!(card.title, "Allowed always by alice");
    assert!(card.buttons.is_empty());
    assert_eq!(card.state, CardState::Resolved(outcome));
    let deny = ResolveOutcome {
        decision: ApprovalDecision::Deny,
        decided_by: "bob\u{202e}".into(),
    };
    assert_eq!(
        render_receipt(&view("ls"), &deny, 1200).title,
        "Denied by bob[U+202E RLO]"
    );
}

#[test]
fn expiry_and_cancellation_have_their_own_texts() {
    let expired = render_expired(&view("ls"), 1200);
    assert_eq!(expired.state, CardState::Expired);
    assert_eq!(expired.title, "Expired: nobody decided in time");
    let cancelled = render_cancelled(&view("ls"), "gateway restarted", 1200);
    assert_eq!(cancelled.state, CardState::Cancelled);
    assert_eq!(cancelled.title, "Cancelled: gateway restarted");
}

#[test]
fn notices_name_the_short_id_and_the_exact_fallback_commands() {
    assert_eq!(
        render_origin_notice(&view("ls")).plain_text(),
        "Approval 0f3c9a1e requested; the prompt was sent to the approvers' DMs."
    );
    assert_eq!(
        render_fallback(&view("ls")).plain_text(),
        "Approval 0f3c9a1e could not be delivered to any approver. An approver can decide here with:\n\
         /approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab allow-once\n\
         /approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab allow-always\n\
         /approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab deny"
    );
}

mod properties {
    use gatehouse_chat::render::render_prompt;
    use gatehouse_chat::sanitize::{fence_for, make_visible};
    use proptest::prelude::*;

    use super::{NOW, view};

    fn hides_or_reorders(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
            || matches!(
                c,
                '\u{2060}' | '\u{FEFF}' | '\u{00AD}' | '\u{E0000}'..='\u{E007F}'
            )
    }

    proptest! {
        #[test]
        fn visible_text_has_no_hiding_characters(text in any::<String>()) {
            let shown = make_visible(&text);
            prop_assert!(!shown.chars().any(hides_or_reorders), "{shown:?}");
        }

        #[test]
        fn commands_cannot_close_their_fence(text in "[`a\\n ]{0,40}") {
            let block = render_prompt(&view(&text), NOW, 1200).command.unwrap();
            let fenced = block.fenced_markdown();
            let fence = fence_for(&block.text);
            let inner = &fenced[fence.len()..fenced.len() - fence.len()];
            prop_assert!(!inner.contains(fence.as_str()));
        }

        #[test]
        fn truncated_commands_stay_within_the_limit(text in any::<String>(), max in 1usize..64) {
            let block = render_prompt(&view(&text), NOW, max).command.unwrap();
            prop_assert!(block.text.chars().count() <= max);
            prop_assert_eq!(block.truncated_chars == 0, make_visible(&text) == block.text);
        }
    }
}

fn tool_view() -> ApprovalView {
    ApprovalView {
        command: "write /ws/notes.md".into(),
        cwd: None,
        host: None,
        resolved_path: None,
        env_keys: Vec::new(),
        tool: Some(gatehouse_chat::render::ToolCard {
            tool: "write".into(),
            params: vec![
                ("path".into(), "/ws/\u{202E}dm.setons".into()),
                ("content".into(), "12 bytes".into()),
            ],
            title: Some("Claude Code on box: Write <b>".into()),
            description: Some("Project: /ws\nThe agent says: \"tidy up\"".into()),
            severity: "critical".into(),
            allow_always_covers: Some("write at or under /ws/notes.md".into()),
        }),
        ..view("unused")
    }
}

#[test]
fn a_tool_card_shows_the_tool_its_parameters_and_the_requesters_words_visibly() {
    let card = render_prompt(&tool_view(), NOW, 1200);
    assert_eq!(card.title, "Tool approval needed");
    assert_eq!(
        card.command.as_ref().map(|c| c.text.as_str()),
        Some("path: /ws/[U+202E RLO]dm.setons\ncontent: 12 bytes")
    );
    let fields: Vec<(FieldKind, &str)> = card
        .fields
        .iter()
        .map(|f| (f.kind, f.value.as_str()))
        .collect();
    assert_eq!(
        &fields[..5],
        &[
            (FieldKind::Tool, "write"),
            (FieldKind::RequestTitle, "Claude Code on box: Write <b>"),
            (
                FieldKind::Description,
                "Project: /ws · The agent says: \"tidy up\""
            ),
            (FieldKind::Severity, "critical"),
            (
                FieldKind::AllowAlwaysCovers,
                "write at or under /ws/notes.md"
            ),
        ]
    );
    assert!(card.fields.iter().any(|f| f.kind == FieldKind::Id));
    let text = card.plain_text();
    assert!(
        text.contains("Allow always covers: write at or under /ws/notes.md"),
        "{text}"
    );
    // Closed cards keep what was asked.
    let receipt = render_receipt(
        &tool_view(),
        &ResolveOutcome {
            decision: ApprovalDecision::AllowAlways,
            decided_by: "alice".into(),
        },
        1200,
    );
    assert!(receipt.fields.iter().any(|f| f.kind == FieldKind::Tool));
    assert_eq!(receipt.command, card.command);
}
