//! The whole pipeline on realistic configs: each case compares the allowed set, every removal
//! with its step and config path, the sandbox origins and the warnings as one value.

use gatehouse_policy::tools::{Sandboxing, Sender, ToolPolicyInputs};

use crate::tool_support::{
    agent, by_provider, check, guest_on_anthropic, list, owner_on_openai, plugin, rules, some,
    spawned,
};

/// A coding agent `agents.list[0]` ("dev") with the coding profile, as most deployments start.
fn coding_dev() -> ToolPolicyInputs {
    let mut i = owner_on_openai();
    i.config.global.profile = some("coding");
    i.config.agent = Some(agent(0, "dev"));
    i
}

#[test]
fn guest_in_a_discord_guild_loses_exec_through_the_group_policy() {
    let mut i = guest_on_anthropic();
    i.config.global.profile = some("coding");
    i.config.group = Some(rules(
        "channels.discord.guilds.42.tools",
        &[],
        &[],
        &["group:runtime", "write"],
    ));
    check(
        &i,
        r#"
allowed: edit image image_generate memory_get memory_search read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
profile tools.profile: browser canvas message agents_list tts
group channels.discord.guilds.42.tools.deny: write exec process
"#,
    );
}

#[test]
fn coding_agent_on_anthropic_with_browser_opt_in() {
    let mut i = coding_dev();
    i.session.provider = some("anthropic");
    i.session.model = some("claude-sonnet-4");
    i.config.global.rules = rules("tools", &[], &["browser"], &[]);
    check(
        &i,
        r#"
allowed: browser cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
profile tools.profile: canvas message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn family_agent_with_a_short_allow_list_for_a_guest() {
    let mut i = guest_on_anthropic();
    let mut a = agent(1, "family");
    a.tools.rules = rules(
        "agents.list[1].tools",
        &["message", "web_search", "image"],
        &[],
        &[],
    );
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: image message web_search
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
agent agents.list[1].tools.allow: read write edit exec process web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas agents_list image_generate tts
"#,
    );
}

#[test]
fn cheap_model_key_gets_the_minimal_provider_profile() {
    let mut i = coding_dev();
    i.session.model = some("gpt-5-mini");
    i.config.global.by_provider = vec![by_provider(
        "tools",
        "openai/gpt-5-mini",
        Some("minimal"),
        &[],
        &[],
    )];
    check(
        &i,
        r#"
allowed: session_status
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
providerProfile tools.byProvider.openai/gpt-5-mini.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents cron image image_generate
"#,
    );
}

#[test]
fn other_models_of_the_provider_skip_a_model_key() {
    let mut i = coding_dev();
    i.config.global.by_provider = vec![by_provider(
        "tools",
        "openai/gpt-5-mini",
        Some("minimal"),
        &[],
        &[],
    )];
    check(
        &i,
        r#"
allowed: apply_patch cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn google_provider_denies_exec_globally() {
    let mut i = coding_dev();
    i.session.provider = some("google");
    i.session.model = some("gemini-2.5-pro");
    i.config.global.by_provider = vec![by_provider("tools", "google", None, &[], &["exec"])];
    check(
        &i,
        r#"
allowed: cron edit image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
globalProvider tools.byProvider.google.deny: exec
"#,
    );
}

#[test]
fn agent_provider_entry_denies_the_runtime_group_for_anthropic() {
    let mut i = coding_dev();
    i.session.provider = some("anthropic");
    i.session.model = some("claude-opus-4");
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.by_provider = vec![by_provider(
            "agents.list[0].tools",
            "anthropic",
            None,
            &[],
            &["group:runtime"],
        )];
    }
    check(
        &i,
        r#"
allowed: cron edit image image_generate memory_get memory_search read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
agentProvider agents.list[0].tools.byProvider.anthropic.deny: exec process
"#,
    );
}

#[test]
fn owner_loses_automation_to_a_global_group_deny() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &[], &[], &["group:automation"]);
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas edit exec image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
global tools.deny: cron gateway
"#,
    );
}

