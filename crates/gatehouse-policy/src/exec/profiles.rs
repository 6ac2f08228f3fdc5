//! Programs whose options, subcommands or configuration run other programs.
//!
//! `git` is allowlisted by most operators, and `git -c alias.x='!cmd' x` runs `cmd`. Each
//! program here has an argv profile: the options and subcommands that name a program, code or
//! a configuration file of the caller's choosing make the segment need a person
//! (`program-option`), even when the program is allowlisted. What an allowlist entry for the
//! program still trusts — the repository's hooks and config, the project's scripts, the user's
//! config files — is stated as data ([`program_trust`]), for the docs and `gatehouse doctor`.
//! Variables that do the same (`GIT_*`, `npm_config_*`, `HOME`) are refused by the request
//! environment check and as assignments.

/// What allowlisting one program trusts, and what still needs a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramTrust {
    /// The program's names (basenames, lower case).
    pub programs: &'static [&'static str],
    /// What an allowlist entry for it trusts: files and settings that decide what it runs.
    pub trusts: &'static str,
    /// The options and subcommands that need a person even when it is allowlisted.
    pub asks: &'static str,
}

/// One program's profile: its trust statement and the check of its arguments.
struct Profile {
    trust: ProgramTrust,
    /// Why these arguments make it run something the caller chose; `None` when they do not.
    check: fn(&[String]) -> Option<String>,
}

/// What allowlisting each profiled program trusts, in table order.
pub fn program_trust() -> impl Iterator<Item = &'static ProgramTrust> {
    PROFILES.iter().map(|profile| &profile.trust)
}

/// Why `name` (a lower-cased basename) called with `args` needs a person although it may be
/// allowlisted; `None` when nothing in its arguments names a program, code or config.
pub(crate) fn refusal(name: &str, args: &[String]) -> Option<String> {
    let profile = PROFILES
        .iter()
        .find(|profile| profile.trust.programs.contains(&name))?;
    (profile.check)(args)
}

/// `--name=value`, `--name value`, or for a short `-x`: `-x value` and `-xvalue`. Returns the
/// value of the first occurrence of any of `names` among `args`, with its index.
fn value_of<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, arg)| {
        names.iter().find_map(|name| {
            if arg == name {
                return Some(args.get(i + 1).map_or("", String::as_str));
            }
            let rest = arg.strip_prefix(name)?;
            if name.starts_with("--") {
                rest.strip_prefix('=')
            } else {
                (!rest.is_empty()).then_some(rest)
            }
        })
    })
}

/// Whether any argument is one of `names` or starts with `name=` (a long option with a value).
fn has(args: &[String], names: &[&str]) -> bool {
    value_of(args, names).is_some()
}

/// The name of a `key=value` setting, in lower case (git keys and ssh options are
/// case-insensitive).
fn setting_key(setting: &str, separators: &[char]) -> String {
    setting
        .split(separators)
        .next()
        .unwrap_or(setting)
        .to_ascii_lowercase()
}

// ---------------------------------------------------------------------------------------------
// git

/// `-c` keys that change only what git prints or records, never what it runs or which config it
/// reads (compared in lower case; `color.` and `advice.` cover their whole sections).
const GIT_HARMLESS_KEYS: &[&str] = &[
    "user.name",
    "user.email",
    "core.quotepath",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.abbrev",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "log.date",
    "log.decorate",
    "diff.noprefix",
    "diff.renames",
    "diff.algorithm",
    "merge.conflictstyle",
    "rebase.autosquash",
    "rebase.autostash",
    "commit.gpgsign",
    "tag.gpgsign",
    "gc.auto",
    "maintenance.auto",
    "protocol.version",
    "column.ui",
    "status.short",
    "status.branch",
];

fn git_key_refusal(assignment: &str) -> Option<String> {
    let key = setting_key(assignment, &['=']);
    let harmless = GIT_HARMLESS_KEYS.contains(&key.as_str())
        || ["color.", "advice."]
            .iter()
            .any(|section| key.starts_with(section) && key.matches('.').count() == 1);
    (!harmless).then(|| {
        format!(
            "`-c {key}` sets git configuration, which can name a program git runs (`alias.*`, \
             `core.pager`, `core.fsmonitor`, `core.sshCommand`, `core.hooksPath`, \
             `credential.helper`, …); only keys known to change output are allowed"
        )
    })
}

