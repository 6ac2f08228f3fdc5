//! One test per tool-policy rule of issue 3, each through `effective_tools`.

use gatehouse_policy::tools::{Sandboxing, Sender};

use crate::tool_support::{
    agent, by_provider, check, guest_on_anthropic, list, owner_on_openai, plugin, rules, some,
    spawned,
};

#[test]
fn allows_every_core_tool_to_an_owner_on_openai_without_config() {
    check(
        &owner_on_openai(),
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
"#,
    );
}

#[test]
fn lists_plugin_tools_after_core_tools() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![
        plugin("lobster", "lobster_run"),
        plugin("voice", "voice_call"),
    ];
    i.config.global.rules = rules("tools", &["read"], &[], &[]);
    check(
        &i,
        r#"
allowed: read
global tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login lobster_run voice_call
"#,
    );
}

#[test]
fn expands_core_groups_in_allow_lists() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules(
        "tools",
        &["group:web", "group:ui", "group:memory"],
        &[],
        &[],
    );
    check(
        &i,
        r#"
allowed: browser canvas memory_get memory_search web_fetch web_search
global tools.allow: read write edit apply_patch exec process sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn expands_group_plugins_and_bare_plugin_ids() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![
        plugin("lobster", "lobster_run"),
        plugin("lobster", "lobster_status"),
        plugin("voice", "voice_call"),
    ];
    i.config.global.rules = rules("tools", &["read"], &[], &["voice"]);
    i.config.agent = Some(agent(0, "main"));
    if let Some(a) = i.config.agent.as_mut() {
        a.tools.rules = rules("agents.list[0].tools", &["read", "group:plugins"], &[], &[]);
    }
    check(
        &i,
        r#"
allowed: read
global tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login lobster_run lobster_status
global tools.deny: voice_call
"#,
    );
}

#[test]
fn minimal_profile_allows_only_session_status() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("minimal");
    check(
        &i,
        r#"
allowed: session_status
profile tools.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn coding_profile_leaves_out_ui_gateway_nodes_agents_list_and_tts() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("coding");
    check(
        &i,
        r#"
allowed: apply_patch cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn messaging_profile_allows_message_and_limited_sessions() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("messaging");
    check(
        &i,
        r#"
allowed: message session_status sessions_history sessions_list sessions_send
profile tools.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_spawn sessions_yield subagents browser canvas cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn full_profile_restricts_nothing() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("full");
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
"#,
    );
}

#[test]
fn denies_everything_at_the_profile_step_for_an_unknown_profile() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("admin");
    check(
        &i,
        r#"
allowed: 
profile tools.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
warning: tools: tools.profile: unknown tool profile "admin" (expected minimal, coding, messaging or full); allowing no tools at this step
"#,
    );
}

#[test]
fn also_allow_adds_opt_in_tools_to_a_profile() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("coding");
    i.config.global.rules = rules("tools", &[], &["browser", "canvas"], &[]);
    check(
        &i,
        r#"
allowed: apply_patch browser canvas cron edit exec image image_generate memory_get memory_search process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: message gateway nodes agents_list tts whatsapp_login
"#,
    );
}

#[test]
fn also_allow_widens_an_allow_list_without_replacing_it() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["read"], &["web_fetch"], &[]);
    check(
        &i,
        r#"
allowed: read web_fetch
global tools.allow: write edit apply_patch exec process web_search memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn matches_names_case_insensitively_with_aliases() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["READ", "Bash", "Apply-Patch"], &[], &["PROCESS"]);
    check(
        &i,
        r#"
allowed: apply_patch exec read
global tools.allow: write edit web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
global tools.deny: process
"#,
    );
}

#[test]
fn matches_star_and_question_globs() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["sessions_*", "memory_?et"], &[], &["*_history"]);
    check(
        &i,
        r#"
allowed: memory_get sessions_list sessions_send sessions_spawn sessions_yield
global tools.allow: read write edit apply_patch exec process web_search web_fetch memory_search subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
global tools.deny: sessions_history
"#,
    );
}

#[test]
fn star_in_allow_filters_nothing_but_deny_still_wins() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["*"], &[], &["exec", "group:ui"]);
    check(
        &i,
        r#"
allowed: agents_list apply_patch cron edit gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
global tools.deny: exec browser canvas
"#,
    );
}

