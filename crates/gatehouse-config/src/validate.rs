//! Rules that span several keys and so cannot be expressed by the types alone.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use crate::keypath::KeyPath;
use crate::model::snowflake;
use crate::model::{
    ChannelApprovalsConfig, ChannelsConfig, Config, DeliveryBlocks, DiscordConfig, Enabled,
    GatewayConfig, GatewayLimitsConfig, SandboxConfig, ScopedTools, StoreConfig, StoreKind,
    SubagentsConfig, ToolPolicyConfig, ToolsConfig,
};
use crate::secret;

/// One broken rule: where, and why.
pub(crate) struct Problem {
    pub(crate) path: KeyPath,
    pub(crate) message: String,
}

/// Every rule violation, in the order checked; the loader reports them all, in file order.
pub(crate) fn problems(config: &Config) -> Vec<Problem> {
    let mut out = Vec::new();
    let root = KeyPath::root();
    tools(&config.tools, &root.key("tools"), &mut out);
    agents(config, &root.key("agents"), &mut out);
    gateway(&config.gateway, &root.key("gateway"), &mut out);
    channels(&config.channels, &root.key("channels"), &mut out);
    tool_call_rules(config, &mut out);
    out
}

/// The file globs and host patterns of every agent compile, so a typo fails the load instead
/// of refusing every call at run time; the guilds' per-channel `tools` Gatehouse cannot apply
/// are refused rather than ignored.
fn tool_call_rules(config: &Config, out: &mut Vec<Problem>) {
    let mut agents: Vec<&str> = vec![crate::DEFAULT_AGENT_ID];
    agents.extend(config.agents.list.iter().map(|agent| agent.id.as_str()));
    let mut seen = BTreeSet::new();
    let mut report = |key: &str, message: String| {
        if seen.insert((key.to_owned(), message.clone())) {
            out.push(Problem {
                path: KeyPath::parse(key).unwrap_or_else(KeyPath::root),
                message,
            });
        }
    };
    for agent in agents {
        // Globs are compiled against the root: only their syntax matters here.
        let root = std::path::Path::new("/");
        let rules = config.file_rules_in(agent, root.to_path_buf(), Some(root));
        if let Err(gatehouse_policy::files::FileRulesError::InvalidGlob { key, entry, why }) =
            gatehouse_policy::files::FileRules::new(rules)
        {
            report(
                &key,
                format!("entry {entry:?} is not a valid path glob: {why}"),
            );
        }
        for tool in [crate::UrlTool::WebFetch, crate::UrlTool::Browser] {
            if let Err(error) = gatehouse_policy::urls::UrlRules::new(config.url_rules(agent, tool))
            {
                report(&error.key, error.why);
            }
        }
    }
    if let Some(discord) = &config.channels.discord {
        for (guild, entry) in &discord.guilds {
            for (channel, settings) in &entry.channels {
                if settings.tools.is_some() {
                    let key = format!("channels.discord.guilds.{guild}.channels.{channel}.tools");
                    report(
                        &key,
                        "per-channel tool policy inside a guild is not enforced by Gatehouse; set \
                         `tools` on the guild"
                            .to_owned(),
                    );
                }
            }
        }
    }
}

fn allow_and_also_allow(
    allow: Option<&Vec<String>>,
    also_allow: Option<&Vec<String>>,
    path: &KeyPath,
    out: &mut Vec<Problem>,
) {
    let set = |list: Option<&Vec<String>>| list.is_some_and(|l| !l.is_empty());
    if set(allow) && set(also_allow) {
        out.push(Problem {
            path: path.key("alsoAllow"),
            message: "cannot set both `allow` and `alsoAllow` in the same scope (merge alsoAllow \
                      into allow, or drop allow and use profile + alsoAllow)"
                .to_owned(),
        });
    }
}

