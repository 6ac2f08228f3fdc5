//! `gatehouse doctor`: check a deployment before (or while) it runs.
//!
//! It validates the config with line and column, then finds what would stop `gatehouse serve`
//! from starting with it by running serve's own steps short of listening, calling a platform
//! or writing a file: the listen address, every gateway token (resolved and held to the
//! gateway's rules), every enabled channel's secrets and settings, and the data directory's
//! admin token, audit log and approvals database. It shows the effective exec policy of every
//! agent (and what allowlisting each of its programs trusts), each sandboxed agent's effective
//! sandbox with whatever would refuse its runs, whether bubblewrap can start a sandbox here
//! (a failure is an error), and warns about risky settings. Exit 0 when all is well, 1 with warnings only, 2 when the config
//! does not load or `serve` would refuse it.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gatehouse_config::{Config, ConfigError, DEFAULT_AGENT_ID, load_file};
use gatehouse_policy::Security;
use gatehouse_policy::exec::{
    ExecPolicy, ExecRequest, evaluate, has_builtin_profile, ignored_allowlist_entries,
};
use gatehouse_service::policy::compose::{ask_fallback, effective_ask_fallback, exec_policy};
use gatehouse_service::policy::request::with_host_env;
use gatehouse_service::{ExecLimits, Service};
use gatehouse_store::approvals_file::{ExecApprovalsStore, Snapshot};

use gatehouse_chat::sanitize::{make_visible, one_line};

use super::layout::{
    ADMIN_TOKEN_FILE, APPROVALS_FILE, SESSIONS_FILE, check_store, default_data_dir, listen_address,
    review_database, service_setup,
};
use super::tokens::{read_admin_token, review_tokens};

/// Flags of `gatehouse doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// Config file to check; the embedded default when absent.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    config: Option<PathBuf>,
    /// The server's data directory [default: as `gatehouse serve`].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The address `serve --listen` will use, if it overrides the config.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// A running gateway to check live (chat delivery failures).
    #[arg(long, env = "GATEHOUSE_URL", default_value = "http://127.0.0.1:18790")]
    url: String,
    /// Its bearer token; without one the live check is skipped.
    #[arg(long, env = "GATEHOUSE_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// Runs the subcommand.
pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let mut findings = Findings::default();
    let Some(config) = load_config(args.config.as_deref(), &mut findings) else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    check_listen(args.listen, &config, &mut findings);
    check_tokens(&config, &mut findings);
    check_channels(&config, &mut findings);
    for problem in super::config::chat_problems(args.config.as_deref(), &config) {
        findings.error(&problem);
    }
    check_admin_token(&config, &data_dir.join(ADMIN_TOKEN_FILE), &mut findings);
    if let Some(approvals) = check_data_files(&config, &data_dir, &mut findings) {
        check_agents(&config, &approvals, &mut findings);
    }
    match review_database(config.gateway.store.as_ref()) {
        Some(Ok((line, warning))) => {
            println!("{line}");
            findings.warnings.extend(warning);
        }
        Some(Err(error)) => findings.error(&error.into()),
        None => {}
    }
    let host = super::sandbox::host_context(&config, args.config.as_deref(), &data_dir);
    let sandbox = super::sandbox::review(&config, &host);
    for line in &sandbox.lines {
        println!("{}", make_visible(line));
    }
    findings.errors.extend(sandbox.errors);
    match args.token {
        Some(token) => live_check(
            &super::client::ServerArgs::new(args.url, token),
            &mut findings,
        ),
        None => println!("live check: skipped (no --token or GATEHOUSE_TOKEN)"),
    }
    Ok(findings.finish())
}

/// What the checks found. An error is something `serve` would refuse to start with; a warning
/// is a risk it would start with.
#[derive(Debug, Default)]
struct Findings {
    /// Each with its causes, as `serve` would print it.
    errors: Vec<String>,
    /// Each a sentence saying what is at risk.
    warnings: Vec<String>,
}

impl Findings {
    /// Records `error` with its causes, as `serve` prints it when it stops.
    fn error(&mut self, error: &anyhow::Error) {
        self.errors.push(format!("{error:#}"));
    }

    /// Records a risk `serve` would start with.
    fn warn(&mut self, warning: impl Into<String>) {
        self.warnings.push(warning.into());
    }