#[test]
fn deny_wins_over_allow_in_the_same_scope() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["exec", "read"], &[], &["exec"]);
    check(
        &i,
        r#"
allowed: apply_patch read
global tools.allow: write edit process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
global tools.deny: exec
"#,
    );
}

#[test]
fn an_empty_allow_list_filters_nothing() {
    let mut i = owner_on_openai();
    i.config.global.rules.allow = list(&[]);
    i.config.global.rules.deny = list(&["tts"]);
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search whatsapp_login write
global tools.deny: tts
"#,
    );
}

#[test]
fn a_later_scope_cannot_re_allow_what_an_earlier_one_denied() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &[], &[], &["browser"]);
    let mut a = agent(1, "web");
    a.tools.rules = rules("agents.list[1].tools", &["browser", "read"], &[], &[]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: read
global tools.deny: browser
agent agents.list[1].tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn exec_section_implies_exec_and_process_through_the_profile() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("messaging");
    i.config.global.exec_configured = true;
    check(
        &i,
        r#"
allowed: apply_patch exec message process session_status sessions_history sessions_list sessions_send
profile tools.profile: read write edit web_search web_fetch memory_search memory_get sessions_spawn sessions_yield subagents browser canvas cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn fs_section_implies_read_write_edit_through_the_profile() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("minimal");
    let mut a = agent(0, "main");
    a.tools.fs_configured = true;
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: edit read session_status write
profile tools.profile: apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn strips_a_plugin_only_group_allow_list_with_a_warning() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    i.config.group = Some(rules(
        "channels.discord.guilds.123.tools",
        &["lobster"],
        &[],
        &["tts"],
    ));
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate lobster_run memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search whatsapp_login write
group channels.discord.guilds.123.tools.deny: tts
warning: tools: channels.discord.guilds.123.tools.allow names only plugin tools; ignoring it so core tools remain available (use alsoAllow to add plugin tools)
"#,
    );
}

/// Issue 29: a plugin-only `tools.allow` is stripped at the global and agent steps too (and
/// at their `byProvider` steps), as OpenClaw strips it at every step.
#[test]
fn strips_a_plugin_only_global_allow_list_with_a_warning() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    i.config.global.rules = rules("tools", &["lobster"], &[], &["tts"]);
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate lobster_run memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search whatsapp_login write
global tools.deny: tts
warning: tools: tools.allow names only plugin tools; ignoring it so core tools remain available (use alsoAllow to add plugin tools)
"#,
    );
}

#[test]
fn strips_a_plugin_only_agent_allow_list_with_a_warning() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    let mut a = agent(0, "main");
    a.tools.rules = rules("agents.list[0].tools", &["group:plugins"], &[], &["tts"]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas cron edit exec gateway image image_generate lobster_run memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search whatsapp_login write
agent agents.list[0].tools.deny: tts
warning: tools: agents.list[0].tools.allow names only plugin tools; ignoring it so core tools remain available (use alsoAllow to add plugin tools)
"#,
    );
}

#[test]
fn exec_in_an_allow_list_implies_apply_patch() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["exec"], &[], &[]);
    check(
        &i,
        r#"
allowed: apply_patch exec
global tools.allow: read write edit process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn deny_apply_patch_wins_over_exec_implication() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["exec"], &[], &["apply_patch"]);
    check(
        &i,
        r#"
allowed: exec
global tools.allow: read write edit process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
global tools.deny: apply_patch
"#,
    );
}

