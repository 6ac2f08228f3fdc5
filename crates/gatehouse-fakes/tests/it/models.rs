//! The fake model APIs spoken to over HTTP as Claude Code and Codex speak them: a scripted
//! tool call, the host's tool result back, the final text; errors in each API's shape.

use gatehouse_fakes::FakeHandle;
use gatehouse_fakes::model::{Script, ToolResult, Turn, anthropic, openai};
use serde_json::{Value, json};

use crate::support::{control, loopback};

/// The events of a server-sent event stream, as (event name, data).
fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|chunk| !chunk.trim().is_empty())
        .map(|chunk| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in chunk.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = value.to_owned();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(value).unwrap();
                }
            }
            (name, data)
        })
        .collect()
}

async fn post(
    fake: &FakeHandle,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("http://{}{path}", fake.addr))
        .json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

const CLAUDE: [(&str, &str); 2] = [
    ("x-api-key", "sk-fake"),
    ("anthropic-version", "2023-06-01"),
];

async fn claude_turn(fake: &FakeHandle, messages: Value) -> Vec<(String, Value)> {
    let body = json!({"model": "claude-opus-4-5", "max_tokens": 1024, "stream": true,
                      "messages": messages});
    let response = post(fake, "/v1/messages?beta=true", &CLAUDE, body).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    events(&response.text().await.unwrap())
}

