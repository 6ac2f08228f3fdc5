//! The chat-approval settings as plain data (`approvals.exec` and each
//! `channels.<channel>.execApprovals`), and their validated form.
//!
//! The gateway maps `gatehouse-config`'s model into the `*Settings` structs (this crate knows no
//! config syntax); [`ChatApprovalSettings::validate`] compiles filters, parses targets and
//! approvers, and refuses what cannot work, so the planner only ever sees configuration that
//! means something.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::ChatError;
use crate::filter::{AgentFilter, SessionFilter};
use crate::platform::Platforms;
use crate::route::Route;
use crate::strangers::{StrangerReplies, StrangerReplySettings};

/// `approvals.exec.mode`: where forwarded text prompts go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardMode {
    /// To the request's `turnSource` route.
    #[default]
    Session,
    /// To the configured targets.
    Targets,
    /// To both, deduplicated.
    Both,
}

/// One `approvals.exec.targets[]` entry, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardTarget {
    /// The channel name.
    pub channel: String,
    /// `user:<id>` for a DM, or a chat id.
    pub to: String,
    /// The bot account, when several are configured.
    pub account_id: Option<String>,
    /// A thread or topic inside the chat.
    pub thread_id: Option<String>,
}

/// `approvals.exec`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardingSettings {
    /// Whether text prompts are forwarded at all.
    pub enabled: bool,
    /// Where they go.
    pub mode: ForwardMode,
    /// `agentFilter`: exact agent ids.
    pub agent_filter: Option<Vec<String>>,
    /// `sessionFilter`: substrings, or `re:<pattern>` regexes.
    pub session_filter: Option<Vec<String>>,
    /// `targets`.
    pub targets: Vec<ForwardTarget>,
}

/// `channels.<channel>.execApprovals.enabled`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NativeEnabled {
    /// On; having no approvers is then a config error.
    On,
    /// Off.
    Off,
    /// `"auto"`: on exactly when at least one approver is configured.
    #[default]
    Auto,
}

/// `channels.<channel>.execApprovals.target`: where approval cards go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NativeTarget {
    /// Each approver's DM.
    #[default]
    Dm,
    /// The chat the request came from.
    Channel,
    /// Both.
    Both,
}

/// `channels.<channel>.execApprovals`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeClientSettings {
    /// The channel this client belongs to.
    pub channel: String,
    /// The bot account it uses, when several are configured.
    pub account_id: Option<String>,
    /// `enabled`.
    pub enabled: NativeEnabled,
    /// `approvers`: platform user ids (also `user:<id>`, `<channel>:<id>` and `<@id>` forms).
    pub approvers: Vec<String>,
    /// `target`.
    pub target: NativeTarget,
    /// `agentFilter`.
    pub agent_filter: Option<Vec<String>>,
    /// `sessionFilter`.
    pub session_filter: Option<Vec<String>>,
    /// `cleanupAfterResolve`: delete cards after a decision instead of editing them.
    pub cleanup_after_resolve: bool,
    /// `decideUndelivered`: this channel's approvers may decide by id approvals that were never
    /// shown on this channel (another channel's filters admitted them, this one's did not).
    pub decide_undelivered: bool,
    /// `strangerReplies`: how often people who may decide nothing here are answered.
    pub stranger_replies: StrangerReplySettings,
}

/// All chat-approval settings, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatApprovalSettings {
    /// `approvals.exec`.
    pub forwarding: ForwardingSettings,
    /// One entry per channel with an `execApprovals` block.
    pub native: Vec<NativeClientSettings>,
}

/// Validated `approvals.exec`.
#[derive(Debug, Clone)]
pub struct Forwarding {
    pub(crate) mode: ForwardMode,
    pub(crate) agents: AgentFilter,
    pub(crate) sessions: SessionFilter,
    pub(crate) targets: Vec<Route>,
}

/// A validated, active native approval client.
#[derive(Debug, Clone)]
pub struct NativeClient {
    pub(crate) channel: String,
    pub(crate) account_id: Option<String>,
    pub(crate) approvers: BTreeSet<String>,
    pub(crate) target: NativeTarget,
    pub(crate) agents: AgentFilter,
    pub(crate) sessions: SessionFilter,
    cleanup_after_resolve: bool,
}

impl NativeClient {
    /// The channel this client serves.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Where this channel's cards go (`target`).
    pub fn target(&self) -> NativeTarget {
        self.target
    }

    /// Whether cards are deleted after a decision rather than edited into receipts.
    pub fn cleanup_after_resolve(&self) -> bool {
        self.cleanup_after_resolve
    }
}