#[test]
fn offers_apply_patch_only_to_openai_models() {
    let mut i = owner_on_openai();
    i.session.provider = some("anthropic");
    i.session.model = some("claude-opus-4");
    i.config.global.rules = rules("tools", &["group:fs"], &[], &[]);
    check(
        &i,
        r#"
allowed: edit read write
model tools.exec.applyPatch.allowModels: apply_patch
global tools.allow: exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn allow_models_offers_apply_patch_to_the_named_models() {
    let mut i = owner_on_openai();
    i.session.provider = some("anthropic");
    i.session.model = some("claude-opus-4");
    i.config.apply_patch_allow_models = list(&["anthropic/claude-opus-4"]);
    i.config.global.rules = rules("tools", &["group:fs"], &[], &[]);
    check(
        &i,
        r#"
allowed: apply_patch edit read write
global tools.allow: exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}

#[test]
fn reports_a_repeated_warning_once() {
    let mut i = owner_on_openai();
    i.config.global.rules = rules("tools", &["read", "typo", "TYPO"], &[], &["typo"]);
    check(
        &i,
        r#"
allowed: read
global tools.allow: write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
warning: tools: tools.deny entry "typo" matches no known tool, group or plugin
warning: tools: tools.allow entry "typo" matches no known tool, group or plugin
"#,
    );
}

#[test]
fn removes_owner_only_tools_for_non_owners() {
    let mut i = owner_on_openai();
    i.session.sender = Sender::NonOwner;
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser canvas edit exec image image_generate memory_get memory_search message process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search write
owner (owner-only tool): cron gateway nodes whatsapp_login
"#,
    );
}

#[test]
fn owner_only_tools_stay_removed_even_when_allowed_explicitly() {
    let mut i = guest_on_anthropic();
    i.config.global.rules = rules("tools", &["cron", "gateway", "read"], &[], &[]);
    check(
        &i,
        r#"
allowed: read
model tools.exec.applyPatch.allowModels: apply_patch
owner (owner-only tool): cron gateway nodes whatsapp_login
global tools.allow: write edit exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message agents_list image image_generate tts
"#,
    );
}

#[test]
fn prefers_the_provider_model_key_over_the_provider_key() {
    let mut i = owner_on_openai();
    i.config.global.by_provider = vec![
        by_provider("tools", "openai", None, &[], &["browser"]),
        by_provider("tools", "openai/gpt-5", None, &[], &["canvas"]),
    ];
    check(
        &i,
        r#"
allowed: agents_list apply_patch browser cron edit exec gateway image image_generate memory_get memory_search message nodes process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents tts web_fetch web_search whatsapp_login write
globalProvider tools.byProvider.openai/gpt-5.deny: canvas
"#,
    );
}

#[test]
fn provider_profile_narrows_after_the_global_profile() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("coding");
    i.config.global.by_provider = vec![by_provider("tools", "openai", Some("minimal"), &[], &[])];
    check(
        &i,
        r#"
allowed: session_status
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
providerProfile tools.byProvider.openai.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents cron image image_generate
"#,
    );
}

#[test]
fn agent_provider_rules_apply_after_agent_rules() {
    let mut i = owner_on_openai();
    let mut a = agent(3, "ops");
    a.tools.rules = rules("agents.list[3].tools", &["group:runtime", "read"], &[], &[]);
    a.tools.by_provider = vec![by_provider(
        "agents.list[3].tools",
        "openai",
        None,
        &[],
        &["process"],
    )];
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: apply_patch exec read
agent agents.list[3].tools.allow: write edit web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
agentProvider agents.list[3].tools.byProvider.openai.deny: process
"#,
    );
}

#[test]
fn sub_agent_at_default_depth_is_a_leaf() {
    let main = owner_on_openai();
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_yield tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn orchestrator_sub_agent_keeps_spawning_tools_below_max_depth() {
    let mut main = owner_on_openai();
    main.config.subagents.default_max_spawn_depth = Some(2);
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_history sessions_list sessions_spawn sessions_yield subagents tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
"#,
    );
}