#[tokio::test]
async fn anthropic_streams_a_tool_call_then_reads_the_hooks_denial_then_ends() {
    let script = Script::new(vec![
        Turn::tool(
            "Bash",
            json!({"command": "touch /tmp/gatehouse-was-here", "description": "touch"}),
        ),
        Turn::text("The command was blocked."),
    ]);
    let fake = anthropic::spawn(loopback(), script).await.unwrap();
    let go = json!([{"role": "user", "content": "go"}]);
    let first = claude_turn(&fake, go.clone()).await;
    let names: Vec<&str> = first.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
    assert_eq!(
        names[names.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    let start = &first[2].1["content_block"];
    assert_eq!(
        (start["type"].as_str(), start["name"].as_str()),
        (Some("tool_use"), Some("Bash"))
    );
    assert_eq!(start["input"], json!({}));
    // The input arrives in several input_json_delta pieces the host must join.
    let pieces: Vec<&str> = first
        .iter()
        .filter(|(name, _)| name == "content_block_delta")
        .map(|(_, data)| data["delta"]["partial_json"].as_str().unwrap())
        .collect();
    assert!(pieces.len() > 1);
    let input: Value = serde_json::from_str(&pieces.concat()).unwrap();
    assert_eq!(input["command"], "touch /tmp/gatehouse-was-here");
    let message_delta = &first[first.len() - 2].1;
    assert_eq!(message_delta["delta"]["stop_reason"], "tool_use");

    let tool_id = start["id"].as_str().unwrap();
    let conversation = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "Bash",
                                           "input": input}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "is_error": true,
            "content": "PreToolUse:Bash hook error: denied by Gatehouse"}]},
    ]);
    let second = claude_turn(&fake, conversation).await;
    let text: String = second
        .iter()
        .filter(|(name, _)| name == "content_block_delta")
        .map(|(_, data)| data["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The command was blocked.");
    assert_eq!(
        second[second.len() - 2].1["delta"]["stop_reason"],
        "end_turn"
    );

    assert_eq!(
        anthropic::tool_results(&fake.calls()),
        [ToolResult {
            call_id: tool_id.to_owned(),
            output: "PreToolUse:Bash hook error: denied by Gatehouse".into(),
            is_error: true
        }]
    );
    // Every request body is kept, with the query string's path.
    let requests = fake.calls_of("messages");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn anthropic_answers_whole_messages_with_parallel_calls_and_a_new_script() {
    let fake = anthropic::spawn(loopback(), Script::default())
        .await
        .unwrap();
    let script = json!([
        {"text": "Reading both.", "tool_calls": [{"name": "Read", "input": {"file_path": "/a"}},
                                                {"name": "Read", "input": {"file_path": "/b"}}]},
        {"text": "Both read."}
    ]);
    control(&fake, "/_fake/script", script).await;
    let body = json!({"model": "claude-opus-4-5", "max_tokens": 64,
                      "messages": [{"role": "user", "content": "go"}]});
    let message: Value = post(&fake, "/v1/messages", &CLAUDE, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    let kinds: Vec<&str> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool_use", "tool_use"]);
    let results: Vec<Value> = message["content"].as_array().unwrap()[1..]
        .iter()
        .map(|call| json!({"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "ok"}]}))
        .collect();
    let body = json!({"model": "claude-opus-4-5", "max_tokens": 64, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": message["content"]},
        {"role": "user", "content": results}]});
    let last: Value = post(&fake, "/v1/messages", &CLAUDE, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        last["content"],
        json!([{"type": "text", "text": "Both read."}])
    );
    let results = anthropic::tool_results(&fake.calls());
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.output == "ok" && !r.is_error));
}

#[tokio::test]
async fn anthropic_refuses_what_the_real_api_refuses_in_its_shape() {
    let fake = anthropic::spawn(loopback(), Script::default())
        .await
        .unwrap();
    let body =
        json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]});
    let error = |kind: &str, status: u16| (status, kind.to_owned());
    let shape = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["type"], "error");
        (status, body["error"]["type"].as_str().unwrap().to_owned())
    };
    let no_key = post(
        &fake,
        "/v1/messages",
        &[("anthropic-version", "2023-06-01")],
        body.clone(),
    )
    .await;
    assert_eq!(shape(no_key).await, error("authentication_error", 401));
    let no_version = post(&fake, "/v1/messages", &[("x-api-key", "k")], body.clone()).await;
    assert_eq!(shape(no_version).await, error("invalid_request_error", 400));
    let no_messages = post(
        &fake,
        "/v1/messages",
        &CLAUDE,
        json!({"model": "m", "max_tokens": 1}),
    )
    .await;
    assert_eq!(
        shape(no_messages).await,
        error("invalid_request_error", 400)
    );
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "messages", "status": 529}),
    )
    .await;
    let overloaded = post(&fake, "/v1/messages", &CLAUDE, body.clone()).await;
    assert_eq!(shape(overloaded).await, error("overloaded_error", 529));
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "messages", "retry_after": 3}),
    )
    .await;
    let limited = post(&fake, "/v1/messages", &CLAUDE, body.clone()).await;
    assert_eq!(limited.headers()["retry-after"], "3");
    assert_eq!(shape(limited).await, error("rate_limit_error", 429));
    let unknown = post(&fake, "/v1/complete", &CLAUDE, body).await;
    assert_eq!(shape(unknown).await, error("not_found_error", 404));
    assert_eq!(fake.calls_of("POST /v1/complete").len(), 1);
    let tokens: Value = post(
        &fake,
        "/v1/messages/count_tokens",
        &CLAUDE,
        json!({"model": "m", "messages": []}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert!(tokens["input_tokens"].as_u64().unwrap() > 0);
}

const CODEX: [(&str, &str); 1] = [("authorization", "Bearer fake-key")];

async fn codex_turn(fake: &FakeHandle, input: Value) -> Vec<(String, Value)> {
    let body = json!({"model": "gpt-5", "stream": true, "input": input,
                      "tools": [{"type": "function", "name": "exec_command"}]});
    let response = post(fake, "/v1/responses", &CODEX, body).await;
    assert_eq!(response.status(), 200);
    events(&response.text().await.unwrap())
}

#[tokio::test]
async fn openai_streams_a_function_call_then_reads_its_output_then_ends() {
    let script = Script::from_json(&json!([
        {"name": "exec_command", "arguments": {"cmd": "touch /tmp/gatehouse-was-here"}},
        {"text": "done here"}
    ]))
    .unwrap();
    let fake = openai::spawn(loopback(), script).await.unwrap();
    assert!(fake.base_url.ends_with("/v1"));
    let go = json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]);
    let first = codex_turn(&fake, go.clone()).await;
    assert_eq!(first[0].0, "response.created");
    let sequence: Vec<u64> = first
        .iter()
        .map(|(_, d)| d["sequence_number"].as_u64().unwrap())
        .collect();
    assert!(sequence.windows(2).all(|w| w[1] == w[0] + 1));
    let done: Vec<&Value> = first
        .iter()
        .filter(|(name, _)| name == "response.output_item.done")
        .map(|(_, data)| &data["item"])
        .collect();
    assert_eq!(done.len(), 1);
    let call = done[0].clone();
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "exec_command");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"cmd": "touch /tmp/gatehouse-was-here"}));
    let deltas: String = first
        .iter()
        .filter(|(name, _)| name == "response.function_call_arguments.delta")
        .map(|(_, data)| data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, call["arguments"].as_str().unwrap());
    let (last_name, completed) = first.last().unwrap();
    assert_eq!(last_name, "response.completed");
    assert_eq!(completed["response"]["output"][0], call);
    assert_eq!(completed["response"]["usage"]["total_tokens"], 15);

    let blocked = "Command blocked by PreToolUse hook: denied by Gatehouse. Command: touch /tmp/gatehouse-was-here";
    let mut input = go.as_array().unwrap().clone();
    input.push(call.clone());
    input.push(
        json!({"type": "function_call_output", "call_id": call["call_id"], "output": blocked}),
    );
    let second = codex_turn(&fake, Value::Array(input)).await;
    let text: String = second
        .iter()
        .filter(|(name, _)| name == "response.output_text.delta")
        .map(|(_, data)| data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "done here");
    assert_eq!(
        openai::tool_results(&fake.calls()),
        [ToolResult {
            call_id: call["call_id"].as_str().unwrap().to_owned(),
            output: blocked.into(),
            is_error: false
        }]
    );
}

#[tokio::test]
async fn openai_answers_whole_responses_and_errors_in_its_shape() {
    let fake = openai::spawn(loopback(), Script::new(vec![Turn::text("hi")]))
        .await
        .unwrap();
    let body = json!({"model": "gpt-5", "input": "hello"});
    let response: Value = post(&fake, "/v1/responses", &CODEX, body.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    assert_eq!(response["output"][0]["content"][0]["text"], "hi");
    let no_key = post(&fake, "/v1/responses", &[], body.clone()).await;
    assert_eq!(no_key.status(), 401);
    let error: Value = no_key.json().await.unwrap();
    assert_eq!(error["error"]["code"], "invalid_api_key");
    let no_model = post(&fake, "/v1/responses", &CODEX, json!({"input": "x"})).await;
    assert_eq!(no_model.status(), 400);
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "responses", "status": 500}),
    )
    .await;
    let failed = post(&fake, "/v1/responses", &CODEX, body).await;
    assert_eq!(failed.status(), 500);
    assert_eq!(
        failed.json::<Value>().await.unwrap()["error"]["type"],
        "server_error"
    );
}
