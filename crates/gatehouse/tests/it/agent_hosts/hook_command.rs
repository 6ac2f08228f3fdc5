//! `gatehouse hook claude-code|codex`, the real binary, fed the hook inputs the hosts send
//! (the captured fixtures), against a real gateway: every tool type answered in its host's
//! shape; an ask that becomes a Telegram card, pressed; deny; timeout; gateway down; malformed
//! input.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use super::{Gatehouse, fixture, gatehouse_binary};
use crate::gateway::AGENT;

/// What one hook run answered.
#[derive(Debug)]
struct Answered {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Answered {
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: stdout is not JSON: {self:?}"))
    }

    /// Claude Code's PreToolUse decision and reason.
    fn decision(&self) -> (String, String) {
        let out = self.json()["hookSpecificOutput"].clone();
        assert_eq!(out["hookEventName"], "PreToolUse", "{self:?}");
        (
            out["permissionDecision"].as_str().unwrap().to_owned(),
            out["permissionDecisionReason"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    }
}

/// Runs `gatehouse hook HOST ARGS` with `input` on stdin, calling `base` as the agent token.
async fn hook(host: &str, base: &str, args: &[&str], input: &[u8]) -> Answered {
    let mut child = Command::new(gatehouse_binary())
        .args(["hook", host])
        .args(args)
        .env_remove("GATEHOUSE_CONFIG")
        .env_remove("GATEHOUSE_CONTEXT")
        .env("GATEHOUSE_URL", base)
        .env("GATEHOUSE_TOKEN", AGENT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A hook that refuses a large input early may close stdin first.
    let _ = stdin.write_all(input).await;
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    Answered {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Every captured input of both hosts, with a one-second approval timeout: each is answered
/// with exit 0 in its event's shape (a call that asks expires and is refused), and Codex's
/// PreToolUse is answered only with silence or exactly its three deny fields.
#[tokio::test]
async fn every_documented_input_gets_an_answer_in_its_hosts_shape() {
    let g = Gatehouse::start().await;
    std::fs::write(g.workspace.join("nb.ipynb"), "{}").unwrap();
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../gatehouse-hooks/tests/fixtures");
    let mut runs = Vec::new();
    for (dir, host) in [("claude-code", "claude-code"), ("codex", "codex")] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if !(name.starts_with("pretooluse-") || name.starts_with("permissionrequest-")) {
                continue;
            }
            let input = fixture(dir, &name, &g.workspace);
            let base = g.server.base.clone();
            runs.push(async move {
                let args = ["--approval-timeout", "2"];
                let answered = hook(host, &base, &args, input.to_string().as_bytes()).await;
                (name, host, input, answered)
            });
        }
    }
    let runs = futures_util::future::join_all(runs).await;
    assert!(runs.len() >= 20, "{} fixtures", runs.len());
    let mut decisions = Vec::new();
    for (name, host, input, answered) in runs {
        assert_eq!(answered.code, 0, "{name}: {answered:?}");
        let event = input["hook_event_name"].as_str().unwrap();
        if host == "codex" && event == "PreToolUse" && answered.stdout.is_empty() {
            decisions.push((name, "allow".to_owned(), String::new()));
            continue;
        }
        let out = answered.json()["hookSpecificOutput"].clone();
        assert_eq!(out["hookEventName"], event, "{name}: {answered:?}");
        let (decision, reason) = match event {
            "PreToolUse" => (
                out["permissionDecision"].as_str().unwrap().to_owned(),
                out["permissionDecisionReason"].to_string(),
            ),
            _ => (
                out["decision"]["behavior"].as_str().unwrap().to_owned(),
                out["decision"]["message"].to_string(),
            ),
        };
        if host == "codex" && event == "PreToolUse" {
            assert_eq!(decision, "deny", "{name}");
            let fields: Vec<&String> = out.as_object().unwrap().keys().collect();
            assert_eq!(fields.len(), 3, "{name}: only Codex's deny fields: {out}");
        }
        decisions.push((name, decision, reason));
    }
    let decided = |name: &str| {
        let (_, decision, reason) = decisions
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} in {decisions:#?}"));
        println!("{name}: {decision} {reason}");
        decision.as_str()
    };
    // exec runs without asking for `main`; a write asks, nobody answers within the timeout.
    assert_eq!(decided("pretooluse-Bash.json"), "allow");
    assert_eq!(decided("pretooluse-Write.json"), "deny");
    assert_eq!(decided("permissionrequest-Write.json"), "deny");
    // The file read exists in the workspace.
    assert_eq!(decided("pretooluse-Read.json"), "allow");
    drop(g);
}

#[tokio::test]
async fn the_policy_allows_and_denies_in_each_hosts_shape() {
    let g = Gatehouse::start().await;
    let base = &g.server.base;
    let bash = fixture("claude-code", "pretooluse-Bash.json", &g.workspace).to_string();
    let (decision, reason) = hook("claude-code", base, &[], bash.as_bytes())
        .await
        .decision();
    assert_eq!(decision, "allow", "{reason}");
    assert!(
        reason.starts_with("Gatehouse allowed this call"),
        "{reason}"
    );

    let refused = hook("claude-code", base, &["--agent", "strict"], bash.as_bytes()).await;
    let (decision, reason) = refused.decision();
    assert_eq!(decision, "deny", "{reason}");
    assert!(
        reason.starts_with("Gatehouse denied this call: "),
        "{reason}"
    );

    // A write to a denied file in the workspace is refused without asking anyone.
    let mut write = fixture("claude-code", "pretooluse-Write.json", &g.workspace);
    write["tool_input"]["file_path"] = json!(g.workspace.join(".env"));
    let (decision, reason) = hook("claude-code", base, &[], write.to_string().as_bytes())
        .await
        .decision();
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains(".env"), "{reason}");

    // Codex: its allow is silence; its deny exactly the three fields it accepts.
    let codex = fixture("codex", "pretooluse-Bash.json", &g.workspace).to_string();
    let allowed = hook("codex", base, &[], codex.as_bytes()).await;
    assert_eq!(
        (allowed.code, allowed.stdout.as_str()),
        (0, ""),
        "{allowed:?}"
    );
    let denied = hook("codex", base, &["--agent", "strict"], codex.as_bytes()).await;
    assert_eq!(denied.code, 0, "{denied:?}");
    let out = &denied.json()["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny", "{denied:?}");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("Gatehouse denied this call: "),
        "{denied:?}"
    );
}

/// The policy asks; the card reaches the approver's Telegram chat, names the host, machine and
/// project; Allow once lets the call run, Deny refuses it.
#[tokio::test]
async fn an_ask_becomes_a_telegram_card_and_the_press_decides_the_hook() {
    let g = Gatehouse::start().await;
    let base = g.server.base.clone();
    let write = fixture("claude-code", "pretooluse-Write.json", &g.workspace).to_string();
    let args = ["--machine", "build-box", "--approval-timeout", "60"];
    let waiting = tokio::spawn({
        let base = base.clone();
        let write = write.clone();
        async move { hook("claude-code", &base, &args, write.as_bytes()).await }
    });
    let card = g.card(1).await;
    let text = card.body["text"].as_str().unwrap();
    for shown in ["Claude Code on build-box: Write", "new.txt", "Project: "] {
        assert!(text.contains(shown), "{shown:?} missing from {text}");
    }
    g.press(&card, "Allow once").await;
    let answered = waiting.await.unwrap();
    let (decision, reason) = answered.decision();
    assert_eq!(decision, "allow", "{answered:?}");
    assert!(reason.starts_with("Approved in Gatehouse by "), "{reason}");

    // PermissionRequest, Codex, a command for `careful` (which always asks): Deny refuses it.
    let codex = fixture("codex", "permissionrequest-Bash.json", &g.workspace).to_string();
    let waiting = tokio::spawn({
        let base = base.clone();
        async move {
            let args = ["--agent", "careful", "--approval-timeout", "60"];
            hook("codex", &base, &args, codex.as_bytes()).await
        }
    });
    let card = g.card(2).await;
    assert!(
        card.body["text"].as_str().unwrap().contains("Codex on "),
        "{:?}",
        card.body
    );
    g.press(&card, "Deny").await;
    let answered = waiting.await.unwrap();
    let decision = &answered.json()["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "deny", "{answered:?}");
    assert!(
        decision["message"]
            .as_str()
            .unwrap()
            .starts_with("Denied in Gatehouse by "),
        "{answered:?}"
    );
}

#[tokio::test]
async fn nobody_deciding_in_time_is_a_deny() {
    let g = Gatehouse::start().await;
    let write = fixture("claude-code", "pretooluse-Write.json", &g.workspace).to_string();
    let answered = hook(
        "claude-code",
        &g.server.base,
        &["--approval-timeout", "2"],
        write.as_bytes(),
    )
    .await;
    let (decision, reason) = answered.decision();
    assert_eq!(decision, "deny");
    assert!(reason.contains("nobody decided within"), "{reason}");
}

/// A gateway that is not there: deny with the reason, or, when asked, the host's own prompt —
/// never allow, and never for Codex's PreToolUse, which has no prompt to fall back to.
#[tokio::test]
async fn a_gateway_that_cannot_be_reached_is_never_an_allow() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let workspace = tempfile::tempdir().unwrap();
    let bash = fixture("claude-code", "pretooluse-Bash.json", workspace.path()).to_string();
    let (decision, reason) = hook("claude-code", &closed, &[], bash.as_bytes())
        .await
        .decision();
    assert_eq!(decision, "deny");
    assert!(
        reason.starts_with("Gatehouse could not be reached (cannot reach the gateway at"),
        "{reason}"
    );
    let args = ["--on-unreachable", "ask"];
    let (decision, _) = hook("claude-code", &closed, &args, bash.as_bytes())
        .await
        .decision();
    assert_eq!(decision, "ask");
    let pr = fixture(
        "claude-code",
        "permissionrequest-Bash.json",
        workspace.path(),
    )
    .to_string();
    let prompt = hook("claude-code", &closed, &args, pr.as_bytes()).await;
    assert_eq!((prompt.code, prompt.stdout.as_str()), (0, ""), "{prompt:?}");
    assert!(prompt.stderr.contains("could not be reached"), "{prompt:?}");
    let codex = fixture("codex", "pretooluse-Bash.json", workspace.path()).to_string();
    let denied = hook("codex", &closed, &args, codex.as_bytes()).await;
    assert_eq!(
        denied.json()["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{denied:?}"
    );
}

#[tokio::test]
async fn malformed_oversized_and_unknown_inputs_are_refused_with_a_reason() {
    let closed = "http://127.0.0.1:9";
    for (host, input, expected) in [
        ("claude-code", b"{not json".to_vec(), "is not JSON"),
        ("codex", Vec::new(), "is empty"),
        (
            "claude-code",
            vec![b' '; 2 * 1024 * 1024],
            "over Gatehouse's limit",
        ),
        (
            "codex",
            br#"{"hook_event_name":"PostToolUse"}"#.to_vec(),
            "PreToolUse and PermissionRequest hooks only",
        ),
    ] {
        let answered = hook(host, closed, &[], &input).await;
        assert_eq!(answered.code, 2, "{answered:?}");
        assert!(answered.stdout.is_empty(), "{answered:?}");
        assert!(
            answered.stderr.contains(expected),
            "{expected}: {answered:?}"
        );
    }
    let workspace = tempfile::tempdir().unwrap();
    let mut unknown = fixture("claude-code", "pretooluse-Bash.json", workspace.path());
    unknown["tool_name"] = json!("TodoWrite");
    let (decision, reason) = hook("claude-code", closed, &[], unknown.to_string().as_bytes())
        .await
        .decision();
    assert_eq!(decision, "deny");
    assert!(reason.contains("\"TodoWrite\""), "{reason}");
}

/// `integrations.<host>` of the config file sets the hook's settings, and a flag wins over it;
/// settings that cannot be used block the call (exit 2) with the reason.
#[tokio::test]
async fn the_config_block_sets_the_agent_and_flags_win_over_it() {
    let g = Gatehouse::start().await;
    let base = &g.server.base;
    let config = g.workspace.join("hook.json5");
    std::fs::write(
        &config,
        "{ integrations: { claudeCode: { agentId: 'strict' }, codex: { agentId: 'main' } } }",
    )
    .unwrap();
    let config = config.display().to_string();
    let bash = fixture("claude-code", "pretooluse-Bash.json", &g.workspace).to_string();
    let (decision, _) = hook("claude-code", base, &["--config", &config], bash.as_bytes())
        .await
        .decision();
    assert_eq!(decision, "deny", "agent strict has no exec");
    let args = ["--config", &config, "--agent", "main"];
    let (decision, reason) = hook("claude-code", base, &args, bash.as_bytes())
        .await
        .decision();
    assert_eq!(decision, "allow", "{reason}");

    let bad = hook(
        "claude-code",
        base,
        &["--agent", "no spaces"],
        bash.as_bytes(),
    )
    .await;
    assert_eq!((bad.code, bad.stdout.as_str()), (2, ""), "{bad:?}");
    assert!(bad.stderr.contains("--agent: agent id"), "{bad:?}");
    std::fs::write(
        g.workspace.join("broken.json5"),
        "{ integrations: { codex: { agentId: 7 } } }",
    )
    .unwrap();
    let broken = g.workspace.join("broken.json5").display().to_string();
    let codex = fixture("codex", "pretooluse-Bash.json", &g.workspace).to_string();
    let refused = hook("codex", base, &["--config", &broken], codex.as_bytes()).await;
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("integrations.codex.agentId"),
        "{refused:?}"
    );
}
