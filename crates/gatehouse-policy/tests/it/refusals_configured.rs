//! Programs whose options, subcommands or config run other programs (issue 29, class 3): with
//! each allowlisted, the forms that name a program, code or a config file need a person
//! (`program-option`), and the everyday forms keep running.

use gatehouse_policy::exec::{Decision, ExecPolicy, Rule, evaluate, program_trust};
use proptest::prelude::*;

use crate::support::{Host, assert_allowed};

const PROGRAMS: &[&str] = &[
    "git", "ssh", "scp", "sftp", "rsync", "npm", "pnpm", "yarn", "bun", "cargo", "pip", "pip3",
    "uv", "go", "rg", "fd", "tar", "zip", "wget", "less", "man", "kubectl", "gh",
];

fn host() -> (Host, ExecPolicy) {
    let host = Host::with_bins(PROGRAMS);
    let mut policy = host.policy(PROGRAMS);
    policy.safe_bins = Vec::new();
    (host, policy)
}

/// Each command must need a person, naming `program-option` (or, for a request variable,
/// `env-assignment`).
fn assert_asked(host: &Host, policy: &ExecPolicy, commands: &[&str]) {
    let mut wrong = Vec::new();
    for command in commands {
        let verdict = host.evaluate(command, policy);
        let rule = verdict.reason.rule;
        if verdict.decision == Decision::Allow
            || !matches!(rule, Rule::ProgramOption | Rule::EnvAssignment)
        {
            wrong.push(format!(
                "{command:?}: {:?} {}",
                verdict.decision, verdict.reason
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn denies_git_options_and_subcommands_that_name_programs() {
    let (host, policy) = host();
    assert_asked(
        &host,
        &policy,
        &[
            "git -c alias.x='!id' x",
            "git -c core.fsmonitor=id status",
            "git -c core.pager=id log",
            "git -c core.sshCommand=id fetch",
            "git -c core.hooksPath=/tmp/h commit -m x",
            "git -c credential.helper='!id' fetch",
            "git -c include.path=/tmp/x status",
            "git -c protocol.ext.allow=always fetch",
            "git -c safe.directory='*' status",
            "git -c Core.Pager=id log",
            "git -C . -c alias.x='!id' x",
            "git --config-env=core.pager=X log",
            "git --config-env core.pager=X log",
            "git --exec-path=/tmp status",
            "git --bogus status",
            "git config core.pager 'sh -c id'",
            "git config alias.x '!id'",
            "git config set alias.x '!id'",
            "git config --add core.fsmonitor id",
            "git config --edit",
            "git clone --template=/tmp/t https://example.invalid/r",
            "git clone -u id https://example.invalid/r",
            "git clone -c core.fsmonitor=id https://example.invalid/r",
            "git fetch --upload-pack=id origin",
            "git ls-remote --upload-pack id origin",
            "git push --receive-pack=id origin",
            "git archive --remote=x --exec=id HEAD",
            "git rebase -x id main",
            "git rebase --exec=id main",
            "git bisect run id",
            "git submodule foreach id",
            "git filter-branch --tree-filter id HEAD",
            "git difftool -x id",
            "git grep -O id needle",
            "git send-email --sendmail-cmd=id x.patch",
            "git help -w log",
            "git instaweb",
        ],
    );
    assert_allowed(
        &host,
        &policy,
        &[
            "git status",
            "git -c user.name=x -c user.email=y commit -m z",
            "git -c color.ui=always log",
            "git -c advice.detachedHead=false checkout main",
            "git --no-pager log -n 3",
            "git -C sub status",
            "git config user.name",
            "git config --get core.pager",
            "git config --list",
            "git push origin main",
            "git fetch --all --prune",
            "git rebase -i main",
            "git clone https://example.invalid/r",
            "git --version",
        ],
    );
}

#[test]
fn denies_git_config_locations_in_the_request_environment() {
    let (host, policy) = host();
    for (key, value) in [
        ("GIT_CONFIG_GLOBAL", "/tmp/x"),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_EXEC_PATH", "/tmp"),
        ("HOME", "/tmp/agent"),
        ("XDG_CONFIG_HOME", "/tmp/agent"),
    ] {
        let verdict = evaluate(&host.request("git status").with_env(key, value), &policy);
        assert_ne!(verdict.decision, Decision::Allow, "{key}");
        assert_eq!(
            verdict.reason.rule,
            Rule::EnvAssignment,
            "{key}: {}",
            verdict.reason
        );
    }
    assert_asked(
        &host,
        &policy,
        &[
            "HOME=/tmp/agent git status",
            "env XDG_CONFIG_HOME=/tmp git log",
        ],
    );
}

#[test]
fn denies_ssh_options_that_run_local_programs_and_remote_commands() {
    let (host, policy) = host();
    assert_asked(
        &host,
        &policy,
        &[
            "ssh -o ProxyCommand=id host",
            "ssh -oProxyCommand=id host",
            "ssh -o 'ProxyCommand id' host",
            "ssh -o LocalCommand=id -o PermitLocalCommand=yes host",
            "ssh -o KnownHostsCommand=id host",
            "ssh -o PKCS11Provider=/tmp/x.so host",
            "ssh -4o ProxyCommand=id host",
            "ssh -F /tmp/cfg host",
            "ssh -I /tmp/x.so host",
            "ssh host id",
            "ssh -p 22 host rm -rf /",
            "scp -S id a host:b",
            "scp -o ProxyCommand=id a host:b",
            "sftp -b batch host",
            "sftp -S id host",
            "rsync -e 'sh -c id' a host:b",
            "rsync --rsh=id a host:b",
            "rsync --rsync-path=id a host:b",
        ],
    );
    assert_allowed(
        &host,
        &policy,
        &[
            "ssh host",
            "ssh -o BatchMode=yes -o ConnectTimeout=5 host",
            "ssh -p 2222 -i key host",
            "ssh -F none host",
            "scp -P 22 a host:b",
            "rsync -az src/ host:dst/",
        ],
    );
}

#[test]
fn denies_package_manager_settings_and_registry_installs() {
    let (host, policy) = host();
    assert_asked(
        &host,
        &policy,
        &[
            "npm install",
            "npm i lodash",
            "npm ci",
            "npm --script-shell=/tmp/x test",
            "npm test --script-shell /tmp/x",
            "npm config set script-shell /tmp/x",
            "npm docs lodash",
            "yarn",
            "yarn add lodash",
            "yarn set version berry",
            "pnpm install",
            "pnpm add x",
            "bun add lodash",
            "cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"id\"' run",
            "cargo -Zunstable-options build",
            "cargo install ripgrep",
            "pip install requests",
            "pip3 download requests",
            "pip install -r requirements.txt",
            "uv pip install requests",
            "uv sync",
            "go run example.com/x@latest",
            "go build -toolexec=id",
            "go test -exec id ./...",
        ],
    );
    assert_allowed(
        &host,
        &policy,
        &[
            "npm test",
            "npm run build",
            "npm ci --ignore-scripts",
            "yarn --version",
            "yarn test",
            "cargo build --release",
            "cargo test -p x",
            "pip list",
            "go build ./...",
            "go test ./...",
        ],
    );
}

#[test]
fn denies_tool_options_that_run_programs() {
    let (host, policy) = host();
    assert_asked(
        &host,
        &policy,
        &[
            "rg --pre id needle",
            "rg --pre=id needle",
            "fd -x id",
            "fd --exec-batch id",
            "tar --to-command=id -xf a.tar",
            "tar -I id -cf a.tar x",
            "tar xIf id a.tar",
            "tar -cf a.tar -F id x",
            "zip -TT id a.zip x",
            "wget --use-askpass=id https://example.invalid",
            "wget -e use_askpass=id https://example.invalid",
            "less '+!id' f",
            "man -P id ls",
            "kubectl --kubeconfig /tmp/k get pods",
            "gh alias set x id --shell",
            "gh extension install o/r",
        ],
    );
    assert_allowed(
        &host,
        &policy,
        &[
            "rg -n needle",
            "fd -e rs",
            "tar -xzf a.tar.gz",
            "zip -r a.zip x",
            "less f",
            "man ls",
            "kubectl get pods",
            "gh pr list",
        ],
    );
}

/// `docs/policy.md` states what allowlisting each profiled program trusts (the table
/// `gatehouse doctor` will print from `exec::program_trust`).
#[test]
fn docs_name_what_every_profiled_program_trusts() {
    let docs = include_str!("../../../../docs/policy.md");
    let section = docs
        .split("### What allowlisting a program trusts")
        .nth(1)
        .expect("docs/policy.md has the trust table");
    for trust in program_trust() {
        for program in trust.programs {
            assert!(section.contains(&format!("`{program}`")), "{program}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any `-c` key git is given, in any case, needs a person unless it is one of the few that
    /// change only output; the same for ssh's `-o` options.
    #[test]
    fn asks_for_every_git_and_ssh_setting_but_the_harmless_ones(
        section in "(alias|core|credential|color|advice|user|diff|filter|include|url|remote|gpg|pager|sequence|uploadpack|protocol|init|safe|http|merge)",
        key in "(name|pager|fsmonitor|sshcommand|hookspath|helper|ui|email|external|textconv|clean|smudge|path|program|editor|x|insteadof|autocrlf)",
        sub in proptest::option::of("[a-z]{1,4}"),
        upper in any::<bool>(),
        ssh_key in "(proxycommand|localcommand|batchmode|port|user|knownhostscommand|pkcs11provider|include|hostname|controlpath|remotecommand|connecttimeout|identityfile)",
    ) {
        let (host, policy) = host();
        let name = match &sub {
            Some(sub) => format!("{section}.{sub}.{key}"),
            None => format!("{section}.{key}"),
        };
        let written = if upper { name.to_ascii_uppercase() } else { name.clone() };
        let verdict = host.evaluate(&format!("git -c {written}=v status"), &policy);
        let harmless_git = sub.is_none()
            && (matches!(name.as_str(), "user.name" | "user.email" | "color.ui"
                | "core.autocrlf")
                || (section == "advice" || section == "color"));
        prop_assert_eq!(verdict.decision == Decision::Allow, harmless_git, "{}", name);
        let verdict = host.evaluate(&format!("ssh -o {ssh_key}=v host"), &policy);
        let harmless_ssh = matches!(
            ssh_key.as_str(),
            "batchmode" | "port" | "user" | "hostname" | "connecttimeout" | "identityfile"
        );
        prop_assert_eq!(verdict.decision == Decision::Allow, harmless_ssh, "{}", ssh_key);
    }
}
