//! An exec request from what a caller sent: a shell string or an argv, and the environment
//! the policy judges it with.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gatehouse_policy::exec::ExecRequest;

/// A request from what the caller sent: exactly one of `command` (a shell string) and a non-empty
/// `argv`; the environment is the host's `PATH`/`HOME` under the request's overrides.
pub fn exec_request(
    command: Option<String>,
    argv: Option<Vec<String>>,
    cwd: PathBuf,
    overrides: &BTreeMap<String, String>,
) -> Result<ExecRequest, String> {
    let request = match (command, argv) {
        (Some(command), None) => ExecRequest::shell(command, cwd),
        (None, Some(argv)) if !argv.is_empty() => ExecRequest::argv(argv, cwd),
        (None, Some(_)) => return Err("`argv` is empty".to_owned()),
        (None, None) => return Err("set `command` or `argv`".to_owned()),
        (Some(_), Some(_)) => return Err("set `command` or `argv`, not both".to_owned()),
    };
    Ok(with_host_env(request, overrides))
}

/// `PATH` and `HOME` decide what a bare name runs and what `~` means; requests inherit them
/// from this process unless they set their own. A request that sends this process's own value
/// (agent hosts often forward their whole environment) changes nothing, so that value is still
/// the host's setting, not the requester's.
pub fn with_host_env(
    mut request: ExecRequest,
    overrides: &BTreeMap<String, String>,
) -> ExecRequest {
    for key in ["PATH", "HOME"] {
        if let Ok(value) = std::env::var(key)
            && overrides.get(key).is_none_or(|sent| *sent == value)
        {
            request = request.with_inherited_env(key, value);
        }
    }
    let overrides = overrides
        .iter()
        .filter(|(key, _)| !request.inherited.contains(*key));
    request
        .env
        .extend(overrides.map(|(k, v)| (k.clone(), v.clone())));
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Policy review: any requester `PATH` withdraws auto-allow, so a host forwarding its
    /// environment must not lose it for sending the gateway's own value.
    #[test]
    fn keeps_the_hosts_own_path_as_the_hosts_when_a_request_sends_it_again() {
        let Ok(host_path) = std::env::var("PATH") else {
            return;
        };
        let same = BTreeMap::from([
            ("PATH".to_owned(), host_path.clone()),
            ("LANG".to_owned(), "C".to_owned()),
        ]);
        let request = with_host_env(ExecRequest::shell("ls", "/"), &same);
        assert!(request.inherited.contains("PATH"));
        assert_eq!(request.env.get("PATH"), Some(&host_path));
        assert!(!request.inherited.contains("LANG"));
        assert_eq!(request.env.get("LANG").map(String::as_str), Some("C"));

        let other = BTreeMap::from([("PATH".to_owned(), format!("/tmp/x:{host_path}"))]);
        let request = with_host_env(ExecRequest::shell("ls", "/"), &other);
        assert!(!request.inherited.contains("PATH"));
        assert_eq!(
            request.env.get("PATH"),
            Some(&format!("/tmp/x:{host_path}"))
        );
    }
}
