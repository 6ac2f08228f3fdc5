use gatehouse_chat::Platforms;
use gatehouse_chat::config::{
    ChatApprovalSettings, ChatApprovals, ForwardMode, ForwardTarget, ForwardingSettings,
    NativeClientSettings, NativeEnabled, NativeTarget,
};
use gatehouse_chat::plan::{DeliveryPlan, MessageKind, PlannedMessage, RequestMeta, plan_delivery};
use gatehouse_chat::route::{Destination, Route, TurnSource};
use pretty_assertions::assert_eq;

use MessageKind::{Card, OriginNotice, TextPrompt};

fn group(channel: &str, chat: &str) -> TurnSource {
    TurnSource {
        channel: channel.into(),
        account_id: None,
        to: chat.into(),
        thread_id: None,
        dm_user_id: None,
    }
}

fn dm_source(channel: &str, user: &str) -> TurnSource {
    TurnSource {
        dm_user_id: Some(user.into()),
        ..group(channel, &format!("dmchat-{user}"))
    }
}

fn chat(channel: &str, id: &str) -> Route {
    Route {
        channel: channel.into(),
        account_id: None,
        destination: Destination::Chat(id.into()),
        thread_id: None,
    }
}

fn dm(channel: &str, user: &str) -> Route {
    Route::dm(channel, None, user)
}

fn target(channel: &str, to: &str) -> ForwardTarget {
    ForwardTarget {
        channel: channel.into(),
        to: to.into(),
        account_id: None,
        thread_id: None,
    }
}

fn forwarding(mode: ForwardMode, targets: Vec<ForwardTarget>) -> ForwardingSettings {
    ForwardingSettings {
        enabled: true,
        mode,
        targets,
        ..ForwardingSettings::default()
    }
}

fn native(channel: &str, target: NativeTarget, approvers: &[&str]) -> NativeClientSettings {
    NativeClientSettings {
        channel: channel.into(),
        enabled: NativeEnabled::Auto,
        approvers: approvers.iter().map(|a| (*a).to_owned()).collect(),
        target,
        ..NativeClientSettings::default()
    }
}

fn config(forwarding: ForwardingSettings, native: Vec<NativeClientSettings>) -> ChatApprovals {
    ChatApprovalSettings { forwarding, native }
        .validate(&Platforms::default())
        .unwrap()
}

fn meta(source: Option<&TurnSource>) -> RequestMeta<'_> {
    RequestMeta {
        agent_id: Some("main"),
        session_key: Some("agent:main:telegram:group:42"),
        turn_source: source,
    }
}

fn routes(plan: &DeliveryPlan) -> Vec<(Route, MessageKind)> {
    plan.messages
        .iter()
        .map(|PlannedMessage { route, kind }| (route.clone(), *kind))
        .collect()
}

#[test]
fn session_mode_prompts_the_origin() {
    let source = group("telegram", "-100");
    let cfg = config(
        forwarding(ForwardMode::Session, vec![target("slack", "C1")]),
        vec![],
    );
    let plan = plan_delivery(meta(Some(&source)), &cfg);
    assert_eq!(routes(&plan), vec![(chat("telegram", "-100"), TextPrompt)]);
    assert_eq!(plan.fallback_route, Some(chat("telegram", "-100")));
}

#[test]
fn session_mode_without_an_origin_plans_nothing() {
    let cfg = config(forwarding(ForwardMode::Session, vec![]), vec![]);
    assert_eq!(plan_delivery(meta(None), &cfg), DeliveryPlan::default());
}

#[test]
fn targets_mode_prompts_each_target_once() {
    let source = group("telegram", "-100");
    let cfg = config(
        forwarding(
            ForwardMode::Targets,
            vec![
                target("slack", "C1"),
                target("slack", "channel:C1"),
                target("discord", "user:7"),
                target("telegram", "-100"),
            ],
        ),
        vec![],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (chat("slack", "C1"), TextPrompt),
            (dm("discord", "7"), TextPrompt),
            (chat("telegram", "-100"), TextPrompt),
        ]
    );
}

#[test]
fn both_mode_dedupes_origin_and_targets() {
    let source = group("telegram", "-100");
    let cfg = config(
        forwarding(
            ForwardMode::Both,
            vec![target("telegram", "-100"), target("slack", "C1")],
        ),
        vec![],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (chat("telegram", "-100"), TextPrompt),
            (chat("slack", "C1"), TextPrompt),
        ]
    );
}

#[test]
fn threads_are_kept_and_distinguish_routes() {
    let mut source = group("telegram", "-100");
    source.thread_id = Some("42".into());
    let cfg = config(
        forwarding(ForwardMode::Both, vec![target("telegram", "-100")]),
        vec![],
    );
    let mut in_topic = chat("telegram", "-100");
    in_topic.thread_id = Some("42".into());
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (in_topic, TextPrompt),
            (chat("telegram", "-100"), TextPrompt)
        ]
    );
}

#[test]
fn forwarding_filters_apply() {
    let source = group("telegram", "-100");
    let mut settings = forwarding(ForwardMode::Session, vec![]);
    settings.agent_filter = Some(vec!["ops".into()]);
    let cfg = config(settings.clone(), vec![]);
    assert!(plan_delivery(meta(Some(&source)), &cfg).messages.is_empty());
    settings.agent_filter = Some(vec!["main".into()]);
    settings.session_filter = Some(vec!["re:^agent:main:discord:".into()]);
    let cfg = config(settings.clone(), vec![]);
    assert!(plan_delivery(meta(Some(&source)), &cfg).messages.is_empty());
    settings.session_filter = Some(vec!["nomatch".into(), "telegram:group".into()]);
    let cfg = config(settings, vec![]);
    assert_eq!(plan_delivery(meta(Some(&source)), &cfg).messages.len(), 1);
}

