//! `gatehouse check --tool`: the tool-call gate offline, as the gateway applies it (the same
//! parameter reading, rules, exec composition and resolver), without a gateway. Grants live in
//! the gateway's database and are not consulted: a call a grant would cover answers `ask`. The
//! gateway's own files are protected as a gateway on the default data directory protects them.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use gatehouse_chat::sanitize::make_visible;
use gatehouse_policy::tool_call::ToolCallDecision;
use gatehouse_policy::tools::normalize_tool_name;
use gatehouse_service::dns::Resolver;
use gatehouse_service::policy::report::ToolDecisionJson;
use gatehouse_service::policy::tool_call::{
    AgentRules, Gate, ToolSession, judge_tool_call, parse_params, tool_policy_inputs,
};
use serde_json::Value;

use super::check::CheckArgs;
use super::exec_sources::Sources;

/// Decides `tool` called with `args.params` for `args.agent`.
pub(crate) fn decide(
    sources: &Sources,
    args: &CheckArgs,
    tool: &str,
) -> anyhow::Result<ToolCallDecision> {
    let params: Value = serde_json::from_str(&args.params)
        .with_context(|| format!("--params is not JSON: {}", args.params))?;
    let config = sources.config();
    let session = ToolSession {
        owner: args.owner,
        provider: args.provider.clone(),
        model: args.model.clone(),
        ..ToolSession::default()
    };
    let (inputs, effective) = tool_policy_inputs(config, &args.agent, &session);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let protected = match super::layout::default_data_dir() {
        Ok(data_dir) => super::layout::protected_paths(config, args.config.as_deref(), &data_dir),
        Err(_) => super::layout::own_files(config, args.config.as_deref()),
    };
    let rules = AgentRules::build(config, &args.agent, home.as_deref(), &protected);
    let exec = sources.policy(&args.agent);
    let parsed = parse_params(&normalize_tool_name(tool), &params);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok(runtime.block_on(async {
        let resolver = Resolver::from_config(config.gateway.dns.as_ref());
        let gate = Gate {
            inputs: &inputs,
            effective: &effective,
            rules: &rules,
            exec: &exec,
            grants: &[],
        };
        judge_tool_call(tool, parsed, gate, &resolver).await
    }))
}

/// The decision as JSON (`--json`, the shape of `tools.call.check`), or for a person: the
/// decision and each reason, then the files to open and the addresses to pin. Everything that
/// came from the call is shown with its hidden characters made visible.
pub(crate) fn print(
    out: &mut impl Write,
    decision: &ToolCallDecision,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let answer = ToolDecisionJson::new(decision, None);
        writeln!(out, "{}", serde_json::to_string(&answer)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{} {}",
        decision.decision,
        make_visible(&decision.tool)
    )?;
    for reason in &decision.reasons {
        writeln!(
            out,
            "  {} {}: {}",
            reason.decision,
            reason.rule,
            make_visible(&reason.message).replace('\n', "\\n")
        )?;
    }
    for file in &decision.files {
        writeln!(
            out,
            "  open {}",
            make_visible(&file.path.display().to_string())
        )?;
    }
    for url in &decision.urls {
        let pinned: Vec<String> = url.pinned.iter().map(ToString::to_string).collect();
        writeln!(
            out,
            "  fetch {} pinned to {}",
            make_visible(&url.url),
            pinned.join(", ")
        )?;
    }
    Ok(())
}
