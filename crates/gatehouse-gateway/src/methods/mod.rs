//! The method registry: one line per method declares its name, the access it requires and its
//! handler; dispatch checks access and decodes params in one place for both transports.
//!
//! Adding a method later is one call, for example
//! `registry.register("exec.approval.get", Access::Scope(Scope::Approvals), approvals::get);`
//! with `async fn get(call: Call, params: GetParams) -> Result<GetResult, Error>`.

mod approval;
mod approvals_file;
mod gateway;
mod policy;
mod run;
mod session;
#[cfg(test)]
pub(crate) mod test_support;
mod tools;

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use gatehouse_service::Service;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::auth::Principal;
use crate::error::Error;
use crate::scope::{Access, Scope};
use crate::state::GatewayState;
use crate::wire::RawJson;

/// What a handler gets besides its params: the gateway and the authenticated caller.
#[derive(Debug, Clone)]
pub struct Call {
    /// The gateway the request arrived at.
    pub state: GatewayState,
    /// Who sent it; handlers use it for per-caller filtering beyond the method's scope.
    pub caller: Arc<Principal>,
}

type MethodFuture = Pin<Box<dyn Future<Output = Result<RawJson, Error>> + Send>>;
type Handler = Arc<dyn Fn(Call, Option<RawJson>) -> MethodFuture + Send + Sync>;

struct Method {
    access: Access,
    handler: Handler,
}

/// Every callable method by name.
#[derive(Default)]
pub struct Registry {
    methods: HashMap<&'static str, Method>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<_> = self.methods.keys().collect();
        names.sort_unstable();
        f.debug_struct("Registry").field("methods", &names).finish()
    }
}

/// The service of the gateway the call arrived at; present whenever exec methods are
/// registered, since [`GatewayBuilder::with_service`](crate::GatewayBuilder::with_service)
/// registers them.
pub(crate) fn service_of(call: &Call) -> Result<&Service, Error> {
    call.state.service().ok_or_else(|| Error::Internal {
        reason: "exec methods called on a gateway started without exec services".into(),
    })
}

/// Decodes params sent as JSON text; absent or `null` params read as `{}`. The reason given on
/// failure leaves out serde's line and column, which would count within the params alone.
pub(crate) fn decode_params<P: DeserializeOwned>(params: Option<&RawValue>) -> Result<P, String> {
    let text = match params.map(RawValue::get) {
        None | Some("null") => "{}",
        Some(text) => text,
    };
    serde_json::from_str(text).map_err(|error| {
        let mut reason = error.to_string();
        let position = format!(" at line {} column {}", error.line(), error.column());
        if reason.ends_with(&position) {
            reason.truncate(reason.len() - position.len());
        }
        reason
    })
}

/// The method name `connect` is the WebSocket handshake, never a registered method.
pub(crate) const CONNECT: &str = "connect";

impl Registry {
    /// The methods the gateway serves today.
    pub fn standard() -> Self {
        let mut registry = Self::default();
        registry
            .register("gateway.status", Access::AnyScope, gateway::status)
            .register(
                "gateway.tokens",
                Access::Scope(Scope::Admin),
                gateway::tokens,
            );
        registry
    }

    /// The standard methods plus `exec.*`, `tools.*`, `system.run`, `session.bind` and
    /// `elevated.directive`, which call the gateway's [`Service`].
    pub fn with_exec() -> Self {
        let mut registry = Self::standard();
        let agent = Access::Scope(Scope::Agent);
        let approvals = Access::Scope(Scope::Approvals);
        registry
            .register("exec.policy.check", agent, policy::check)
            .register("tools.effective", agent, policy::effective)
            .register("exec.approval.request", agent, approval::request)
            // Agents may wait on and read only their own approvals; the handlers check that.
            .register(
                "exec.approval.waitDecision",
                Access::AnyScope,
                approval::wait_decision,
            )
            .register("exec.approval.get", Access::AnyScope, approval::get)
            .register("exec.approval.list", approvals, approval::list)
            .register("exec.approval.resolve", approvals, approval::resolve)
            .register("exec.approvals.get", approvals, approvals_file::get)
            .register(
                "exec.approvals.set",
                Access::Scope(Scope::Admin),
                approvals_file::set,
            )
            .register("system.run", agent, run::run)
            .register("session.bind", agent, session::bind)
            .register("elevated.directive", agent, session::elevated_directive)
            .register("tools.call.check", agent, tools::check)
            .register("tools.call.request", agent, tools::request)
            .register("tools.call.finished", agent, tools::finished)
            .register("tools.grants.list", approvals, tools::list_grants)
            .register("tools.grants.revoke", approvals, tools::revoke_grant);
        registry
    }