/// git's own options before the subcommand: `(name, takes a separate value)`.
const GIT_GLOBAL: &[(&str, bool)] = &[
    ("-C", true),
    ("--git-dir", true),
    ("--work-tree", true),
    ("--namespace", true),
    ("--super-prefix", true),
    ("--attr-source", true),
    ("-p", false),
    ("--paginate", false),
    ("-P", false),
    ("--no-pager", false),
    ("--bare", false),
    ("--no-replace-objects", false),
    ("--no-lazy-fetch", false),
    ("--no-optional-locks", false),
    ("--no-advice", false),
    ("--literal-pathspecs", false),
    ("--glob-pathspecs", false),
    ("--noglob-pathspecs", false),
    ("--icase-pathspecs", false),
    ("--html-path", false),
    ("--man-path", false),
    ("--info-path", false),
    ("--exec-path", false),
    ("--version", false),
    ("-v", false),
    ("--help", false),
    ("-h", false),
];

fn git(args: &[String]) -> Option<String> {
    let mut i = 0;
    let subcommand = loop {
        let arg = args.get(i)?;
        i += 1;
        if arg == "-c" {
            let assignment = args.get(i).map_or("", String::as_str);
            i += 1;
            if let Some(why) = git_key_refusal(assignment) {
                return Some(why);
            }
            continue;
        }
        if let Some(value) = arg.strip_prefix("--config-env") {
            let value = match value.strip_prefix('=') {
                Some(value) => value,
                None => {
                    i += 1;
                    args.get(i - 1).map_or("", String::as_str)
                }
            };
            if let Some(why) = git_key_refusal(value) {
                return Some(why);
            }
            continue;
        }
        if arg.starts_with("--exec-path=") {
            return Some(
                "`--exec-path=DIR` makes git run its subcommands from that directory".to_owned(),
            );
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, _)) => (name, true),
            None => (arg.as_str(), false),
        };
        match GIT_GLOBAL.iter().find(|(known, _)| *known == name) {
            Some((_, true)) if !inline => i += 1,
            Some(_) => {}
            None if arg.starts_with('-') => {
                return Some(format!("`git {arg}` is an option Gatehouse does not model"));
            }
            None => break arg.as_str(),
        }
    };
    git_subcommand(subcommand, &args[i..])
}

fn git_subcommand(subcommand: &str, args: &[String]) -> Option<String> {
    let ask = |what: &str| Some(format!("`git {subcommand}` {what}"));
    match subcommand {
        "config" => git_config(args)
            .and_then(|_| ask("writes git configuration, which can name programs git runs later")),
        "clone" | "init" => {
            if has(args, &["--template"]) {
                return ask("copies hooks from a template directory of the caller's choosing");
            }
            if has(args, &["-u", "--upload-pack"]) {
                return ask("runs the upload-pack program it is given");
            }
            value_of(args, &["-c", "--config"]).and_then(git_key_refusal)
        }
        "fetch" | "pull" | "ls-remote" | "archive" | "push" | "send-pack" | "fetch-pack" => {
            has(args, &["--upload-pack", "--receive-pack", "--exec"])
                .then(|| format!("`git {subcommand}` runs the remote program it is given"))
        }
        "rebase" => has(args, &["-x", "--exec"])
            .then(|| "`git rebase -x/--exec` runs a shell command after every commit".to_owned()),
        "bisect" => args
            .first()
            .is_some_and(|a| a == "run")
            .then(|| "`git bisect run` runs a command".to_owned()),
        "submodule" => args
            .iter()
            .any(|a| a == "foreach")
            .then(|| "`git submodule foreach` runs shell code in every submodule".to_owned()),
        "filter-branch" | "instaweb" | "web--browse" | "shell" => {
            ask("runs shell code or programs it is given")
        }
        "difftool" | "mergetool" => has(args, &["-x", "--extcmd"])
            .then(|| format!("`git {subcommand} -x/--extcmd` runs the command it is given")),
        "grep" => has(args, &["-O", "--open-files-in-pager"])
            .then(|| "`git grep -O` runs the pager it is given".to_owned()),
        "send-email" => has(
            args,
            &[
                "--sendmail-cmd",
                "--smtp-server",
                "--to-cmd",
                "--cc-cmd",
                "--header-cmd",
            ],
        )
        .then(|| "`git send-email` runs the command it is given".to_owned()),
        "help" => {
            has(args, &["-w", "--web"]).then(|| "`git help --web` starts a browser".to_owned())
        }
        _ => None,
    }
}

