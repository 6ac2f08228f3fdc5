use super::*;

use pretty_assertions::assert_eq;

fn request(vars: &[(&str, &str)]) -> BTreeMap<String, String> {
    vars.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn sandbox_base() -> BaseEnv {
    BaseEnv::sandbox(Path::new("/home/ann"), "ann", "/usr/bin:/bin")
}

/// The reason one variable is refused, or `None` when it passes.
fn check(name: &str, value: &str) -> Option<VarReason> {
    match build_env(
        &sandbox_base(),
        &request(&[(name, value)]),
        &EnvLimits::default(),
    ) {
        Ok(_) => None,
        Err(EnvRefused(refusals)) => match refusals.as_slice() {
            [EnvRefusal::Var { reason, .. }] => Some(reason.clone()),
            other => panic!("{name}: {other:?}"),
        },
    }
}

fn secret_name(rule: &'static str) -> Option<VarReason> {
    Some(VarReason::SecretName { rule })
}

fn secret_value(kind: &'static str) -> Option<VarReason> {
    Some(VarReason::SecretValue { kind })
}

#[test]
fn a_sandbox_run_starts_from_the_fixed_base_and_the_requests_variables() {
    let env = build_env(
        &sandbox_base(),
        &request(&[("CI", "1"), ("LANG", "de_DE.UTF-8")]),
        &EnvLimits::default(),
    )
    .unwrap();
    let expected = request(&[
        ("CI", "1"),
        ("HOME", "/home/ann"),
        ("LANG", "de_DE.UTF-8"),
        ("LOGNAME", "ann"),
        ("PATH", "/usr/bin:/bin"),
        ("SHELL", "/bin/sh"),
        ("TERM", "dumb"),
        ("TMPDIR", "/tmp"),
        ("USER", "ann"),
    ]);
    assert_eq!(env.vars(), &expected);
}

/// The host base keeps what the host runner always inherited, and nothing else of the
/// gateway's environment: a `tokenEnv` token stays behind.
#[test]
fn a_host_run_keeps_only_the_hosts_settings_of_the_gateways_environment() {
    let gateway = [
        ("PATH", "/usr/bin"),
        ("HOME", "/var/lib/gatehouse"),
        ("TZ", "Europe/Paris"),
        ("LC_TIME", "fr_FR.UTF-8"),
        ("GATEHOUSE_AGENT_TOKEN", "s3cret"),
        ("INVOCATION_ID", "abc"),
        ("TERM", "xterm"),
    ];
    let base = BaseEnv::host(gateway);
    let expected = request(&[
        ("HOME", "/var/lib/gatehouse"),
        ("LANG", "C.UTF-8"),
        ("LC_TIME", "fr_FR.UTF-8"),
        ("PATH", "/usr/bin"),
        ("TERM", "dumb"),
        ("TZ", "Europe/Paris"),
    ]);
    assert_eq!(base.vars(), &expected);
    let with_lang = BaseEnv::host([("LANG", "en_US.UTF-8")]);
    assert_eq!(with_lang.vars()["LANG"], "en_US.UTF-8");
}

/// Issue 29: the shell must read the command in the character set it was analysed in. A host
/// run inherits the gateway's locale, which may be Big5; the builder forces a UTF-8 one then,
/// as the policy core's `child_environment` asks of every runner.
#[test]
fn forces_a_utf8_locale_when_the_childs_is_not_analysable() {
    let big5_host = BaseEnv::host([("PATH", "/usr/bin"), ("LANG", "zh_TW.BIG5")]);
    let env = build_env(&big5_host, &BTreeMap::new(), &EnvLimits::default()).unwrap();
    assert_eq!(
        env.vars().get("LC_ALL").map(String::as_str),
        Some("C.UTF-8")
    );
    let from_request = build_env(
        &sandbox_base(),
        &request(&[("LC_CTYPE", "ja_JP.SJIS")]),
        &EnvLimits::default(),
    )
    .unwrap();
    assert_eq!(from_request.vars()["LC_ALL"], "C.UTF-8");
    let utf8 = build_env(&sandbox_base(), &BTreeMap::new(), &EnvLimits::default()).unwrap();
    assert_eq!(utf8.vars().get("LC_ALL"), None);
}

#[test]
fn refuses_names_that_look_like_credentials() {
    for (name, rule) in [
        ("GITHUB_TOKEN", "*_TOKEN"),
        ("gh_token", "*_TOKEN"),
        ("OPENAI_API_KEY", "*_KEY"),
        ("ANTHROPIC_API_KEY", "*_KEY"),
        ("STRIPE_SECRET", "*_SECRET"),
        ("DB_PASSWORD", "*PASSWORD*"),
        ("PASSWORD_STORE_DIR", "*PASSWORD*"),
        ("MYSQL_PWD", "*_PWD"),
        ("CLIENT_SECRET_FILE", "*SECRET*"),
        ("AWS_ACCESS_KEY_ID", "AWS_*"),
        ("AWS_PROFILE", "AWS_*"),
        ("AZURE_CLIENT_ID", "AZURE_*"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "*CREDENTIAL*"),
        ("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", "CLOUDSDK_*"),
        ("NPM_CONFIG__AUTH", "*_AUTH"),
        ("TOKEN", "TOKEN"),
        ("SSH_AUTH_SOCK", "SSH_AUTH_SOCK"),
        ("KUBECONFIG", "KUBECONFIG"),
        ("DOCKER_HOST", "DOCKER_HOST"),
    ] {
        assert_eq!(check(name, "x"), secret_name(rule), "{name}");
    }
}

#[test]
fn passes_ordinary_names_that_only_resemble_credentials() {
    for name in [
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "PWD",
        "OLDPWD",
        "MONKEY",
        "CI",
        "RUST_LOG",
        "GIT_AUTHOR_NAME",
        "NODE_ENV",
    ] {
        assert_eq!(check(name, "value"), None, "{name}");
    }
}

#[test]
fn refuses_values_that_look_like_credentials() {
    let pem =
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----";
    for (value, kind) in [
        ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "a GitHub token"),
        ("Bearer github_pat_11ABCDEFG0123456789", "a GitHub token"),
        ("xoxb-1234-5678-abcdefghijkl", "a Slack token"),
        ("sk-ant-api03-abcdefghijklmnop", "an Anthropic API key"),
        ("glpat-abcdefghij0123456789", "a GitLab token"),
        ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
        (pem, "a PEM private key"),
        (
            "postgres://app:hunter2@db:5432/app",
            "a URL with a password in it",
        ),
        (
            "see https://u:p@example.com/x",
            "a URL with a password in it",
        ),
    ] {
        assert_eq!(check("SETTING", value), secret_value(kind), "{value}");
    }
    for value in [
        "https://example.com/a:b@c",
        "https://user@example.com/",
        "ghp_",
        "AKIA-not-a-key",
        "sk-short",
    ] {
        assert_eq!(check("SETTING", value), None, "{value}");
    }
}

