//! The JSON shapes on the wire, and nothing else.
//!
//! Every struct a client sees is declared here and filled by hand from internal types, so a change
//! elsewhere cannot silently change the protocol. Field names are camelCase; see `docs/protocol.md`.

pub(crate) mod chat;
pub(crate) mod exec;
pub(crate) mod operator;
pub(crate) mod tools;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::Error;

/// JSON text checked for syntax but not parsed into a tree: method params are decoded straight
/// into the handler's type and results encoded straight from it, so no request builds and drops
/// an intermediate `Value` on the way in or out.
pub(crate) type RawJson = Box<RawValue>;

/// A WebSocket request: `{"type":"req","id","method","params"}`; absent or `null` params are
/// `None`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestFrame {
    #[serde(rename = "type")]
    _kind: RequestKind,
    pub(crate) id: String,
    pub(crate) method: String,
    #[serde(default)]
    pub(crate) params: Option<RawJson>,
}

#[derive(Debug, Deserialize)]
enum RequestKind {
    #[serde(rename = "req")]
    Req,
}

impl RequestFrame {
    /// Parses a text frame; on failure returns the request id too when one can be read, so the
    /// client can match the error to what it sent.
    pub(crate) fn parse(text: &str) -> Result<Self, (Option<String>, Error)> {
        serde_json::from_str(text).map_err(|error| {
            let id = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|value| value.get("id").and_then(Value::as_str).map(str::to_owned));
            (
                id,
                Error::InvalidRequest {
                    reason: error.to_string(),
                },
            )
        })
    }
}

/// A response frame: `ok` with `payload`, or not `ok` with `error`.
#[derive(Debug, Serialize)]
pub(crate) struct ResponseFrame<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: Option<&'a str>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
}

impl<'a> ResponseFrame<'a> {
    /// Answers request `id` (`null` when the request could not be read far enough to have one).
    pub(crate) fn new(id: Option<&'a str>, outcome: &'a Result<RawJson, Error>) -> Self {
        let (payload, error) = match outcome {
            Ok(payload) => (Some(&**payload), None),
            Err(error) => (None, Some(ErrorBody::from(error))),
        };
        Self {
            kind: "res",
            id,
            ok: outcome.is_ok(),
            payload,
            error,
        }
    }

    /// The frame as JSON text.
    pub(crate) fn to_text(&self) -> String {
        to_json(self)
    }
}

/// `{"code","message"}`: the code is stable, the message is for people.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody {
    code: &'static str,
    message: String,
}

impl From<&Error> for ErrorBody {
    fn from(error: &Error) -> Self {
        Self {
            code: error.code(),
            message: error.to_string(),
        }
    }
}

/// An event frame: `{"type":"event","event","payload","seq"}`.
#[derive(Debug, Serialize)]
pub(crate) struct EventFrame<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    event: &'a str,
    payload: &'a Value,
    seq: u64,
}

impl<'a> EventFrame<'a> {
    pub(crate) fn new(event: &'a str, payload: &'a Value, seq: u64) -> Self {
        Self {
            kind: "event",
            event,
            payload,
            seq,
        }
    }

    /// The frame as JSON text, built once per event and shared by every subscriber.
    pub(crate) fn to_text(&self) -> String {
        to_json(self)
    }
}

/// `POST /rpc` body: `{"method","params"}`; absent or `null` params are `None`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    #[serde(default)]
    pub(crate) params: Option<RawJson>,
}

/// `POST /rpc` answer: `{"ok","payload"|"error"}`.
#[derive(Debug, Serialize)]
pub(crate) struct HttpResponse<'a> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
}

impl<'a> HttpResponse<'a> {
    pub(crate) fn new(outcome: &'a Result<RawJson, Error>) -> Self {
        match outcome {
            Ok(payload) => Self {
                ok: true,
                payload: Some(payload),
                error: None,
            },
            Err(error) => Self {
                ok: false,
                payload: None,
                error: Some(ErrorBody::from(error)),
            },
        }
    }
}

/// `connect` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConnectParams {
    pub(crate) token: String,
    pub(crate) client: ClientInfo,
    /// The last `seq` the client saw; buffered events after it are replayed before live ones.
    #[serde(default)]
    pub(crate) since: Option<u64>,
    /// The server run (or, with replicas, the shared log) `since` belongs to; another's `seq`
    /// replays from the start.
    #[serde(default)]
    pub(crate) instance: Option<String>,
}

/// Who is connecting; logged, never trusted for authorization.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClientInfo {
    pub(crate) name: String,
    pub(crate) version: String,
}

/// `connect` result: `{scopes, server, events}`.
#[derive(Debug, Serialize)]
pub(crate) struct ConnectResult {
    pub(crate) scopes: Vec<&'static str>,
    pub(crate) server: ServerInfo,
    pub(crate) events: EventsInfo,
}

