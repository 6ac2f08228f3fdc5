//! `gatehouse tools`: the effective tool set of an agent, and for every catalog tool which
//! labelled pipeline step (and config key) removed it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use gatehouse_chat::sanitize::one_line;
use gatehouse_config::DEFAULT_AGENT_ID;
use gatehouse_policy::tools::{
    EffectiveTools, PluginTool, Sandboxing, Sender, SessionContext, ToolPolicyInputs,
};
use gatehouse_service::policy::compose::effective_tools_at_depth;
use gatehouse_service::policy::report::ToolsJson;

/// Flags of `gatehouse tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Config file (JSON5, OpenClaw keys); built-in defaults when absent.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    config: Option<PathBuf>,
    /// Agent id whose settings apply.
    #[arg(long, value_name = "ID", default_value = DEFAULT_AGENT_ID)]
    agent: String,
    /// Model provider, e.g. `openai`.
    #[arg(long, value_name = "P")]
    provider: Option<String>,
    /// Model id, e.g. `gpt-5`.
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// The sender owns the deployment (keeps owner-only tools).
    #[arg(long)]
    owner: bool,
    /// The session runs sandboxed.
    #[arg(long)]
    sandboxed: bool,
    /// Spawn depth: 0 is the main agent, 1 its sub-agent, and so on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    spawn_depth: u32,
    /// A plugin tool registered at run time, as `PLUGIN:NAME`; repeatable.
    #[arg(long = "plugin-tool", value_name = "PLUGIN:NAME")]
    plugin_tools: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand.
pub(crate) fn run(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let config = super::config::load(args.config.as_deref())?;
    super::agent_ids::known_agent(&config, [], &args.agent).map_err(anyhow::Error::msg)?;
    let plugin_tools = args
        .plugin_tools
        .iter()
        .map(|spec| parse_plugin_tool(spec))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut inputs = ToolPolicyInputs {
        config: config.tool_config(&args.agent),
        session: SessionContext {
            sender: if args.owner {
                Sender::Owner
            } else {
                Sender::NonOwner
            },
            provider: args.provider,
            model: args.model,
            sandbox: if args.sandboxed {
                Sandboxing::On
            } else {
                Sandboxing::Off
            },
            spawn: None,
        },
        plugin_tools,
    };
    let effective = effective_tools_at_depth(&mut inputs, args.spawn_depth);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string(&ToolsJson::from(&effective))?
        )?;
    } else {
        print_human(&mut stdout, &args.agent, &effective)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_plugin_tool(spec: &str) -> anyhow::Result<PluginTool> {
    match spec.split_once(':') {
        Some((plugin, name)) if !plugin.is_empty() && !name.is_empty() => Ok(PluginTool {
            plugin_id: plugin.to_owned(),
            name: name.to_owned(),
        }),
        _ => bail!("--plugin-tool expects PLUGIN:NAME, got {spec:?}"),
    }
}

fn print_human(
    out: &mut impl Write,
    agent: &str,
    effective: &EffectiveTools,
) -> std::io::Result<()> {
    let allowed: Vec<&str> = effective.allowed.iter().map(String::as_str).collect();
    writeln!(
        out,
        "agent {}: {} of {} tools allowed",
        one_line(agent, 200),
        allowed.len(),
        effective.tools.len()
    )?;
    writeln!(out, "allowed: {}", allowed.join(" "))?;
    for tool in effective.tools.iter().filter(|t| !t.allowed) {
        match &tool.removed_by {
            // A rule with no key comes already parenthesised, as `(owner-only tool)`.
            Some(removal) if removal.config_path.starts_with('(') => writeln!(
                out,
                "  {}: removed by {} {}",
                tool.name, removal.step, removal.config_path
            )?,
            Some(removal) => writeln!(
                out,
                "  {}: removed by {} ({})",
                tool.name, removal.step, removal.config_path
            )?,
            None => writeln!(out, "  {}: not allowed", tool.name)?,
        }
    }
    for warning in &effective.warnings {
        eprintln!("gatehouse: warning: {warning}");
    }
    Ok(())
}