    /// Prints every error, then every warning, and returns the exit status they call for: 2
    /// for errors, the status `serve` itself exits with on them; 1 for warnings only. Findings
    /// quote agent ids, patterns and platform answers, so each is made visible before it
    /// reaches the terminal.
    fn finish(self) -> ExitCode {
        for error in &self.errors {
            println!("error: {}", make_visible(error));
        }
        for warning in &self.warnings {
            println!("warning: {}", make_visible(warning));
        }
        if !self.errors.is_empty() {
            ExitCode::from(super::EXIT_USAGE)
        } else if !self.warnings.is_empty() {
            ExitCode::from(1)
        } else {
            println!("no problems found");
            ExitCode::SUCCESS
        }
    }
}

/// The config at `path` (from `--config` or `GATEHOUSE_CONFIG`, like `check` and `tools`), or
/// the embedded default. Its load warnings join the findings; a config that does not load is
/// printed with line and column on stderr and yields `None`, since nothing else can be checked.
fn load_config(path: Option<&Path>, findings: &mut Findings) -> Option<Config> {
    let Some(path) = path else {
        println!("config: none (embedded default)");
        return Some(Config::default());
    };
    match load_file(path) {
        Ok(loaded) => {
            println!("config {}: ok", path.display());
            for warning in &loaded.warnings {
                findings.warn(format!("{}:{warning}", path.display()));
            }
            Some(loaded.config)
        }
        Err(error) => {
            eprintln!("gatehouse: {error}");
            None
        }
    }
}

/// The listen address must parse as `serve` parses it; a non-loopback one is a warning, as the
/// gateway speaks no TLS.
fn check_listen(flag: Option<SocketAddr>, config: &Config, findings: &mut Findings) {
    match listen_address(flag, config.gateway.listen.as_deref()) {
        Ok(listen) if !listen.ip().is_loopback() => findings.warn(format!(
            "listening on {listen} without TLS: tokens cross the network in clear text; listen \
             on loopback behind a TLS-terminating proxy"
        )),
        Ok(_) => {}
        Err(error) => findings.error(&error),
    }
}

/// Every gateway token that `serve` would refuse, each with its own error; token files readable
/// by group or others are warnings.
fn check_tokens(config: &Config, findings: &mut Findings) {
    let review = review_tokens(config);
    for error in &review.errors {
        findings.error(error);
    }
    findings.warnings.extend(review.warnings);
}

/// Every channel secret `serve` would read, resolved the way it resolves them: each one that
/// cannot be read is an error, each file readable by group or others a warning. Then each
/// enabled channel's settings are built as `serve` builds them, without calling the platform,
/// and whatever else it would refuse (a missing key, a malformed URL) is an error too.
fn check_channels(config: &Config, findings: &mut Findings) {
    for secret in config.channel_secrets_in_use() {
        match secret.source.resolve(&secret.key) {
            Ok(resolved) => findings.warnings.extend(resolved.warning),
            Err(error) => findings.errors.push(error.to_string()),
        }
    }
    // A channel's settings step stops at its first secret failure and resolves the secrets
    // again: both were reported once above, so only its other refusals are kept.
    let mut repeated_warnings = Vec::new();
    for error in super::channels::check_all(config, &mut repeated_warnings) {
        let secret_failure = matches!(
            error.downcast_ref::<ConfigError>(),
            Some(ConfigError::Secret { .. })
        );
        if !secret_failure {
            findings.error(&error);
        }
    }
}