fn by_provider<'a>(
    entries: impl Iterator<Item = (&'a String, &'a ToolPolicyConfig)>,
    path: &KeyPath,
    out: &mut Vec<Problem>,
) {
    for (key, policy) in entries {
        let at = path.key("byProvider").key(key);
        if key.trim().is_empty() {
            out.push(Problem {
                path: at.clone(),
                message: "provider key must not be empty".to_owned(),
            });
        }
        allow_and_also_allow(policy.allow.as_ref(), policy.also_allow.as_ref(), &at, out);
    }
}

fn scoped(scope: Option<&ScopedTools>, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(policy) = scope.and_then(|s| s.tools.as_ref()) {
        let at = path.key("tools");
        allow_and_also_allow(policy.allow.as_ref(), policy.also_allow.as_ref(), &at, out);
    }
}

fn tools(tools: &ToolsConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    allow_and_also_allow(tools.allow.as_ref(), tools.also_allow.as_ref(), path, out);
    by_provider(tools.by_provider.iter(), path, out);
    scoped(tools.sandbox.as_ref(), &path.key("sandbox"), out);
    scoped(tools.subagents.as_ref(), &path.key("subagents"), out);
}

fn spawn_depth(subagents: Option<&SubagentsConfig>, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(depth) = subagents.and_then(|s| s.max_spawn_depth)
        && !(1..=5).contains(&depth)
    {
        out.push(Problem {
            path: path.key("subagents").key("maxSpawnDepth"),
            message: format!("must be between 1 and 5, got {depth}"),
        });
    }
}

/// The sandbox's paths by their spelling (the sandbox crate's rule: absolute or `~/…`, no
/// `..`, no `~user`), and an absolute `bwrapPath`; whether each exists and may be mounted is
/// checked when a run is planned and by `gatehouse doctor`.
fn sandbox(
    sandbox: Option<&SandboxConfig>,
    workspace: Option<&String>,
    path: &KeyPath,
    out: &mut Vec<Problem>,
) {
    let mut written = |at: KeyPath, raw: &str| {
        if let Err(refusal) = gatehouse_sandbox::check_written_path(raw) {
            out.push(Problem {
                path: at,
                message: refusal.to_string(),
            });
        }
    };
    if let Some(workspace) = workspace {
        written(path.key("workspace"), workspace);
    }
    let Some(sandbox) = sandbox else { return };
    let at = path.key("sandbox");
    let lists = [
        ("volumes", &sandbox.volumes),
        ("extraPaths", &sandbox.extra_paths),
        ("allowedRoots", &sandbox.allowed_roots),
    ];
    for (key, list) in lists {
        for (index, raw) in list.iter().flatten().enumerate() {
            written(at.key(key).index(index), raw);
        }
    }
    if let Some(bwrap) = &sandbox.bwrap_path
        && !bwrap.starts_with('/')
    {
        out.push(Problem {
            path: at.key("bwrapPath"),
            message: format!(
                "{bwrap:?} is not an absolute path: bubblewrap runs every sandboxed command, so                  name the binary exactly (or leave the key out to use `bwrap` on PATH)"
            ),
        });
    }
}

fn agents(config: &Config, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(defaults) = &config.agents.defaults {
        spawn_depth(defaults.subagents.as_ref(), &path.key("defaults"), out);
        sandbox(
            defaults.sandbox.as_ref(),
            defaults.workspace.as_ref(),
            &path.key("defaults"),
            out,
        );
    }
    let mut seen = BTreeSet::new();
    for (index, agent) in config.agents.list.iter().enumerate() {
        let at = path.key("list").index(index);
        let id = agent.id.trim();
        if id.is_empty() {
            out.push(Problem {
                path: at.key("id"),
                message: "agent id must not be empty".to_owned(),
            });
        } else if !seen.insert(id.to_owned()) {
            out.push(Problem {
                path: at.key("id"),
                message: format!("duplicate agent id {id:?}"),
            });
        }
        spawn_depth(agent.subagents.as_ref(), &at, out);
        sandbox(agent.sandbox.as_ref(), agent.workspace.as_ref(), &at, out);
        if let Some(tools) = &agent.tools {
            let at = at.key("tools");
            if tools.subagents.is_some() {
                out.push(Problem {
                    path: at.key("subagents"),
                    message: "sub-agent tool lists are global: set `tools.subagents`".to_owned(),
                });
            }
            self::tools(tools, &at, out);
        }
    }
}

