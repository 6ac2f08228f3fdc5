//! The tools' arguments as the model sends them, their JSON Schemas (from the doc comments),
//! and the gateway params they become. An optional argument is spelt in the schema as its one
//! type, not as the `[type, "null"]` pair `Option` would give: clients that map tool schemas
//! onto a single-type dialect (Gemini's function declarations) refuse or mangle the pair; a
//! `null` sent anyway reads as absent. Every schema is checked by the MCP Inspector's strict
//! portability check in the tests. Anything the gateway would read differently from what
//! the model meant (both `command` and `argv`, a relative `cwd`, an unknown field) is refused
//! here with a message the model can act on.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// `check_command`'s arguments. The four fields it shares with [`RunCommandArgs`] are written
/// out in both: `serde(flatten)` cannot be combined with `deny_unknown_fields`, and an unknown
/// argument must be refused, not dropped.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CheckCommandArgs {
    /// A shell command line, as `/bin/sh -c` would run it. Give this or `argv`, not both.
    #[serde(default)]
    #[schemars(with = "String", transform = optional)]
    pub(super) command: Option<String>,
    /// The program and its arguments, run without a shell. Give this or `command`, not both.
    #[serde(default)]
    #[schemars(with = "Vec<String>", transform = optional)]
    pub(super) argv: Option<Vec<String>>,
    /// Absolute path of the working directory, on the machine the gateway runs on.
    pub(super) cwd: String,
    /// Environment variables to set for the command, on top of the gateway's clean
    /// environment.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>", transform = optional)]
    pub(super) env: Option<BTreeMap<String, String>>,
}

/// `run_command`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RunCommandArgs {
    /// A shell command line, run with `/bin/sh -c`. Give this or `argv`, not both.
    #[serde(default)]
    #[schemars(with = "String", transform = optional)]
    pub(super) command: Option<String>,
    /// The program and its arguments, run without a shell. Give this or `command`, not both.
    #[serde(default)]
    #[schemars(with = "Vec<String>", transform = optional)]
    pub(super) argv: Option<Vec<String>>,
    /// Absolute path of the working directory, on the machine the gateway runs on.
    pub(super) cwd: String,
    /// Environment variables to set for the command, on top of the gateway's clean
    /// environment (PATH, HOME, LANG, LC_*, TZ, USER, LOGNAME, TMPDIR).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>", transform = optional)]
    pub(super) env: Option<BTreeMap<String, String>>,
    /// How long the command may run once started, in milliseconds (the gateway's default is
    /// 60000, its maximum 3600000); it is killed at the limit. Waiting for approval does not
    /// count.
    #[schemars(range(min = 1))]
    #[serde(default)]
    #[schemars(with = "u64", transform = optional)]
    pub(super) timeout_ms: Option<u64>,
    /// One sentence on what the command is for and why it is needed; repeated in the progress
    /// messages while a person is asked.
    #[serde(default)]
    #[schemars(with = "String", transform = optional)]
    pub(super) description: Option<String>,
}