/// Prints every agent's effective exec policy under `approvals` and warns about the settings
/// that let commands run with nobody asked, and about allowlist entries the policy ignores.
fn check_agents(config: &Config, approvals: &Snapshot, findings: &mut Findings) {
    for note in &approvals.report.notes {
        findings.warn(format!("{}: {note}", approvals.path.display()));
    }
    let mut agents: BTreeSet<String> = config.agents.list.iter().map(|a| a.id.clone()).collect();
    agents.insert(DEFAULT_AGENT_ID.to_owned());
    agents.extend(
        approvals
            .file
            .agents
            .keys()
            .filter(|id| *id != "*")
            .cloned(),
    );
    let mut writable_dirs = BTreeSet::new();
    for agent in &agents {
        let safe_bins = config.safe_bins(agent);
        for name in safe_bins.unprofiled(has_builtin_profile) {
            findings.warn(format!(
                "agent {agent}: safe bin {name} has no profile (none built in, none under \
                 safeBinProfiles), so it is never allowed as a safe bin"
            ));
        }
        writable_dirs.extend(safe_bins.writable_trusted_dir_warnings());
        let policy = exec_policy(config, Some(&approvals.file), agent);
        let configured = ask_fallback(config, &approvals.file, agent);
        let ask_fallback = effective_ask_fallback(configured, policy.security);
        let clamped = if configured == ask_fallback {
            String::new()
        } else {
            format!(" (configured {configured}, clamped to the security)")
        };
        let allowlist = review_allowlist(agent, &policy);
        println!(
            "agent {}: security {}, ask {}, askFallback {ask_fallback}{clamped}, {} allowlist \
             entries",
            one_line(agent, 200),
            policy.security,
            policy.ask,
            allowlist.effective
        );
        for ignored in allowlist.ignored {
            findings.warn(format!("agent {agent}: {ignored}"));
        }
        for line in super::trust::allowlist_trust(&policy.allowlist) {
            println!("agent {}: {}", one_line(agent, 200), make_visible(&line));
        }
        if policy.security == Security::Full {
            findings.warn(format!(
                "agent {agent}: security is full, so every command runs with nobody asked"
            ));
        }
        if ask_fallback == Security::Full {
            findings.warn(format!(
                "agent {agent}: askFallback is full, so an unanswered approval runs the command"
            ));
        }
    }
    // Trusted directories are mostly global: one warning each, not one per agent.
    for warning in writable_dirs {
        findings.warn(warning);
    }
}

/// What `serve` would refuse in the data directory: one that is not a directory, an
/// `exec-approvals.json` it cannot read, and whatever the gateway's own check of its audit log
/// and approvals database finds (the checks `Service::prepare` and the store's opening make,
/// worded as their
/// errors), all read without writing anything. The approvals file as read, for the agent
/// lines; `None` when it cannot be read.
fn check_data_files(config: &Config, data_dir: &Path, findings: &mut Findings) -> Option<Snapshot> {
    let shown = data_dir.display();
    if data_dir.exists() && !data_dir.is_dir() {
        findings.error(&anyhow::anyhow!(
            "cannot create data directory {shown}: it exists and is not a directory"
        ));
        return None;
    }
    let path = data_dir.join(APPROVALS_FILE);
    let approvals = match ExecApprovalsStore::new(&path).read() {
        Ok(approvals) => Some(approvals),
        Err(error) => {
            // `serve` refuses to start on it; what else is found still counts.
            let error =
                anyhow::Error::new(error).context(format!("cannot read {}", path.display()));
            findings.error(&error);
            None
        }
    };
    if !data_dir.exists() {
        println!("data directory {shown}: none yet (serve creates it)");
        return approvals;
    }
    let limits = ExecLimits::configured(config.gateway.limits.as_ref());
    let mut refusals =
        Service::check_files(&service_setup(config.clone(), None, data_dir, limits, None));
    refusals.extend(check_store(config.gateway.store.as_ref(), data_dir).err());
    refusals
        .extend(gatehouse_service::chat::check_sessions_file(&data_dir.join(SESSIONS_FILE)).err());
    if refusals.is_empty() && approvals.is_some() {
        println!("data directory {shown}: ok");
    } else {
        println!("data directory {shown}: serve would refuse it");
    }
    for refusal in refusals {
        findings.error(&anyhow::Error::new(refusal));
    }
    approvals
}

/// An agent's allowlist as the policy uses it.
#[derive(Debug)]
struct AllowlistReview {
    /// Entries the policy matches commands against.
    effective: usize,
    /// The policy's warning for each entry it ignores (a bare name, a bad glob or argPattern).
    ignored: Vec<String>,
}

