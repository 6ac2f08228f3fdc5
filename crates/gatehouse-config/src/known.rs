//! OpenClaw keys Gatehouse does not act on. They load with a warning, so an existing OpenClaw
//! config can be pointed at Gatehouse; any key not listed here (nor modelled) is an error.

use crate::keypath::KeyPath;

/// How a key Gatehouse does not model is treated.
pub(crate) enum Verdict {
    /// Known OpenClaw setting; ignored with this warning.
    Ignored(&'static str),
    /// Known OpenClaw setting whose silent omission would change security; refused, with why.
    Refused(&'static str),
    /// Not a key Gatehouse or OpenClaw knows.
    Unknown,
}

/// Top-level OpenClaw sections with no meaning for an approval gateway.
const TOP_LEVEL: &[&str] = &[
    "$schema",
    "meta",
    "env",
    "wizard",
    "diagnostics",
    "logging",
    "cli",
    "crestodian",
    "update",
    "browser",
    "ui",
    "secrets",
    "auth",
    "acp",
    "models",
    "nodeHost",
    "bindings",
    "broadcast",
    "audio",
    "media",
    "messages",
    "commands",
    "cron",
    "hooks",
    "web",
    "discovery",
    "canvasHost",
    "talk",
    "memory",
    "mcp",
    "skills",
    "plugins",
    "surfaces",
    "proxy",
];

/// Nested OpenClaw keys, as path patterns (`*` any key, `[]` any index).
const NESTED: &[&str] = &[
    // tools
    "tools.web.search",
    "tools.web.fetch.enabled",
    "tools.web.fetch.provider",
    "tools.web.fetch.maxChars",
    "tools.web.fetch.maxCharsCap",
    "tools.web.fetch.maxResponseBytes",
    "tools.web.fetch.timeoutSeconds",
    "tools.web.fetch.cacheTtlMinutes",
    "tools.web.fetch.maxRedirects",
    "tools.web.fetch.userAgent",
    "tools.web.fetch.readability",
    "tools.web.fetch.firecrawl",
    "agents.list[].tools.web.search",
    "agents.list[].tools.web.fetch.enabled",
    "agents.list[].tools.web.fetch.provider",
    "agents.list[].tools.web.fetch.maxChars",
    "agents.list[].tools.web.fetch.maxCharsCap",
    "agents.list[].tools.web.fetch.maxResponseBytes",
    "agents.list[].tools.web.fetch.timeoutSeconds",
    "agents.list[].tools.web.fetch.cacheTtlMinutes",
    "agents.list[].tools.web.fetch.maxRedirects",
    "agents.list[].tools.web.fetch.userAgent",
    "agents.list[].tools.web.fetch.readability",
    "agents.list[].tools.web.fetch.firecrawl",
    // browser: only `ssrfPolicy` is modelled
    "browser.*",
    "tools.media",
    "tools.links",
    "tools.message",
    "tools.agentToAgent",
    "tools.sessions",
    "tools.loopDetection",
    "tools.toolSearch",
    "tools.codeMode",
    "tools.swarm",
    "tools.sessions_spawn",
    "tools.subagents.model",
    "tools.exec.host",
    "tools.exec.node",
    "tools.exec.pathPrepend",
    "tools.exec.backgroundMs",
    "tools.exec.timeoutSec",
    "tools.exec.timeoutSeconds",
    "tools.exec.cleanupMs",
    "tools.exec.notifyOnExit",
    "tools.exec.notifyOnExitEmptySuccess",
    "tools.exec.commandHighlighting",
    "tools.exec.reviewer",
    "tools.exec.approvalRunningNoticeMs",
    // agents.defaults
    "agents.defaults.model",
    "agents.defaults.imageModel",
    "agents.defaults.imageGenerationModel",
    "agents.defaults.pdfModel",
    "agents.defaults.pdfMaxBytesMb",
    "agents.defaults.pdfMaxPages",
    "agents.defaults.models",
    "agents.defaults.repoRoot",
    "agents.defaults.skipBootstrap",
    "agents.defaults.bootstrapMaxChars",
    "agents.defaults.bootstrapTotalMaxChars",
    "agents.defaults.bootstrapPromptTruncationWarning",
    "agents.defaults.userTimezone",
    "agents.defaults.timeFormat",
    "agents.defaults.envelopeTimezone",
    "agents.defaults.envelopeTimestamp",
    "agents.defaults.envelopeElapsed",
    "agents.defaults.contextTokens",
    "agents.defaults.cliBackends",
    "agents.defaults.memorySearch",
    "agents.defaults.contextPruning",
    "agents.defaults.compaction",
    "agents.defaults.embeddedPi",
    "agents.defaults.thinkingDefault",
    "agents.defaults.verboseDefault",
    "agents.defaults.blockStreamingDefault",
    "agents.defaults.blockStreamingBreak",
    "agents.defaults.blockStreamingChunk",
    "agents.defaults.blockStreamingCoalesce",
    "agents.defaults.humanDelay",
    "agents.defaults.timeoutSeconds",
    "agents.defaults.mediaMaxMb",
    "agents.defaults.imageMaxDimensionPx",
    "agents.defaults.typingIntervalSeconds",
    "agents.defaults.typingMode",
    "agents.defaults.heartbeat",
    "agents.defaults.maxConcurrent",
    "agents.defaults.additionalSystemPrompt",
    "agents.defaults.subagents.maxConcurrent",
    "agents.defaults.subagents.maxChildrenPerAgent",
    "agents.defaults.subagents.archiveAfterMinutes",
    "agents.defaults.subagents.model",
    "agents.defaults.subagents.thinking",
    "agents.defaults.subagents.runTimeoutSeconds",
    "agents.defaults.subagents.announceTimeoutMs",
    "agents.defaults.sandbox.backend",
    "agents.defaults.sandbox.scope",
    "agents.defaults.sandbox.workspaceAccess",
    "agents.defaults.sandbox.workspaceRoot",
    "agents.defaults.sandbox.docker",
    "agents.defaults.sandbox.ssh",
    "agents.defaults.sandbox.podman",
    "agents.defaults.sandbox.openshell",
    "agents.defaults.sandbox.browser",
    "agents.defaults.sandbox.prune",
    "agents.defaults.sandbox.perSession",
    "agents.defaults.sandbox.sessionToolsVisibility",
    "agents.defaults.sandbox.tools",
    // agents.list[]
    "agents.list[].name",
    "agents.list[].description",
    "agents.list[].agentDir",
    "agents.list[].model",
    "agents.list[].utilityModel",
    "agents.list[].models",
    "agents.list[].modelPolicy",
    "agents.list[].thinkingDefault",
    "agents.list[].verboseDefault",
    "agents.list[].toolProgressDetail",
    "agents.list[].reasoningDefault",
    "agents.list[].fastModeDefault",
    "agents.list[].contextInjection",
    "agents.list[].bootstrapMaxChars",
    "agents.list[].bootstrapTotalMaxChars",
    "agents.list[].experimental",
    "agents.list[].skills",
    "agents.list[].memory",
    "agents.list[].humanDelay",
    "agents.list[].typingMode",
    "agents.list[].typingIntervalSeconds",
    "agents.list[].tts",
    "agents.list[].skillsLimits",
    "agents.list[].contextLimits",
    "agents.list[].contextTokens",
    "agents.list[].heartbeat",
    "agents.list[].identity",
    "agents.list[].groupChat",
    "agents.list[].embeddedAgent",
    "agents.list[].plugins",
    "agents.list[].params",
    "agents.list[].runtime",
    "agents.list[].subagents.delegationMode",
    "agents.list[].subagents.allowAgents",
    "agents.list[].subagents.model",
    "agents.list[].subagents.thinking",
    "agents.list[].subagents.requireAgentId",
    "agents.list[].sandbox.backend",
    "agents.list[].sandbox.scope",
    "agents.list[].sandbox.workspaceAccess",
    "agents.list[].sandbox.workspaceRoot",
    "agents.list[].sandbox.docker",
    "agents.list[].sandbox.ssh",
    "agents.list[].sandbox.podman",
    "agents.list[].sandbox.openshell",
    "agents.list[].sandbox.browser",
    "agents.list[].sandbox.prune",
    "agents.list[].sandbox.perSession",
    "agents.list[].sandbox.sessionToolsVisibility",
    "agents.list[].sandbox.tools",
    "agents.list[].tools.loopDetection",
    "agents.list[].tools.message",
    "agents.list[].tools.codeMode",
    "agents.list[].tools.swarm",
    "agents.list[].tools.exec.host",
    "agents.list[].tools.exec.node",
    "agents.list[].tools.exec.pathPrepend",
    "agents.list[].tools.exec.backgroundMs",
    "agents.list[].tools.exec.timeoutSec",
    "agents.list[].tools.exec.timeoutSeconds",
    "agents.list[].tools.exec.cleanupMs",
    "agents.list[].tools.exec.notifyOnExit",
    "agents.list[].tools.exec.notifyOnExitEmptySuccess",
    "agents.list[].tools.exec.commandHighlighting",
    "agents.list[].tools.exec.reviewer",
    "agents.list[].tools.exec.approvalRunningNoticeMs",
    // session: OpenClaw's session keying and lifecycle; Gatehouse reads `mainKey` and `scope`
    "session.*",
    // gateway: OpenClaw's own server settings; Gatehouse uses `listen` and `auth.tokens`
    "gateway.port",
    "gateway.mode",
    "gateway.bind",
    "gateway.customBindHost",
    "gateway.controlUi",
    "gateway.trustedProxies",
    "gateway.allowRealIpFallback",
    "gateway.tools",
    "gateway.webchat",
    "gateway.channelHealthCheckMinutes",
    "gateway.channelStaleEventThresholdMinutes",
    "gateway.channelMaxRestartsPerHour",
    "gateway.tailscale",
    "gateway.remote",
    "gateway.reload",
    "gateway.tls",
    "gateway.http",
    "gateway.push",
    "gateway.nodes",
    "gateway.auth.allowTailscale",
    "gateway.auth.rateLimit",
    // approvals
    "approvals.tool",
    "approvals.toolPolicy",
    // channels other than the three Gatehouse drives, and chat settings it does not use
    "channels.*",
    "channels.*.name",
    "channels.*.capabilities",
    "channels.*.markdown",
    "channels.*.commands",
    "channels.*.configWrites",
    "channels.*.proxy",
    "channels.*.allowBots",
    "channels.*.dangerouslyAllowNameMatching",
    "channels.*.groupPolicy",
    "channels.*.groups",
    "channels.*.groups.*.*",
    "channels.*.guilds.*.*",
    "channels.*.guilds.*.channels.*.*",
    "channels.*.channels.*.*",
    "channels.*.textChunkLimit",
    "channels.*.chunkMode",
    "channels.*.blockStreaming",
    "channels.*.streaming",
    "channels.*.streamMode",
    "channels.*.draftChunk",
    "channels.*.blockStreamingCoalesce",
    "channels.*.maxLinesPerMessage",
    "channels.*.mediaMaxMb",
    "channels.*.historyLimit",
    "channels.*.dmHistoryLimit",
    "channels.*.dms",
    "channels.*.actions",
    "channels.*.replyToMode",
    "channels.*.dmPolicy",
    "channels.*.allowFrom",
    "channels.*.groupAllowFrom",
    "channels.*.defaultTo",
    "channels.*.dm",
    "channels.*.guilds",
    "channels.*.channels",
    "channels.*.groups.*.*",
    "channels.*.guilds.*.*",
    "channels.*.guilds.*.channels.*.*",
    "channels.*.channels.*.*",
    "channels.*.heartbeat",
    "channels.*.agentComponents",
    "channels.*.ui",
    "channels.*.slashCommand",
    "channels.*.threadBindings",
    "channels.*.intents",
    "channels.*.voice",
    "channels.*.pluralkit",
    "channels.*.responsePrefix",
    "channels.*.ackReaction",
    "channels.*.ackReactionScope",
    "channels.*.activity",
    "channels.*.status",
    "channels.*.activityType",
    "channels.*.activityUrl",
    "channels.*.autoPresence",
    "channels.*.inboundWorker",
    "channels.*.eventQueue",
    "channels.*.accounts",
    "channels.*.webhookPath",
    "channels.*.reactionNotifications",
    "channels.*.reactionLevel",
    "channels.*.linkPreview",
    "channels.*.timeoutSeconds",
    "channels.*.network",
    "channels.*.customCommands",
    "channels.*.userTokenReadOnly",
    "channels.*.userToken",
    "channels.*.thread",
    "channels.*.replyToModeByChatType",
    "channels.*.requireMention",
    "channels.*.typingReaction",
];

/// OpenClaw keys whose silent omission could loosen policy; refused with the reason. (Ignoring
/// a key is only safe when it can only have granted something Gatehouse never grants.)
const REFUSED: &[(&str, &str)] = &[
    (
        "tools.exec.mode",
        "OpenClaw's shorthand is not supported; set `tools.exec.security` and `tools.exec.ask`",
    ),
    (
        "agents.list[].tools.exec.mode",
        "OpenClaw's shorthand is not supported; set `security` and `ask`",
    ),
    (
        "tools.toolsBySender",
        "per-sender tool policy is not enforced by Gatehouse; express it with deny lists",
    ),
    (
        "agents.list[].tools.toolsBySender",
        "per-sender tool policy is not enforced by Gatehouse; express it with deny lists",
    ),
    (
        "channels.*.groups.*.toolsBySender",
        "per-sender tool policy is not enforced by Gatehouse; express it with deny lists",
    ),
    (
        "channels.*.guilds.*.toolsBySender",
        "per-sender tool policy is not enforced by Gatehouse; express it with deny lists",
    ),
    (
        "channels.*.channels.*.toolsBySender",
        "per-sender tool policy is not enforced by Gatehouse; express it with deny lists",
    ),
    (
        "approvals.toolPolicy",
        "tool-call approval policy is not enforced by Gatehouse; use tool deny lists",
    ),
];

/// Ignored OpenClaw keys that deserve a specific note: ignoring them is safe (they could only
/// grant access), but the operator should know what replaces them.
const NOTED: &[(&str, &str)] = &[
    (
        "gateway.auth.token",
        "ignored: Gatehouse accepts only named, scoped `gateway.auth.tokens`",
    ),
    (
        "gateway.auth.password",
        "ignored: Gatehouse accepts only bearer tokens from `gateway.auth.tokens`",
    ),
    (
        "gateway.auth.mode",
        "ignored: Gatehouse always requires a token from `gateway.auth.tokens`",
    ),
    (
        "gateway.auth.trustedProxy",
        "ignored: Gatehouse never trusts proxy identity headers",
    ),
];

/// The note for an ignored key without a specific one.
const NOT_USED: &str = "OpenClaw setting not used by Gatehouse; ignored";

/// Classifies a key the typed model did not consume.
pub(crate) fn classify(path: &KeyPath) -> Verdict {
    if let Some((_, why)) = REFUSED.iter().find(|(pattern, _)| path.matches(pattern)) {
        return Verdict::Refused(why);
    }
    if let Some((_, note)) = NOTED.iter().find(|(pattern, _)| path.matches(pattern)) {
        return Verdict::Ignored(note);
    }
    let top_level = path.segments().len() == 1 && TOP_LEVEL.iter().any(|key| path.matches(key));
    if top_level || NESTED.iter().any(|pattern| path.matches(pattern)) {
        return Verdict::Ignored(NOT_USED);
    }
    Verdict::Unknown
}

/// The OpenClaw keys known directly under `parent`, for a "did you mean" on a misspelt one.
pub(crate) fn keys_at(parent: &KeyPath) -> impl Iterator<Item = &'static str> {
    let top_level = parent
        .segments()
        .is_empty()
        .then_some(TOP_LEVEL)
        .into_iter()
        .flatten()
        .copied();
    let patterns = NESTED
        .iter()
        .copied()
        .chain(REFUSED.iter().map(|(pattern, _)| *pattern))
        .chain(NOTED.iter().map(|(pattern, _)| *pattern));
    let nested = patterns.filter_map(move |pattern| {
        let (holder, key) = pattern.rsplit_once('.')?;
        (key != "*" && !key.ends_with("[]") && parent.matches(holder)).then_some(key)
    });
    top_level.chain(nested)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(path: KeyPath) -> &'static str {
        match classify(&path) {
            Verdict::Ignored(_) => "ignored",
            Verdict::Refused(_) => "refused",
            Verdict::Unknown => "unknown",
        }
    }