/// `Some(())` when a `git config` invocation writes (sets, unsets, renames, edits); reads —
/// `--get*`, `--list`, `get`, `list`, one key alone — are `None`.
fn git_config(args: &[String]) -> Option<()> {
    const WRITES: &[&str] = &[
        "--add",
        "--replace-all",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
    ];
    const VALUED: &[&str] = &["-f", "--file", "--blob", "--type", "--default", "--comment"];
    if args.iter().any(|a| WRITES.contains(&a.as_str())) {
        return Some(());
    }
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if VALUED.contains(&arg.as_str()) {
            i += 1;
        } else if !arg.starts_with('-') {
            operands.push(arg.as_str());
        }
    }
    let reads = args.iter().any(|a| READS.contains(&a.as_str()));
    match operands.first() {
        Some(&("get" | "list")) => None,
        Some(&("set" | "unset" | "rename-section" | "remove-section" | "edit")) => Some(()),
        _ if reads || operands.len() <= 1 => None,
        _ => Some(()),
    }
}

// ---------------------------------------------------------------------------------------------
// ssh, scp, sftp, rsync

/// `-o` options that change nothing ssh runs locally (compared in lower case).
const SSH_HARMLESS_OPTIONS: &[&str] = &[
    "batchmode",
    "connecttimeout",
    "connectionattempts",
    "stricthostkeychecking",
    "userknownhostsfile",
    "globalknownhostsfile",
    "port",
    "user",
    "hostname",
    "identityfile",
    "identitiesonly",
    "serveraliveinterval",
    "serveralivecountmax",
    "loglevel",
    "compression",
    "requesttty",
    "tcpkeepalive",
    "updatehostkeys",
    "hashknownhosts",
    "preferredauthentications",
    "passwordauthentication",
    "pubkeyauthentication",
    "kbdinteractiveauthentication",
    "checkhostip",
    "visualhostkey",
    "ipqos",
    "exitonforwardfailure",
    "addressfamily",
];

fn ssh_option_refusal(option: &str) -> Option<String> {
    let key = setting_key(option, &['=', ' ', '\t']);
    (!SSH_HARMLESS_OPTIONS.contains(&key.as_str())).then(|| {
        format!(
            "`-o {key}` can make ssh run a local program (`ProxyCommand`, `LocalCommand`, \
             `KnownHostsCommand`, `PKCS11Provider`, …); only options known not to are allowed"
        )
    })
}

/// ssh's options that take a value (OpenSSH 9 `getopt` string).
const SSH_VALUED: &str = "BbcDEeFIiJLlmOoPpRSWw";

/// Reads an OpenSSH-style command line: every `-o` and the values of `refused` options are
/// checked; returns the operands after the options.
fn openssh_options<'a>(
    args: &'a [String],
    valued: &str,
    refused: &[(char, &str)],
) -> Result<Vec<&'a str>, String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            break;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            i -= 1;
            break;
        };
        for (at, letter) in cluster.char_indices() {
            if !valued.contains(letter) {
                continue;
            }
            let attached = &cluster[at + letter.len_utf8()..];
            let value = if attached.is_empty() {
                i += 1;
                args.get(i - 1).map_or("", String::as_str)
            } else {
                attached
            };
            if letter == 'o'
                && let Some(why) = ssh_option_refusal(value)
            {
                return Err(why);
            }
            if let Some((_, why)) = refused.iter().find(|(l, _)| *l == letter)
                && !(letter == 'F' && value == "none")
            {
                return Err(format!("`-{letter} {value}` {why}"));
            }
            break;
        }
    }
    Ok(args[i.min(args.len())..]
        .iter()
        .map(String::as_str)
        .collect())
}

