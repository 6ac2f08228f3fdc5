use gatehouse_hooks::{
    Answer, HookError, HookEvent, HookOutput, Host, HttpAnswer, OnUnreachable, Rejected, render,
    render_http,
};
use pretty_assertions::assert_eq;

use crate::support::{HostReads, host_reads, http_reads};

fn allow() -> Answer {
    Answer::Allow {
        reason: Some("Gatehouse allowed it".into()),
    }
}
fn deny() -> Answer {
    Answer::Deny {
        reason: "no \"rm\" here".into(),
    }
}
fn ask() -> Answer {
    Answer::Ask {
        reason: "gateway down".into(),
    }
}

fn json_out(stdout: &str) -> HookOutput {
    HookOutput {
        exit_code: 0,
        stdout: format!("{stdout}\n").into_bytes(),
        stderr: Vec::new(),
    }
}

fn silent(stderr: &str) -> HookOutput {
    HookOutput {
        exit_code: 0,
        stdout: Vec::new(),
        stderr: stderr.as_bytes().to_vec(),
    }
}

/// Each case: host, event, answer → the exact output, and what the host makes of it.
#[test]
fn renders_each_answer_as_each_host_honours_it() {
    use HookEvent::{PermissionRequest as Pr, PreToolUse as Pre};
    use Host::{ClaudeCode as Cc, Codex as Cx};
    let cases = [
        (Cc, Pre, allow(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Gatehouse allowed it"}}"#), HostReads::Allow),
        (Cc, Pre, deny(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no \"rm\" here"}}"#), HostReads::Deny("no \"rm\" here".into())),
        (Cc, Pre, ask(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"gateway down"}}"#), HostReads::Ask("gateway down".into())),
        (Cc, Pr, allow(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#), HostReads::Allow),
        (Cc, Pr, deny(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no \"rm\" here"}}}"#), HostReads::Deny("no \"rm\" here".into())),
        (Cc, Pr, ask(), silent("gateway down\n"), HostReads::NoDecision),
        (Cx, Pre, allow(), silent(""), HostReads::Allow),
        (Cx, Pre, deny(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no \"rm\" here"}}"#), HostReads::Deny("no \"rm\" here".into())),
        (Cx, Pre, ask(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"gateway down. Codex cannot hand a call back to its own prompt from a PreToolUse hook, so Gatehouse refuses it"}}"#), HostReads::Deny("gateway down. Codex cannot hand a call back to its own prompt from a PreToolUse hook, so Gatehouse refuses it".into())),
        (Cx, Pr, allow(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#), HostReads::Allow),
        (Cx, Pr, deny(), json_out(r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no \"rm\" here"}}}"#), HostReads::Deny("no \"rm\" here".into())),
        (Cx, Pr, ask(), silent("gateway down\n"), HostReads::NoDecision),
    ];
    for (host, event, answer, expected, reads) in cases {
        let output = render(host, event, &answer);
        assert_eq!(output, expected, "{host} {event} {answer:?}");
        assert_eq!(
            host_reads(host, Some(event), &output),
            reads,
            "{host} {event} {answer:?}"
        );
    }
}

#[test]
fn answers_claude_codes_http_hook_with_200_and_the_same_json() {
    for event in [HookEvent::PreToolUse, HookEvent::PermissionRequest] {
        for answer in [allow(), deny(), ask()] {
            let http = render_http(event, &answer);
            let command = render(Host::ClaudeCode, event, &answer);
            assert_eq!(
                http,
                HttpAnswer {
                    status: 200,
                    body: command.stdout
                },
                "{event} {answer:?}"
            );
        }
    }
    assert_eq!(
        http_reads(&render_http(HookEvent::PermissionRequest, &ask())),
        HostReads::NoDecision
    );
    assert_eq!(HttpAnswer::CONTENT_TYPE, "application/json");
}

#[test]
fn omits_an_allows_missing_reason() {
    assert_eq!(
        render(
            Host::ClaudeCode,
            HookEvent::PreToolUse,
            &Answer::Allow { reason: None }
        ),
        json_out(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#
        )
    );
}

#[test]
fn never_sends_codex_an_empty_or_huge_reason() {
    let empty = render(
        Host::Codex,
        HookEvent::PreToolUse,
        &Answer::Deny { reason: " ".into() },
    );
    assert_eq!(
        host_reads(Host::Codex, Some(HookEvent::PreToolUse), &empty),
        HostReads::Deny("Gatehouse refused this call".into())
    );
    let huge = render(
        Host::Codex,
        HookEvent::PreToolUse,
        &Answer::Deny {
            reason: "é".repeat(5000),
        },
    );
    let HostReads::Deny(reason) = host_reads(Host::Codex, Some(HookEvent::PreToolUse), &huge)
    else {
        panic!("not a deny");
    };
    assert_eq!(reason.chars().count(), 2001);
    assert!(reason.ends_with('…'));
}

#[test]
fn denies_with_exit_2_when_the_event_is_unknown() {
    let rejected = Rejected {
        event: None,
        error: HookError::Empty,
    };
    for host in [Host::ClaudeCode, Host::Codex] {
        assert_eq!(
            rejected.render(host),
            HookOutput {
                exit_code: 2,
                stdout: Vec::new(),
                stderr: b"Gatehouse refused this call: the hook input is empty\n".to_vec(),
            }
        );
    }
    assert_eq!(
        rejected.render_http(),
        HttpAnswer {
            status: 200,
            body: br#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Gatehouse refused this call: the hook input is empty"}}
"#
            .to_vec(),
        }
    );
}

#[test]
fn answers_an_unreachable_gateway_with_deny_or_the_hosts_own_prompt() {
    let deny = Answer::unreachable(OnUnreachable::Deny, "connection refused");
    assert_eq!(
        deny,
        Answer::Deny {
            reason: "Gatehouse could not be reached (connection refused), so this call is \
                     refused; start the gateway or check GATEHOUSE_URL"
                .into()
        }
    );
    let ask = Answer::unreachable(OnUnreachable::Ask, "connection refused");
    assert!(!deny.is_allow() && !ask.is_allow());
    let reads = |host, event| host_reads(host, Some(event), &render(host, event, &ask));
    assert!(matches!(
        reads(Host::ClaudeCode, HookEvent::PreToolUse),
        HostReads::Ask(_)
    ));
    assert_eq!(
        reads(Host::ClaudeCode, HookEvent::PermissionRequest),
        HostReads::NoDecision
    );
    assert_eq!(
        reads(Host::Codex, HookEvent::PermissionRequest),
        HostReads::NoDecision
    );
    assert!(matches!(
        reads(Host::Codex, HookEvent::PreToolUse),
        HostReads::Deny(_)
    ));
}