/// Where the connection's event stream starts, so a client can tell whether it missed any.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventsInfo {
    /// Live events start above this `seq`.
    pub(crate) last_seq: u64,
    /// Buffered events sent ahead of live ones (0 without `since`).
    pub(crate) replayed: usize,
    /// False when some events after `since` were no longer buffered: resync with the list methods.
    pub(crate) complete: bool,
}

/// The server's identity, in `connect` and `gateway.status`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServerInfo {
    pub(crate) version: &'static str,
    /// Changes with every start, and `seq` restarts at 1 with it; with replicas on one
    /// database, the database's log instead, the same on every replica.
    pub(crate) instance: String,
    pub(crate) started_at_ms: u64,
}

impl ServerInfo {
    /// This build, in the server run named `instance` that started at `started_at_ms`.
    pub(crate) fn current(instance: &str, started_at_ms: u64) -> Self {
        Self {
            version: env!("CARGO_PKG_VERSION"),
            instance: instance.to_owned(),
            started_at_ms,
        }
    }
}

/// Params of methods that take none; unknown fields are refused like everywhere else.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

/// `gateway.status` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusResult {
    pub(crate) server: ServerInfo,
    pub(crate) uptime_ms: u64,
    pub(crate) connections: usize,
    pub(crate) caller: CallerInfo,
    /// Chat approvals, for `operator.*` callers when the chat runtime runs (always under
    /// `serve`, with empty lists when no channel is configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) chat: Option<chat::ChatStatusJson>,
    /// The WebSocket clients that receive approvals and may answer them (the Control UI among
    /// them), for `operator.*` callers: with none and no chat route, approvals expire at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) operator_clients: Option<Vec<OperatorClient>>,
    /// How many approvals wait for a person, for `operator.*` callers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pending_approvals: Option<usize>,
}

/// One connected operator client: the token it connected with (by name) and the name it gave.
#[derive(Debug, Serialize)]
pub(crate) struct OperatorClient {
    pub(crate) token: String,
    pub(crate) client: String,
}

/// The token a request was authenticated as.
#[derive(Debug, Serialize)]
pub(crate) struct CallerInfo {
    pub(crate) name: String,
    pub(crate) scopes: Vec<&'static str>,
}

/// `gateway.tokens` result: names and scopes, never secrets.
#[derive(Debug, Serialize)]
pub(crate) struct TokensResult {
    pub(crate) tokens: Vec<CallerInfo>,
}

/// `GET /healthz` body.
#[derive(Debug, Serialize)]
pub(crate) struct Health {
    pub(crate) status: &'static str,
}

/// Serializes a wire struct; these contain only strings, numbers and `Value`s, which cannot fail,
/// but a failure would still become a well-formed internal error rather than a panic.
fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|error| {
        format!(
            r#"{{"type":"res","id":null,"ok":false,"error":{{"code":"internal","message":{}}}}}"#,
            Value::String(format!("internal error: cannot encode frame: {error}"))
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_a_request_frame_with_and_without_params() {
        let frame = RequestFrame::parse(r#"{"type":"req","id":"1","method":"m"}"#).unwrap();
        assert_eq!((frame.id.as_str(), frame.method.as_str()), ("1", "m"));
        assert!(frame.params.is_none());
        let frame =
            RequestFrame::parse(r#"{"type":"req","id":"2","method":"m","params":null}"#).unwrap();
        assert!(frame.params.is_none());
        let frame = RequestFrame::parse(r#"{"type":"req","id":"2","method":"m","params":{"a":1}}"#)
            .unwrap();
        assert_eq!(
            frame.params.map(|raw| raw.get().to_owned()).as_deref(),
            Some(r#"{"a":1}"#)
        );
    }

    #[test]
    fn denies_frames_of_another_type_or_with_unknown_fields_and_keeps_their_id() {
        let (id, error) =
            RequestFrame::parse(r#"{"type":"res","id":"7","method":"m"}"#).unwrap_err();
        assert_eq!(
            (id.as_deref(), error.code()),
            (Some("7"), "invalid_request")
        );
        let (id, _) =
            RequestFrame::parse(r#"{"type":"req","id":"8","method":"m","x":1}"#).unwrap_err();
        assert_eq!(id.as_deref(), Some("8"));
        let (id, _) = RequestFrame::parse("not json").unwrap_err();
        assert_eq!(id, None);
    }

    #[test]
    fn encodes_responses_and_events_exactly_as_the_protocol_says() {
        let ok = Ok(serde_json::value::to_raw_value(&json!({"x": 1})).unwrap());
        let text = ResponseFrame::new(Some("1"), &ok).to_text();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"type":"res","id":"1","ok":true,"payload":{"x":1}})
        );
        let err = Err(Error::Unauthorized);
        let text = ResponseFrame::new(None, &err).to_text();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"type":"res","id":null,"ok":false,
                   "error":{"code":"unauthorized","message":"missing or unknown token"}})
        );
        let text = EventFrame::new("e", &json!({"a": 2}), 9).to_text();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"type":"event","event":"e","payload":{"a":2},"seq":9})
        );
    }
}