fn ssh(args: &[String]) -> Option<String> {
    let refused = [
        ('F', "reads a config file, which can name programs ssh runs"),
        ('I', "loads a PKCS#11 library"),
    ];
    match openssh_options(args, SSH_VALUED, &refused) {
        Err(why) => Some(why),
        Ok(operands) if operands.len() > 1 => Some(
            "ssh runs the command after the destination on another host; what it carries needs \
             a person"
                .to_owned(),
        ),
        Ok(_) => None,
    }
}

fn scp(args: &[String]) -> Option<String> {
    let refused = [
        ('F', "reads a config file, which can name programs ssh runs"),
        ('S', "runs the program it names instead of ssh"),
        ('D', "runs the sftp server program it names"),
    ];
    openssh_options(args, "cDFiJloPSX", &refused).err()
}

fn sftp(args: &[String]) -> Option<String> {
    let refused = [
        ('F', "reads a config file, which can name programs ssh runs"),
        ('S', "runs the program it names instead of ssh"),
        ('D', "runs the sftp server program it names"),
        (
            'b',
            "runs a batch file, whose `!` lines are local shell commands",
        ),
    ];
    openssh_options(args, "BbcDFiJloPRSsX", &refused).err()
}

fn rsync(args: &[String]) -> Option<String> {
    has(args, &["-e", "--rsh", "--rsync-path"])
        .then(|| "`rsync -e/--rsh/--rsync-path` runs the program it is given".to_owned())
}

// ---------------------------------------------------------------------------------------------
// package managers and build tools

/// npm-style options that name a program or a config file.
const NODE_PM_PROGRAM_OPTIONS: &[&str] = &[
    "--script-shell",
    "--shell",
    "--browser",
    "--editor",
    "--node-options",
    "--userconfig",
    "--globalconfig",
    "--onload-script",
    "--init-module",
    "--git",
    "--call",
    "-c",
];

/// The first word that is not an option (npm options take `=value` or no value, except the
/// few listed as valued).
fn first_operand(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|arg| !arg.starts_with('-'))
}

fn node_package_manager(args: &[String]) -> Option<String> {
    if let Some(option) = NODE_PM_PROGRAM_OPTIONS.iter().find(|o| has(args, &[o])) {
        return Some(format!(
            "`{option}` names a program or config file it runs or reads"
        ));
    }
    let subcommand = first_operand(args)?;
    let installs = matches!(
        subcommand,
        "install"
            | "i"
            | "ci"
            | "add"
            | "update"
            | "up"
            | "upgrade"
            | "rebuild"
            | "install-test"
            | "it"
            | "install-ci-test"
    );
    if installs && !args.iter().any(|a| a == "--ignore-scripts") {
        return Some(format!(
            "`{subcommand}` runs the install scripts of packages from the registry (add \
             `--ignore-scripts` to run none)"
        ));
    }
    let writes_config = matches!(subcommand, "set" | "edit")
        || (subcommand == "config"
            && args
                .iter()
                .any(|a| matches!(a.as_str(), "set" | "edit" | "delete")));
    if writes_config {
        return Some("writes package-manager configuration, which can name programs".to_owned());
    }
    matches!(subcommand, "docs" | "bugs" | "repo" | "home")
        .then(|| format!("`{subcommand}` starts a browser"))
        .or_else(|| {
            let yarn_downloads = matches!(subcommand, "policies" | "plugin")
                || (subcommand == "set" && args.iter().any(|a| a == "version"));
            yarn_downloads.then(|| format!("`{subcommand}` downloads and runs code"))
        })
}

const NODE_PM_TRUSTS: &str = "the project's package.json scripts (run, test, start, lifecycle \
     scripts), .npmrc/.yarnrc/bunfig.toml and the user's config, node_modules/.bin";
