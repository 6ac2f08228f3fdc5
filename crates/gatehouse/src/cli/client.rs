//! The client side of the CLI: one JSON-RPC call over `POST /rpc` per command, to the gateway
//! [`target`] finds (flag, environment, a context saved by `gatehouse login`, or the gateway
//! running on this machine). The token is sent only in the `Authorization` header, never
//! printed.

pub(crate) mod contexts;
pub(crate) mod local;
pub(crate) mod target;

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use gatehouse_policy::exec::display_argv;
use serde_json::{Value, json};

pub(crate) use target::Target;

/// Where the server is and who we are; shared by every client subcommand. Global, so the
/// flags may stand before or after a nested subcommand (`approvals list --url …`). What is not
/// given here comes from the environment, a saved context or this machine's gateway, in that
/// order (see [`target`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ServerArgs {
    /// Gateway base URL [env: GATEHOUSE_URL; default: the current context's, else
    /// http://127.0.0.1:18790].
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Bearer token [env: GATEHOUSE_TOKEN; default: the context's, else this machine's
    /// <data-dir>/admin.token]. A flag shows in `ps`: prefer the variable or `gatehouse login`.
    #[arg(long, global = true, value_name = "TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// A context saved by `gatehouse login` [env: GATEHOUSE_CONTEXT; default: the current one].
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) context: Option<String>,
}

impl ServerArgs {
    /// Explicit address and token, for commands where the server is optional (`doctor`).
    pub(crate) fn new(url: String, token: String) -> Self {
        Self {
            url: Some(url),
            token: Some(token),
            context: None,
        }
    }

    /// Which gateway and token these flags, the environment, the contexts and this machine
    /// name, and where each came from.
    pub(crate) fn target(&self) -> anyhow::Result<Target> {
        Target::resolve(self, &target::Environment::current())
    }

    /// Calls `method` and returns its payload; a refusal becomes an error naming its code.
    pub(crate) fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        block_on(self.call_async(method, params))
    }

    /// [`Self::call`] for calls that must run beside others (a wait and what watches it); a
    /// refusal is a [`Refusal`].
    pub(crate) async fn call_async(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.target()?.call(method, params).await
    }
}

impl Target {
    /// Calls `method` on this gateway with this token.
    pub(crate) async fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let token = self.token()?;
        let url = format!("{}/rpc", self.url.trim_end_matches('/'));
        let response = reqwest::Client::new()
            .post(&url)
            .bearer_auth(token)
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
                Err(Refusal {
                    method: method.to_owned(),
                    code: text("code"),
                    message: text("message"),
                }
                .into())
            }
            None => bail!("{method}: the gateway's answer has no `ok` field"),
        }
    }
}

/// Runs `work` on a runtime of its own: each client command is one short burst of calls.
pub(crate) fn block_on<T>(work: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(work)
}

/// The gateway's refusal of a call, with its stable code (`docs/protocol.md`), so a caller can
/// tell one refusal from another without reading the message; a command that handles some
/// refusals itself finds this among the error's causes ([`refused_with`]).
#[derive(Debug)]
pub(crate) struct Refusal {
    method: String,
    /// The error code (`not_found`, `forbidden`, …).
    code: String,
    message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.method, self.message, self.code)
    }
}

impl std::error::Error for Refusal {}

/// Whether `error` is the gateway refusing with `code`.
pub(crate) fn refused_with(error: &anyhow::Error, code: &str) -> bool {
    error
        .downcast_ref::<Refusal>()
        .is_some_and(|refusal| refusal.code == code)
}

/// What `request` and `run` send: a command for an agent, from a cwd, with a time limit.
#[derive(Debug, clap::Args)]
pub(crate) struct CommandArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    /// Seconds: how long `request` waits for a decision, or how long `run` lets the command
    /// run [default: the server's].
    #[arg(long, value_name = "SECS", value_parser = at_least_one)]
    timeout: Option<u64>,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Agent id the command is for.
    #[arg(long, default_value = "main")]
    agent: String,
    /// Session key shown to approvers.
    #[arg(long, default_value = "cli")]
    session: String,
    /// Working directory (on the gateway host) [default: the current one].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// One argument: a shell string. Several: an argv run without a shell.
    #[arg(value_name = "COMMAND", required = true, last = true)]
    command: Vec<String>,
}

impl CommandArgs {
    /// The request params: `command` (and `argv` for several words), cwd, agent, session and
    /// `timeoutMs`.
    pub(crate) fn params(&self) -> anyhow::Result<Value> {
        let cwd = match &self.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().context("cannot determine the current directory")?,
        };
        let mut params = match self.command.as_slice() {
            [single] => json!({"command": single}),
            // The gateway requires `command` to be the argv's own display form.
            argv => json!({"command": display_argv(argv), "argv": argv}),
        };
        params["cwd"] = json!(cwd);
        params["agentId"] = json!(self.agent);
        params["sessionKey"] = json!(self.session);
        if let Some(seconds) = self.timeout {
            params["timeoutMs"] = json!(seconds.saturating_mul(1000));
        }
        Ok(params)
    }
}

/// A count or duration for which zero means nothing useful (an approval that expires at once, a
/// listing of nothing): refused as a usage error, so the mistake is not mistaken for an answer.
pub(crate) fn at_least_one(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(value) => Ok(value),
        Err(error) => Err(error.to_string()),
    }
}
