//! Call-time refusal: a call is checked again against the evaluated policy.

use gatehouse_policy::tools::{
    OWNER_ONLY_PATH, Removal, Sender, Step, ToolCallRefused, check_tool_call, effective_tools,
};
use pretty_assertions::assert_eq;

use crate::tool_support::{guest_on_anthropic, owner_on_openai, rules};

#[test]
fn allows_a_call_to_an_allowed_tool_by_its_alias() {
    let effective = effective_tools(&owner_on_openai());
    assert_eq!(
        check_tool_call(&effective, Sender::Owner, " Bash "),
        Ok("exec".to_owned())
    );
}

#[test]
fn denies_an_owner_only_call_from_a_non_owner_even_if_the_list_offered_it() {
    // Evaluated for an owner, then called by someone else: the call-time check still refuses.
    let effective = effective_tools(&owner_on_openai());
    assert_eq!(
        check_tool_call(&effective, Sender::NonOwner, "Gateway"),
        Err(ToolCallRefused::OwnerOnly {
            tool: "gateway".to_owned()
        })
    );
}

#[test]
fn denies_a_removed_tool_naming_the_step_and_config_path() {
    let effective = effective_tools(&guest_on_anthropic());
    assert_eq!(
        check_tool_call(&effective, Sender::Owner, "cron"),
        Err(ToolCallRefused::Removed {
            tool: "cron".to_owned(),
            removal: Removal {
                step: Step::Owner,
                config_path: OWNER_ONLY_PATH.to_owned()
            },
        })
    );
    let mut inputs = owner_on_openai();
    inputs.config.global.rules = rules("tools", &[], &[], &["exec"]);
    let refused = check_tool_call(&effective_tools(&inputs), Sender::Owner, "exec");
    assert_eq!(
        refused.map_err(|e| e.to_string()),
        Err("tool \"exec\" was removed by the global step (tools.deny)".to_owned())
    );
}

#[test]
fn denies_unknown_tools_groups_and_patterns() {
    let effective = effective_tools(&owner_on_openai());
    for name in ["shell", "group:fs", "*", "exe?"] {
        assert_eq!(
            check_tool_call(&effective, Sender::Owner, name),
            Err(ToolCallRefused::Unknown {
                tool: name.to_owned()
            }),
            "{name}"
        );
    }
}