const NODE_PM_ASKS: &str = "--script-shell, --shell, --browser, --editor, --node-options, \
     --userconfig, --globalconfig, --git, -c/--call; install/ci/add/update/rebuild without \
     --ignore-scripts (registry packages' install scripts); config set/edit; docs/bugs/repo; \
     yarn set version, policies, plugin; running subcommands as carriers (section 3)";

/// yarn without a subcommand installs, as `yarn install` does.
fn yarn(args: &[String]) -> Option<String> {
    let info = args
        .iter()
        .any(|a| matches!(a.as_str(), "-v" | "--version" | "-h" | "--help"));
    if first_operand(args).is_none() && !info {
        let mut install = vec!["install".to_owned()];
        install.extend(args.iter().cloned());
        return node_package_manager(&install);
    }
    node_package_manager(args)
}

fn cargo(args: &[String]) -> Option<String> {
    if has(args, &["--config"]) {
        return Some(
            "`cargo --config` sets configuration that can name programs (`target.*.runner`, \
             `build.rustc-wrapper`, aliases)"
                .to_owned(),
        );
    }
    if args.iter().any(|a| a.starts_with("-Z")) {
        return Some("`cargo -Z` turns on unstable behaviour Gatehouse does not model".to_owned());
    }
    (first_operand(args) == Some("install")).then(|| {
        "`cargo install` builds a crate from the registry, running its build scripts".to_owned()
    })
}

fn pip(args: &[String]) -> Option<String> {
    if has(args, &["--editor"]) {
        return Some("`--editor` names a program pip runs".to_owned());
    }
    let subcommand = first_operand(args)?;
    match subcommand {
        "install" | "download" | "wheel" => Some(format!(
            "`pip {subcommand}` builds packages, running their setup code (`setup.py`, build \
             backends)"
        )),
        "config"
            if args
                .iter()
                .any(|a| matches!(a.as_str(), "set" | "edit" | "unset")) =>
        {
            Some("`pip config` writes configuration".to_owned())
        }
        _ => None,
    }
}

fn uv(args: &[String]) -> Option<String> {
    let installs = match first_operand(args) {
        Some("pip") => args
            .iter()
            .any(|a| matches!(a.as_str(), "install" | "sync" | "compile")),
        Some("add" | "sync" | "lock" | "build") => true,
        _ => false,
    };
    installs.then(|| "uv builds packages, running their build backends".to_owned())
}

fn go(args: &[String]) -> Option<String> {
    if has(
        args,
        &[
            "-toolexec",
            "--toolexec",
            "-exec",
            "--exec",
            "-overlay",
            "--overlay",
        ],
    ) {
        return Some("`go -toolexec/-exec/-overlay` runs or substitutes programs".to_owned());
    }
    if value_of(args, &["-ldflags", "--ldflags"]).is_some_and(|flags| flags.contains("extld")) {
        return Some("`-ldflags -extld` names the linker go runs".to_owned());
    }
    let subcommand = first_operand(args)?;
    let remote = matches!(subcommand, "run" | "install")
        && args.iter().any(|a| !a.starts_with('-') && a.contains('@'));
    remote.then(|| format!("`go {subcommand} pkg@version` downloads and runs code"))
}

// ---------------------------------------------------------------------------------------------
// search, archive and viewing tools

fn rg(args: &[String]) -> Option<String> {
    has(args, &["--pre"]).then(|| "`rg --pre` runs the program it names on every file".to_owned())
}

fn fd(args: &[String]) -> Option<String> {
    has(args, &["-x", "--exec", "-X", "--exec-batch"])
        .then(|| "`fd -x/-X` runs a command for the files it finds".to_owned())
}

fn tar(args: &[String]) -> Option<String> {
    const LONG: &[&str] = &[
        "--to-command",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
    ];
    let long = has(args, LONG);
    // `-I PROG` and `-F SCRIPT` in a cluster (`-xIzstd`), or in old-style first words (`xIf`).
    let short = args.iter().enumerate().any(|(i, arg)| {
        let cluster = match arg.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') => rest,
            None if i == 0 => arg.as_str(),
            _ => return false,
        };
        cluster.contains(['I', 'F'])
    });
    (long || short).then(|| "tar runs the program or script it is given".to_owned())
}

