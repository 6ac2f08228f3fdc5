//! The `summary_json` column: what approvers were shown of a request (every program of the
//! chain, the request's variable names, what allow-always would store), written and read by
//! hand so the policy core's types need no serialization of their own.

use std::path::PathBuf;

use gatehouse_policy::exec::{ApprovalSummary, ProgramLine, SatisfiedBy};
use serde_json::{Value, json};

/// The column's text for `summary`.
pub(super) fn encode(summary: &ApprovalSummary) -> String {
    let programs: Vec<Value> = summary
        .programs
        .iter()
        .map(|program| {
            json!({
                "argv": program.argv,
                "resolvedPath": program.resolved_path.as_ref().map(|p| p.to_string_lossy()),
                "lookedThrough": program.looked_through,
                "satisfiedBy": program.satisfied_by.map(SatisfiedBy::as_str),
                "reason": program.reason,
            })
        })
        .collect();
    json!({
        "programs": programs,
        "envNames": summary.env_names,
        "allowAlwaysPatterns": summary.allow_always_patterns,
    })
    .to_string()
}

/// The summary stored as `text`, or what is wrong with it.
pub(super) fn decode(text: &str) -> Result<ApprovalSummary, String> {
    let value: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let programs = value
        .get("programs")
        .and_then(Value::as_array)
        .ok_or("no `programs` list")?
        .iter()
        .map(program)
        .collect::<Result<_, _>>()?;
    Ok(ApprovalSummary {
        programs,
        env_names: strings(&value, "envNames")?,
        allow_always_patterns: strings(&value, "allowAlwaysPatterns")?,
    })
}

fn program(value: &Value) -> Result<ProgramLine, String> {
    let optional = |key: &str| match value.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(format!("`{key}` is not a string")),
    };
    let satisfied_by = optional("satisfiedBy")?
        .map(|text| SatisfiedBy::parse(&text).ok_or(format!("unknown `satisfiedBy` {text:?}")))
        .transpose()?;
    Ok(ProgramLine {
        argv: strings(value, "argv")?,
        resolved_path: optional("resolvedPath")?.map(PathBuf::from),
        looked_through: strings(value, "lookedThrough")?,
        satisfied_by,
        reason: optional("reason")?.unwrap_or_default(),
    })
}

fn strings(value: &Value, key: &str) -> Result<Vec<String>, String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no `{key}` list"))?
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`{key}` holds a value that is not a string"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_field() {
        let summary = ApprovalSummary {
            programs: vec![
                ProgramLine {
                    argv: vec!["git".into(), "status".into()],
                    resolved_path: Some("/usr/bin/git".into()),
                    looked_through: vec!["/usr/bin/nice".into()],
                    satisfied_by: Some(SatisfiedBy::Allowlist),
                    reason: "allowlist-satisfied".into(),
                },
                ProgramLine {
                    argv: vec!["./deploy.sh".into()],
                    resolved_path: None,
                    looked_through: vec![],
                    satisfied_by: None,
                    reason: "no-allowlist-match: ./deploy.sh".into(),
                },
            ],
            env_names: vec!["CI".into()],
            allow_always_patterns: vec!["/usr/bin/git".into()],
        };
        assert_eq!(decode(&encode(&summary)), Ok(summary));
        assert!(decode("{\"programs\": 1}").is_err());
        assert!(
            decode(
                "{\"programs\":[{\"argv\":[],\"satisfiedBy\":\"root\",\"lookedThrough\":[]}],\
                 \"envNames\":[],\"allowAlwaysPatterns\":[]}"
            )
            .is_err()
        );
    }
}
