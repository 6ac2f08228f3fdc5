//! Codex's tools (0.171.0) as Gatehouse tool calls. The table in docs/integrations/codex.md
//! is this file in prose.

use serde_json::json;

use super::Mapped;
use super::args::Args;
use super::mcp::map_mcp;
use super::paths::{absolute, absolute_patch};
use crate::error::HookError;
use crate::host::Host;
use crate::input::HookInput;

pub(super) fn map(input: &HookInput) -> Result<Mapped, HookError> {
    let tool = input.tool_name.as_str();
    let args = Args::new(tool, &input.tool_input);
    let cwd = input.cwd.as_str();
    let mut adjustments = Vec::new();
    match tool {
        // The shell, `exec_command` and unified exec all report `Bash` with `{command}`.
        // 0.171.0 does not pass the model's `workdir`, so the command is judged in the hook's
        // `cwd`; a `workdir` sent by a later version is where the command runs, so it wins.
        // On PermissionRequest, `description` carries the model's justification (or
        // `network-access <domain>` for a network approval).
        "Bash" => {
            let command = args.string("command")?;
            let note = args.optional_string("description")?;
            let dir = match args.optional_string("workdir")? {
                Some(dir) => absolute(&args, "workdir", dir, cwd, &mut adjustments)?,
                None => cwd.to_owned(),
            };
            Ok(Mapped {
                tool: "exec".to_owned(),
                params: json!({"command": command, "cwd": dir}),
                adjustments,
                agent_note: note.map(str::to_owned),
            })
        }
        // Codex passes the raw patch as `command` (openai/codex#18391).
        "apply_patch" => {
            let patch = args.string("command")?;
            let input = absolute_patch(&args, "command", patch, cwd, &mut adjustments)?;
            Ok(Mapped {
                tool: "apply_patch".to_owned(),
                params: json!({"input": input}),
                adjustments,
                agent_note: None,
            })
        }
        _ => map_mcp(Host::Codex, tool, &input.tool_input),
    }
}