fn zip(args: &[String]) -> Option<String> {
    has(args, &["-TT", "--unzip-command"])
        .then(|| "`zip -TT` runs the command it is given".to_owned())
}

fn wget(args: &[String]) -> Option<String> {
    has(args, &["--use-askpass", "-e", "--execute", "--config"])
        .then(|| "wget runs the program, or reads the settings, it is given".to_owned())
}

fn pager(args: &[String]) -> Option<String> {
    let commands = args.iter().any(|a| a.starts_with('+'));
    (commands || has(args, &["-k", "--lesskey-file", "--lesskey-src"]))
        .then(|| "a `+command` or key file can run shell commands".to_owned())
}

fn man(args: &[String]) -> Option<String> {
    has(
        args,
        &[
            "-P",
            "--pager",
            "-H",
            "--html",
            "-p",
            "--preprocessor",
            "-C",
            "--config-file",
        ],
    )
    .then(|| "man runs the pager, browser or preprocessor it is given".to_owned())
}

fn kubectl(args: &[String]) -> Option<String> {
    has(args, &["--kubeconfig"]).then(|| {
        "`--kubeconfig` reads a config whose credential plugins are programs kubectl runs"
            .to_owned()
    })
}

fn gh(args: &[String]) -> Option<String> {
    let shell_alias = args.iter().any(|a| a == "alias") && has(args, &["-s", "--shell"]);
    let extension = matches!(first_operand(args), Some("extension" | "ext"))
        && args
            .iter()
            .any(|a| matches!(a.as_str(), "install" | "exec" | "upgrade"));
    (shell_alias || extension)
        .then(|| "gh defines a shell alias or installs or runs an extension".to_owned())
}

fn nothing(_: &[String]) -> Option<String> {
    None
}