/// `delivery` and `retry`: counts of at least one (a zero would stop every call or make every
/// chat a digest), and a first delay no longer than the cap.
fn delivery(blocks: DeliveryBlocks<'_>, path: &KeyPath, out: &mut Vec<Problem>) {
    let mut at_least_one = |at: KeyPath, value: Option<u32>| {
        if value == Some(0) {
            out.push(Problem {
                path: at,
                message: "must be at least 1".to_owned(),
            });
        }
    };
    if let Some(delivery) = blocks.delivery {
        let at = path.key("delivery");
        at_least_one(at.key("digestAfter"), delivery.digest_after);
        at_least_one(at.key("maxConnections"), delivery.max_connections);
    }
    if let Some(retry) = blocks.retry {
        let at = path.key("retry");
        at_least_one(at.key("attempts"), retry.attempts);
        if let (Some(min), Some(max)) = (retry.min_delay_ms, retry.max_delay_ms)
            && min > max
        {
            out.push(Problem {
                path: at.key("minDelayMs"),
                message: format!("must not exceed maxDelayMs ({max})"),
            });
        }
    }
}

fn gateway(gateway: &GatewayConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    listen(gateway.listen.as_deref(), path, out);
    if let Some(dns) = &gateway.dns {
        if let Err(message) = dns.nameserver_addrs() {
            out.push(Problem {
                path: path.key("dns").key("nameservers"),
                message,
            });
        }
        if dns.timeout_ms == Some(0) {
            out.push(Problem {
                path: path.key("dns").key("timeoutMs"),
                message: "a timeout of 0 would refuse every URL with a host name".to_owned(),
            });
        }
    }
    if let Some(limits) = &gateway.limits {
        self::limits(limits, &path.key("limits"), out);
    }
    if let Some(store) = &gateway.store {
        self::store(store, &path.key("store"), out);
    }
    let Some(auth) = &gateway.auth else { return };
    let mut names = BTreeSet::new();
    for (index, token) in auth.tokens.iter().enumerate() {
        let at = path.key("auth").key("tokens").index(index);
        let source = secret::pick(
            token.token.as_ref(),
            token.token_file.as_ref(),
            token.token_env.as_ref(),
            ["token", "tokenFile", "tokenEnv"],
        );
        match source {
            Ok(Some(_)) => {}
            Ok(None) => out.push(Problem {
                path: at.clone(),
                message: "set one of `token`, `tokenFile` or `tokenEnv`".to_owned(),
            }),
            Err(message) => out.push(Problem {
                path: at.clone(),
                message,
            }),
        }
        if !names.insert(token.name.as_str()) {
            out.push(Problem {
                path: at.key("name"),
                message: format!("duplicate token name {:?}", token.name),
            });
        }
        if token.scopes.is_empty() {
            out.push(Problem {
                path: at.key("scopes"),
                message: "a token needs at least one scope".to_owned(),
            });
        }
    }
}