    #[test]
    fn ignores_openclaw_sections_gatehouse_does_not_use() {
        let root = KeyPath::root();
        assert_eq!(verdict(root.key("models")), "ignored");
        // `tools.web.fetch` is Gatehouse's; OpenClaw's search settings are not.
        assert_eq!(
            verdict(root.key("tools").key("web").key("search")),
            "ignored"
        );
        assert_eq!(
            verdict(root.key("agents").key("list").index(2).key("model")),
            "ignored"
        );
        assert_eq!(verdict(root.key("channels").key("whatsapp")), "ignored");
    }

    #[test]
    fn refuses_openclaw_keys_that_would_loosen_policy_if_ignored() {
        let root = KeyPath::root();
        assert_eq!(
            verdict(root.key("tools").key("exec").key("mode")),
            "refused"
        );
        assert_eq!(verdict(root.key("tools").key("toolsBySender")), "refused");
    }

    #[test]
    fn ignores_openclaw_auth_keys_that_could_only_grant_access() {
        let path = KeyPath::root().key("gateway").key("auth").key("token");
        assert!(matches!(classify(&path), Verdict::Ignored(note) if note.contains("tokens")));
    }

    #[test]
    fn reports_misspelt_keys_as_unknown() {
        let root = KeyPath::root();
        assert_eq!(verdict(root.key("tool")), "unknown");
        assert_eq!(
            verdict(root.key("tools").key("exec").key("securty")),
            "unknown"
        );
        assert_eq!(
            verdict(root.key("channels").key("telegram").key("bottoken")),
            "unknown"
        );
    }

    #[test]
    fn lists_the_openclaw_keys_at_a_level() {
        let root = KeyPath::root();
        assert!(keys_at(&root).any(|key| key == "models"));
        let agent = root.key("agents").key("list").index(0);
        assert!(keys_at(&agent).any(|key| key == "model"));
        let auth = root.key("gateway").key("auth");
        let keys: Vec<_> = keys_at(&auth).collect();
        assert!(
            keys.contains(&"token") && keys.contains(&"rateLimit"),
            "{keys:?}"
        );
        assert!(!keys.contains(&"port"));
    }
}
