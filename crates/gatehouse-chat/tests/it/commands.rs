use std::collections::BTreeMap;

use gatehouse_chat::Platforms;
use gatehouse_chat::channel::{ButtonPress, InteractionRef};
use gatehouse_chat::commands::{
    ElevatedContext, ElevatedRequest, ElevatedStep, PressRefusal, TextAction, TextContext,
    check_press, elevated_step, interpret_text,
};
use gatehouse_chat::config::{ChatApprovalSettings, ChatApprovals, NativeClientSettings};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::grammar::start::Conversation;
use gatehouse_chat::route::MessageLocator;
use gatehouse_chat::token::{TokenClaim, TokenRegistry};
use gatehouse_policy::ApprovalDecision::{AllowOnce, Deny};
use gatehouse_policy::elevated::{
    AgentElevatedGates, ElevatedGates, ElevatedLevel, LevelChoices, SenderIdentity,
};
use pretty_assertions::assert_eq;

fn sender(id: &str) -> SenderIdentity {
    SenderIdentity {
        channel: "telegram".into(),
        id: id.into(),
        username: Some(format!("user{id}")),
        ..SenderIdentity::default()
    }
}

fn approvals() -> ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "telegram".into(),
            approvers: vec!["100".into()],
            ..NativeClientSettings::default()
        }],
        ..ChatApprovalSettings::default()
    }
    .validate(&Platforms::default())
    .unwrap()
}

fn interpret(text: &str, from: &str, replied: Option<&str>) -> TextAction {
    let who = sender(from);
    let ctx = TextContext {
        sender: &who,
        bot_username: Some("gatebot"),
        replied_to_approval: replied,
        conversation: Conversation::Shared,
    };
    interpret_text(text, ctx, &approvals())
}

#[test]
fn approver_commands_become_resolutions() {
    assert_eq!(
        interpret("/approve abcd1234 deny", "100", None),
        TextAction::Resolve {
            target: "abcd1234".into(),
            decision: Deny
        }
    );
    assert_eq!(
        interpret("approve allow abcd1234", "100", None),
        TextAction::Resolve {
            target: "abcd1234".into(),
            decision: AllowOnce
        }
    );
}

#[test]
fn denies_decisions_from_non_approvers_even_in_the_approvers_chat() {
    assert_eq!(
        interpret("/approve abcd1234 deny", "200", None),
        TextAction::Reply("You are not an approver for exec approvals on this channel.".into())
    );
    assert_eq!(
        interpret("deny", "200", Some("appr-1")),
        TextAction::Reply("You are not an approver for exec approvals on this channel.".into())
    );
}

#[test]
fn a_decision_word_replying_to_a_card_decides_it() {
    assert_eq!(
        interpret("Deny", "100", Some("appr-1")),
        TextAction::Resolve {
            target: "appr-1".into(),
            decision: Deny
        }
    );
    assert_eq!(
        interpret("deny it", "100", Some("appr-1")),
        TextAction::Ignore
    );
    assert_eq!(interpret("deny", "100", None), TextAction::Ignore);
}

#[test]
fn usage_errors_reply_without_authorization() {
    let TextAction::Reply(text) = interpret("/approve abcd1234", "200", None) else {
        panic!("expected a usage reply");
    };
    assert!(text.starts_with("Missing the decision for abcd1234."));
}

#[test]
fn routes_elevated_and_ignores_chatter() {
    assert_eq!(
        interpret("/elev full", "200", None),
        TextAction::Elevated(ElevatedRequest::Set(ElevatedLevel::Full))
    );
    assert_eq!(
        interpret("/elevated", "200", None),
        TextAction::Elevated(ElevatedRequest::Query)
    );
    assert!(matches!(
        interpret("/elevated max", "200", None),
        TextAction::Reply(_)
    ));
    assert_eq!(interpret("good morning", "100", None), TextAction::Ignore);
}

#[test]
fn start_is_answered_for_everyone_and_the_bare_word_only_in_a_dm() {
    for from in ["100", "200"] {
        assert_eq!(
            interpret("/start@gatebot payload", from, None),
            TextAction::Introduce
        );
    }
    assert_eq!(interpret("help", "200", None), TextAction::Ignore);
    // A reply to a card with "start" is no decision either.
    assert_eq!(
        interpret("start", "100", Some("0f3c9a1e")),
        TextAction::Ignore
    );
    let who = sender("200");
    let direct = TextContext {
        sender: &who,
        bot_username: Some("gatebot"),
        replied_to_approval: None,
        conversation: Conversation::Direct,
    };
    assert_eq!(
        interpret_text("help", direct, &approvals()),
        TextAction::Introduce
    );
}

