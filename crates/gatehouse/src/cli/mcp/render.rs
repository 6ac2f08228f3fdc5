//! The gateway's answers as MCP tool results: text the model reads first, and a small
//! `structuredContent` for programs. A command that did not run (denied, refused, unreachable
//! gateway, bad arguments) is a tool error (`isError: true`), so the model sees why; a command
//! that ran is a result whatever its exit code, which the text gives first.

use gatehouse_chat::sanitize::make_visible;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// A result of `text` for the model, with `structured` for programs.
fn result(text: String, structured: Value, is_error: bool) -> CallToolResult {
    let mut result = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// Arguments the tool cannot use, as the model sent them.
pub(super) fn invalid_arguments(problem: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "Invalid arguments: {problem}. Nothing was run."
    ))])
}

/// The gateway could not be asked, or refused the call itself (a token without the `agent`
/// scope, an agent the token may not act for, a full pending cap, …).
pub(super) fn gateway_failed(doing: &str, error: &anyhow::Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "Gatehouse could not {doing}: {error:#}. Nothing was run: this server never runs \
         commands itself, only through the gateway."
    ))])
}

/// The client cancelled the call: the gateway saw the request go away, so a pending approval
/// is withdrawn (`requester-gone`) and a running command is killed.
pub(super) fn cancelled() -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(
        "Cancelled: the approval request was withdrawn, or the command was stopped.".to_owned(),
    )])
}

