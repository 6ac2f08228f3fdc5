//! A gateway with the service on an in-memory store and no chat runtime, for the method tests.

use std::sync::Arc;

use gatehouse_approvals::SystemClock;
use gatehouse_service::{ExecLimits, Ports, Service, ServiceSetup};
use gatehouse_store::approvals_db::SqliteApprovalStore;
use serde_json::Value;

use crate::methods::Call;
use crate::scope::Scope;
use crate::settings::{GatewaySettings, Limits, Secret, TokenSpec};
use crate::state::GatewayState;

const AGENT: &str = "agent-secret-0123456789";

/// A gateway on `config` (JSON5) and an agent-scope call on it; the temp dir holds its files.
pub(crate) async fn gateway(config: &str) -> (tempfile::TempDir, Call) {
    let dir = tempfile::tempdir().unwrap();
    let loaded = gatehouse_config::load_str(config, &dir.path().join("gatehouse.json5"));
    let setup = ServiceSetup {
        config: loaded.unwrap().config,
        approvals_file: dir.path().join("exec-approvals.json"),
        audit_log: dir.path().join("audit.jsonl"),
        limits: ExecLimits::default(),
        sandbox_host: None,
        protected: Vec::new(),
    };
    let settings = GatewaySettings {
        tokens: vec![TokenSpec {
            name: "agent".into(),
            secret: Secret::new(AGENT),
            scopes: vec![Scope::Agent],
            agents: None,
        }],
        limits: Limits::default(),
    };
    let builder = GatewayState::builder(&settings);
    let store = SqliteApprovalStore::open_in_memory().unwrap();
    let ports = Ports {
        store: Arc::new(store),
        clock: Arc::new(SystemClock),
        publisher: Arc::new(builder.events().clone()),
    };
    let service = Service::start(setup, ports).await.unwrap();
    assert!(service.chat_status().await.is_none());
    let state = builder.with_service(service).unwrap();
    let caller = state.authenticate(AGENT).unwrap();
    (dir, Call { state, caller })
}

/// Dispatches `method` with `params` as the transports do: the answer, or the error's code and
/// message.
pub(crate) async fn dispatch(
    call: &Call,
    method: &str,
    params: &Value,
) -> Result<Value, (String, String)> {
    let registry = call.state.registry();
    let params = serde_json::value::to_raw_value(params).unwrap();
    match registry.dispatch(call.clone(), method, Some(params)).await {
        Ok(answer) => Ok(serde_json::from_str(answer.get()).unwrap()),
        Err(error) => Err((error.code().to_owned(), error.to_string())),
    }
}
