//! The run's environment: exactly the built one, never the gateway's.

use std::collections::BTreeMap;

use gatehouse_sandbox::{EnvRefusal, EnvRefused, Isolation, PlanError, VarReason};
use pretty_assertions::assert_eq;

use crate::support::{Fixture, output};

#[test]
fn the_run_sees_exactly_the_built_environment_and_none_of_the_gateways() {
    // Cargo sets these for the test process, as a service manager or `tokenEnv` sets the
    // gateway's.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let fixture = Fixture::new();
    let request = BTreeMap::from([("CI".to_owned(), "1".to_owned())]);
    let planned = fixture
        .plan(&fixture.settings(Isolation::Ephemeral), &["env"], &request)
        .unwrap();
    let run = output(&planned);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen: BTreeMap<String, String> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (k, v) = line.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect();
    assert_eq!(&seen, planned.env().vars());
    assert_eq!(seen["CI"], "1");
    assert_eq!(seen["HOME"], fixture.home.display().to_string());
    assert_eq!(seen["LANG"], "C.UTF-8");
    assert!(!seen.keys().any(|key| key.starts_with("CARGO")), "{seen:?}");
}

/// Security review: the run's environment was once bubblewrap's own, so a request's
/// `LD_PRELOAD` (or `GLIBC_TUNABLES`) acted on bubblewrap's loader, on the host, before any
/// namespace existed. The loader complains once per process that gets the variable: the run
/// alone must complain.
#[test]
fn a_requests_loader_variables_reach_the_run_but_not_bubblewrap() {
    let fixture = Fixture::new();
    let preload = fixture.workspace.join("missing-preload.so");
    let request = BTreeMap::from([("LD_PRELOAD".to_owned(), preload.display().to_string())]);
    let planned = fixture
        .plan(&fixture.settings(Isolation::Ephemeral), &["true"], &request)
        .unwrap();
    let run = output(&planned);
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.matches("LD_PRELOAD cannot be preloaded").count(),
        1,
        "{stderr}"
    );
    assert!(planned.command().get_envs().next().is_none());
}

#[test]
fn a_secret_looking_request_variable_refuses_the_run() {
    let fixture = Fixture::new();
    let request = BTreeMap::from([
        (
            "GITHUB_TOKEN".to_owned(),
            "ghp_0123456789abcdefghij".to_owned(),
        ),
        (
            "DATABASE_URL".to_owned(),
            "postgres://app:hunter2@db/app".to_owned(),
        ),
        ("CI".to_owned(), "1".to_owned()),
    ]);
    let error = fixture
        .plan(&fixture.settings(Isolation::Ephemeral), &["env"], &request)
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::Env(EnvRefused(vec![
            EnvRefusal::Var {
                name: "DATABASE_URL".into(),
                reason: VarReason::SecretValue {
                    kind: "a URL with a password in it"
                },
            },
            EnvRefusal::Var {
                name: "GITHUB_TOKEN".into(),
                reason: VarReason::SecretName { rule: "*_TOKEN" },
            },
        ]))
    );
    let message = error.to_string();
    assert!(
        message.starts_with("the request's environment is refused: \"DATABASE_URL\""),
        "{message}"
    );
    assert!(
        !message.contains("hunter2"),
        "values are never repeated: {message}"
    );
}
