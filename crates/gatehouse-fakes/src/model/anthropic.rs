//! The fake Anthropic Messages API: `POST /v1/messages` (streamed as Claude Code asks, or a
//! whole message), `POST /v1/messages/count_tokens`, `GET /v1/models`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

use super::sse::{Sse, pieces};
use super::{
    Admitted, Dialect, ModelFake, Script, ToolResult, Turn, content_text, push_new, spawn_model,
};
use crate::calls::Call;
use crate::error::FakeError;
use crate::server::FakeHandle;

/// Starts a fake Messages API following `script`. Point the host at `handle.base_url`
/// (Claude Code: `ANTHROPIC_BASE_URL`, with any `ANTHROPIC_API_KEY`).
pub async fn spawn(addr: SocketAddr, script: Script) -> Result<FakeHandle, FakeError> {
    let api = Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/models", get(models))
        .fallback(any(super::unknown));
    spawn_model(addr, script, Dialect::Anthropic, "", api).await
}

/// Every tool result Claude Code sent back, once each, in the order they first arrived.
pub fn tool_results(calls: &[Call]) -> Vec<ToolResult> {
    let mut results = Vec::new();
    for call in calls.iter().filter(|c| c.method == "messages") {
        let messages = call.body.get("messages").and_then(Value::as_array);
        let blocks = messages
            .into_iter()
            .flatten()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        for block in blocks {
            push_new(
                &mut results,
                ToolResult {
                    call_id: block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    output: content_text(block.get("content")),
                    is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
                },
            );
        }
    }
    results
}

/// Tool results in the conversation a request carries: the script's position.
fn results_sent(body: &Value) -> usize {
    body.get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .count()
}

/// What the Messages API requires of every request, checked as it does.
fn invalid(headers: &HeaderMap, body: &Value) -> Option<&'static str> {
    if !headers.contains_key("anthropic-version") {
        return Some("anthropic-version: header is required");
    }
    if body.get("model").and_then(Value::as_str).is_none() {
        return Some("model: Field required");
    }
    if body.get("max_tokens").and_then(Value::as_u64).is_none() {
        return Some("max_tokens: Field required");
    }
    match body.get("messages").and_then(Value::as_array) {
        None => Some("messages: Field required"),
        Some(messages) if messages.is_empty() => Some("messages: at least one message is required"),
        Some(_) => None,
    }
}

async fn messages(State(fake): State<Arc<ModelFake>>, admitted: Admitted) -> Response {
    let Admitted { body, headers } = admitted;
    if let Some(problem) = invalid(&headers, &body) {
        return fake.error(400, problem);
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude");
    let turn = fake.script().turn_after(results_sent(&body));
    let message = Message {
        number: fake.next_id(),
        model,
        turn: &turn,
    };
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        message.stream().into_response()
    } else {
        Json(message.whole()).into_response()
    }
}

/// One scripted answer, rendered whole or streamed.
struct Message<'a> {
    /// Numbers the message and its tool calls, unique per fake, so results from several
    /// conversations stay apart.
    number: u64,
    model: &'a str,
    turn: &'a Turn,
}

impl Message<'_> {
    fn id(&self) -> String {
        format!("msg_fake{:04}", self.number)
    }

    fn stop_reason(&self) -> &'static str {
        if self.turn.tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        }
    }

    /// Content blocks: the text, then one `tool_use` per call.
    fn blocks(&self) -> Vec<Value> {
        let text = self
            .turn
            .text
            .iter()
            .map(|text| json!({"type": "text", "text": text}));
        let calls = self.turn.tool_calls.iter().enumerate().map(|(k, call)| {
            json!({"type": "tool_use", "id": format!("toolu_fake{:04}_{k}", self.number),
                   "name": call.name, "input": call.input})
        });
        text.chain(calls).collect()
    }

    fn usage(&self, output_tokens: usize) -> Value {
        json!({"input_tokens": 10, "output_tokens": output_tokens,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    }

    /// The non-streaming answer.
    fn whole(&self) -> Value {
        json!({"id": self.id(), "type": "message", "role": "assistant", "model": self.model,
               "content": self.blocks(), "stop_reason": self.stop_reason(),
               "stop_sequence": null, "usage": self.usage(5)})
    }

    /// The event stream: `message_start`, `ping`, per block a start, deltas and a stop,
    /// `message_delta` with the stop reason, `message_stop`.
    fn stream(&self) -> Sse {
        let mut sse = Sse::default();
        sse.event(
            "message_start",
            &json!({"type": "message_start", "message": {"id": self.id(), "type": "message",
                "role": "assistant", "model": self.model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": self.usage(1)}}),
        );
        sse.event("ping", &json!({"type": "ping"}));
        for (index, block) in self.blocks().into_iter().enumerate() {
            let (start, deltas) = match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let input = block
                        .get("input")
                        .cloned()
                        .unwrap_or(Value::Null)
                        .to_string();
                    let mut start = block;
                    start["input"] = json!({});
                    let deltas: Vec<Value> = pieces(&input)
                        .into_iter()
                        .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                        .collect();
                    (start, deltas)
                }
                _ => {
                    let text = block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let deltas = pieces(text)
                        .into_iter()
                        .map(|piece| json!({"type": "text_delta", "text": piece}))
                        .collect();
                    (json!({"type": "text", "text": ""}), deltas)
                }
            };
            sse.event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                sse.event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                );
            }
            sse.event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
        sse.event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": self.stop_reason(),
                "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        );
        sse.event("message_stop", &json!({"type": "message_stop"}));
        sse
    }
}

async fn count_tokens(Admitted { body, .. }: Admitted) -> Json<Value> {
    // Roughly four bytes a token, as a stand-in for a tokenizer.
    Json(json!({"input_tokens": body.to_string().len().div_ceil(4)}))
}

async fn models(_: Admitted) -> Json<Value> {
    Json(json!({"data": [{"type": "model", "id": "claude-opus-4-5",
        "display_name": "Claude (fake)", "created_at": "2025-11-01T00:00:00Z"}],
        "has_more": false, "first_id": "claude-opus-4-5", "last_id": "claude-opus-4-5"}))
}