const PROFILES: &[Profile] = &[
    Profile {
        trust: ProgramTrust {
            programs: &["git"],
            trusts: "the repository's hooks (.git/hooks, core.hooksPath) and config (.git/config, \
                     includes), of the repository in the working directory or the one -C, \
                     --git-dir or --work-tree names, the user's and system config (~/.gitconfig, \
                     $XDG_CONFIG_HOME/git/config, /etc/gitconfig) with their aliases, pagers, \
                     fsmonitor, ssh command and credential helpers, and git-* programs on PATH",
            asks: "-c and --config-env with any key but a short list that changes only output; \
                   --exec-path=DIR; global options it does not model; config writes; clone/init \
                   --template, -u/--upload-pack, -c; fetch/pull/push/ls-remote/archive \
                   --upload-pack/--receive-pack/--exec; rebase -x; bisect run; submodule \
                   foreach; filter-branch; difftool/mergetool -x; grep -O; send-email commands; \
                   instaweb, web--browse, shell, help --web",
        },
        check: git,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["ssh"],
            trusts: "~/.ssh/config and /etc/ssh/ssh_config (ProxyCommand, LocalCommand, Match \
                     exec), the user's keys and agent",
            asks: "-o with an option that is not on a short harmless list, -F (except none), -I, \
                   and any remote command after the destination",
        },
        check: ssh,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["scp"],
            trusts: "ssh's config files, keys and agent",
            asks: "-o as for ssh, -F, -S, -D",
        },
        check: scp,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["sftp"],
            trusts: "ssh's config files, keys and agent",
            asks: "-o as for ssh, -F, -S, -D, -b (a batch file's `!` lines run locally)",
        },
        check: sftp,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["rsync"],
            trusts: "ssh's config files (its default transport)",
            asks: "-e/--rsh, --rsync-path",
        },
        check: rsync,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["npm", "pnpm", "bun"],
            trusts: NODE_PM_TRUSTS,
            asks: NODE_PM_ASKS,
        },
        check: node_package_manager,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["yarn"],
            trusts: NODE_PM_TRUSTS,
            asks: "as npm, and a bare `yarn`, which installs",
        },
        check: yarn,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["cargo"],
            trusts: "the project's build scripts, proc macros and .cargo/config.toml (aliases, \
                     runners, rustc wrappers), ~/.cargo/config.toml, cargo-* programs on PATH",
            asks: "--config, -Z, cargo install",
        },
        check: cargo,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["pip", "pip3"],
            trusts: "pip's config files",
            asks: "install, download and wheel (they build packages, running setup code), \
                   config set/edit/unset, --editor",
        },
        check: pip,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["uv"],
            trusts: "the project's pyproject.toml and uv.toml",
            asks: "pip install/sync/compile, add, sync, lock, build; run and tool as carriers",
        },
        check: uv,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["make", "gmake"],
            trusts: "the makefiles it reads (the project's Makefile and what it includes) and \
                     the recipes in them",
            asks: "--eval/-E, -f reading stdin, variable overrides (SHELL=…), -f beside -C; \
                   under strictInlineEval any -f FILE (section 4)",
        },
        check: nothing,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["go"],
            trusts: "the module's code, go:generate directives and the Go toolchain",
            asks: "-toolexec, -exec, -overlay, -ldflags with -extld, run/install pkg@version",
        },
        check: go,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["rg"],
            trusts: "ripgrep's config file (RIPGREP_CONFIG_PATH is refused in the request), \
                     decompressors on PATH for -z",
            asks: "--pre",
        },
        check: rg,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["fd", "fdfind"],
            trusts: "nothing that runs",
            asks: "-x/--exec, -X/--exec-batch",
        },
        check: fd,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["tar", "gtar", "bsdtar"],
            trusts: "compressors on PATH",
            asks: "--to-command, -I/--use-compress-program, --checkpoint-action, \
                   -F/--info-script, --new-volume-script, --rsh-command",
        },
        check: tar,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["zip"],
            trusts: "unzip on PATH for -T",
            asks: "-TT/--unzip-command",
        },
        check: zip,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["wget"],
            trusts: "~/.wgetrc and /etc/wgetrc",
            asks: "--use-askpass, -e/--execute, --config",
        },
        check: wget,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["less", "more", "most"],
            trusts: "the user's lesskey file",
            asks: "+commands, -k/--lesskey-file, --lesskey-src",
        },
        check: pager,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["man"],
            trusts: "man's config and the system's pager",
            asks: "-P/--pager, -H/--html, -p/--preprocessor, -C/--config-file",
        },
        check: man,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["kubectl", "oc"],
            trusts: "~/.kube/config with its credential plugins, kubectl-* plugins on PATH, and \
                     the cluster it reaches",
            asks: "--kubeconfig; run/exec/debug/attach as carriers",
        },
        check: kubectl,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["docker", "podman", "nerdctl"],
            trusts: "the container daemon, which is as good as root on most hosts, and the \
                     user's config with its credential helpers",
            asks: "run/exec/create/debug as carriers",
        },
        check: nothing,
    },
    Profile {
        trust: ProgramTrust {
            programs: &["gh"],
            trusts: "gh's config with its aliases and the installed extensions",
            asks: "alias set --shell, extension install/exec/upgrade",
        },
        check: gh,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn asks(argv: &[&str]) -> bool {
        let args: Vec<String> = argv[1..].iter().map(|a| (*a).to_owned()).collect();
        refusal(argv[0], &args).is_some()
    }

    #[test]
    fn reads_git_config_reads_and_writes() {
        assert!(!asks(&["git", "config", "user.name"]));
        assert!(!asks(&["git", "config", "--get", "user.name"]));
        assert!(!asks(&["git", "config", "--list", "--show-origin"]));
        assert!(!asks(&["git", "config", "get", "core.pager"]));
        assert!(!asks(&["git", "config", "-f", "x.cfg", "--get", "a.b"]));
        assert!(asks(&["git", "config", "core.pager", "sh -c id"]));
        assert!(asks(&["git", "config", "set", "alias.x", "!id"]));
        assert!(asks(&["git", "config", "--add", "x.y", "z"]));
        assert!(asks(&["git", "config", "--edit"]));
    }

    #[test]
    fn lists_one_trust_statement_per_program() {
        let mut names: Vec<&str> = program_trust()
            .flat_map(|t| t.programs.iter().copied())
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
