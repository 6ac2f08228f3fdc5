//! `gatehouse status`: which gateway and identity the CLI uses (and where each came from), and
//! what the gateway has connected: operator clients such as the Control UI, chat channels and
//! their state, and how many approvals wait. Says so when nobody could answer an approval.

use std::process::ExitCode;

use gatehouse_chat::sanitize::one_line;
use serde_json::{Value, json};

use super::client::{ServerArgs, block_on};
use super::listing::when;

/// Flags of `gatehouse status`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gatehouse status                      # the gateway the other commands would call
  gatehouse status --context prod       # a saved context's gateway
  gatehouse status --json | jq .status.pendingApprovals")]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Print JSON: `{gateway:{url, urlFrom, tokenFrom}, status}` with `gateway.status`'s answer.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand: exit 0 when the gateway answered, 2 (the error) when it did not.
pub(crate) fn run(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let target = args.server.target()?;
    let status = block_on(target.call("gateway.status", json!({})))?;
    let token_from = target.token_from().map(ToString::to_string);
    if args.json {
        let shown = json!({
            "gateway": {
                "url": target.url,
                "urlFrom": target.url_from.to_string(),
                "tokenFrom": token_from,
            },
            "status": status,
        });
        println!("{shown}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    let mut row = |label: &str, value: String| out.push_str(&format!("{label:<10} {value}\n"));
    row(
        "gateway",
        format!("{} (from {})", target.url, target.url_from),
    );
    row("server", server_line(&status));
    row(
        "identity",
        format!(
            "{} (token from {})",
            identity_line(&status),
            token_from.as_deref().unwrap_or("?")
        ),
    );
    let operator = status.get("operatorClients").is_some();
    if operator {
        row("operators", operators_line(&status));
        row("chat", chat_line(&status));
        let pending = status["pendingApprovals"].as_u64().unwrap_or(0);
        row(
            "pending",
            match pending {
                1 => "1 approval waits for a person".to_owned(),
                n => format!("{n} approvals wait for a person"),
            },
        );
    } else {
        row(
            "operators",
            "not shown to this token (operator.approvals or operator.admin sees them)".to_owned(),
        );
    }
    print!("{out}");
    if operator && no_route(&status) {
        eprintln!(
            "gatehouse: warning: nobody can answer an approval now, so every request expires at \
             once (no-approval-route) and askFallback decides: open the Control UI (the login \
             URL `gatehouse serve` printed) or configure a chat channel (docs/channels/)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn server_line(status: &Value) -> String {
    let version = status["server"]["version"].as_str().unwrap_or("?");
    let started = status["server"]["startedAtMs"]
        .as_u64()
        .map_or_else(|| "?".to_owned(), |ms| when(ms, super::now_ms()));
    format!("gatehouse {}, started {started}", one_line(version, 40))
}

fn identity_line(status: &Value) -> String {
    let name = status["caller"]["name"].as_str().unwrap_or("?");
    let scopes: Vec<&str> = status["caller"]["scopes"]
        .as_array()
        .map(|scopes| scopes.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    format!("{} ({})", one_line(name, 100), scopes.join(", "))
}

/// `2 connected: control-ui as admin, my-bot as ops`, or `none connected`.
fn operators_line(status: &Value) -> String {
    let clients = status["operatorClients"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if clients.is_empty() {
        return "none connected (an open Control UI counts)".to_owned();
    }
    let shown: Vec<String> = clients
        .iter()
        .map(|client| {
            let name = client["client"].as_str().filter(|name| !name.is_empty());
            format!(
                "{} as {}",
                one_line(name.unwrap_or("a client"), 64),
                one_line(client["token"].as_str().unwrap_or("?"), 100)
            )
        })
        .collect();
    format!("{} connected: {}", clients.len(), shown.join(", "))
}

/// Each chat channel and its state: `telegram connected; discord stopped: …`, with how many
/// targets' deliveries failed.
fn chat_line(status: &Value) -> String {
    let list = |key: &str| status["chat"][key].as_array().cloned().unwrap_or_default();
    let mut parts: Vec<String> = list("channels")
        .iter()
        .filter_map(Value::as_str)
        .map(|channel| format!("{} connected", one_line(channel, 40)))
        .collect();
    for stopped in list("stopped") {
        parts.push(format!(
            "{} stopped: {}",
            one_line(stopped["channel"].as_str().unwrap_or("?"), 40),
            one_line(stopped["error"].as_str().unwrap_or("?"), 200)
        ));
    }
    if let Some(lease) = status["chat"]["lease"].as_object() {
        let here = lease
            .get("thisGateway")
            .and_then(Value::as_str)
            .unwrap_or("?");
        parts.push(match lease.get("holder").and_then(Value::as_str) {
            Some(holder) if holder == here => {
                format!("connections held here ({})", one_line(here, 100))
            }
            Some(holder) => format!("connections held by {}", one_line(holder, 100)),
            None => "connections held by no replica now (one takes them within seconds)".to_owned(),
        });
    }
    let failures = list("failures").len();
    if failures > 0 {
        parts.push(format!(
            "{failures} delivery failures (`gatehouse doctor` lists them)"
        ));
    }
    if parts.is_empty() {
        return "no channel configured (docs/channels/)".to_owned();
    }
    parts.join("; ")
}

/// No operator client connected and no chat channel running.
fn no_route(status: &Value) -> bool {
    let empty = |value: &Value| value.as_array().is_none_or(Vec::is_empty);
    empty(&status["operatorClients"]) && empty(&status["chat"]["channels"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_operator_client_and_chat_channel() {
        let status = json!({
            "operatorClients": [{"token": "admin", "client": "control-ui"}],
            "chat": {"channels": ["telegram"], "failures": [{}],
                     "stopped": [{"channel": "discord", "error": "token revoked"}]},
        });
        assert_eq!(operators_line(&status), "1 connected: control-ui as admin");
        assert_eq!(
            chat_line(&status),
            "telegram connected; discord stopped: token revoked; 1 delivery failures \
             (`gatehouse doctor` lists them)"
        );
        assert!(!no_route(&status));
        let replica = json!({"chat": {"channels": ["telegram"],
            "lease": {"holder": "gw-a:18790", "thisGateway": "gw-b:18790"}}});
        assert_eq!(
            chat_line(&replica),
            "telegram connected; connections held by gw-a:18790"
        );
        let holder = json!({"chat": {"channels": ["telegram"],
            "lease": {"holder": "gw-a:18790", "thisGateway": "gw-a:18790"}}});
        assert_eq!(
            chat_line(&holder),
            "telegram connected; connections held here (gw-a:18790)"
        );
        let idle = json!({"operatorClients": [], "chat": {"channels": []}});
        assert!(no_route(&idle));
        assert_eq!(chat_line(&idle), "no channel configured (docs/channels/)");
    }
}
