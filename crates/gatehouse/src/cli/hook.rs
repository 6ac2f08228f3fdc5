//! `gatehouse hook claude-code|codex`: a command hook for the agent host's `PreToolUse` and
//! `PermissionRequest` events. It reads the event on stdin, asks the gateway
//! (`tools.call.check`, and `tools.call.request` when a person must decide, waiting for them),
//! and answers in the host's own output contract. Every path answers: an input it cannot read,
//! a gateway it cannot reach, a refusal, a timeout — each is a deny with a reason (or, if
//! asked, the host's own prompt), never an allow and never a crash. See
//! docs/integrations/claude-code.md and codex.md.

mod ask;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use gatehouse_hooks::{
    CardRoute, HookOutput, Host, IntegrationSettings, MAX_INPUT_BYTES, render, translate,
};

use super::client::{ServerArgs, at_least_one, block_on};
use super::route::RouteArgs;

/// Flags of `gatehouse hook`; the host's settings put them in the hook's `args`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  echo \"$EVENT_JSON\" | gatehouse hook claude-code        # what Claude Code runs (stdin: the event)
  gatehouse hook codex --agent codex --route-channel telegram --route-to -1001234567890
  gatehouse hook claude-code --config /etc/gatehouse/config.json5 --on-unreachable ask

The host's settings run it: see docs/integrations/claude-code.md and codex.md.")]
pub(crate) struct HookArgs {
    /// The agent host whose hook contract is spoken.
    #[arg(value_enum)]
    host: HostArg,
    #[command(flatten)]
    server: ServerArgs,
    /// Config file whose `integrations.claudeCode` / `integrations.codex` block gives this
    /// hook's settings; the flags below override it.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    config: Option<PathBuf>,
    /// Gatehouse agent id every call of this host runs as (its policy, workspace, grants)
    /// [default: main].
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Session key template: `{host}`, `{session_id}` (required), `{agent_id}`
    /// [default: {host}:{session_id}].
    #[arg(long, value_name = "TEMPLATE")]
    session_key: Option<String>,
    /// What to answer when the gateway cannot be reached: `deny`, or `ask` to fall back to the
    /// host's own permission prompt (where it has one for the event). Never allow
    /// [default: deny].
    #[arg(long, value_name = "ANSWER", value_parser = ["deny", "ask"])]
    on_unreachable: Option<String>,
    /// Seconds a call may wait for a person [default: 280]. Keep it below the hook's
    /// `timeout` in the host's settings, so Gatehouse answers (deny) before the host gives up
    /// on the hook.
    #[arg(long, value_name = "SECS", value_parser = at_least_one)]
    approval_timeout: Option<u64>,
    /// The machine name approvers see [default: this machine's host name].
    #[arg(long, value_name = "NAME")]
    machine: Option<String>,
    #[command(flatten)]
    route: RouteArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum HostArg {
    /// Claude Code (contract of 2.1.332).
    ClaudeCode,
    /// Codex CLI (contract of 0.171.0).
    Codex,
}

/// Answers one hook event: reads stdin, asks the gateway, writes the host's answer.
///
/// Every path is answered in the host's contract; settings that cannot be used (a bad flag
/// value, a broken config file) are exit 2 with the reason on stderr, which both hosts read as
/// a block.
pub(crate) fn run(args: HookArgs) -> anyhow::Result<ExitCode> {
    let host = match args.host {
        HostArg::ClaudeCode => Host::ClaudeCode,
        HostArg::Codex => Host::Codex,
    };
    let output = match settings(host, &args) {
        Err(error) => blocked(&format!("the hook's settings cannot be used: {error:#}")),
        Ok(settings) => match read_stdin() {
            Ok(bytes) => answer(host, &bytes, &settings, &args.server),
            Err(error) => blocked(&format!("cannot read the hook input: {error}")),
        },
    };
    // Nothing more can be said if the host closed our pipes; the exit code still blocks.
    let _ = std::io::stdout().lock().write_all(&output.stdout);
    let _ = std::io::stderr().lock().write_all(&output.stderr);
    Ok(ExitCode::from(output.exit_code))
}

/// Exit 2 with `reason` on stderr: a block whatever the event.
fn blocked(reason: &str) -> HookOutput {
    HookOutput {
        exit_code: 2,
        stdout: Vec::new(),
        stderr: format!("Gatehouse refused this call: {reason}\n").into_bytes(),
    }
}

/// The hook input, up to one byte over the limit (enough to know it is too large).
fn read_stdin() -> std::io::Result<Vec<u8>> {
    let limit = u64::try_from(MAX_INPUT_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The host's answer to the event in `bytes`.
fn answer(
    host: Host,
    bytes: &[u8],
    settings: &IntegrationSettings,
    server: &ServerArgs,
) -> HookOutput {
    let translated = match translate(host, bytes, settings, &machine_name()) {
        Ok(translated) => translated,
        Err(rejected) => return rejected.render(host),
    };
    let answer =
        match block_on(async { Ok(ask::gateway(server, &translated.call, settings).await) }) {
            Ok(answer) => answer,
            Err(error) => {
                gatehouse_hooks::Answer::unreachable(settings.on_unreachable, &format!("{error:#}"))
            }
        };
    render(host, translated.event(), &answer)
}

/// The config file's block for `host`, with the flags over it.
fn settings(host: Host, args: &HookArgs) -> anyhow::Result<IntegrationSettings> {
    let config = super::config::load(args.config.as_deref())?;
    let block = match host {
        Host::ClaudeCode => config.integrations.claude_code,
        Host::Codex => config.integrations.codex,
    };
    let mut settings = block.map(|b| b.settings()).unwrap_or_default();
    if let Some(agent) = &args.agent {
        settings.agent_id = agent.parse().map_err(|e| anyhow::anyhow!("--agent: {e}"))?;
    }
    if let Some(template) = &args.session_key {
        settings.session_key = template
            .parse()
            .map_err(|e| anyhow::anyhow!("--session-key: {e}"))?;
    }
    if let Some(answer) = &args.on_unreachable {
        settings.on_unreachable = answer
            .parse()
            .map_err(|e| anyhow::anyhow!("--on-unreachable: {e}"))?;
    }
    if let Some(seconds) = args.approval_timeout {
        settings.approval_timeout = Duration::from_secs(seconds);
    }
    if let Some(machine) = &args.machine {
        if machine.trim().is_empty() {
            bail!("--machine must not be empty");
        }
        settings.machine = Some(machine.clone());
    }
    let flags = &args.route;
    if let (Some(channel), Some(to)) = (&flags.route_channel, &flags.route_to) {
        let mut route = CardRoute::new(channel, to).map_err(|e| anyhow::anyhow!("{e}"))?;
        route.thread_id = flags.route_thread.clone();
        route.account_id = flags.route_account.clone();
        settings.route = Some(route);
    }
    Ok(settings)
}

/// This machine's host name, which approvers see; `this machine` when it has none.
fn machine_name() -> String {
    let uname = rustix::system::uname();
    let name = uname.nodename().to_string_lossy();
    let name = name.trim();
    if name.is_empty() {
        "this machine".to_owned()
    } else {
        name.to_owned()
    }
}