#[test]
fn agent_max_spawn_depth_overrides_the_default() {
    let mut main = owner_on_openai();
    main.config.subagents.default_max_spawn_depth = Some(3);
    let mut a = agent(0, "main");
    a.max_spawn_depth = Some(1);
    main.config.agent = Some(a);
    check(
        &spawned(&main, 1),
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_yield tts web_fetch web_search write
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
subagent agents.list[0].subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn explicit_agent_allow_re_admits_from_the_always_deny_list_only() {
    let mut main = owner_on_openai();
    let mut a = agent(0, "researcher");
    a.tools.rules = rules(
        "agents.list[0].tools",
        &["memory_search", "sessions_spawn", "read", "web_search"],
        &[],
        &[],
    );
    main.config.agent = Some(a);
    check(
        &spawned(&main, 1),
        r#"
allowed: memory_search read web_search
agent agents.list[0].tools.allow: write edit apply_patch exec process web_fetch memory_get sessions_list sessions_history sessions_send sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
subagent agents.defaults.subagents.maxSpawnDepth: sessions_spawn
"#,
    );
}

#[test]
fn nothing_re_admits_what_the_parent_lacks() {
    let mut main = owner_on_openai();
    main.config.global.rules = rules("tools", &[], &[], &["web_fetch"]);
    let mut child = spawned(&main, 1);
    // The child runs as another agent whose config forgets the global deny (as a different
    // config would); the parent's set still bounds it.
    child.config.global.rules = rules("tools", &[], &[], &[]);
    check(
        &child,
        r#"
allowed: apply_patch browser canvas edit exec image image_generate message nodes process read sessions_yield tts web_search write
subagent (parent session lacks this tool): web_fetch
subagent (sub-agent default deny): memory_search memory_get sessions_send session_status cron gateway agents_list whatsapp_login
subagent agents.defaults.subagents.maxSpawnDepth: sessions_list sessions_history sessions_spawn subagents
"#,
    );
}

#[test]
fn sandbox_defaults_keep_the_coding_core_and_deny_channel_plugins() {
    let mut i = owner_on_openai();
    i.session.sandbox = Sandboxing::On;
    i.plugin_tools = vec![
        plugin("discord", "discord_post"),
        plugin("lobster", "lobster_run"),
    ];
    check(
        &i,
        r#"
allowed: apply_patch edit exec image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents write
sandbox tools.sandbox.tools.allow: web_search web_fetch memory_search memory_get message agents_list image_generate tts whatsapp_login lobster_run
sandbox tools.sandbox.tools.deny: browser canvas cron gateway nodes discord_post
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandbox_also_allow_adds_to_the_default_allow_list() {
    let mut i = owner_on_openai();
    i.session.sandbox = Sandboxing::On;
    let mut a = agent(0, "main");
    a.sandbox = Some(rules(
        "agents.list[0].tools.sandbox.tools",
        &[],
        &["web_fetch"],
        &[],
    ));
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: apply_patch edit exec image process read session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch write
sandbox tools.sandbox.tools.allow: web_search memory_search memory_get message agents_list image_generate tts whatsapp_login
sandbox tools.sandbox.tools.deny: browser canvas cron gateway nodes
sandbox allow from default tools.sandbox.tools.allow, deny from default tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn sandbox_agent_lists_beat_global_lists() {
    let mut i = owner_on_openai();
    i.session.sandbox = Sandboxing::On;
    i.config.sandbox = Some(rules(
        "tools.sandbox.tools",
        &["read", "exec"],
        &[],
        &["write"],
    ));
    let mut a = agent(2, "builder");
    a.sandbox = Some(rules(
        "agents.list[2].tools.sandbox.tools",
        &["read", "write"],
        &[],
        &[],
    ));
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: image read
sandbox agents.list[2].tools.sandbox.tools.allow: edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents session_status browser canvas message cron gateway nodes agents_list image_generate tts whatsapp_login
sandbox tools.sandbox.tools.deny: write
sandbox allow from agent agents.list[2].tools.sandbox.tools.allow, deny from global tools.sandbox.tools.deny
"#,
    );
}

#[test]
fn reports_a_removal_under_the_earliest_step_that_made_it() {
    let mut i = owner_on_openai();
    i.config.global.profile = some("coding");
    i.config.global.rules = rules("tools", &[], &[], &["exec", "browser"]);
    let mut a = agent(0, "main");
    a.tools.rules = rules("agents.list[0].tools", &[], &[], &["exec", "read"]);
    i.config.agent = Some(a);
    check(
        &i,
        r#"
allowed: apply_patch cron edit image image_generate memory_get memory_search process session_status sessions_history sessions_list sessions_send sessions_spawn sessions_yield subagents web_fetch web_search write
profile tools.profile: browser canvas message gateway nodes agents_list tts whatsapp_login
global tools.deny: exec
agent agents.list[0].tools.deny: read
"#,
    );
}

#[test]
fn plugin_only_also_allow_extends_a_provider_profile() {
    let mut i = owner_on_openai();
    i.plugin_tools = vec![plugin("lobster", "lobster_run")];
    let mut entry = by_provider("tools", "openai", Some("minimal"), &[], &[]);
    entry.rules.also_allow = list(&["lobster"]);
    i.config.global.by_provider = vec![entry];
    check(
        &i,
        r#"
allowed: lobster_run session_status
providerProfile tools.byProvider.openai.profile: read write edit apply_patch exec process web_search web_fetch memory_search memory_get sessions_list sessions_history sessions_send sessions_spawn sessions_yield subagents browser canvas message cron gateway nodes agents_list image image_generate tts whatsapp_login
"#,
    );
}
