//! The fake OpenAI Responses API: `POST /v1/responses` (streamed as Codex asks, or a whole
//! response object) and `GET /v1/models`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

use super::sse::{Sse, pieces};
use super::{
    Admitted, Dialect, ModelFake, Script, ToolResult, Turn, content_text, push_new, spawn_model,
};
use crate::calls::Call;
use crate::clock::now_secs;
use crate::error::FakeError;
use crate::server::FakeHandle;

/// Input item types that carry a tool's output back to the model.
const OUTPUT_ITEMS: [&str; 2] = ["function_call_output", "custom_tool_call_output"];

/// Starts a fake Responses API following `script`. `handle.base_url` ends in `/v1`, as
/// Codex's `model_providers.<id>.base_url` wants it (with `wire_api = "responses"`).
pub async fn spawn(addr: SocketAddr, script: Script) -> Result<FakeHandle, FakeError> {
    let api = Router::new()
        .route("/v1/responses", post(responses))
        .route("/v1/models", get(models))
        .fallback(any(super::unknown));
    spawn_model(addr, script, Dialect::OpenAi, "/v1", api).await
}

/// Every function-call output Codex sent back, once each, in the order they first arrived.
pub fn tool_results(calls: &[Call]) -> Vec<ToolResult> {
    let mut results = Vec::new();
    for call in calls.iter().filter(|c| c.method == "responses") {
        for item in input_items(&call.body).filter(|item| is_output(item)) {
            push_new(
                &mut results,
                ToolResult {
                    call_id: item
                        .get("call_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    output: content_text(item.get("output")),
                    is_error: false,
                },
            );
        }
    }
    results
}

fn input_items(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn is_output(item: &Value) -> bool {
    item.get("type")
        .and_then(Value::as_str)
        .is_some_and(|kind| OUTPUT_ITEMS.contains(&kind))
}

async fn responses(
    State(fake): State<Arc<ModelFake>>,
    Admitted { body, .. }: Admitted,
) -> Response {
    let Some(model) = body.get("model").and_then(Value::as_str) else {
        return fake.error(400, "Missing required parameter: 'model'.");
    };
    if body.get("input").is_none() {
        return fake.error(400, "Missing required parameter: 'input'.");
    }
    let results = input_items(&body).filter(|item| is_output(item)).count();
    let turn = fake.script().turn_after(results);
    let answer = Answer {
        number: fake.next_id(),
        model,
        turn: &turn,
    };
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        answer.stream().into_response()
    } else {
        Json(answer.response("completed", answer.items())).into_response()
    }
}

/// One scripted answer as a response object or an event stream.
struct Answer<'a> {
    /// Numbers the response and its items, unique per fake, so results from several
    /// conversations stay apart.
    number: u64,
    model: &'a str,
    turn: &'a Turn,
}

impl Answer<'_> {
    /// Output items: a `message` with the text, then one `function_call` per call.
    fn items(&self) -> Vec<Value> {
        let n = self.number;
        let text = self.turn.text.iter().map(|text| {
            json!({"type": "message", "id": format!("msg_fake{n:04}"), "role": "assistant",
                   "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]})
        });
        let calls = self.turn.tool_calls.iter().enumerate().map(|(k, call)| {
            json!({"type": "function_call", "id": format!("fc_fake{n:04}_{k}"),
                   "call_id": format!("call_fake{n:04}_{k}"), "name": call.name,
                   "arguments": call.input.to_string(), "status": "completed"})
        });
        text.chain(calls).collect()
    }

    fn response(&self, status: &str, output: Vec<Value>) -> Value {
        let usage = (status == "completed").then(|| {
            json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                   "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 15})
        });
        json!({"id": format!("resp_fake{:04}", self.number), "object": "response", "created_at": now_secs(), "status": status,
               "model": self.model, "output": output, "usage": usage, "error": null,
               "incomplete_details": null, "parallel_tool_calls": true})
    }

    /// `response.created`, `response.in_progress`, per item `output_item.added`, its deltas
    /// and `output_item.done`, then `response.completed` with the whole output and usage.
    fn stream(&self) -> Sse {
        let mut events = Vec::new();
        events.push(json!({"type": "response.created", "response": self.response("in_progress", Vec::new())}));
        events.push(json!({"type": "response.in_progress", "response": self.response("in_progress", Vec::new())}));
        let items = self.items();
        for (index, item) in items.iter().enumerate() {
            item_events(&mut events, index, item);
        }
        events.push(
            json!({"type": "response.completed", "response": self.response("completed", items)}),
        );
        let mut sse = Sse::default();
        for (sequence, mut event) in events.into_iter().enumerate() {
            event["sequence_number"] = json!(sequence);
            let name = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            sse.event(&name, &event);
        }
        sse
    }
}

/// The events of one output item, as the Responses API streams a message or a function call.
fn item_events(events: &mut Vec<Value>, index: usize, item: &Value) {
    let id = item.get("id").cloned().unwrap_or(Value::Null);
    if item.get("type").and_then(Value::as_str) == Some("function_call") {
        let arguments = item
            .get("arguments")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut added = item.clone();
        added["arguments"] = json!("");
        added["status"] = json!("in_progress");
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        for delta in pieces(arguments) {
            events.push(json!({"type": "response.function_call_arguments.delta",
                "item_id": id, "output_index": index, "delta": delta}));
        }
        events.push(json!({"type": "response.function_call_arguments.done",
            "item_id": id, "output_index": index, "arguments": arguments}));
    } else {
        let text = item
            .pointer("/content/0/text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut added = item.clone();
        added["content"] = json!([]);
        added["status"] = json!("in_progress");
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        events.push(json!({"type": "response.content_part.added", "item_id": id,
            "output_index": index, "content_index": 0, "part": part("")}));
        for delta in pieces(text) {
            events.push(json!({"type": "response.output_text.delta", "item_id": id,
                "output_index": index, "content_index": 0, "delta": delta}));
        }
        events.push(json!({"type": "response.output_text.done", "item_id": id,
            "output_index": index, "content_index": 0, "text": text}));
        events.push(json!({"type": "response.content_part.done", "item_id": id,
            "output_index": index, "content_index": 0, "part": part(text)}));
    }
    events.push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
}

async fn models(_: Admitted) -> Json<Value> {
    Json(
        json!({"object": "list", "data": [{"id": "gpt-5", "object": "model",
        "created": 1_754_000_000, "owned_by": "gatehouse-fake"}]}),
    )
}