/// Validated chat-approval configuration: the planner's input.
#[derive(Debug, Clone)]
pub struct ChatApprovals {
    pub(crate) forwarding: Option<Forwarding>,
    pub(crate) native: Vec<NativeClient>,
    approvers: BTreeMap<String, BTreeSet<String>>,
    /// Channels whose approvers may decide approvals never shown there.
    decide_undelivered: BTreeSet<String>,
    /// Each channel's limits on replies to strangers (the channels not listed use defaults).
    stranger_replies: BTreeMap<String, StrangerReplySettings>,
}

impl ChatApprovals {
    /// The active native client for `channel`, for its card settings.
    pub fn native_client(&self, channel: &str) -> Option<&NativeClient> {
        self.native.iter().find(|client| client.channel == channel)
    }

    /// Whether `user_id` on `channel` may decide approvals: only the ids listed in
    /// `channels.<channel>.execApprovals.approvers` can (even when that channel's cards are
    /// off), whoever else is in the chat and whoever made the request.
    pub fn is_approver(&self, channel: &str, user_id: &str) -> bool {
        let id = normalize_approver(channel, user_id);
        !id.is_empty()
            && self
                .approvers
                .get(channel)
                .is_some_and(|approvers| approvers.contains(id))
    }

    /// Whether `channel`'s approvers may decide, by id, approvals that were never shown on
    /// `channel` (`decideUndelivered`). Off by default: a person decides what they saw.
    pub fn decides_undelivered(&self, channel: &str) -> bool {
        self.decide_undelivered.contains(channel)
    }

    /// The replies to strangers each channel allows, for [`StrangerReplies::new`].
    pub fn stranger_replies(&self) -> StrangerReplies {
        StrangerReplies::new(self.stranger_replies.clone())
    }
}

impl ChatApprovalSettings {
    /// Checks and compiles the settings, holding approvers to their platform's id rules.
    /// Inactive parts (forwarding disabled, a client off or `auto` without approvers) are dropped
    /// here, so nothing downstream re-checks them. The error is the first of
    /// [`ChatApprovalSettings::problems`].
    pub fn validate(&self, platforms: &Platforms) -> Result<ChatApprovals, ChatError> {
        let mut problems = Vec::new();
        let approvals = self.compile(platforms, &mut problems);
        match problems.into_iter().next() {
            Some(first) => Err(first),
            None => Ok(approvals),
        }
    }

    /// Every refusal in the settings, not only the first, so an operator fixing a config sees
    /// them all in one `doctor` run.
    pub fn problems(&self, platforms: &Platforms) -> Vec<ChatError> {
        let mut problems = Vec::new();
        self.compile(platforms, &mut problems);
        problems
    }

    /// The compiled settings, leaving out each part that was refused; every refusal goes to
    /// `problems`.
    fn compile(&self, platforms: &Platforms, problems: &mut Vec<ChatError>) -> ChatApprovals {
        let forwarding = self
            .forwarding
            .enabled
            .then(|| validate_forwarding(&self.forwarding, problems));
        let mut native = Vec::new();
        let mut approvers = BTreeMap::new();
        let mut decide_undelivered = BTreeSet::new();
        let mut stranger_replies = BTreeMap::new();
        for settings in &self.native {
            let Some(ids) = parse_approvers(settings, platforms, problems) else {
                continue;
            };
            if settings.decide_undelivered {
                decide_undelivered.insert(settings.channel.trim().to_owned());
            }
            if check_stranger_replies(settings, problems) {
                stranger_replies.insert(
                    settings.channel.trim().to_owned(),
                    settings.stranger_replies,
                );
            }
            if let Some(client) = activate(settings, &ids, problems) {
                native.push(client);
            }
            approvers
                .entry(settings.channel.trim().to_owned())
                .or_insert_with(BTreeSet::new)
                .extend(ids);
        }
        ChatApprovals {
            forwarding,
            native,
            approvers,
            decide_undelivered,
            stranger_replies,
        }
    }
}

fn validate_forwarding(settings: &ForwardingSettings, problems: &mut Vec<ChatError>) -> Forwarding {
    let mut targets = Vec::new();
    for (index, target) in settings.targets.iter().enumerate() {
        let route = Route::from_target(
            &format!("approvals.exec.targets[{index}]"),
            &target.channel,
            &target.to,
            target.account_id.as_deref(),
            target.thread_id.as_deref(),
        );
        match route {
            Ok(route) if !targets.contains(&route) => targets.push(route),
            Ok(_) => {}
            Err(error) => problems.push(error),
        }
    }
    Forwarding {
        mode: settings.mode,
        agents: AgentFilter::new(settings.agent_filter.as_deref()),
        sessions: session_filter(
            settings.session_filter.as_deref(),
            "approvals.exec.sessionFilter",
            problems,
        ),
        targets,
    }
}

