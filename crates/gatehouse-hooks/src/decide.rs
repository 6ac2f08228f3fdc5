//! The gateway's answers read as hook answers: what `tools.call.check` and
//! `tools.call.request` return (their JSON, as documented in docs/protocol.md) becomes an
//! [`Answer`]. The command hook reads them off the wire and `POST /hooks/claude-code` off its
//! own dispatch, so both read them here, alike.
//!
//! Fail closed: anything but a plain `allow` from the check, or an `allow` from a request that
//! a person approved, is a deny (an answer missing its `decision`, an unknown decision).

use serde_json::Value;

use crate::answer::Answer;

/// What to do after `tools.call.check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterCheck {
    /// The policy decided: answer the host.
    Answer(Answer),
    /// The policy wants a person: call `tools.call.request` and wait.
    AskPerson,
}

/// Reads a `tools.call.check` answer.
pub fn after_check(check: &Value) -> AfterCheck {
    match check.get("decision").and_then(Value::as_str) {
        Some("allow") => AfterCheck::Answer(Answer::Allow {
            reason: Some(format!("Gatehouse allowed this call ({})", rules(check))),
        }),
        Some("ask") => AfterCheck::AskPerson,
        Some("deny") => AfterCheck::Answer(Answer::Deny {
            reason: format!("Gatehouse denied this call: {}", messages(check, "deny")),
        }),
        other => AfterCheck::Answer(Answer::Deny {
            reason: format!(
                "Gatehouse refused this call: the gateway answered an unknown decision {other:?}"
            ),
        }),
    }
}

/// Reads a blocking `tools.call.request` answer (`{decision, approval, check}`); `waited_secs`
/// is how long the person had, for the reason of an expiry. Only `decision: "allow"` with an
/// approval in state `allowed` is an allow.
pub fn after_request(result: &Value, waited_secs: u64) -> Answer {
    let approval = result.get("approval").filter(|a| !a.is_null());
    let text = |key: &str| {
        approval
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let by = text("resolvedBy")
        .map(|who| format!(" by {who}"))
        .unwrap_or_default();
    let why = text("reason")
        .map(|reason| format!(": {reason}"))
        .unwrap_or_default();
    let approved = text("state").as_deref() == Some("allowed");
    match (result.get("decision").and_then(Value::as_str), approval) {
        (Some("allow"), Some(_)) if approved => Answer::Allow {
            reason: Some(format!(
                "Approved in Gatehouse{by} ({})",
                text("decision").unwrap_or_else(|| "allow-once".to_owned())
            )),
        },
        (_, None) => {
            let check = result.get("check").unwrap_or(&Value::Null);
            Answer::Deny {
                reason: format!("Gatehouse denied this call: {}", messages(check, "deny")),
            }
        }
        (_, Some(_)) => Answer::Deny {
            reason: match text("state").as_deref() {
                Some("expired") => format!(
                    "Gatehouse asked a person, and nobody decided within {waited_secs} s, so \
                     this call is refused"
                ),
                Some("cancelled") => format!("The Gatehouse approval was cancelled{by}{why}"),
                _ => format!("Denied in Gatehouse{by}{why}"),
            },
        },
    }
}

/// The rules behind a decision (`allowlist`, `granted`, …), for an allow's reason.
fn rules(check: &Value) -> String {
    let rules: Vec<&str> = reasons(check)
        .filter_map(|reason| reason.get("rule").and_then(Value::as_str))
        .collect();
    if rules.is_empty() {
        "policy".to_owned()
    } else {
        rules.join(", ")
    }
}

/// The messages of the reasons that decided `decision`, else of every reason.
fn messages(check: &Value, decision: &str) -> String {
    let message = |reason: &Value| {
        reason
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut found: Vec<String> = reasons(check)
        .filter(|reason| reason.get("decision").and_then(Value::as_str) == Some(decision))
        .filter_map(message)
        .collect();
    if found.is_empty() {
        found = reasons(check).filter_map(message).collect();
    }
    if found.is_empty() {
        "the policy gave no reason".to_owned()
    } else {
        found.join("; ")
    }
}

fn reasons(check: &Value) -> impl Iterator<Item = &Value> {
    check
        .get("reasons")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_plain_allow_allows() {
        let allow = json!({"decision": "allow", "reasons": [{"decision": "allow", "rule": "allowlist", "message": "ok"}]});
        assert!(matches!(after_check(&allow), AfterCheck::Answer(a) if a.is_allow()));
        assert_eq!(
            after_check(&json!({"decision": "ask"})),
            AfterCheck::AskPerson
        );
        for odd in [
            json!({}),
            json!({"decision": "ALLOW"}),
            json!({"decision": null}),
        ] {
            assert!(
                matches!(after_check(&odd), AfterCheck::Answer(Answer::Deny { .. })),
                "{odd}"
            );
        }
    }

    #[test]
    fn a_deny_names_the_deciding_reasons() {
        let deny = json!({"decision": "deny", "reasons": [
            {"decision": "allow", "rule": "profile", "message": "in the profile"},
            {"decision": "deny", "rule": "denied-file", "message": "`.env` is a denied file"}]});
        assert_eq!(
            after_check(&deny),
            AfterCheck::Answer(Answer::Deny {
                reason: "Gatehouse denied this call: `.env` is a denied file".into()
            })
        );
    }

    #[test]
    fn a_request_allows_only_what_a_person_approved() {
        let approved = json!({"decision": "allow", "approval": {"state": "allowed",
            "decision": "allow-always", "resolvedBy": "telegram:4242"}});
        assert_eq!(
            after_request(&approved, 280),
            Answer::Allow {
                reason: Some("Approved in Gatehouse by telegram:4242 (allow-always)".into())
            }
        );
        // An allow without an approval is not a person's: refused.
        assert!(!after_request(&json!({"decision": "allow", "approval": null}), 1).is_allow());
        let expired = json!({"decision": "deny", "approval": {"state": "expired"}});
        assert_eq!(
            after_request(&expired, 280),
            Answer::Deny {
                reason: "Gatehouse asked a person, and nobody decided within 280 s, so this \
                         call is refused"
                    .into()
            }
        );
        let denied = json!({"decision": "deny", "approval": {"state": "denied",
            "resolvedBy": "alice", "reason": "not now"}});
        assert_eq!(
            after_request(&denied, 280),
            Answer::Deny {
                reason: "Denied in Gatehouse by alice: not now".into()
            }
        );
    }
}
