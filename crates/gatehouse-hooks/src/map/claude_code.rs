//! Claude Code's tools (2.1.332) as Gatehouse tool calls. The table in
//! docs/integrations/claude-code.md is this file in prose.

use serde_json::{Map, Value, json};

use super::Mapped;
use super::args::Args;
use super::mcp::map_mcp;
use super::paths::{absolute, absolute_param, contained_glob};
use crate::error::HookError;
use crate::host::Host;
use crate::input::HookInput;

pub(super) fn map(input: &HookInput) -> Result<Mapped, HookError> {
    let tool = input.tool_name.as_str();
    let args = Args::new(tool, &input.tool_input);
    let cwd = input.cwd.as_str();
    let mut adjustments = Vec::new();
    let (gatehouse_tool, params, note) = match tool {
        "Bash" => {
            let command = args.string("command")?;
            if args.optional_bool("run_in_background")? == Some(true) {
                adjustments.push("the command runs in the background".to_owned());
            }
            let note = args.optional_string("description")?;
            ("exec", json!({"command": command, "cwd": cwd}), note)
        }
        "Read" => {
            let path = absolute_param(&args, "file_path", cwd, &mut adjustments)?;
            let mut params = Map::new();
            params.insert("path".into(), json!(path));
            for window in ["offset", "limit"] {
                if let Some(n) = args.optional_count(window)? {
                    params.insert(window.into(), json!(n));
                }
            }
            ("read", Value::Object(params), None)
        }
        "Write" => {
            let path = absolute_param(&args, "file_path", cwd, &mut adjustments)?;
            let content = args.string("content")?;
            ("write", json!({"path": path, "content": content}), None)
        }
        "Edit" => {
            let path = absolute_param(&args, "file_path", cwd, &mut adjustments)?;
            let edit = replacement(&args)?;
            if args.optional_bool("replace_all")? == Some(true) {
                adjustments.push("the edit replaces every occurrence".to_owned());
            }
            ("edit", json!({"path": path, "edits": [edit]}), None)
        }
        // Gone from 2.1.332 ("No such tool available"); kept for older versions.
        "MultiEdit" => {
            let path = absolute_param(&args, "file_path", cwd, &mut adjustments)?;
            let edits = args
                .objects("edits")?
                .iter()
                .map(replacement)
                .collect::<Result<Vec<_>, _>>()?;
            ("edit", json!({"path": path, "edits": edits}), None)
        }
        "NotebookEdit" => {
            let path = absolute_param(&args, "notebook_path", cwd, &mut adjustments)?;
            let mode = args.optional_string("edit_mode")?.unwrap_or("replace");
            adjustments.push(format!("a notebook cell edit ({mode})"));
            ("edit", json!({"path": path}), None)
        }
        "Glob" | "Grep" => {
            let glob_param = if tool == "Glob" { "pattern" } else { "glob" };
            if let Some(glob) = args.optional_string(glob_param)? {
                contained_glob(&args, glob_param, glob)?;
            }
            let path = match args.optional_string("path")? {
                Some(path) => absolute(&args, "path", path, cwd, &mut adjustments)?,
                None => cwd.to_owned(),
            };
            let pattern = args.string("pattern")?;
            adjustments.push(format!("a {tool} search for {pattern:?} under this path"));
            ("read", json!({"path": path}), None)
        }
        "WebFetch" => {
            let url = args.string("url")?;
            (
                "web_fetch",
                json!({"url": url}),
                args.optional_string("prompt")?,
            )
        }
        "WebSearch" => {
            let query = args.string("query")?;
            ("web_search", json!({"query": query}), None)
        }
        // A model call named `Task` arrives as `Agent` in 2.1.332; older versions send `Task`.
        "Agent" | "Task" => {
            let mut params = Map::new();
            params.insert("task".into(), json!(args.string("prompt")?));
            if let Some(label) = args.optional_string("description")? {
                params.insert("label".into(), json!(label));
            }
            if let Some(model) = args.optional_string("model")? {
                params.insert("model".into(), json!(model));
            }
            if let Some(kind) = args.optional_string("subagent_type")? {
                adjustments.push(format!("spawns a {kind:?} sub-agent"));
            }
            ("sessions_spawn", Value::Object(params), None)
        }
        _ => return map_mcp(Host::ClaudeCode, tool, &input.tool_input),
    };
    Ok(Mapped {
        tool: gatehouse_tool.to_owned(),
        params,
        adjustments,
        agent_note: note.map(str::to_owned),
    })
}

/// One `old_string` → `new_string` replacement as the reference's `{oldText, newText}`.
fn replacement(args: &Args<'_>) -> Result<Value, HookError> {
    Ok(json!({
        "oldText": args.string("old_string")?,
        "newText": args.string("new_string")?,
    }))
}