#[test]
fn dm_target_sends_cards_to_approvers_and_a_notice_to_the_origin() {
    let source = group("discord", "G1");
    let cfg = config(
        ForwardingSettings::default(),
        vec![native("discord", NativeTarget::Dm, &["1", "2"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (dm("discord", "1"), Card),
            (dm("discord", "2"), Card),
            (chat("discord", "G1"), OriginNotice),
        ]
    );
}

#[test]
fn channel_target_sends_the_card_to_the_origin_only() {
    let source = group("discord", "G1");
    let cfg = config(
        ForwardingSettings::default(),
        vec![native("discord", NativeTarget::Channel, &["1"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![(chat("discord", "G1"), Card)]
    );
    let elsewhere = group("slack", "C1");
    assert!(
        plan_delivery(meta(Some(&elsewhere)), &cfg)
            .messages
            .is_empty()
    );
}

#[test]
fn both_target_dedupes_an_origin_that_is_an_approvers_dm() {
    let source = dm_source("discord", "1");
    let cfg = config(
        ForwardingSettings::default(),
        vec![native("discord", NativeTarget::Both, &["1", "2"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![(dm("discord", "1"), Card), (dm("discord", "2"), Card)]
    );
    let dm_only = config(
        ForwardingSettings::default(),
        vec![native("discord", NativeTarget::Dm, &["1"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &dm_only)),
        vec![(dm("discord", "1"), Card)],
        "no notice in a DM that already holds the card"
    );
}

#[test]
fn an_approvers_dm_gets_one_card_whatever_thread_the_request_came_from() {
    let mut source = dm_source("slack", "U1");
    source.thread_id = Some("1700000000.000100".into());
    let cfg = config(
        forwarding(ForwardMode::Session, vec![]),
        vec![native("slack", NativeTarget::Both, &["U1"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![(dm("slack", "U1"), Card)]
    );
}

#[test]
fn natively_served_routes_get_no_duplicate_text_prompt() {
    let source = group("discord", "G1");
    let cfg = config(
        forwarding(
            ForwardMode::Both,
            vec![target("discord", "user:1"), target("slack", "C1")],
        ),
        vec![native("discord", NativeTarget::Dm, &["1"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (dm("discord", "1"), Card),
            (chat("discord", "G1"), OriginNotice),
            (chat("slack", "C1"), TextPrompt),
        ]
    );
}

#[test]
fn native_filters_hand_the_request_back_to_forwarding() {
    let source = group("discord", "G1");
    let mut client = native("discord", NativeTarget::Dm, &["1"]);
    client.agent_filter = Some(vec!["ops".into()]);
    let cfg = config(forwarding(ForwardMode::Session, vec![]), vec![client]);
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![(chat("discord", "G1"), TextPrompt)]
    );
}

#[test]
fn native_clients_send_dm_cards_for_requests_from_other_channels() {
    let source = group("slack", "C1");
    let cfg = config(
        forwarding(ForwardMode::Session, vec![]),
        vec![native("telegram", NativeTarget::Dm, &["10"])],
    );
    assert_eq!(
        routes(&plan_delivery(meta(Some(&source)), &cfg)),
        vec![
            (dm("telegram", "10"), Card),
            (chat("slack", "C1"), TextPrompt)
        ]
    );
}

#[test]
fn fallback_goes_to_the_origin_only_when_no_prompt_arrived() {
    let source = group("discord", "G1");
    let cfg = config(
        ForwardingSettings::default(),
        vec![native("discord", NativeTarget::Dm, &["1", "2"])],
    );
    let plan = plan_delivery(meta(Some(&source)), &cfg);
    assert_eq!(plan.fallback_after(&[]), Some(&chat("discord", "G1")));
    assert_eq!(
        plan.fallback_after(&[chat("discord", "G1")]),
        Some(&chat("discord", "G1")),
        "a delivered notice is not a prompt"
    );
    assert_eq!(plan.fallback_after(&[dm("discord", "2")]), None);
    let nothing = plan_delivery(
        meta(Some(&source)),
        &config(ForwardingSettings::default(), vec![]),
    );
    assert_eq!(
        nothing.fallback_after(&[]),
        None,
        "nothing was meant to be delivered"
    );
    let no_origin = plan_delivery(meta(None), &cfg);
    assert_eq!(no_origin.fallback_after(&[]), None);
}

#[test]
fn target_spellings_name_dms_and_chats() {
    let parse = |to: &str| Route::from_target("targets", "discord", to, Some(" "), Some("t1"));
    let mut in_thread = chat("discord", "C1");
    in_thread.thread_id = Some("t1".into());
    assert_eq!(parse("C1"), Ok(in_thread.clone()));
    assert_eq!(parse("channel:C1"), Ok(in_thread.clone()));
    assert_eq!(parse("chat: C1 "), Ok(in_thread));
    let dm_route = parse("user:7").unwrap();
    assert_eq!(dm_route.destination, Destination::Dm("7".into()));
    assert_eq!(
        parse("dm:7").unwrap().destination,
        Destination::Dm("7".into())
    );
    assert!(parse("").is_err());
    assert!(parse("dm: ").is_err());
    assert!(Route::from_target("targets", " ", "C1", None, None).is_err());
    assert_eq!(dm_route.to_string(), "discord:user:7#t1");
}
