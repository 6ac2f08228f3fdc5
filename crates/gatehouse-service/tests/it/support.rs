//! A service on a real SQLite store and audit log in a temp dir, a publisher that keeps what
//! operators were told, and callers of each kind.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gatehouse_approvals::{ApprovalEvent, EventKind, SystemClock};
use gatehouse_policy::tool_call::ToolCallDecision;
use gatehouse_service::policy::tool_call::ToolSession;
use gatehouse_service::{
    Caller, ExecLimits, Ports, Publisher, RunEvent, Service, ServiceSetup, ToolCallInput,
};
use gatehouse_store::approvals_db::SqliteApprovalStore;
use serde_json::{Value, json};

/// What the service told operators, as event names and approval ids.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) events: Mutex<Vec<(String, String)>>,
}

impl Publisher for Recorder {
    fn approvers_connected(&self) -> bool {
        true
    }

    fn approval_event(&self, event: &ApprovalEvent) -> Value {
        let name = match event.kind {
            EventKind::Requested { .. } => "requested",
            EventKind::Resolved { .. } => "resolved",
            EventKind::Expired { .. } => "expired",
            EventKind::Cancelled { .. } => "cancelled",
            EventKind::Run { .. } => "run",
        };
        self.events
            .lock()
            .unwrap()
            .push((name.to_owned(), event.id.to_string()));
        json!({"event": name, "id": event.id.to_string()})
    }

    fn run_event(&self, _event: &RunEvent<'_>) -> Value {
        Value::Null
    }

    fn run_payload(&self, _event: &RunEvent<'_>) -> Value {
        Value::Null
    }

    fn logged_run_event(&self, _seq: u64, _event: &RunEvent<'_>) {}
}

/// A caller: an agent host's token (its own approvals) or an operator (every approval).
pub(crate) struct Who {
    pub(crate) name: &'static str,
    pub(crate) operator: bool,
}

pub(crate) const AGENT: Who = Who {
    name: "agent-host",
    operator: false,
};
pub(crate) const OPERATOR: Who = Who {
    name: "alice",
    operator: true,
};

impl Caller for Who {
    fn name(&self) -> &str {
        self.name
    }

    fn sees_every_approval(&self) -> bool {
        self.operator
    }

    fn may_act_for(&self, _agent_id: &str) -> bool {
        true
    }
}

/// A started service, its files and what it published.
pub(crate) struct Harness {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) service: Service,
    pub(crate) published: Arc<Recorder>,
}

impl Harness {
    /// The workspace every test's agent works in (`<dir>/ws`).
    pub(crate) fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws").canonicalize().unwrap()
    }

    /// The audit log's records, read until `wanted` of them match `filter` (the log is written
    /// by its own thread).
    pub(crate) async fn audited(
        &self,
        wanted: usize,
        filter: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let path = self.dir.path().join("audit.jsonl");
        let mut found = Vec::new();
        for _ in 0..200 {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            found = text
                .lines()
                .map(|line| serde_json::from_str::<Value>(line).unwrap())
                .filter(|record| filter(record))
                .collect();
            if found.len() >= wanted {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        found
    }
}

/// Starts the service with `config` (JSON5, `{ws}` replaced by the workspace, `{dns}` by the
/// name server's address) in a fresh temp dir holding a workspace `ws/`.
pub(crate) async fn start(config: &str, dns: Option<std::net::SocketAddr>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let ws = dir.path().join("ws").canonicalize().unwrap();
    let text = config
        .replace("{ws}", &ws.display().to_string())
        // Without a test name server, one nobody answers on (the discard port).
        .replace(
            "{dns}",
            &dns.map_or_else(|| "127.0.0.1:9".to_owned(), |a| a.to_string()),
        );
    let setup = setup_in(dir.path(), &text);
    let published = Arc::new(Recorder::default());
    let ports = Ports {
        store: Arc::new(SqliteApprovalStore::open_in_memory().unwrap()),
        clock: Arc::new(SystemClock),
        publisher: Arc::clone(&published) as Arc<dyn Publisher>,
    };
    let service = Service::start(setup, ports).await.unwrap();
    Harness {
        dir,
        service,
        published,
    }
}

/// A service's setup with `config` (JSON5) and its files in `dir`.
pub(crate) fn setup_in(dir: &Path, config: &str) -> ServiceSetup {
    let config = gatehouse_config::load_str(config, &dir.join("gatehouse.json5"))
        .unwrap()
        .config;
    ServiceSetup {
        config,
        approvals_file: dir.join("exec-approvals.json"),
        audit_log: dir.join("audit.jsonl"),
        limits: ExecLimits::default(),
        sandbox_host: None,
        protected: Vec::new(),
    }
}

/// Writes `text` to `path` under `root`, creating directories.
pub(crate) fn file(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A call of `tool` for agent `main` in session `s1`.
pub(crate) fn call(tool: &str, params: Value) -> ToolCallInput {
    ToolCallInput {
        agent_id: "main".into(),
        session_key: "s1".into(),
        tool: tool.into(),
        params,
        call_id: None,
        session: ToolSession::default(),
    }
}

/// `tools.call.check` of [`call`] as the agent host.
pub(crate) async fn check(h: &Harness, tool: &str, params: Value) -> ToolCallDecision {
    h.service
        .tool_check(&AGENT, call(tool, params))
        .await
        .unwrap()
}