/// `gateway.store`: the keys of the chosen kind only, and for PostgreSQL exactly one URL source.
fn store(store: &StoreConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    let mut only = |key: &str, set: bool, kind: &str| {
        if set {
            out.push(Problem {
                path: path.key(key),
                message: format!("`{key}` applies only to `kind: \"{kind}\"`"),
            });
        }
    };
    match store.kind {
        StoreKind::Sqlite => {
            only("url", store.url.is_some(), "postgres");
            only("urlFile", store.url_file.is_some(), "postgres");
            only("urlEnv", store.url_env.is_some(), "postgres");
            only(
                "maxConnections",
                store.max_connections.is_some(),
                "postgres",
            );
        }
        StoreKind::Postgres => {
            only("path", store.path.is_some(), "sqlite");
            let source = secret::pick(
                store.url.as_ref(),
                store.url_file.as_ref(),
                store.url_env.as_ref(),
                ["url", "urlFile", "urlEnv"],
            );
            match source {
                Ok(Some(_)) => {}
                Ok(None) => out.push(Problem {
                    path: path.key("kind"),
                    message: "`kind: \"postgres\"` needs one of `url`, `urlFile` or `urlEnv`"
                        .to_owned(),
                }),
                Err(message) => out.push(Problem {
                    path: path.clone(),
                    message,
                }),
            }
            if let Some(url) = &store.url
                && !(url.expose().starts_with("postgres://")
                    || url.expose().starts_with("postgresql://"))
            {
                // Never echo the value: it may hold a password.
                out.push(Problem {
                    path: path.key("url"),
                    message: "a PostgreSQL URL starts with `postgres://` or `postgresql://`"
                        .to_owned(),
                });
            }
            if store.max_connections == Some(0) {
                out.push(Problem {
                    path: path.key("maxConnections"),
                    message: "a pool of 0 connections could never reach the database".to_owned(),
                });
            }
        }
    }
}

/// OpenClaw requires approvers when approval cards are switched on explicitly; without any, a
/// card would have nobody to decide it.
fn approvers(approvals: Option<&ChannelApprovalsConfig>, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(approvals) = approvals
        && approvals.enabled == Some(Enabled::Bool(true))
        && approvals.approvers.is_empty()
    {
        out.push(Problem {
            path: path.key("execApprovals").key("enabled"),
            message: "`enabled: true` needs at least one entry in `approvers` (or use \"auto\")"
                .to_owned(),
        });
    }
}

fn channels(channels: &ChannelsConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    let clients = channels.exec_approvals();
    for (name, approvals) in clients {
        self::approvers(approvals, &path.key(name), out);
    }
    for (name, blocks) in channels.delivery() {
        delivery(blocks, &path.key(name), out);
    }
    let bot = ["botToken", "tokenFile", "tokenEnv"];
    let mut check = |at: KeyPath, result: Result<Option<secret::SecretSource>, String>| {
        if let Err(message) = result {
            out.push(Problem { path: at, message });
        }
    };
    if let Some(t) = &channels.telegram {
        let at = path.key("telegram");
        let token = secret::pick(
            t.bot_token.as_ref(),
            t.token_file.as_ref(),
            t.token_env.as_ref(),
            bot,
        );
        check(at.clone(), token);
        let webhook = secret::pick(
            t.webhook_secret.as_ref(),
            t.webhook_secret_file.as_ref(),
            t.webhook_secret_env.as_ref(),
            ["webhookSecret", "webhookSecretFile", "webhookSecretEnv"],
        );
        check(at, webhook);
    }
    if let Some(d) = &channels.discord {
        let at = path.key("discord");
        let token = secret::pick(
            d.bot_token.as_ref(),
            d.token_file.as_ref(),
            d.token_env.as_ref(),
            bot,
        );
        check(at, token);
    }
    if let Some(s) = &channels.slack {
        let at = path.key("slack");
        let token = secret::pick(
            s.bot_token.as_ref(),
            s.token_file.as_ref(),
            s.token_env.as_ref(),
            bot,
        );
        check(at.clone(), token);
        let app = secret::pick(
            s.app_token.as_ref(),
            s.app_token_file.as_ref(),
            s.app_token_env.as_ref(),
            ["appToken", "appTokenFile", "appTokenEnv"],
        );
        check(at.clone(), app);
        let signing = secret::pick(
            s.signing_secret.as_ref(),
            s.signing_secret_file.as_ref(),
            s.signing_secret_env.as_ref(),
            ["signingSecret", "signingSecretFile", "signingSecretEnv"],
        );
        check(at, signing);
    }
    if let Some(d) = &channels.discord {
        discord_ids(d, &path.key("discord"), out);
    }
}