/// Asks the policy which entries it ignores rather than restating its rules. `HOME` is this
/// process's, as for `check`, so `~` expands the same way. An ignored bare program name is
/// followed by a line naming the path it resolves to on this host, found as the policy
/// resolves an agent's command, so the fix names this host's program rather than a guessed
/// `/usr/bin/…`.
fn review_allowlist(agent: &str, policy: &ExecPolicy) -> AllowlistReview {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let mut review = AllowlistReview {
        effective: 0,
        ignored: Vec::new(),
    };
    for entry in &policy.allowlist {
        let warnings = ignored_allowlist_entries(std::slice::from_ref(entry), home.as_deref());
        if warnings.is_empty() {
            review.effective += 1;
        }
        let ignored = !warnings.is_empty();
        review.ignored.extend(warnings);
        if let Some(path) = resolved_here(entry.pattern.trim(), policy).filter(|_| ignored) {
            review.ignored.push(format!(
                "on this host `{}` is {}: allowlist that path instead \
                 (`gatehouse approvals allowlist add --agent {agent} {}`)",
                entry.pattern.trim(),
                path.display(),
                path.display()
            ));
        }
    }
    review
}

/// Where a bare program `name` resolves on this host's `PATH`, as the policy resolves an
/// agent's command; `None` for anything but a bare name, or a name not found.
fn resolved_here(name: &str, policy: &ExecPolicy) -> Option<PathBuf> {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'));
    if !bare || name.starts_with('-') {
        return None;
    }
    let request = ExecRequest::argv(vec![name.to_owned()], PathBuf::from("/"));
    let request = with_host_env(request, &BTreeMap::new());
    evaluate(&request, policy)
        .segments
        .first()?
        .resolved_path
        .clone()
}

/// Asks the running gateway for `gateway.status`: every chat target whose delivery failed for
/// good and every chat channel that stopped becomes a warning, since an approver there never
/// sees the prompt; on replicas, so does a chat lease nobody holds, and its holder is named.
fn live_check(server: &super::client::ServerArgs, findings: &mut Findings) {
    let status = match server.call("gateway.status", serde_json::json!({})) {
        Ok(status) => status,
        Err(error) => {
            println!("live check: failed");
            findings.warn(format!("live check: {error:#}"));
            return;
        }
    };
    println!("live check: gateway reachable");
    let failures = status
        .pointer("/chat/failures")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text = |failure: &serde_json::Value, key: &str| {
        failure
            .get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let stopped = status
        .pointer("/chat/stopped")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(lease) = status.pointer("/chat/lease") {
        match lease.get("holder").and_then(serde_json::Value::as_str) {
            Some(holder) => println!("chat lease: held by {holder}"),
            None => findings.warn(
                "no replica holds the chat lease: chat is silent until one takes it over \
                 (within seconds while a replica with chat channels runs)"
                    .to_owned(),
            ),
        }
    }
    for channel in &stopped {
        findings.warn(format!(
            "chat channel {} stopped and is no longer an approval route: {}; restart the \
             gateway once it is fixed",
            text(channel, "channel"),
            text(channel, "error"),
        ));
    }
    for failure in &failures {
        // An approval message says which and what is wrong with it (`undelivered`, `unedited`,
        // `lost`); a reply says nothing more.
        let about = match failure.get("problem").and_then(serde_json::Value::as_str) {
            Some(problem) => match failure
                .get("approvalId")
                .and_then(serde_json::Value::as_str)
            {
                Some(id) => {
                    let short: String = id.chars().take(8).collect();
                    format!(
                        " ({} of approval {short}, {problem})",
                        text(failure, "kind")
                    )
                }
                None => format!(" ({}, {problem})", text(failure, "kind")),
            },
            None => String::new(),
        };
        findings.warn(format!(
            "chat delivery to {} ({}) failed: {} failed after {} attempts{about}: {}",
            text(failure, "target"),
            text(failure, "channel"),
            text(failure, "operation"),
            failure
                .get("attempts")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0),
            text(failure, "error"),
        ));
    }
}

/// The generated admin token, which `serve` reads only when no tokens are configured: then it
/// refuses to start on a file others can read or one too short, and so does this check.
fn check_admin_token(config: &Config, path: &Path, findings: &mut Findings) {
    let configured = config
        .gateway
        .auth
        .as_ref()
        .is_some_and(|auth| !auth.tokens.is_empty());
    if configured || !path.exists() {
        return;
    }
    if let Err(error) = read_admin_token(path) {
        findings.error(&error);
    }
}
