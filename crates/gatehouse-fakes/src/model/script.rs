//! The script a fake model follows: turns of tool calls, then a final text. Which turn a
//! request gets is read from the conversation it carries (how many tool results the host
//! sent back), not from a counter, so the host's side requests and retries do not shift it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::FakeError;

/// What the model says when the script has no turn left (or none at all).
const DEFAULT_FINAL_TEXT: &str = "done";

/// One tool call the model makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's name as the host offers it (`Bash`, `Write`, `exec_command`, `mcp__srv__tool`).
    pub name: String,
    /// Its input (Anthropic `input`; OpenAI `arguments`, sent as a JSON string).
    #[serde(alias = "arguments", default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// One model answer: optional text, then tool calls (none makes it the final answer).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Turn {
    /// Text said before any tool call.
    pub text: Option<String>,
    /// The calls, made in parallel in this one answer.
    pub tool_calls: Vec<ToolCall>,
}

impl Turn {
    /// A turn that calls one tool.
    pub fn tool(name: impl Into<String>, input: Value) -> Self {
        Self {
            text: None,
            tool_calls: vec![ToolCall {
                name: name.into(),
                input,
            }],
        }
    }

    /// A final answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            tool_calls: Vec::new(),
        }
    }
}

/// A turn as written in JSON: `{"name","input"}` (or `"arguments"`) for one call,
/// `{"tool_calls":[…]}` for several, `{"text"}` for a final answer, text with calls for both.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnSpec {
    name: Option<String>,
    #[serde(alias = "arguments")]
    input: Option<Value>,
    tool_calls: Option<Vec<ToolCall>>,
    text: Option<String>,
}

/// The turns of one conversation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Script {
    turns: Vec<Turn>,
}

impl Script {
    /// A script of these turns.
    pub fn new(turns: Vec<Turn>) -> Self {
        Self { turns }
    }

    /// Reads a script from JSON: a list of turns (see [`TurnSpec`]'s shapes), as the
    /// reference Python fakes took it.
    pub fn from_json(value: &Value) -> Result<Self, FakeError> {
        let bad = |reason: String| FakeError::BadScript { reason };
        let specs: Vec<TurnSpec> =
            serde_json::from_value(value.clone()).map_err(|e| bad(e.to_string()))?;
        let mut turns = Vec::new();
        for (index, spec) in specs.into_iter().enumerate() {
            let tool_calls = match (spec.name, spec.tool_calls) {
                (Some(name), None) => vec![ToolCall {
                    name,
                    input: spec.input.unwrap_or_else(empty_object),
                }],
                (None, Some(calls)) if spec.input.is_none() => calls,
                (None, None) if spec.input.is_none() => Vec::new(),
                _ => {
                    return Err(bad(format!(
                        "turn {index}: give name (with input) or tool_calls, not both"
                    )));
                }
            };
            if tool_calls.is_empty() && spec.text.is_none() {
                return Err(bad(format!("turn {index} says nothing and calls nothing")));
            }
            if let Some(call) = tool_calls.iter().find(|c| c.name.is_empty()) {
                return Err(bad(format!(
                    "turn {index}: a tool call without a name: {call:?}"
                )));
            }
            turns.push(Turn {
                text: spec.text,
                tool_calls,
            });
        }
        Ok(Self { turns })
    }

    /// The turn that answers a conversation in which the host has sent back `results` tool
    /// results: the first turn whose calls are not all answered yet, or the final text.
    pub(crate) fn turn_after(&self, results: usize) -> Turn {
        let mut answered = 0;
        for turn in &self.turns {
            let calls = turn.tool_calls.len();
            if calls == 0 || answered + calls > results {
                return turn.clone();
            }
            answered += calls;
        }
        Turn::text(DEFAULT_FINAL_TEXT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_turn_shape() {
        let script = Script::from_json(&json!([
            {"name": "Bash", "input": {"command": "ls"}},
            {"name": "exec_command", "arguments": {"cmd": "ls"}},
            {"text": "Two at once.", "tool_calls": [{"name": "Read", "input": {"file_path": "/a"}},
                                                  {"name": "Read", "input": {"file_path": "/b"}}]},
            {"text": "all done"},
        ]))
        .unwrap();
        assert_eq!(
            script.turns[0],
            Turn::tool("Bash", json!({"command": "ls"}))
        );
        assert_eq!(script.turns[1].tool_calls[0].input, json!({"cmd": "ls"}));
        assert_eq!(script.turns[2].tool_calls.len(), 2);
        assert_eq!(script.turns[3], Turn::text("all done"));
    }

    #[test]
    fn refuses_turns_that_do_nothing_or_mix_shapes() {
        for bad in [
            json!([{}]),
            json!([{"name": "Bash", "tool_calls": []}]),
            json!([{"input": {}}]),
            json!([{"name": ""}]),
            json!([{"tool": "Bash"}]),
            json!({"name": "Bash"}),
        ] {
            assert!(Script::from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn picks_the_turn_from_the_results_sent_back() {
        let script = Script::new(vec![
            Turn::tool("A", json!({})),
            Turn {
                text: None,
                tool_calls: vec![
                    ToolCall {
                        name: "B".into(),
                        input: json!({}),
                    },
                    ToolCall {
                        name: "C".into(),
                        input: json!({}),
                    },
                ],
            },
            Turn::tool("D", json!({})),
        ]);
        let name = |results| script.turn_after(results).tool_calls[0].name.clone();
        assert_eq!(name(0), "A");
        assert_eq!(name(1), "B");
        assert_eq!(name(3), "D");
        assert_eq!(script.turn_after(4), Turn::text("done"));
        assert_eq!(Script::default().turn_after(0), Turn::text("done"));
    }
}