/// The client's approver ids, each refused one going to `problems`; `None` when the client
/// names no channel, which leaves nothing to check.
fn parse_approvers(
    settings: &NativeClientSettings,
    platforms: &Platforms,
    problems: &mut Vec<ChatError>,
) -> Option<BTreeSet<String>> {
    let channel = settings.channel.trim();
    if channel.is_empty() {
        problems.push(ChatError::InvalidTarget {
            field: "channels.<channel>.execApprovals".to_owned(),
            value: settings.channel.clone(),
            reason: "the client names no channel",
        });
        return None;
    }
    let mut approvers = BTreeSet::new();
    for (index, raw) in settings.approvers.iter().enumerate() {
        let id = normalize_approver(channel, raw);
        let refusal = if id.is_empty() {
            Some("an approver must be a user id")
        } else {
            platforms.user_id_problem(channel, id)
        };
        match refusal {
            Some(reason) => problems.push(ChatError::InvalidTarget {
                field: format!("channels.{channel}.execApprovals.approvers[{index}]"),
                value: raw.clone(),
                reason,
            }),
            None => {
                approvers.insert(id.to_owned());
            }
        }
    }
    Some(approvers)
}

/// Whether the stranger-reply windows are usable, each refused one going to `problems`: a
/// window of zero would answer a flood message for message.
fn check_stranger_replies(settings: &NativeClientSettings, problems: &mut Vec<ChatError>) -> bool {
    let limits = settings.stranger_replies;
    let mut usable = true;
    for (key, seconds) in [
        ("senderQuietSeconds", limits.sender_quiet_secs),
        ("chatQuietSeconds", limits.chat_quiet_secs),
    ] {
        if seconds == 0 {
            usable = false;
            problems.push(ChatError::InvalidTarget {
                field: format!(
                    "channels.{}.execApprovals.strangerReplies.{key}",
                    settings.channel.trim()
                ),
                value: seconds.to_string(),
                reason: "a quiet window must be at least 1 second",
            });
        }
    }
    usable
}

/// A session filter whose refusal, naming the key it came from, goes to `problems`; a refused
/// filter matches no session, so nothing is forwarded on a filter that was not understood.
fn session_filter(
    entries: Option<&[String]>,
    key: &str,
    problems: &mut Vec<ChatError>,
) -> SessionFilter {
    SessionFilter::new(entries).unwrap_or_else(|inner| {
        problems.push(ChatError::Setting {
            key: key.to_owned(),
            inner: Box::new(inner),
        });
        SessionFilter::nothing()
    })
}

/// The active client, or `None` when it is off (or refused: the refusal goes to `problems`).
fn activate(
    settings: &NativeClientSettings,
    approvers: &BTreeSet<String>,
    problems: &mut Vec<ChatError>,
) -> Option<NativeClient> {
    let channel = settings.channel.trim();
    let active = match settings.enabled {
        NativeEnabled::Off => false,
        NativeEnabled::Auto => !approvers.is_empty(),
        NativeEnabled::On if approvers.is_empty() => {
            problems.push(ChatError::NoApprovers {
                channel: channel.to_owned(),
            });
            false
        }
        NativeEnabled::On => true,
    };
    if !active {
        return None;
    }
    Some(NativeClient {
        channel: channel.to_owned(),
        account_id: settings
            .account_id
            .clone()
            .filter(|account| !account.trim().is_empty()),
        approvers: approvers.clone(),
        target: settings.target,
        agents: AgentFilter::new(settings.agent_filter.as_deref()),
        sessions: session_filter(
            settings.session_filter.as_deref(),
            &format!("channels.{channel}.execApprovals.sessionFilter"),
            problems,
        ),
        cleanup_after_resolve: settings.cleanup_after_resolve,
    })
}

/// Reduces the id spellings operators write (`<@123>`, `<@!123>`, `user:123`,
/// `discord:123`) to the bare id platforms report for a sender.
fn normalize_approver<'a>(channel: &str, raw: &'a str) -> &'a str {
    let id = raw.trim();
    let id = id
        .strip_prefix("<@")
        .and_then(|rest| rest.strip_suffix('>'))
        .map(|rest| rest.strip_prefix('!').unwrap_or(rest))
        .unwrap_or(id);
    let id = id.strip_prefix("user:").unwrap_or(id);
    let id = match id.split_once(':') {
        Some((prefix, rest)) if prefix.eq_ignore_ascii_case(channel) => rest,
        _ => id,
    };
    id.trim()
}