/// `exec.policy.check`'s decision: the verdict with its reason, then each segment's program
/// and reason. Words and reasons come from the command, so control characters are shown as
/// markers, as `gatehouse check` shows them.
pub(super) fn check(decision: Value) -> CallToolResult {
    let verdict = decision["decision"].as_str().unwrap_or("deny");
    let mut text = format!(
        "{verdict}: {}",
        make_visible(decision["reason"].as_str().unwrap_or_default())
    );
    text.push_str(match verdict {
        "allow" => "\nrun_command would run it without asking anyone.",
        "ask" => "\nrun_command would ask a person first, and run it only if they approve.",
        _ => "\nrun_command would refuse it.",
    });
    for segment in decision["segments"].as_array().into_iter().flatten() {
        let words: Vec<&str> = segment["argv"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        text.push_str(&format!(
            "\n  {} -> {}: {}",
            make_visible(&words.join(" ")).replace('\n', "\\n"),
            shown_path(&segment["resolvedPath"]),
            make_visible(segment["reason"].as_str().unwrap_or_default())
        ));
        for wrapper in segment["lookedThrough"].as_array().into_iter().flatten() {
            text.push_str(&format!(
                "\n    through {} -> {}",
                make_visible(wrapper["word"].as_str().unwrap_or_default()),
                shown_path(&wrapper["resolvedPath"])
            ));
        }
    }
    result(text, decision, false)
}

fn shown_path(path: &Value) -> String {
    path.as_str()
        .map_or_else(|| "(unresolved)".to_owned(), make_visible)
}

/// A `system.run` answer, with the approval it ran (or was denied) under when a person was
/// asked. `max_bytes` bounds each stream.
pub(super) fn run(answer: &Value, approval: Option<&Value>, max_bytes: usize) -> CallToolResult {
    let decided = approval.map(decided_by);
    if answer["status"] == "denied" {
        return denied(answer, decided.as_deref());
    }
    let mut text = ended(answer);
    if let Some(decided) = &decided {
        text.push_str(&format!("\n{decided}"));
    }
    let mut cut_here = false;
    for (stream, truncated) in [("stdout", "stdoutTruncated"), ("stderr", "stderrTruncated")] {
        let output = answer[stream].as_str().unwrap_or_default();
        if output.is_empty() {
            continue;
        }
        let (shown, left_out) = bounded(output, max_bytes);
        cut_here |= left_out > 0;
        text.push_str(&format!("\n--- {stream} ---\n{shown}"));
        if !shown.ends_with('\n') {
            text.push('\n');
        }
        if left_out > 0 {
            text.push_str(&format!(
                "[gatehouse: {left_out} bytes of {stream} were left out in the middle]\n"
            ));
        }
        if answer[truncated] == true {
            text.push_str(&format!(
                "[gatehouse: the gateway kept only the first part of {stream}; the rest was \
                 never read]\n"
            ));
        }
    }
    if answer["stdout"] == "" && answer["stderr"] == "" {
        text.push_str("\n(no output)");
    }
    let structured = json!({
        "status": "finished",
        "exitCode": answer["exitCode"],
        "signal": answer["signal"],
        "timedOut": answer["timedOut"],
        "durationMs": answer["durationMs"],
        "runId": answer["runId"],
        "outputCut": cut_here
            || answer["stdoutTruncated"] == true
            || answer["stderrTruncated"] == true,
        "approval": approval.map(approval_summary),
    });
    result(text.trim_end().to_owned(), structured, false)
}

/// How the run ended: the exit code first, since that is what the model acts on.
fn ended(answer: &Value) -> String {
    let took = answer["durationMs"].as_u64().unwrap_or_default();
    if answer["timedOut"] == true {
        return format!("Killed at its time limit after {took} ms (no exit code).");
    }
    match (answer["exitCode"].as_i64(), answer["signal"].as_i64()) {
        (Some(code), _) => format!("Exit code {code} (ran {took} ms)."),
        (None, Some(signal)) => format!("Ended by signal {signal} (ran {took} ms)."),
        (None, None) => format!("Ended without an exit code (ran {took} ms)."),
    }
}

/// A run that did not happen: why, in words, with the gateway's reason code and detail.
fn denied(answer: &Value, decided: Option<&str>) -> CallToolResult {
    let reason = answer["reason"].as_str().unwrap_or("unknown");
    let detail = answer["detail"].as_str().filter(|d| !d.is_empty());
    let why = match reason {
        "policy" => "the policy refuses it. check_command shows each part's verdict",
        "user-denied" => "a person denied it. Do not run it another way; ask the user",
        "approval-timeout" => "nobody approved it in time",
        "no-approval-route" => {
            "nobody could be asked: no operator is connected to the gateway and no chat \
             channel takes its approval requests"
        }
        "binding-mismatch" => {
            "what was approved changed before it could start (a file, the directory or the \
             program); ask again if the change was intended"
        }
        _ => "the gateway refused it",
    };
    let mut text = format!("Gatehouse did not run the command: {why}.\nReason: {reason}");
    if let Some(detail) = detail {
        text.push_str(&format!(" ({})", make_visible(detail)));
    }
    if let Some(decided) = decided {
        text.push_str(&format!("\n{decided}"));
    }
    let structured = json!({
        "status": "denied",
        "reason": reason,
        "detail": detail,
        "runId": answer["runId"],
    });
    result(text, structured, true)
}

/// "Approval 3f0c1a2b: deny by alice: \"use staging\"" for a person's answer, or
/// "Approval 3f0c1a2b: expired (no-approval-route)" for one nobody gave, from
/// `exec.approval.get`.
fn decided_by(approval: &Value) -> String {
    let id = approval["id"].as_str().unwrap_or_default();
    let short = id.get(..8).unwrap_or(id);
    let reason = approval["reason"].as_str().filter(|r| !r.is_empty());
    let Some(decision) = approval["decision"].as_str() else {
        let state = approval["state"].as_str().unwrap_or("settled");
        return match reason {
            Some(reason) => format!("Approval {short}: {state} ({})", make_visible(reason)),
            None => format!("Approval {short}: {state}"),
        };
    };
    let by = make_visible(approval["resolvedBy"].as_str().unwrap_or("an approver"));
    match reason {
        Some(reason) => format!(
            "Approval {short}: {decision} by {by}: \"{}\"",
            make_visible(reason)
        ),
        None => format!("Approval {short}: {decision} by {by}"),
    }
}

fn approval_summary(approval: &Value) -> Value {
    json!({
        "id": approval["id"],
        "state": approval["state"],
        "decision": approval["decision"],
        "resolvedBy": approval["resolvedBy"],
        "reason": approval["reason"],
    })
}

/// `text` in at most `max` bytes: its beginning and its end (where errors usually are), and
/// how many bytes of the middle were left out. Cuts fall on character boundaries.
fn bounded(text: &str, max: usize) -> (String, usize) {
    if text.len() <= max {
        return (text.to_owned(), 0);
    }
    let head_end = floor_boundary(text, max / 2);
    let mut tail_start = text.len() - (max - head_end);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let left_out = tail_start - head_end;
    (
        format!("{head}\n[… {left_out} bytes left out …]\n{tail}"),
        left_out,
    )
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(result: &CallToolResult) -> String {
        result.content[0].as_text().unwrap().text.clone()
    }

    #[test]
    fn bounded_output_keeps_both_ends_and_says_how_much_is_missing() {
        let output = format!("{}{}", "a".repeat(100), "z".repeat(100));
        let (shown, left_out) = bounded(&output, 20);
        assert_eq!(left_out, 180);
        assert_eq!(
            shown,
            format!(
                "{}\n[… 180 bytes left out …]\n{}",
                "a".repeat(10),
                "z".repeat(10)
            )
        );
        assert_eq!(bounded("short", 20), ("short".to_owned(), 0));
    }

    #[test]
    fn bounded_output_never_splits_a_character() {
        let output = "é".repeat(50);
        let (shown, left_out) = bounded(&output, 11);
        assert_eq!(left_out, 90);
        assert!(
            shown.starts_with("éé\n") && shown.ends_with("\nééé"),
            "{shown}"
        );
    }

    #[test]
    fn a_finished_run_leads_with_its_exit_code_and_marks_every_cut() {
        let answer = json!({"status": "finished", "exitCode": 2, "timedOut": false, "durationMs": 7,
            "stdout": "x".repeat(100), "stderr": "oops\n", "stdoutTruncated": true,
            "stderrTruncated": false, "runId": "r"});
        let result = run(&answer, None, 40);
        assert_eq!(result.is_error, Some(false));
        let text = text(&result);
        assert!(text.starts_with("Exit code 2 (ran 7 ms)."), "{text}");
        assert!(
            text.contains("[gatehouse: 60 bytes of stdout were left out in the middle]"),
            "{text}"
        );
        assert!(
            text.contains("the gateway kept only the first part of stdout"),
            "{text}"
        );
        assert!(text.contains("--- stderr ---\noops"), "{text}");
        assert_eq!(result.structured_content.unwrap()["outputCut"], true);
    }

    #[test]
    fn a_denied_run_is_a_tool_error_naming_who_denied_it_and_why() {
        let answer = json!({"status": "denied", "reason": "user-denied", "detail": null, "runId": "3f0c1a2b-x"});
        let approval = json!({"id": "3f0c1a2b-x", "state": "denied", "decision": "deny",
            "resolvedBy": "alice", "reason": "use staging"});
        let result = run(&answer, Some(&approval), 100);
        assert_eq!(result.is_error, Some(true));
        let text = text(&result);
        assert!(text.contains("a person denied it"), "{text}");
        assert!(
            text.contains("Approval 3f0c1a2b: deny by alice: \"use staging\""),
            "{text}"
        );
    }

    #[test]
    fn an_approval_nobody_answered_is_not_said_to_be_decided_by_anyone() {
        let expired = json!({"id": "60b32869-x", "state": "expired", "decision": null,
            "resolvedBy": null, "reason": "no-approval-route"});
        assert_eq!(
            decided_by(&expired),
            "Approval 60b32869: expired (no-approval-route)"
        );
    }
}
