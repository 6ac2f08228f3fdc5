//! An exec request from what a caller sent: a shell string or an argv, and the environment
//! the policy judges it with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gatehouse_policy::exec::ExecRequest;

/// The variables that decide what a bare name runs and what `~` means (`PATH`, `HOME`) as a
/// run gets them where it goes, and as this gateway has them. A run on the host gets the
/// gateway's own; a sandboxed run the sandbox's `PATH` and home, so the policy resolves
/// programs where the sandbox will.
#[derive(Debug, Clone)]
pub struct BaseVars {
    run: BTreeMap<String, String>,
    gateway: BTreeMap<String, String>,
}

/// The variables [`BaseVars`] holds.
const BASE_KEYS: [&str; 2] = ["PATH", "HOME"];

impl BaseVars {
    /// A run on this host: the gateway's own `PATH` and `HOME`.
    pub fn host() -> Self {
        let gateway = gateway_vars();
        BaseVars {
            run: gateway.clone(),
            gateway,
        }
    }

    /// A sandboxed run: `path` (the sandbox's search path) and `home`.
    pub fn sandbox(path: String, home: &Path) -> Self {
        let run = BTreeMap::from([
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), home.to_string_lossy().into_owned()),
        ]);
        BaseVars {
            run,
            gateway: gateway_vars(),
        }
    }
}

fn gateway_vars() -> BTreeMap<String, String> {
    BASE_KEYS
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), std::env::var(key).ok()?)))
        .collect()
}

/// A request from what the caller sent: exactly one of `command` (a shell string) and a non-empty
/// `argv`; the environment is the host's `PATH`/`HOME` under the request's overrides.
pub fn exec_request(
    command: Option<String>,
    argv: Option<Vec<String>>,
    cwd: PathBuf,
    overrides: &BTreeMap<String, String>,
) -> Result<ExecRequest, String> {
    exec_request_with(command, argv, cwd, overrides, &BaseVars::host())
}

/// [`exec_request`] for a run that gets `base`.
pub(crate) fn exec_request_with(
    command: Option<String>,
    argv: Option<Vec<String>>,
    cwd: PathBuf,
    overrides: &BTreeMap<String, String>,
    base: &BaseVars,
) -> Result<ExecRequest, String> {
    let request = match (command, argv) {
        (Some(command), None) => ExecRequest::shell(command, cwd),
        (None, Some(argv)) if !argv.is_empty() => ExecRequest::argv(argv, cwd),
        (None, Some(_)) => return Err("`argv` is empty".to_owned()),
        (None, None) => return Err("set `command` or `argv`".to_owned()),
        (Some(_), Some(_)) => return Err("set `command` or `argv`, not both".to_owned()),
    };
    Ok(with_base_env(request, overrides, base))
}

/// `PATH` and `HOME` decide what a bare name runs and what `~` means; requests inherit them
/// from this process unless they set their own. A request that sends this process's own value
/// (agent hosts often forward their whole environment) changes nothing, so that value is still
/// the host's setting, not the requester's.
pub fn with_host_env(request: ExecRequest, overrides: &BTreeMap<String, String>) -> ExecRequest {
    with_base_env(request, overrides, &BaseVars::host())
}

/// [`with_host_env`] for a run that gets `base`: a request value equal to the run's own or to
/// the gateway's is not the requester's setting, and the run gets its own.
fn with_base_env(
    mut request: ExecRequest,
    overrides: &BTreeMap<String, String>,
    base: &BaseVars,
) -> ExecRequest {
    for key in BASE_KEYS {
        let Some(value) = base.run.get(key) else {
            continue;
        };
        let unchanged = overrides
            .get(key)
            .is_none_or(|sent| sent == value || base.gateway.get(key) == Some(sent));
        if unchanged {
            request = request.with_inherited_env(key, value.clone());
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

/// The variables the requester itself sets: what the child gets over its base, what is bound
/// and what approvers are shown the names of.
pub(crate) fn requested_vars(request: &ExecRequest) -> BTreeMap<String, String> {
    request
        .env
        .iter()
        .filter(|(key, _)| !request.inherited.contains(*key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
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

    /// A sandboxed run is judged with the sandbox's `PATH`: a host that forwards the
    /// gateway's own `PATH` gets the sandbox's, not a `PATH` the sandbox cannot see.
    #[test]
    fn judges_a_sandboxed_run_with_the_sandboxs_path() {
        let Ok(host_path) = std::env::var("PATH") else {
            return;
        };
        let base = BaseVars::sandbox("/usr/bin:/bin".to_owned(), Path::new("/home/ann"));
        let forwarded = BTreeMap::from([("PATH".to_owned(), host_path)]);
        let request =
            exec_request_with(Some("ls".into()), None, "/".into(), &forwarded, &base).unwrap();
        assert_eq!(request.env["PATH"], "/usr/bin:/bin");
        assert_eq!(request.env["HOME"], "/home/ann");
        assert!(requested_vars(&request).is_empty());
    }
}