/// `applicationId` and `guildIds` must be snowflakes: a typo would otherwise surface only as a
/// refused command registration after start.
fn discord_ids(discord: &DiscordConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(id) = &discord.application_id
        && snowflake(id).is_none()
    {
        out.push(Problem {
            path: path.key("applicationId"),
            message: format!(
                "{id:?} is not a Discord id (the application's numeric id, from the Developer \
                 Portal's General Information page)"
            ),
        });
    }
    for (index, id) in discord.guild_ids.iter().enumerate() {
        if snowflake(id).is_none() {
            out.push(Problem {
                path: path.key("guildIds").index(index),
                message: format!("{id:?} is not a Discord guild id"),
            });
        }
    }
}

/// Zero limits lock every client out rather than protect the gateway.
fn limits(limits: &GatewayLimitsConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    let rate = limits.rate_limit.as_ref();
    let numbers = [
        ("maxFrameBytes", limits.max_frame_bytes),
        ("maxBodyBytes", limits.max_body_bytes),
        ("maxPendingPerAgent", limits.max_pending_per_agent),
        ("maxPendingPerToken", limits.max_pending_per_token),
        ("maxOutputBytes", limits.max_output_bytes),
        ("runTimeoutMs", limits.run_timeout_ms),
        ("maxRunTimeoutMs", limits.max_run_timeout_ms),
        ("runningEventAfterMs", limits.running_event_after_ms),
        ("historyDays", limits.history_days),
    ];
    for (key, value) in numbers {
        if value == Some(0) {
            out.push(Problem {
                path: path.key(key),
                message: "must be above zero".to_owned(),
            });
        }
    }
    let rate_numbers = [
        ("burst", rate.and_then(|rate| rate.burst)),
        ("perSecond", rate.and_then(|rate| rate.per_second)),
    ];
    for (key, value) in rate_numbers {
        if value == Some(0) {
            out.push(Problem {
                path: path.key("rateLimit").key(key),
                message: "must be above zero; set `enabled: false` to switch rate limiting off"
                    .to_owned(),
            });
        }
    }
    run_timeouts(limits, path, out);
}

/// The run timeouts as the gateway applies them, defaults included: a `runTimeoutMs` above the
/// maximum could never apply, and a `maxRunTimeoutMs` below the default run timeout would cut
/// every run that names no timeout short without a word. The refusal names the key written.
fn run_timeouts(limits: &GatewayLimitsConfig, path: &KeyPath, out: &mut Vec<Problem>) {
    let run = limits.effective_run_timeout_ms();
    let max = limits.effective_max_run_timeout_ms();
    if run <= max {
        return;
    }
    let (key, message) = match (limits.run_timeout_ms, limits.max_run_timeout_ms) {
        (Some(_), Some(_)) => (
            "runTimeoutMs",
            format!("{run} ms is above `maxRunTimeoutMs` ({max} ms)"),
        ),
        (Some(_), None) => (
            "runTimeoutMs",
            format!(
                "{run} ms is above `maxRunTimeoutMs` ({max} ms, its default); raise \
                 `maxRunTimeoutMs` too"
            ),
        ),
        (None, _) => (
            "maxRunTimeoutMs",
            format!(
                "{max} ms is below `runTimeoutMs` ({run} ms, its default), so every run naming \
                 no timeout would be cut to {max} ms; lower `runTimeoutMs` too"
            ),
        ),
    };
    out.push(Problem {
        path: path.key(key),
        message,
    });
}

/// `gateway.listen` must be what `serve` can bind: an IP address and a port. A host name is not
/// resolved (`localhost` may name an address the operator did not mean).
fn listen(listen: Option<&str>, path: &KeyPath, out: &mut Vec<Problem>) {
    if let Some(text) = listen
        && text.parse::<SocketAddr>().is_err()
    {
        out.push(Problem {
            path: path.key("listen"),
            message: format!(
                "{text:?} is not an IP address and port like 127.0.0.1:18790 or [::1]:18790 \
                 (host names are not resolved)"
            ),
        });
    }
}