fn gates() -> ElevatedGates {
    ElevatedGates {
        enabled: true,
        allow_from: BTreeMap::from([(
            "telegram".to_owned(),
            vec!["username:user100".parse().unwrap()],
        )]),
    }
}

fn session() -> Option<LevelChoices> {
    Some(LevelChoices {
        session: Some(ElevatedLevel::Ask),
        ..LevelChoices::default()
    })
}

#[test]
fn elevated_set_is_stored_only_for_allowed_senders() {
    let gates = gates();
    let ctx = ElevatedContext {
        gates: &gates,
        agent: None,
        session: session(),
    };
    assert_eq!(
        elevated_step(ElevatedRequest::Set(ElevatedLevel::On), &sender("100"), ctx),
        ElevatedStep::Store {
            level: ElevatedLevel::On,
            reply: "Elevated mode is now on: host exec, approval when not allowlisted.".into()
        }
    );
    assert_eq!(
        elevated_step(ElevatedRequest::Set(ElevatedLevel::On), &sender("200"), ctx),
        ElevatedStep::Reply(
            "Not authorized to change elevated mode: sender is not in tools.elevated.allowFrom.telegram."
                .into()
        )
    );
}

#[test]
fn elevated_query_reports_the_session_level_to_allowed_senders() {
    let gates = gates();
    let agent = AgentElevatedGates {
        agent_id: "main".into(),
        enabled: Some(false),
        allow_from: None,
    };
    let ctx = ElevatedContext {
        gates: &gates,
        agent: None,
        session: session(),
    };
    assert_eq!(
        elevated_step(ElevatedRequest::Query, &sender("100"), ctx),
        ElevatedStep::Reply(
            "Elevated mode is ask (set for this session): host exec, approval for every command."
                .into()
        )
    );
    let narrowed = ElevatedContext {
        agent: Some(&agent),
        ..ctx
    };
    assert_eq!(
        elevated_step(ElevatedRequest::Query, &sender("100"), narrowed),
        ElevatedStep::Reply(
            "Not authorized to change elevated mode: elevated mode is disabled for agent main \
             (agents.main.tools.elevated.enabled)."
                .into()
        )
    );
    let unbound = ElevatedContext {
        session: None,
        ..ctx
    };
    assert_eq!(
        elevated_step(ElevatedRequest::Query, &sender("100"), unbound),
        ElevatedStep::Reply(
            "No agent session is bound to this chat, so there is nothing to elevate.".into()
        )
    );
    // Operator walkthrough: someone outside the gates was told about the binding first.
    assert_eq!(
        elevated_step(ElevatedRequest::Query, &sender("200"), unbound),
        ElevatedStep::Reply(
            "Not authorized to change elevated mode: sender is not in tools.elevated.allowFrom.telegram."
                .into()
        )
    );
}

fn card_message() -> MessageLocator {
    MessageLocator {
        channel: "telegram".into(),
        account_id: None,
        chat_id: "100".into(),
        message_id: "77".into(),
        thread_id: None,
    }
}

fn press(from: &str, token: &str, message: MessageLocator) -> ButtonPress {
    ButtonPress {
        sender: sender(from),
        token: token.into(),
        message,
        interaction: InteractionRef {
            channel: "telegram".into(),
            handle: "cbq-1".into(),
        },
    }
}

#[test]
fn presses_need_an_approver_and_a_token_bound_to_the_message() {
    let registry = TokenRegistry::in_memory();
    let tokens = registry.issue("appr-1", "telegram", &[Deny], 10_000);
    registry.bind_delivery(&tokens, &card_message()).unwrap();
    let token = &tokens[0].1;
    let approvals = approvals();
    assert_eq!(
        check_press(
            &press("100", token, card_message()),
            &registry,
            &approvals,
            5
        ),
        Ok(TokenClaim {
            approval_id: "appr-1".into(),
            decision: Deny
        })
    );
    let refusal = check_press(
        &press("200", token, card_message()),
        &registry,
        &approvals,
        5,
    );
    assert_eq!(refusal, Err(PressRefusal::NotApprover));
    assert_eq!(
        PressRefusal::NotApprover.text(),
        "Only approvers can decide."
    );
    let mut elsewhere = card_message();
    elsewhere.message_id = "78".into();
    let refusal = check_press(&press("100", token, elsewhere), &registry, &approvals, 5);
    assert_eq!(
        refusal,
        Err(PressRefusal::Token(ChatError::TokenWrongMessage {
            approval_id: "appr-1".into()
        }))
    );
    assert_eq!(
        refusal.unwrap_err().text(),
        "This button is not valid here."
    );
    let expired = check_press(
        &press("100", token, card_message()),
        &registry,
        &approvals,
        10_000,
    );
    assert_eq!(
        expired.unwrap_err().text(),
        "This approval has expired and is no longer pending."
    );
}