/// Drops the `"default": null` the schema of an optional argument would carry: the type says
/// `string`, and a default of another type reads as a contradiction to strict validators.
fn optional(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// What to run and where, checked: exactly one of a shell string and an argv.
#[derive(Debug)]
pub(super) struct Target {
    what: What,
    cwd: String,
    env: BTreeMap<String, String>,
}

#[derive(Debug)]
enum What {
    Shell(String),
    Argv(Vec<String>),
}

impl Target {
    /// Checks the parts the two tools share.
    fn new(
        command: Option<String>,
        argv: Option<Vec<String>>,
        cwd: String,
        env: Option<BTreeMap<String, String>>,
    ) -> Result<Self, String> {
        let what = match (command, argv) {
            (Some(_), Some(_)) => {
                return Err("give either `command` (a shell string) or `argv`, not both".into());
            }
            (None, None) => {
                return Err(
                    "give `command` (a shell string) or `argv` (a program and its \
                            arguments)"
                        .into(),
                );
            }
            (Some(command), None) if command.trim().is_empty() => {
                return Err("`command` is empty".into());
            }
            (Some(command), None) => What::Shell(command),
            (None, Some(argv)) if argv.first().is_none_or(|program| program.is_empty()) => {
                return Err("`argv` must start with the program to run".into());
            }
            (None, Some(argv)) => What::Argv(argv),
        };
        if !Path::new(&cwd).is_absolute() {
            return Err(format!(
                "`cwd` must be an absolute path on the gateway's machine, not `{cwd}`"
            ));
        }
        Ok(Target {
            what,
            cwd,
            env: env.unwrap_or_default(),
        })
    }

    /// The command as approvers and the model see it: the shell string, or the argv words.
    pub(super) fn shown(&self) -> String {
        match &self.what {
            What::Shell(command) => command.clone(),
            What::Argv(argv) => gatehouse_policy::exec::display_argv(argv),
        }
    }

    /// The params every exec method shares: exactly one of `command` and `argv`, `cwd`, `env`.
    pub(super) fn params(&self) -> Value {
        let mut params = match &self.what {
            What::Shell(command) => json!({"command": command}),
            What::Argv(argv) => json!({"argv": argv}),
        };
        params["cwd"] = json!(self.cwd);
        if !self.env.is_empty() {
            params["env"] = json!(self.env);
        }
        params
    }
}

impl CheckCommandArgs {
    pub(super) fn target(self) -> Result<Target, String> {
        Target::new(self.command, self.argv, self.cwd, self.env)
    }
}

/// A checked `run_command`.
#[derive(Debug)]
pub(super) struct RunRequest {
    pub(super) target: Target,
    pub(super) timeout_ms: Option<u64>,
    /// The model's reason, trimmed; `None` when blank.
    pub(super) description: Option<String>,
}

impl RunCommandArgs {
    pub(super) fn checked(self) -> Result<RunRequest, String> {
        if self.timeout_ms == Some(0) {
            return Err("`timeoutMs` must be at least 1".into());
        }
        Ok(RunRequest {
            target: Target::new(self.command, self.argv, self.cwd, self.env)?,
            timeout_ms: self.timeout_ms,
            description: self
                .description
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(value: Value) -> Result<RunCommandArgs, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn a_shell_string_and_an_argv_become_the_gateways_params() {
        let run = run_args(json!({"command": "ls | wc -l", "cwd": "/srv", "timeoutMs": 5}))
            .unwrap()
            .checked()
            .unwrap();
        assert_eq!(
            run.target.params(),
            json!({"command": "ls | wc -l", "cwd": "/srv"})
        );
        assert_eq!(run.timeout_ms, Some(5));
        let target = run_args(json!({"argv": ["echo", "a b"], "cwd": "/", "env": {"A": "1"}}))
            .unwrap()
            .checked()
            .unwrap()
            .target;
        assert_eq!(
            target.params(),
            json!({"argv": ["echo", "a b"], "cwd": "/", "env": {"A": "1"}})
        );
        assert_eq!(target.shown(), "echo \"a b\"");
    }

    #[test]
    fn refuses_what_the_gateway_could_read_another_way() {
        let refused = |value: Value| run_args(value).unwrap().checked().unwrap_err();
        assert!(refused(json!({"command": "ls", "argv": ["ls"], "cwd": "/"})).contains("not both"));
        assert!(refused(json!({"cwd": "/"})).contains("give `command`"));
        assert!(refused(json!({"command": "  ", "cwd": "/"})).contains("empty"));
        assert!(refused(json!({"argv": [], "cwd": "/"})).contains("program"));
        assert!(refused(json!({"argv": [""], "cwd": "/"})).contains("program"));
        assert!(refused(json!({"command": "ls", "cwd": "repo"})).contains("absolute"));
        assert!(
            refused(json!({"command": "ls", "cwd": "/", "timeoutMs": 0})).contains("at least 1")
        );
    }

    #[test]
    fn unknown_fields_are_refused_not_ignored() {
        // A misspelt `timeoutMs` silently dropped would run with a limit nobody asked for.
        assert!(run_args(json!({"command": "ls", "cwd": "/", "timeout": 5})).is_err());
        let check: Result<CheckCommandArgs, _> =
            serde_json::from_value(json!({"command": "ls", "cwd": "/", "timeoutMs": 5}));
        assert!(check.is_err());
    }
}
