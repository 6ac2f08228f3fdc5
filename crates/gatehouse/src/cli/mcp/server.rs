//! The MCP server: its two tools and what it tells clients in `initialize`. Each call is one
//! gateway call (`exec.policy.check` or `system.run`), raced against the client's cancellation:
//! dropping the HTTP request is what tells the gateway the requester went away.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use super::Settings;
use super::arguments::{CheckCommandArgs, RunCommandArgs, RunRequest};
use super::identity::{SessionSuffix, default_session_key};
use super::progress::{Notice, Progress, watch_run};
use super::render;
use crate::cli::approval_id::call_with_approval_id;

/// What `initialize` tells the client (and, through it, the model) about these tools.
const INSTRUCTIONS: &str = "Gatehouse runs shell commands only through its gateway's policy \
and approvals. Use check_command to learn whether a command would run at once, need a person's \
approval, or be refused, and why. run_command runs it: commands the policy allows run at once; \
others wait until a person approves them in the Control UI or a chat (this can take minutes; \
progress notifications say so); refused or denied commands are not run and come back as \
errors with the reason. Paths are on the gateway's machine; cwd must be absolute.";

/// The MCP server: the settings every call shares, and the tool table.
#[derive(Clone)]
pub(super) struct GatehouseMcp {
    settings: Arc<Settings>,
    session_suffix: SessionSuffix,
    tool_router: ToolRouter<Self>,
}

impl GatehouseMcp {
    pub(super) fn new(settings: Settings) -> Self {
        GatehouseMcp {
            settings: Arc::new(settings),
            session_suffix: SessionSuffix::new(),
            tool_router: Self::tool_router(),
        }
    }

    /// `--session`, or the default naming the client from its `initialize`.
    fn session_key(&self, context: &RequestContext<RoleServer>) -> String {
        match &self.settings.session {
            Some(session) => session.clone(),
            None => {
                let client = context.peer.peer_info();
                default_session_key(
                    client.as_deref().map(|info| &info.client_info),
                    &self.session_suffix,
                )
            }
        }
    }

    /// `params` with the agent and session every call names.
    fn identified(&self, mut params: Value, context: &RequestContext<RoleServer>) -> Value {
        params["agentId"] = json!(self.settings.agent);
        params["sessionKey"] = json!(self.session_key(context));
        params
    }

    /// `system.run` for `run`, reporting on its approval through `progress`; the result the
    /// model gets.
    async fn run_through_gateway(
        &self,
        run: RunRequest,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let settings = &self.settings;
        let mut params = self.identified(run.target.params(), context);
        if let Some(ms) = run.timeout_ms {
            params["timeoutMs"] = json!(ms);
        }
        if let Some(ms) = settings.approval_timeout_ms {
            params["approvalTimeoutMs"] = json!(ms);
        }
        if let Some(route) = &settings.route {
            params["turnSource"] = route.clone();
        }
        let progress = Progress::of(context);
        let notice = Notice {
            command: run.target.shown(),
            description: run.description,
            route: settings.route.as_ref().map(route_text),
        };
        let server = &settings.server;
        let called = call_with_approval_id(server, "system.run", params, |id| {
            let progress = progress.clone();
            let notice = notice.clone();
            async move {
                match progress {
                    Some(progress) => watch_run(server, id, progress, notice).await,
                    // Nothing to report to: wait for the answer alone.
                    None => std::future::pending().await,
                }
            }
        })
        .await;
        let (id, answer) = match called {
            Ok(called) => called,
            Err(error) => return render::gateway_failed("run the command", &error),
        };
        // The run id is the approval's when a person was asked: say who decided, and why.
        let approval = if answer["runId"] == id.as_str() {
            server
                .call_async("exec.approval.get", json!({"id": &id}))
                .await
                .ok()
        } else {
            None
        };
        render::run(&answer, approval.as_ref(), settings.max_output_bytes)
    }
}

/// `telegram -100123 thread 7` for the pending notice.
fn route_text(route: &Value) -> String {
    let mut text = format!(
        "{} {}",
        route["channel"].as_str().unwrap_or_default(),
        route["to"].as_str().unwrap_or_default()
    );
    if let Some(thread) = route["threadId"].as_str() {
        text.push_str(&format!(" thread {thread}"));
    }
    text
}

#[tool_router(router = tool_router, vis = "pub(super)")]
impl GatehouseMcp {
    /// `check_command`: the gateway's policy decision, nothing run.
    #[tool(
        description = "Ask Gatehouse's policy whether a shell command may run, without running \
                       it: `allow` (run_command would run it at once), `ask` (a person must \
                       approve it first) or `deny`, with the reason and each part of the \
                       command (program, resolved path, verdict).",
        annotations(
            title = "Check a command against Gatehouse's policy",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn check_command(
        &self,
        Parameters(args): Parameters<CheckCommandArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let target = match args.target() {
            Ok(target) => target,
            Err(problem) => return Ok(render::invalid_arguments(&problem)),
        };
        let params = self.identified(target.params(), &context);
        let server = &self.settings.server;
        let answer = tokio::select! {
            answer = server.call_async("exec.policy.check", params) => answer,
            () = context.ct.cancelled() => return Ok(render::cancelled()),
        };
        Ok(match answer {
            Ok(decision) => render::check(decision),
            Err(error) => render::gateway_failed("check the command", &error),
        })
    }

    /// `run_command`: policy, a person when the policy asks, then the bound run on the gateway.
    #[tool(
        description = "Run a shell command through Gatehouse. Its policy decides first: \
                       allowed commands run at once; others wait until a person approves them \
                       in the Control UI or a chat (this can take minutes); refused or denied \
                       commands are not run and come back as an error with the reason. Returns \
                       the exit code, then stdout and stderr (long output is cut in the middle, \
                       with a marker). The command runs on the gateway's machine with a clean \
                       environment and no stdin.",
        annotations(
            title = "Run a command through Gatehouse",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn run_command(
        &self,
        Parameters(args): Parameters<RunCommandArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = match args.checked() {
            Ok(run) => run,
            Err(problem) => return Ok(render::invalid_arguments(&problem)),
        };
        Ok(tokio::select! {
            result = self.run_through_gateway(run, &context) => result,
            () = context.ct.cancelled() => render::cancelled(),
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for GatehouseMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("gatehouse", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
