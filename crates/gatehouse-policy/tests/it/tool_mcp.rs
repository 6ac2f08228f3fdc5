//! MCP and plugin tools in tool policy: by server, by tool, globs, `group:mcp`, tools a server
//! gained after the policy was computed, and plugins posing as MCP servers.

use gatehouse_policy::tools::{
    Step, ToolCallRefused, ToolPolicyInputs, check_tool_call_registering_mcp, effective_tools,
    mcp_tool,
};
use pretty_assertions::assert_eq;

use crate::tool_support::{list, owner_on_openai, plugin, rules, some};

/// An owner on OpenAI with the coding profile and two MCP servers registered.
fn with_servers() -> ToolPolicyInputs {
    let mut inputs = owner_on_openai();
    inputs.config.global.profile = some("coding");
    inputs.plugin_tools = vec![
        mcp_tool("github", "create_issue"),
        mcp_tool("github", "delete_repo"),
        mcp_tool("slack", "post"),
    ];
    inputs
}

/// `ok <tool>` or the refusal's step/config path (`unknown` for unknown tools).
fn call(inputs: &ToolPolicyInputs, tool: &str) -> String {
    match check_tool_call_registering_mcp(inputs, &effective_tools(inputs), tool) {
        Ok(name) => format!("ok {name}"),
        Err(ToolCallRefused::Removed { removal, .. }) => {
            format!("{} {}", removal.step, removal.config_path)
        }
        Err(ToolCallRefused::OwnerOnly { .. }) => "owner-only".to_owned(),
        Err(ToolCallRefused::Unknown { .. }) => "unknown".to_owned(),
    }
}

#[test]
fn denies_mcp_tools_outside_the_profile_and_allows_them_by_server() {
    let mut inputs = with_servers();
    assert_eq!(
        call(&inputs, "mcp__github__create_issue"),
        "profile tools.profile"
    );
    inputs.config.global.rules = rules("tools", &[], &["mcp__github"], &[]);
    assert_eq!(
        call(&inputs, "mcp__github__create_issue"),
        "ok mcp__github__create_issue"
    );
    assert_eq!(
        call(&inputs, "MCP__GitHub__Delete_Repo"),
        "ok mcp__github__delete_repo"
    );
    assert_eq!(call(&inputs, "mcp__slack__post"), "profile tools.profile");
}

#[test]
fn denies_mcp_tools_by_tool_and_by_glob() {
    let mut inputs = with_servers();
    inputs.config.global.rules = rules("tools", &[], &["group:mcp"], &["mcp__*__delete_*"]);
    assert_eq!(
        call(&inputs, "mcp__github__create_issue"),
        "ok mcp__github__create_issue"
    );
    assert_eq!(call(&inputs, "mcp__slack__post"), "ok mcp__slack__post");
    assert_eq!(
        call(&inputs, "mcp__github__delete_repo"),
        "global tools.deny"
    );
}

#[test]
fn allows_an_unregistered_mcp_tool_only_if_profile_and_lists_do() {
    let mut inputs = with_servers();
    // Under `coding` nothing admits it.
    assert_eq!(
        call(&inputs, "mcp__github__new_tool"),
        "profile tools.profile"
    );
    // An entry naming its server admits it, as it would once registered.
    inputs.config.global.rules = rules("tools", &[], &["mcp__github"], &[]);
    assert_eq!(
        call(&inputs, "mcp__github__new_tool"),
        "ok mcp__github__new_tool"
    );
    // `full` has no restriction; a deny still wins.
    let mut full = with_servers();
    full.config.global.profile = some("full");
    assert_eq!(call(&full, "mcp__other__x"), "ok mcp__other__x");
    full.config.global.rules = rules("tools", &[], &[], &["mcp__other"]);
    assert_eq!(call(&full, "mcp__other__x"), "global tools.deny");
}

#[test]
fn denies_unknown_non_mcp_tools_and_malformed_mcp_names() {
    let mut inputs = with_servers();
    inputs.config.global.profile = some("full");
    for name in [
        "shell",
        "lobster_run",
        "mcp__github",
        "mcp____x",
        "mcp__x__",
        "mcp__*__x",
    ] {
        assert_eq!(call(&inputs, name), "unknown", "{name}");
    }
}

#[test]
fn denies_a_plugin_posing_as_an_mcp_server() {
    let mut inputs = with_servers();
    inputs.config.global.profile = some("full");
    inputs.config.global.rules = rules("tools", &[], &[], &["mcp__slack"]);
    // "lobster" registers a tool in the slack server's namespace, where a rule written for
    // lobster would not reach it.
    inputs
        .plugin_tools
        .push(plugin("lobster", "mcp__slack__post_as_admin"));
    let effective = effective_tools(&inputs);
    assert!(
        !effective
            .tools
            .iter()
            .any(|t| t.name == "mcp__slack__post_as_admin")
    );
    assert!(
        effective
            .warnings
            .iter()
            .any(|w| w.contains("an MCP tool name must come from its own server")),
        "{:?}",
        effective.warnings
    );
    // Called anyway, it is judged as the slack server's tool, which is denied.
    assert_eq!(
        call(&inputs, "mcp__slack__post_as_admin"),
        "global tools.deny"
    );
}

#[test]
fn denies_mcp_tools_in_a_sandbox_unless_its_lists_admit_them() {
    let mut inputs = with_servers();
    inputs.config.global.profile = some("full");
    inputs.session.sandbox = gatehouse_policy::tools::Sandboxing::On;
    let effective = effective_tools(&inputs);
    let github = effective
        .tools
        .iter()
        .find(|t| t.name == "mcp__github__create_issue")
        .unwrap();
    assert_eq!(
        github.removed_by.as_ref().map(|r| r.step),
        Some(Step::Sandbox)
    );
    inputs.config.sandbox = Some(rules("tools.sandbox.tools", &[], &["mcp__github"], &[]));
    inputs.config.sandbox.as_mut().unwrap().allow = list(&["group:fs"]);
    assert_eq!(
        call(&inputs, "mcp__github__create_issue"),
        "ok mcp__github__create_issue"
    );
}
