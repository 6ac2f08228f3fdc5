//! `approvals.exec` and `channels.<channel>.execApprovals` from the config file, converted into
//! the chat core's plain settings and validated, so the planner never sees a raw config value.

use std::time::Duration;

use gatehouse_chat::config::{
    ChatApprovalSettings, ChatApprovals, ForwardMode, ForwardTarget, ForwardingSettings,
    NativeClientSettings, NativeEnabled, NativeTarget,
};
use gatehouse_chat::delivery::{DeliverySettings, RetryPolicy};
use gatehouse_chat::strangers::StrangerReplySettings;
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_chat::{ChatError, Platforms};
use gatehouse_config::Config;
use gatehouse_config::model::{
    ApprovalTarget, ChannelApprovalsConfig, DeliveryBlocks, Enabled, ExecForwardingConfig,
    ForwardingMode, Rate, StrangerRepliesConfig,
};

use crate::error::ServiceError;

/// The validated chat-approval settings of `config`, approvers held to their `platforms`' id
/// rules; an unusable block is a settings error naming what to fix.
pub(crate) fn chat_approvals(
    config: &Config,
    platforms: &Platforms,
) -> Result<ChatApprovals, ServiceError> {
    chat_settings(config)
        .validate(platforms)
        .map_err(setting_error)
}

/// A chat-core refusal as the settings error `serve` and `doctor` place at the key's line and
/// column.
fn setting_error(error: ChatError) -> ServiceError {
    let (key, message) = match &error {
        ChatError::Setting { key, inner } => (key.clone(), inner.to_string()),
        ChatError::InvalidTarget {
            field,
            value,
            reason,
        } => (field.clone(), format!("{value:?}: {reason}")),
        ChatError::NoApprovers { channel } => (
            format!("channels.{channel}.execApprovals.enabled"),
            error.to_string(),
        ),
        _ => ("approvals.exec".to_owned(), error.to_string()),
    };
    ServiceError::ChatSetting { key, message }
}

/// Every chat approval setting `serve` would refuse, checked before anything starts so `serve`
/// refuses a config without touching the data directory and `doctor` lists them all: the
/// settings themselves (approvers held to their `platforms`' id rules), and forwarding targets
/// on a channel `configured` says has no section, which nothing could deliver. Each is a
/// [`ServiceError::ChatSetting`] naming its key.
pub fn chat_setting_problems(
    config: &Config,
    platforms: &Platforms,
    configured: impl Fn(&str) -> bool,
) -> Vec<ServiceError> {
    let mut problems: Vec<ServiceError> = chat_settings(config)
        .problems(platforms)
        .into_iter()
        .map(setting_error)
        .collect();
    let targets = config
        .approvals
        .exec
        .iter()
        .filter(|exec| exec.enabled == Some(true))
        .flat_map(|exec| &exec.targets);
    for (index, target) in targets.enumerate() {
        let channel = target.channel.trim();
        let known = platforms.get(channel).is_some() && configured(channel);
        if !known {
            problems.push(ServiceError::ChatSetting {
                key: format!("approvals.exec.targets[{index}].channel"),
                message: format!(
                    "{:?} is not a configured chat channel (configure it under `channels`: {})",
                    target.channel,
                    one_of(platforms.names())
                ),
            });
        }
    }
    problems
}