    /// Adds a method. Params are decoded into `P` (absent params read as `{}`) and the result
    /// encoded from `R`, so handlers deal only in typed values.
    ///
    /// # Panics
    /// If `name` is `connect` or already registered: both are programming errors caught by any test
    /// that builds the registry.
    pub fn register<P, R, F, Fut>(
        &mut self,
        name: &'static str,
        access: Access,
        handler: F,
    ) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + 'static,
        F: Fn(Call, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
    {
        assert!(name != CONNECT, "`connect` is the handshake, not a method");
        let handler = Arc::new(handler);
        let erased: Handler = Arc::new(move |call: Call, params: Option<RawJson>| {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let params: P =
                    decode_params(params.as_deref()).map_err(|reason| Error::InvalidParams {
                        method: name.to_owned(),
                        reason,
                    })?;
                let result = handler(call, params).await?;
                serde_json::value::to_raw_value(&result).map_err(|error| Error::Internal {
                    reason: format!("cannot encode the result of `{name}`: {error}"),
                })
            }) as MethodFuture
        });
        let previous = self.methods.insert(
            name,
            Method {
                access,
                handler: erased,
            },
        );
        assert!(previous.is_none(), "method `{name}` registered twice");
        self
    }

    /// The registered spelling of `method`, or `unknown`: the only values used as metric labels.
    pub(crate) fn metric_label(&self, method: &str) -> &'static str {
        self.methods
            .get_key_value(method)
            .map_or("unknown", |(name, _)| name)
    }

    /// Runs `method` for `call.caller` after checking that it exists and the caller may use it.
    pub(crate) fn dispatch(
        &self,
        call: Call,
        method: &str,
        params: Option<RawJson>,
    ) -> MethodFuture {
        let Some(entry) = self.methods.get(method) else {
            let error = Error::UnknownMethod {
                method: method.to_owned(),
            };
            return Box::pin(async move { Err(error) });
        };
        if !call.caller.allows(entry.access) {
            let error = Error::Forbidden {
                method: method.to_owned(),
                required: entry.access.describe(),
            };
            return Box::pin(async move { Err(error) });
        }
        (entry.handler)(call, params)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::settings::{GatewaySettings, Limits, Secret, TokenSpec};

    fn call_as(scopes: &[Scope]) -> Call {
        let settings = GatewaySettings {
            tokens: vec![TokenSpec {
                name: "t".into(),
                secret: Secret::new("t-secret-0123456789"),
                scopes: scopes.to_vec(),
                agents: None,
            }],
            limits: Limits::default(),
        };
        let state = GatewayState::new(&settings).unwrap();
        let caller = state.authenticate("t-secret-0123456789").unwrap();
        Call { state, caller }
    }

    /// Dispatches as the transports do, from params as JSON text, and parses the answer.
    async fn run(scopes: &[Scope], method: &str, params: Value) -> Result<Value, Error> {
        let call = call_as(scopes);
        let registry = Registry::standard();
        let params = serde_json::value::to_raw_value(&params).unwrap();
        let answer = registry.dispatch(call, method, Some(params)).await?;
        Ok(serde_json::from_str(answer.get()).unwrap())
    }

    #[test]
    fn decodes_absent_and_null_params_as_an_empty_object_and_reports_errors_without_position() {
        #[derive(Debug, serde::Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Params {
            #[serde(default)]
            n: u8,
        }
        let raw = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        assert_eq!(decode_params::<Params>(None), Ok(Params { n: 0 }));
        assert_eq!(
            decode_params::<Params>(Some(&raw("null"))),
            Ok(Params { n: 0 })
        );
        assert_eq!(
            decode_params::<Params>(Some(&raw(r#"{"n":3}"#))),
            Ok(Params { n: 3 })
        );
        let refused = decode_params::<Params>(Some(&raw(r#"{"m":1}"#))).unwrap_err();
        assert_eq!(refused, "unknown field `m`, expected `n`");
    }

    #[tokio::test]
    async fn answers_gateway_status_for_any_scope() {
        for scope in [Scope::Admin, Scope::Approvals, Scope::Agent] {
            let status = run(&[scope], "gateway.status", Value::Null).await.unwrap();
            assert_eq!(status["server"]["version"], env!("CARGO_PKG_VERSION"));
            assert_eq!(status["caller"]["name"], "t");
        }
    }

    #[tokio::test]
    async fn denies_admin_methods_to_other_scopes_with_forbidden() {
        let error = run(
            &[Scope::Agent, Scope::Approvals],
            "gateway.tokens",
            Value::Null,
        )
        .await
        .unwrap_err();
        assert_eq!(error.code(), "forbidden");
        assert_eq!(
            error.to_string(),
            "method `gateway.tokens` requires scope `operator.admin`"
        );
    }

    #[tokio::test]
    async fn denies_unknown_methods_and_unknown_params() {
        assert_eq!(
            run(&[Scope::Admin], "nope", Value::Null)
                .await
                .unwrap_err()
                .code(),
            "unknown_method"
        );
        let error = run(&[Scope::Admin], "gateway.status", json!({"extra": 1}))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_params");
    }

    #[tokio::test]
    async fn lists_token_names_and_scopes_but_no_secrets() {
        let tokens = run(&[Scope::Admin], "gateway.tokens", Value::Null)
            .await
            .unwrap();
        assert_eq!(
            tokens,
            json!({"tokens": [{"name": "t", "scopes": ["operator.admin"]}]})
        );
    }

    #[test]
    fn labels_only_registered_methods_for_metrics() {
        let registry = Registry::standard();
        assert_eq!(registry.metric_label("gateway.status"), "gateway.status");
        assert_eq!(registry.metric_label("anything else"), "unknown");
    }
}