#[test]
fn refuses_nul_bytes_unportable_names_and_oversized_values() {
    assert_eq!(check("A\0B", "x"), Some(VarReason::NulInName));
    assert_eq!(check("NAME", "a\0b"), Some(VarReason::NulInValue));
    for name in ["", "1ABC", "A=B", "BASH_FUNC_f%%", "A-B", "A.B", "ÄB"] {
        assert_eq!(check(name, "x"), Some(VarReason::NotPortable), "{name:?}");
    }
    let limits = EnvLimits::default();
    assert_eq!(
        check(&"N".repeat(limits.max_name_bytes + 1), "x"),
        Some(VarReason::NameTooLong {
            limit: limits.max_name_bytes
        })
    );
    assert_eq!(
        check("BIG", &"x".repeat(limits.max_value_bytes + 1)),
        Some(VarReason::ValueTooLong {
            bytes: limits.max_value_bytes + 1,
            limit: limits.max_value_bytes
        })
    );
    assert_eq!(check("BIG", &"x".repeat(limits.max_value_bytes)), None);
}

#[test]
fn reports_every_refusal_at_once_and_the_totals() {
    let limits = EnvLimits {
        max_vars: 2,
        max_total_bytes: 20,
        ..EnvLimits::default()
    };
    let sent = request(&[("GITHUB_TOKEN", "x"), ("OK", "y"), ("LONG", "0123456789")]);
    let refused = build_env(&sandbox_base(), &sent, &limits).unwrap_err();
    assert_eq!(
        refused.0,
        vec![
            EnvRefusal::Var {
                name: "GITHUB_TOKEN".into(),
                reason: VarReason::SecretName { rule: "*_TOKEN" },
            },
            EnvRefusal::TooMany { count: 3, limit: 2 },
            EnvRefusal::TooLarge {
                bytes: 30,
                limit: 20
            },
        ]
    );
    assert_eq!(
        refused.to_string(),
        "the request's environment is refused: \"GITHUB_TOKEN\": its name looks like a \
         credential's (*_TOKEN); credentials are not passed to commands through a request's \
         environment; 3 variables, more than the 2 allowed; 30 bytes of variables, more than \
         the 20 allowed"
    );
}

#[test]
fn applying_clears_everything_else() {
    let env = build_env(&sandbox_base(), &BTreeMap::new(), &EnvLimits::default()).unwrap();
    let mut command = std::process::Command::new("/usr/bin/env");
    command.env("LEAK", "1");
    env.apply(&mut command);
    let output = command.output().unwrap();
    let mut seen: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    seen.sort();
    let expected: Vec<String> = env.vars().iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(seen, expected);
}