/// `a, b or c`.
fn one_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        None => "none".to_owned(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// How the dispatcher paces, retries and digests `channel`: its platform's documented limits
/// (`platform`, as its adapter states them) with `channels.<name>.delivery` and `.retry`
/// laid over them key by key.
pub(super) fn delivery_settings(
    config: &Config,
    channel: &str,
    platform: Pacing,
) -> DeliverySettings {
    let blocks = config
        .channels
        .delivery()
        .into_iter()
        .find(|(name, _)| *name == channel)
        .map(|(_, blocks)| blocks)
        .unwrap_or_default();
    let DeliveryBlocks { delivery, retry } = blocks;
    let mut settings = DeliverySettings {
        pacing: platform,
        ..DeliverySettings::default()
    };
    if let Some(delivery) = delivery {
        let pacing = &mut settings.pacing;
        for (slot, rate) in [
            (&mut pacing.chat, delivery.chat_rate),
            (&mut pacing.group, delivery.group_rate),
            (&mut pacing.bot, delivery.bot_rate),
            (&mut pacing.edits, delivery.edit_rate),
        ] {
            if let Some(rate) = rate {
                *slot = window(rate);
            }
        }
        if let Some(after) = delivery.digest_after {
            settings.digest_after = usize::try_from(after).unwrap_or(usize::MAX);
        }
    }
    if let Some(retry) = retry {
        let policy: &mut RetryPolicy = &mut settings.retry;
        if let Some(attempts) = retry.attempts {
            policy.max_attempts = attempts;
        }
        if let Some(min) = retry.min_delay_ms {
            policy.base_delay = Duration::from_millis(min);
        }
        if let Some(max) = retry.max_delay_ms {
            policy.max_delay = Duration::from_millis(max);
        }
        if let Some(jitter) = retry.jitter {
            policy.jitter = jitter.value();
        }
    }
    settings
}

fn window(rate: Rate) -> Option<Window> {
    match rate {
        Rate::Off => None,
        Rate::Limit { calls, per_ms } => Some(Window {
            calls,
            per: Duration::from_millis(per_ms),
        }),
    }
}

fn chat_settings(config: &Config) -> ChatApprovalSettings {
    let native = config
        .channels
        .exec_approvals()
        .into_iter()
        .filter_map(|(channel, block)| block.map(|block| native_client(channel, block)))
        .collect();
    ChatApprovalSettings {
        forwarding: config
            .approvals
            .exec
            .as_ref()
            .map(forwarding)
            .unwrap_or_default(),
        native,
    }
}

fn forwarding(exec: &ExecForwardingConfig) -> ForwardingSettings {
    ForwardingSettings {
        enabled: exec.enabled.unwrap_or(false),
        mode: match exec.mode {
            None | Some(ForwardingMode::Session) => ForwardMode::Session,
            Some(ForwardingMode::Targets) => ForwardMode::Targets,
            Some(ForwardingMode::Both) => ForwardMode::Both,
        },
        agent_filter: exec.agent_filter.clone(),
        session_filter: exec.session_filter.clone(),
        targets: exec
            .targets
            .iter()
            .map(|target| ForwardTarget {
                channel: target.channel.clone(),
                to: target.to.clone(),
                account_id: target.account_id.clone(),
                thread_id: target.thread_id.clone(),
            })
            .collect(),
    }
}

fn native_client(channel: &str, block: &ChannelApprovalsConfig) -> NativeClientSettings {
    NativeClientSettings {
        channel: channel.to_owned(),
        account_id: None,
        enabled: match block.enabled {
            Some(Enabled::Bool(true)) => NativeEnabled::On,
            Some(Enabled::Bool(false)) => NativeEnabled::Off,
            None | Some(Enabled::Auto) => NativeEnabled::Auto,
        },
        approvers: block.approvers.clone(),
        target: match block.target {
            None | Some(ApprovalTarget::Dm) => NativeTarget::Dm,
            Some(ApprovalTarget::Channel) => NativeTarget::Channel,
            Some(ApprovalTarget::Both) => NativeTarget::Both,
        },
        agent_filter: block.agent_filter.clone(),
        session_filter: block.session_filter.clone(),
        cleanup_after_resolve: block.cleanup_after_resolve.unwrap_or(false),
        decide_undelivered: block.decide_undelivered.unwrap_or(false),
        stranger_replies: stranger_replies(block.stranger_replies.as_ref()),
    }
}

/// `strangerReplies`, each absent key at its default.
fn stranger_replies(written: Option<&StrangerRepliesConfig>) -> StrangerReplySettings {
    let defaults = StrangerReplySettings::default();
    let Some(written) = written else {
        return defaults;
    };
    StrangerReplySettings {
        sender_quiet_secs: written
            .sender_quiet_seconds
            .unwrap_or(defaults.sender_quiet_secs),
        chat_quiet_secs: written
            .chat_quiet_seconds
            .unwrap_or(defaults.chat_quiet_secs),
        per_minute: written.per_minute.unwrap_or(defaults.per_minute),
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_chat::plan::{MessageKind, RequestMeta, plan_delivery};
    use gatehouse_chat::route::{Route, TurnSource};

    use super::*;

    fn approvals(text: &str) -> Result<ChatApprovals, ServiceError> {
        let loaded = gatehouse_config::load_str(text, std::path::Path::new("test.json5")).unwrap();
        chat_approvals(&loaded.config, &Platforms::default())
    }

    #[test]
    fn lists_the_known_channels_as_people_write_them() {
        assert_eq!(one_of(["a", "b", "c"].into_iter()), "a, b or c");
        assert_eq!(one_of(["a"].into_iter()), "a");
        assert_eq!(one_of(std::iter::empty()), "none");
    }

    #[test]
    fn plans_approver_dm_cards_from_channels_telegram_exec_approvals() {
        let approvals = approvals(
            "{ channels: { telegram: { botToken: '1:x', execApprovals: { approvers: [4242] } } } }",
        )
        .unwrap();
        let plan = plan_delivery(RequestMeta::default(), &approvals);
        assert_eq!(plan.messages.len(), 1);
        assert_eq!(plan.messages[0].route, Route::dm("telegram", None, "4242"));
        assert_eq!(plan.messages[0].kind, MessageKind::Card);
    }

    #[test]
    fn plans_forwarded_text_prompts_to_targets_and_the_session() {
        let approvals = approvals(
            "{ approvals: { exec: { enabled: true, mode: 'both', agentFilter: ['main'],
               targets: [{ channel: 'telegram', to: '-100', threadId: 7 }] } } }",
        )
        .unwrap();
        let origin = TurnSource {
            channel: "telegram".into(),
            account_id: None,
            to: "-200".into(),
            thread_id: None,
            dm_user_id: None,
        };
        let meta = RequestMeta {
            agent_id: Some("main"),
            session_key: None,
            turn_source: Some(&origin),
        };
        let plan = plan_delivery(meta, &approvals);
        let routes: Vec<String> = plan.messages.iter().map(|m| m.route.to_string()).collect();
        assert_eq!(routes, ["telegram:chat:-200", "telegram:chat:-100#7"]);
        let other = RequestMeta {
            agent_id: Some("ops"),
            ..meta
        };
        assert!(plan_delivery(other, &approvals).messages.is_empty());
    }

    #[test]
    fn lays_the_operators_delivery_keys_over_the_platforms_limits() {
        let loaded = gatehouse_config::load_str(
            "{ channels: { telegram: { botToken: '1:x',
               delivery: { chatRate: '2/s', botRate: 'off', digestAfter: 9 },
               retry: { attempts: 4, minDelayMs: 100, maxDelayMs: 900, jitter: 0 } } } }",
            std::path::Path::new("test.json5"),
        )
        .unwrap();
        let platform = Pacing {
            chat: Some(Window::per_second(1)),
            group: Some(Window::per_minute(20)),
            bot: Some(Window::per_second(30)),
            edits: None,
            max_in_flight: 3,
        };
        let settings = delivery_settings(&loaded.config, "telegram", platform);
        assert_eq!(settings.pacing.chat, Some(Window::per_second(2)));
        assert_eq!(
            settings.pacing.group, platform.group,
            "unset: the platform's"
        );
        assert_eq!(settings.pacing.bot, None, "off");
        assert_eq!(settings.pacing.max_in_flight, 3);
        assert_eq!(settings.digest_after, 9);
        assert_eq!(settings.retry.max_attempts, 4);
        assert_eq!(settings.retry.max_delay, Duration::from_millis(900));
        assert_eq!(settings.retry.jitter, 0.0);
        let untouched = delivery_settings(&loaded.config, "discord", platform);
        assert_eq!(untouched.pacing, platform);
        assert_eq!(untouched.retry, RetryPolicy::default());
    }

    #[test]
    fn plans_nothing_for_a_client_switched_off_but_keeps_its_approvers() {
        let approvals = approvals(
            "{ channels: { telegram: { botToken: '1:x',
               execApprovals: { enabled: false, approvers: [4242] } } } }",
        )
        .unwrap();
        assert!(
            plan_delivery(RequestMeta::default(), &approvals)
                .messages
                .is_empty()
        );
        assert!(approvals.is_approver("telegram", "4242"));
        assert!(!approvals.is_approver("telegram", "777"));
    }
}
