//! `gatehouse mcp`: an MCP server on stdin/stdout (the official Rust SDK, `rmcp`) whose tools
//! run shell commands only through the gateway: `check_command` asks its policy, `run_command`
//! goes through policy, approval and the bound `system.run`. Nothing runs in this process; an
//! unreachable gateway makes every call a tool error. See docs/integrations/mcp.md.

mod arguments;
mod identity;
mod progress;
mod render;
mod server;

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use gatehouse_config::DEFAULT_AGENT_ID;
use rmcp::ServiceExt as _;
use serde_json::{Value, json};

use super::client::{ServerArgs, at_least_one, block_on};
use super::route::RouteArgs;

/// Flags of `gatehouse mcp`; MCP clients put them in their server entry's `args`.
#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Agent id whose policy applies to every command the client runs.
    #[arg(long, value_name = "ID", default_value = DEFAULT_AGENT_ID)]
    agent: String,
    /// Session key approvers see [default: mcp:<client name>@<client version>:<random id>,
    /// one per server process].
    #[arg(long, value_name = "KEY")]
    session: Option<String>,
    /// Seconds a command may wait for a person [default: the gateway's, 30 minutes]. Keep it
    /// below the MCP client's own tool-call timeout.
    #[arg(long, value_name = "SECS", value_parser = at_least_one)]
    approval_timeout: Option<u64>,
    /// Bytes of stdout, and of stderr, passed back to the client; longer output keeps its
    /// beginning and end with a marker where the middle was cut.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024, value_parser = at_least_one)]
    max_output_bytes: u64,
    #[command(flatten)]
    route: RouteArgs,
}

/// What every tool call needs: where the gateway is and who is asking.
#[derive(Debug)]
struct Settings {
    server: ServerArgs,
    agent: String,
    /// `--session`, or `None` for the default built from the client's name.
    session: Option<String>,
    approval_timeout_ms: Option<u64>,
    max_output_bytes: usize,
    /// `turnSource` for every request, from the `--route-*` flags.
    route: Option<Value>,
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub(crate) fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let settings = Settings::from_args(args)?;
    // Stdout carries the protocol; logs go to stderr, which MCP clients keep in their logs,
    // and only when asked for: the SDK logs every message at `info`.
    if std::env::var_os("RUST_LOG").is_some() {
        super::logging::init(super::logging::LogFormat::Text);
    }
    eprintln!(
        "gatehouse mcp: serving on stdio for agent `{}`; every command goes through the gateway",
        settings.agent
    );
    block_on(async {
        let service = server::GatehouseMcp::new(settings)
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client did not complete the handshake")?;
        service
            .waiting()
            .await
            .context("the MCP session ended with an error")?;
        Ok(ExitCode::SUCCESS)
    })
}

impl Settings {
    fn from_args(args: McpArgs) -> anyhow::Result<Self> {
        if args.agent.trim().is_empty() {
            bail!("--agent must not be empty");
        }
        if args.session.as_deref().is_some_and(|s| s.trim().is_empty()) {
            bail!("--session must not be empty");
        }
        let route = args.route.route_channel.map(|channel| {
            json!({
                "channel": channel,
                "to": args.route.route_to,
                "threadId": args.route.route_thread,
                "accountId": args.route.route_account,
            })
        });
        Ok(Settings {
            server: args.server,
            agent: args.agent,
            session: args.session,
            approval_timeout_ms: args.approval_timeout.map(|s| s.saturating_mul(1000)),
            max_output_bytes: usize::try_from(args.max_output_bytes).unwrap_or(usize::MAX),
            route,
        })
    }
}
