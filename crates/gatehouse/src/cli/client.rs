//! The client side of the CLI: one JSON-RPC call over `POST /rpc` per command.
//!
//! Address and token come from `--url`/`--token` or `GATEHOUSE_URL`/`GATEHOUSE_TOKEN`. The token
//! is sent only in the `Authorization` header, never printed.

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// Where the server is and who we are; shared by every client subcommand.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServerArgs {
    /// Gateway base URL.
    #[arg(long, env = "GATEHOUSE_URL", default_value = "http://127.0.0.1:18790")]
    url: String,
    /// Bearer token.
    #[arg(long, env = "GATEHOUSE_TOKEN", hide_env_values = true)]
    token: String,
}

impl ServerArgs {
    /// Calls `method` and returns its payload; a refusal becomes an error naming its code.
    pub(crate) fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        runtime.block_on(self.call_async(method, params))
    }

    async fn call_async(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let url = format!("{}/rpc", self.url.trim_end_matches('/'));
        let response = reqwest::Client::new()
            .post(&url)
            .bearer_auth(&self.token)
            .json(&json!({"method": method, "params": params}))
            .send()
            .await
            .with_context(|| format!("cannot reach the gateway at {}", self.url))?;
        let body: Value = response
            .json()
            .await
            .with_context(|| format!("{method}: the gateway's answer is not JSON"))?;
        match body.get("ok").and_then(Value::as_bool) {
            Some(true) => Ok(body.get("payload").cloned().unwrap_or(Value::Null)),
            Some(false) => {
                let text = |key: &str| {
                    body.pointer(&format!("/error/{key}"))
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_owned()
                };
                bail!("{method}: {} ({})", text("message"), text("code"))
            }
            None => bail!("{method}: the gateway's answer has no `ok` field"),
        }
    }
}

/// One argv as a shell would read it back, for display and for the approval's command text.
pub(crate) fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `command`/`argv` params for what was typed after `--`: one word is a shell string,
/// several are an argv run without a shell.
pub(crate) fn command_params(command: &[String]) -> Value {
    match command {
        [single] => json!({"command": single}),
        argv => json!({"command": shell_join(argv), "argv": argv}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_words_a_shell_would_change() {
        let argv: Vec<String> = ["ls", "-la", "my file", "it's", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shell_join(&argv), r"ls -la 'my file' 'it'\''s' ''");
    }
}