#[test]
fn agent_profile_replaces_the_global_profile() {
    let mut i = coding_dev();
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.profile = some("minimal");
    }
    check(
        &i,
        r#"
allowed: session_status
profile agents.list[0].tools.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn agent_also_allow_replaces_global_also_allow_at_the_profile_step() {
    let mut i = coding_dev();
    i.config.global.rules = rules("tools", &[], &["browser"], &[]);
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.rules = rules("agents.list[0].tools", &[], &["canvas"], &[]);
    }
    check(
        &i,
        r#"
allowed: apply_patch canvas cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn sandboxed_coding_agent_with_default_sandbox_lists() {
    let mut i = coding_dev();
    i.session.sandbox = Sandboxing::On;
    check(
        &i,
        r#"
allowed: apply_patch edit exec image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get image_generate
sandbox tools.sandbox.tools.deny: cron
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandboxed_session_with_a_global_sandbox_allow_list() {
    let mut i = coding_dev();
    i.session.sandbox = Sandboxing::On;
    i.config.sandbox = Some(rules(
        "tools.sandbox.tools",
        &["group:fs", "web_fetch"],
        &[],
        &[],
    ));
    check(
        &i,
        r#"
allowed: apply_patch edit image read web_fetch write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
sandbox tools.sandbox.tools.allow: exec process web_search memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status image_generate
sandbox tools.sandbox.tools.deny: cron
sandbox allow from global tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandboxed_agent_denies_exec_in_its_own_sandbox_list() {
    let mut i = coding_dev();
    i.session.sandbox = Sandboxing::On;
    if let Some(a) = i.config.agent.as_mut() {
        a.sandbox = Some(rules(
            "agents.list[0].tools.sandbox.tools",
            &[],
            &[],
            &["exec"],
        ));
    }
    check(
        &i,
        r#"
allowed: apply_patch edit image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
sandbox agents.list[0].tools.sandbox.tools.deny: exec
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get cron image_generate
sandbox allow from default tools.sandbox.tools.allow, deny from agent agents.list[0].tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandboxed_guest_on_anthropic() {
    let mut i = guest_on_anthropic();
    i.session.sandbox = Sandboxing::On;
    check(
        &i,
        r#"
allowed: edit exec image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents write
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get message agents_list image_generate tts
sandbox tools.sandbox.tools.deny: browser canvas
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandbox_also_allow_cannot_beat_the_sandbox_deny_list() {
    let mut i = owner_on_openai();
    i.session.sandbox = Sandboxing::On;
    i.config.sandbox = Some(rules(
        "tools.sandbox.tools",
        &[],
        &["browser", "web_search"],
        &[],
    ));
    check(
        &i,
        r#"
allowed: apply_patch edit exec image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_search write
sandbox tools.sandbox.tools.allow: web_fetch memory_search memory_get message agents_list image_generate tts whatsapp_login
sandbox tools.sandbox.tools.deny: browser canvas cron gateway nodes
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandbox_deny_list_without_image_keeps_image_in_a_custom_allow_list() {
    let mut i = owner_on_openai();
    i.session.sandbox = Sandboxing::On;
    i.config.sandbox = Some(rules("tools.sandbox.tools", &["read"], &[], &["exec"]));
    check(
        &i,
        r#"
allowed: image read
sandbox tools.sandbox.tools.allow: write edit apply_patch process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image_generate tts whatsapp_login
sandbox tools.sandbox.tools.deny: exec
sandbox allow from global tools.sandbox.tools.allow, deny from global tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn leaf_sub_agent_of_a_coding_agent() {
    check(
        &spawned(&coding_dev(), 1),
        r#"
allowed: apply_patch edit exec image image_generate process read sessions_yield web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn orchestrator_and_leaf_with_max_spawn_depth_two() {
    let mut main = coding_dev();
    main.config.subagents.default_max_spawn_depth = Some(2);
    let orchestrator = spawned(&main, 1);
    check(
        &orchestrator,
        r#"
allowed: apply_patch edit exec image image_generate process read sessions_history sessions_list sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron
"#,
    );
    check(
        &spawned(&orchestrator, 2),
        r#"
allowed: apply_patch edit exec image image_generate process read sessions_yield web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn three_levels_with_max_spawn_depth_three() {
    let mut main = owner_on_openai();
    main.config.subagents.default_max_spawn_depth = Some(3);
    let level1 = spawned(&main, 1);
    let level2 = spawned(&level1, 2);
    check(
        &level2,
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_history sessions_list sessions_spawn sessions_yield subagents tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
"#,
    );
    check(
        &spawned(&level2, 3),
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_yield tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn sub_agent_beyond_max_depth_is_still_a_leaf() {
    let main = coding_dev();
    check(
        &spawned(&spawned(&main, 1), 2),
        r#"
allowed: apply_patch edit exec image image_generate process read sessions_yield web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn sub_agent_of_a_sandboxed_parent() {
    let mut main = coding_dev();
    main.session.sandbox = Sandboxing::On;
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch edit exec image process read sessions_yield write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get image_generate
sandbox tools.sandbox.tools.deny: cron
subagent (sub-agent default deny): sessions_send session_status
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn global_sub_agent_deny_list_applies_to_every_sub_agent() {
    let mut main = owner_on_openai();
    main.config.subagents.tools = Some(rules(
        "tools.subagents.tools",
        &[],
        &[],
        &["browser", "message"],
    ));
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch canvas edit exec image image_generate nodes process read sessions_yield tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
subagent tools.subagents.tools.deny: browser message
"#,
    );
}

#[test]
fn global_sub_agent_allow_list_narrows_sub_agents() {
    let mut main = coding_dev();
    main.config.subagents.tools = Some(rules(
        "tools.subagents.tools",
        &["read", "exec", "web_search"],
        &[],
        &[],
    ));
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch exec read web_search
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
subagent tools.subagents.tools.allow: write edit process web_fetch sessions_yield image image_generate
"#,
    );
}

#[test]
fn sub_agent_also_allow_re_admits_memory_get() {
    let mut main = coding_dev();
    if let Some(a) = main.config.agent.as_mut() {
        a.tools.rules = rules("agents.list[0].tools", &[], &["memory_get"], &[]);
    }
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch edit exec image image_generate memory_get process read sessions_yield web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
subagent (sub-agent default deny): memory_search sessions_send session_status cron
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn non_owner_sub_agent_inherits_the_owner_removals() {
    let mut main = guest_on_anthropic();
    main.config.global.rules = rules("tools", &[], &[], &["tts"]);
    check(
        &spawned(&main, 1),
        r#"
allowed: browser canvas edit exec image image_generate message process read sessions_yield web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
global tools.deny: tts
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status agents_list
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn sub_agent_runs_as_a_different_agent_bounded_by_its_parent() {
    let mut main = coding_dev();
    main.config.subagents.default_max_spawn_depth = Some(2);
    let mut child = spawned(&main, 1);
    let mut worker = agent(4, "worker");
    worker.tools.profile = some("full");
    worker.tools.rules = rules("agents.list[4].tools", &[], &[], &["web_search"]);
    child.config.agent = Some(worker);
    check(
        &child,
        r#"
allowed: apply_patch edit exec image image_generate process read sessions_history sessions_list sessions_spawn sessions_yield subagents web_fetch write
agent agents.list[4].tools.deny: web_search
subagent (parent session lacks this tool): browser canvas message nodes tts
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
"#,
    );
}

#[test]
fn plugin_only_group_allow_list_is_stripped_and_the_deny_kept() {
    let mut i = coding_dev();
    i.plugin_tools = vec![
        plugin("lobster", "lobster_run"),
        plugin("lobster", "lobster_status"),
    ];
    i.config.global.rules = rules("tools", &[], &["lobster"], &[]);
    i.config.group = Some(rules(
        "channels.telegram.groups.-100.tools",
        &["lobster_run", "group:plugins"],
        &[],
        &["exec"],
    ));
    check(
        &i,
        r#"
allowed: apply_patch cron edit image image_generate lobster_run lobster_status memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
group channels.telegram.groups.-100.tools.deny: exec
warning: tools: channels.telegram.groups.-100.tools.allow names only plugin tools; ignoring it so core tools remain available (use alsoAllow to add plugin tools)
"#,
    );
}

#[test]
fn group_allow_list_mixing_core_and_plugin_tools_applies() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    i.config.group = Some(rules(
        "channels.slack.channels.general.tools",
        &["lobster", "read"],
        &[],
        &[],
    ));
    check(
        &i,
        r#"
allowed: lobster_run read
group channels.slack.channels.general.tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn coding_profile_drops_plugin_tools_unless_also_allowed() {
    let mut i = coding_dev();
    i.plugin_tools = vec![
        plugin("lobster", "lobster_run"),
        plugin("voice", "voice_call"),
    ];
    i.config.global.rules = rules("tools", &[], &["group:plugins"], &[]);
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.rules = rules("agents.list[0].tools", &[], &[], &["voice"]);
    }
    check(
        &i,
        r#"
allowed: apply_patch cron edit exec image image_generate lobster_run memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
agent agents.list[0].tools.deny: voice_call
"#,
    );
}

#[test]
fn plugin_tools_without_profile_are_available() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate lobster_run memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
"#,
    );
}

#[test]
fn plugin_that_shadows_a_core_tool_is_ignored() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("shady", "exec"), plugin("shady", "shady_scan")];
    // With a core tool beside it the list is not plugin-only, so it is applied: the plugin's
    // `exec` neither replaces nor keeps the core `exec`.
    i.config.global.rules = rules("tools", &["shady", "read"], &[], &[]);
    check(
        &i,
        r#"
allowed: read shady_scan
global tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
warning: tools: ignoring plugin tool "exec" from plugin "shady": it would shadow a core tool
"#,
    );
}

#[test]
fn non_openai_model_with_exec_allowed_loses_apply_patch_at_the_model_step() {
    let mut i = guest_on_anthropic();
    i.config.global.rules = rules("tools", &["exec"], &[], &[]);
    check(
        &i,
        r#"
allowed: exec
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
global tools.allow: read write edit process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message agents_list image image_generate tts
"#,
    );
}

#[test]
fn allow_models_excludes_unlisted_openai_models() {
    let mut i = coding_dev();
    i.session.model = some("gpt-4o");
    i.config.apply_patch_allow_models = list(&["gpt-5"]);
    check(
        &i,
        r#"
allowed: cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn provider_taken_from_a_qualified_model_id() {
    let mut i = coding_dev();
    i.session.provider = None;
    i.session.model = some("openai/gpt-5");
    i.config.global.by_provider = vec![by_provider("tools", "openai/gpt-5", None, &[], &["cron"])];
    check(
        &i,
        r#"
allowed: apply_patch edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
globalProvider tools.byProvider.openai/gpt-5.deny: cron
"#,
    );
}

#[test]
fn unknown_provider_and_model_skip_provider_rules_and_apply_patch() {
    let mut i = coding_dev();
    i.session.provider = None;
    i.session.model = None;
    i.config.global.by_provider = vec![by_provider("tools", "openai", None, &[], &["exec"])];
    check(
        &i,
        r#"
allowed: cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
model tools.exec.applyPatch.allowModels: apply_patch
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn unknown_deny_entry_warns_and_removes_nothing() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &[], &[], &["shell"]);
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
warning: tools: tools.deny entry "shell" matches no known tool, group or plugin
"#,
    );
}

#[test]
fn agent_deny_star_removes_everything_at_the_agent_step() {
    let mut i = owner_on_openai();
    let mut a = agent(5, "locked");
    a.tools.rules = rules("agents.list[5].tools", &[], &[], &["*"]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: 
agent agents.list[5].tools.deny: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn agent_allow_list_of_typos_fails_closed() {
    let mut i = owner_on_openai();
    let mut a = agent(0, "main");
    a.tools.rules = rules("agents.list[0].tools", &["raed", "wirte"], &[], &[]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: 
agent agents.list[0].tools.allow: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
warning: tools: agents.list[0].tools.allow entry "raed" matches no known tool, group or plugin
warning: tools: agents.list[0].tools.allow entry "wirte" matches no known tool, group or plugin
"#,
    );
}

#[test]
fn unknown_provider_profile_fails_closed() {
    let mut i = owner_on_openai();
    i.config.global.by_provider = vec![by_provider("tools", "openai", Some("readonly"), &[], &[])];
    check(
        &i,
        r#"
allowed: 
providerProfile tools.byProvider.openai.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
warning: tools: tools.byProvider.openai.profile: unknown tool profile "readonly" (expected minimal, coding, messaging or full); allowing no tools at this step
"#,
    );
}

#[test]
fn provider_keys_differing_only_in_case_both_apply() {
    let mut i = owner_on_openai();
    i.config.global.by_provider = vec![
        by_provider("tools", "OpenAI", None, &[], &["browser"]),
        by_provider("tools", "openai", None, &[], &["canvas"]),
    ];
    check(
        &i,
        r#"
allowed: agents_list apply_patch cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
globalProvider tools.byProvider.OpenAI.deny: browser
globalProvider tools.byProvider.openai.deny: canvas
"#,
    );
}

#[test]
fn public_channel_group_policy_denies_message() {
    let mut i = guest_on_anthropic();
    i.config.global.profile = some("messaging");
    i.config.group = Some(rules(
        "channels.slack.channels.public.tools",
        &[],
        &[],
        &["message"],
    ));
    check(
        &i,
        r#"
allowed: session_status sessions_history sessions_list sessions_send
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
profile tools.profile: read write edit exec process web_search web_fetch memory_search memory_get sessions_spawn sessions_yield subagents browser canvas agents_list image image_generate tts
group channels.slack.channels.public.tools.deny: message
"#,
    );
}

#[test]
fn voice_bot_adds_tts_to_the_messaging_profile() {
    let mut i = owner_on_openai();
    let mut a = agent(2, "voice");
    a.tools.profile = some("messaging");
    a.tools.rules = rules("agents.list[2].tools", &[], &["tts"], &[]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: message session_status sessions_history sessions_list sessions_send tts
profile agents.list[2].tools.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_spawn sessions_yield subagents browser canvas cron gateway nodes agents_list image image_generate whatsapp_login
"#,
    );
}

#[test]
fn minimal_agent_with_exec_and_fs_sections() {
    let mut i = owner_on_openai();
    let mut a = agent(0, "ops");
    a.tools.profile = some("minimal");
    a.tools.exec_configured = true;
    a.tools.fs_configured = true;
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: apply_patch edit exec process read session_status write
profile agents.list[0].tools.profile: web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn agent_denies_apply_patch_by_its_alias() {
    let mut i = coding_dev();
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.rules = rules("agents.list[0].tools", &[], &[], &["Apply-Patch", "BASH"]);
    }
    check(
        &i,
        r#"
allowed: cron edit image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
agent agents.list[0].tools.deny: apply_patch exec
"#,
    );
}

#[test]
fn non_owner_sandboxed_sub_agent_in_a_group() {
    let mut main = guest_on_anthropic();
    main.config.global.profile = some("coding");
    main.session.sandbox = Sandboxing::On;
    main.config.group = Some(rules(
        "channels.discord.guilds.7.tools",
        &[],
        &[],
        &["image"],
    ));
    let mut child = spawned(&main, 1);
    child.session.sender = Sender::NonOwner;
    check(
        &child,
        r#"
allowed: edit exec process read sessions_yield write
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
profile tools.profile: browser canvas message agents_list tts
group channels.discord.guilds.7.tools.deny: image
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get image_generate
subagent (sub-agent default deny): sessions_send session_status
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}
