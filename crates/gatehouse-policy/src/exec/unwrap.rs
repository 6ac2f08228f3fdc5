//! Finds the program that really runs behind dispatch wrappers, shells and package runners.
//!
//! A wrapper is unwrapped only when its option grammar is known and every option it was given
//! is harmless; otherwise the segment is refused or the wrapper itself becomes the policy target.

use super::carriers::opaque_reason;
use super::evaluation::{Reason, Rule};
use super::options::Arity::{Flag, Required};
use super::options::Role::{Info, Plain};
use super::options::{Grammar, Opt, flag, opt};
use super::parse::Word;
use super::shells::{is_bash_compatible, is_command_flag, is_posix_shell, unsafe_command_letter};

/// Transparent wrappers followed before giving up; deeper chains are refused.
pub(crate) const MAX_WRAPPER_DEPTH: usize = 4;

/// What a segment runs, as positions in its word list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The word at `index` is the program; the words after it are its arguments.
    Program {
        /// Position of the program word.
        index: usize,
        /// Reached through a package runner: resolve in `node_modules/.bin` only.
        package_bin: bool,
    },
    /// `sh script.sh`: the shell runs a script file, which is the policy target.
    ShellScript { shell: usize, script: usize },
    /// `sh -c 'payload'` by bare name, without login or positional carriers: the payload is
    /// analyzed as a command of its own.
    InlineShell { shell: usize, payload: usize },
    /// The word at `index` is the policy target as a whole (a shell named by path, a login
    /// shell, a multiplexer, `sudo`): an allowlist entry for it can satisfy the segment, but
    /// allow-always never persists it.
    Opaque { index: usize, reason: Reason },
    /// Never satisfied.
    Refused(Reason),
}

/// What a segment runs, and the programs started on the way there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unwrapped {
    /// The policy target.
    pub(crate) target: Target,
    /// Positions of the wrappers, shells and package runners looked through, outermost first.
    /// Each is recognised by name and runs before the target, so a caller that executes must
    /// know they are the system's own tools and not files an agent wrote.
    pub(crate) through: Vec<usize>,
}

/// Multiplexers whose first argument names an applet.
const MULTIPLEXERS: &[&str] = &["busybox", "toybox"];

/// The last path component, which decides what a wrapper is.
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Walks the wrappers at the front of a segment.
pub(crate) fn unwrap(words: &[Word]) -> Unwrapped {
    let mut through = Vec::new();
    let target = walk(words, &mut through);
    if let Target::ShellScript { shell, .. } | Target::InlineShell { shell, .. } = &target {
        through.push(*shell);
    }
    Unwrapped { target, through }
}

fn walk(words: &[Word], through: &mut Vec<usize>) -> Target {
    let mut index = 0;
    let mut package_bin = false;
    let mut depth = 0;
    loop {
        let Some(word) = words.get(index) else {
            return Target::Refused(Reason::new(
                Rule::WrapperRefused,
                "a wrapper without a command",
            ));
        };
        if package_bin {
            // A package runner runs the named package binary itself; nothing after it is a
            // wrapper we could unwrap.
            return Target::Program { index, package_bin };
        }
        let name = basename(&word.text).to_ascii_lowercase();
        if let Some(why) = opaque_reason(&name, &words[index + 1..]) {
            return Target::Opaque {
                index,
                reason: Reason::new(
                    Rule::WrapperRefused,
                    format!(
                        "`{name}` {why}; what it carries needs a person, even when `{name}` \
                         is allowlisted"
                    ),
                ),
            };
        }
        let step = match name.as_str() {
            "env" => env_options(words, index + 1),
            "nice" => nice_options(words, index + 1),
            "nohup" => simple_options("nohup", words, index + 1, &[]),
            "time" => time_options(words, index + 1),
            "stdbuf" => stdbuf_options(words, index + 1),
            "timeout" | "gtimeout" => timeout_options(words, index + 1),
            "ionice" | "taskset" | "chrt" | "setsid" => modelled_wrapper(&name, words, index + 1),
            "caffeinate" => caffeinate_options(words, index + 1),
            "sandbox-exec" => sandbox_exec_options(words, index + 1),
            "npx" | "bunx" => {
                package_bin = true;
                package_runner(&name, words, index + 1)
            }
            "npm" | "pnpm" | "yarn" => match package_subcommand(&name, &words[index + 1..]) {
                Subcommand::Exec => {
                    package_bin = true;
                    package_runner(&name, words, index + 2)
                }
                Subcommand::Opaque(why) => {
                    return Target::Opaque {
                        index,
                        reason: Reason::new(
                            Rule::WrapperRefused,
                            format!("`{name} {}` {why}", words[index + 1].text),
                        ),
                    };
                }
                Subcommand::Other => Step::Stop,
            },
            _ if MULTIPLEXERS.contains(&name.as_str()) => return multiplexer(words, index, &name),
            _ if is_posix_shell(&name) => return shell(words, index),
            _ => Step::Stop,
        };
        match step {
            Step::Stop => return Target::Program { index, package_bin },
            Step::Refused(reason) => return Target::Refused(reason),
            Step::Next(next) if next >= words.len() => {
                return Target::Program { index, package_bin };
            }
            Step::Next(next) => {
                through.push(index);
                depth += 1;
                if depth > MAX_WRAPPER_DEPTH {
                    return Target::Refused(Reason::new(
                        Rule::TooDeep,
                        format!("more than {MAX_WRAPPER_DEPTH} nested wrappers"),
                    ));
                }
                index = next;
            }
        }
    }
}

/// The outcome of parsing one wrapper's options.
enum Step {
    /// Not a wrapper: the current word is the program.
    Stop,
    /// The wrapped command starts at this index (past the end: the wrapper runs alone).
    Next(usize),
    /// The wrapper was given an option that changes what runs or how it is found.
    Refused(Reason),
}

fn refuse(wrapper: &str, option: &str, why: &str) -> Step {
    Step::Refused(Reason::new(
        Rule::WrapperRefused,
        format!("`{wrapper} {option}` {why}"),
    ))
}

fn env_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if arg == "--" {
            return Step::Next(i + 1);
        }
        if arg.starts_with("-S") || arg.starts_with("--split-string") || arg == "--s" {
            return refuse("env", arg, "splits a string into a new command line");
        }
        if arg == "-u" || arg == "--unset" {
            match words.get(i + 1) {
                Some(name) if is_env_name(&name.text) && name.text != "PATH" => i += 2,
                _ => return refuse("env", arg, "needs a variable name other than PATH"),
            }
            continue;
        }
        if let Some(name) = arg
            .strip_prefix("--unset=")
            .or_else(|| arg.strip_prefix("-u"))
        {
            if !is_env_name(name) || name == "PATH" {
                return refuse("env", arg, "needs a variable name other than PATH");
            }
            i += 1;
            continue;
        }
        if arg.starts_with('-') {
            return refuse("env", arg, "changes how or where the program runs");
        }
        if arg.contains('=') {
            return Step::Refused(Reason::new(
                Rule::EnvAssignment,
                format!(
                    "`env {arg}` sets the program's environment, which can change what it does"
                ),
            ));
        }
        return Step::Next(i);
    }
    Step::Next(i)
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

fn is_integer(value: &str) -> bool {
    let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

fn nice_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if arg == "--" {
            return Step::Next(i + 1);
        }
        if arg == "-n" || arg == "--adjustment" {
            match words.get(i + 1) {
                Some(value) if is_integer(&value.text) => i += 2,
                _ => return refuse("nice", arg, "needs an integer"),
            }
            continue;
        }
        let inline = arg
            .strip_prefix("--adjustment=")
            .or_else(|| arg.strip_prefix("-n"))
            .or_else(|| arg.strip_prefix('-'));
        match inline {
            Some(value) if is_integer(value) => i += 1,
            Some(_) => return refuse("nice", arg, "is not a known option"),
            None => return Step::Next(i),
        }
    }
    Step::Next(i)
}

/// Wrappers whose only options are the listed flags without values.
fn simple_options(wrapper: &str, words: &[Word], mut i: usize, flags: &[&str]) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if arg == "--" {
            return Step::Next(i + 1);
        }
        if flags.contains(&arg) {
            i += 1;
            continue;
        }
        if arg.starts_with('-') {
            return refuse(wrapper, arg, "is not a known option");
        }
        return Step::Next(i);
    }
    Step::Next(i)
}

/// `time` is bash's keyword at the head of a command and GNU's program elsewhere; only what
/// both read alike is unwrapped: one `-p`, then the command. The keyword takes a single `-p`
/// (`time -p -p X` runs a program named `-p`) and no long options, and whether it skips a `--`
/// depends on bash's version, so any other option word is refused.
fn time_options(words: &[Word], mut i: usize) -> Step {
    if words.get(i).is_some_and(|word| word.text == "-p") {
        i += 1;
    }
    match words.get(i) {
        Some(word) if word.text.starts_with('-') => refuse(
            "time",
            &word.text,
            "is read as an option by one `time` and as the program by another",
        ),
        _ => Step::Next(i),
    }
}

/// util-linux wrappers with a getopt grammar that stops at the first operand (`+` in their
/// option strings): the grammar, how many operands come before the command (`taskset MASK
/// cmd`, `chrt PRIO cmd`), and the options after which there is no command (`-p PID` acts on a
/// running process).
struct ModelledWrapper {
    name: &'static str,
    grammar: Grammar<'static>,
    leading_operands: usize,
    no_command: &'static [char],
}

const fn wrapper_grammar(opts: &'static [Opt<'static>]) -> Grammar<'static> {
    Grammar {
        opts,
        permute: false,
        abbreviations: true,
        unknown_attached_ok: false,
        numeric_shorthand: false,
    }
}

const MODELLED_WRAPPERS: &[ModelledWrapper] = &[
    ModelledWrapper {
        name: "ionice",
        grammar: wrapper_grammar(&[
            opt(Some('c'), Some("class"), Required, Plain),
            opt(Some('n'), Some("classdata"), Required, Plain),
            flag(Some('t'), Some("ignore")),
            opt(Some('p'), Some("pid"), Required, Plain),
            opt(Some('P'), Some("pgid"), Required, Plain),
            opt(Some('u'), Some("uid"), Required, Plain),
            opt(Some('h'), Some("help"), Flag, Info),
            opt(Some('V'), Some("version"), Flag, Info),
        ]),
        leading_operands: 0,
        no_command: &['p', 'P', 'u'],
    },
    ModelledWrapper {
        name: "taskset",
        grammar: wrapper_grammar(&[
            flag(Some('a'), Some("all-tasks")),
            flag(Some('c'), Some("cpu-list")),
            flag(Some('p'), Some("pid")),
            opt(Some('h'), Some("help"), Flag, Info),
            opt(Some('V'), Some("version"), Flag, Info),
        ]),
        leading_operands: 1,
        no_command: &['p'],
    },
    ModelledWrapper {
        name: "chrt",
        grammar: wrapper_grammar(&[
            flag(Some('a'), Some("all-tasks")),
            flag(Some('b'), Some("batch")),
            flag(Some('d'), Some("deadline")),
            flag(Some('e'), Some("ext")),
            flag(Some('f'), Some("fifo")),
            flag(Some('i'), Some("idle")),
            flag(Some('o'), Some("other")),
            flag(Some('r'), Some("rr")),
            flag(Some('R'), Some("reset-on-fork")),
            flag(Some('v'), Some("verbose")),
            flag(Some('m'), Some("max")),
            flag(Some('p'), Some("pid")),
            opt(Some('T'), Some("sched-runtime"), Required, Plain),
            opt(Some('P'), Some("sched-period"), Required, Plain),
            opt(Some('D'), Some("sched-deadline"), Required, Plain),
            opt(Some('h'), Some("help"), Flag, Info),
            opt(Some('V'), Some("version"), Flag, Info),
        ]),
        leading_operands: 1,
        no_command: &['m', 'p'],
    },
    ModelledWrapper {
        name: "setsid",
        grammar: wrapper_grammar(&[
            flag(Some('c'), Some("ctty")),
            flag(Some('f'), Some("fork")),
            flag(Some('w'), Some("wait")),
            opt(Some('h'), Some("help"), Flag, Info),
            opt(Some('V'), Some("version"), Flag, Info),
        ]),
        leading_operands: 0,
        no_command: &[],
    },
];

/// A wrapper of [`MODELLED_WRAPPERS`]: its options read with its grammar (an unknown one is
/// refused), then its leading operands, then the command.
fn modelled_wrapper(name: &str, words: &[Word], start: usize) -> Step {
    let Some(wrapper) = MODELLED_WRAPPERS.iter().find(|w| w.name == name) else {
        return Step::Stop;
    };
    let args: Vec<String> = words[start..].iter().map(|w| w.text.clone()).collect();
    let parsed = match wrapper.grammar.parse(&args) {
        Ok(parsed) => parsed,
        Err(unknown) => return refuse(name, unknown.word, "is not a known option"),
    };
    let acts_alone = parsed.options.iter().any(|(opt, _)| {
        opt.role == Info || opt.short.is_some_and(|c| wrapper.no_command.contains(&c))
    });
    if acts_alone {
        // No command: the wrapper is the program (`ionice -p 42`, `chrt -m`).
        return Step::Stop;
    }
    let command = start + args.len() - parsed.operands.len() + wrapper.leading_operands;
    Step::Next(command.min(words.len()))
}

fn is_buffer_mode(value: &str) -> bool {
    !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric())
}

fn stdbuf_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if arg == "--" {
            return Step::Next(i + 1);
        }
        if matches!(arg, "-i" | "-o" | "-e" | "--input" | "--output" | "--error") {
            match words.get(i + 1) {
                Some(value) if is_buffer_mode(&value.text) => i += 2,
                _ => return refuse("stdbuf", arg, "needs a buffer mode"),
            }
            continue;
        }
        let inline = ["--input=", "--output=", "--error=", "-i", "-o", "-e"]
            .iter()
            .find_map(|prefix| arg.strip_prefix(prefix));
        match inline {
            Some(value) if is_buffer_mode(value) => i += 1,
            _ if arg.starts_with('-') => return refuse("stdbuf", arg, "is not a known option"),
            _ => return Step::Next(i),
        }
    }
    Step::Next(i)
}

fn is_duration(value: &str) -> bool {
    let number = value.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(value);
    !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().any(|c| c.is_ascii_digit())
}

fn is_signal(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
}

fn timeout_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        match arg {
            "--" => {
                i += 1;
                break;
            }
            "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
            "-s" | "--signal" => match words.get(i + 1) {
                Some(value) if is_signal(&value.text) => i += 2,
                _ => return refuse("timeout", arg, "needs a signal"),
            },
            "-k" | "--kill-after" => match words.get(i + 1) {
                Some(value) if is_duration(&value.text) => i += 2,
                _ => return refuse("timeout", arg, "needs a duration"),
            },
            _ if arg.starts_with("--signal=") || (arg.starts_with("-s") && arg.len() > 2) => {
                let value = arg.trim_start_matches("--signal=").trim_start_matches("-s");
                if !is_signal(value) {
                    return refuse("timeout", arg, "needs a signal");
                }
                i += 1;
            }
            _ if arg.starts_with("--kill-after=") || (arg.starts_with("-k") && arg.len() > 2) => {
                let value = arg
                    .trim_start_matches("--kill-after=")
                    .trim_start_matches("-k");
                if !is_duration(value) {
                    return refuse("timeout", arg, "needs a duration");
                }
                i += 1;
            }
            _ if arg.starts_with('-') => return refuse("timeout", arg, "is not a known option"),
            _ => break,
        }
    }
    match words.get(i) {
        Some(duration) if is_duration(&duration.text) => Step::Next(i + 1),
        Some(other) => refuse("timeout", &other.text, "is not a duration"),
        None => Step::Next(i),
    }
}

fn caffeinate_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if arg == "-t" || arg == "-w" {
            match words.get(i + 1) {
                Some(value) if is_integer(&value.text) => i += 2,
                _ => return refuse("caffeinate", arg, "needs a number"),
            }
            continue;
        }
        match arg.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && flags.chars().all(|c| "dimsu".contains(c)) => {
                i += 1;
            }
            Some(_) => return refuse("caffeinate", arg, "is not a known option"),
            None => return Step::Next(i),
        }
    }
    Step::Next(i)
}

fn sandbox_exec_options(words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        match arg {
            "-f" | "-n" | "-p" | "-D" => {
                if words.get(i + 1).is_none() {
                    return refuse("sandbox-exec", arg, "needs a value");
                }
                i += 2;
            }
            _ if arg.starts_with('-') => {
                return refuse("sandbox-exec", arg, "is not a known option");
            }
            _ => return Step::Next(i),
        }
    }
    Step::Next(i)
}

enum Subcommand {
    /// Runs a locally installed package binary (`npm exec`, `pnpm exec`).
    Exec,
    /// Runs something the policy cannot judge by its `.bin` path (`pnpm dlx`, `yarn exec`);
    /// the reason completes "`yarn exec` …".
    Opaque(&'static str),
    /// Anything else: the package manager itself is the program.
    Other,
}

/// What a package manager's words make it do. Its own options before the subcommand are not
/// modelled (`pnpm -r exec …` runs in every workspace package, `npm --prefix x exec …`
/// elsewhere), so with one there, any word that could be a running subcommand makes it opaque.
fn package_subcommand(manager: &str, args: &[Word]) -> Subcommand {
    let word = args.first();
    if word.is_some_and(|w| w.text.starts_with('-'))
        && args
            .iter()
            .any(|w| matches!(w.text.as_str(), "exec" | "x" | "dlx"))
    {
        return Subcommand::Opaque(
            "runs a command, after options Gatehouse does not model; what it runs needs a person",
        );
    }
    match (manager, word.map(|w| w.text.as_str())) {
        ("npm", Some("exec" | "x")) | ("pnpm", Some("exec")) => Subcommand::Exec,
        ("pnpm" | "yarn", Some("dlx")) => {
            Subcommand::Opaque("downloads and runs a package from the registry")
        }
        // Yarn 2 and later run the word as shell code, with the workspace's dependencies'
        // binaries on PATH rather than node_modules/.bin.
        ("yarn", Some("exec")) => Subcommand::Opaque(
            "runs its argument as shell code (yarn 2 and later), which needs a person even when \
             yarn is allowlisted",
        ),
        _ => Subcommand::Other,
    }
}

/// Finds the program a package runner runs from `start` (the word after `npx`, or after
/// `npm exec`), refusing every word the runner reads otherwise than the policy would judge it.
/// - npm parses options anywhere before a `--`, so one after the package name is npm's
///   (`npm exec tool --package=file:../x` installs that package; npx puts a `--` before the
///   first operand itself, and bunx passes them on too).
/// - pnpm passes every word after `exec` on, so an option there is the command itself.
/// - A name that is not a plain binary name is a package spec the runner installs: a path
///   (`./x` is a directory package with install scripts), a repository (`user/repo`), a scope
///   or a version.
fn package_runner(runner: &str, words: &[Word], start: usize) -> Step {
    let step = match (runner, words.get(start)) {
        ("pnpm", Some(word)) if word.text.starts_with('-') => {
            return refuse(
                "pnpm exec",
                &word.text,
                "is passed on as the command to run, not read as an option",
            );
        }
        ("pnpm", _) => Step::Next(start),
        _ => runner_options(runner, words, start),
    };
    let Step::Next(program) = step else {
        return step;
    };
    let Some(name) = words.get(program) else {
        return step;
    };
    if !is_bin_name(&name.text) {
        return refuse(
            runner,
            &name.text,
            "names a package to install (a path, repository, scope or version), not a program \
             in node_modules/.bin",
        );
    }
    let options_ended = program > start && words[program - 1].text == "--";
    if runner == "npm"
        && !options_ended
        && let Some(option) = words[program + 1..]
            .iter()
            .find(|w| w.text.starts_with('-'))
    {
        return refuse(
            "npm exec",
            &option.text,
            "after the package name is read by npm, not passed to the program (write \
             `npm exec -- NAME ARGS` or `npx NAME ARGS`)",
        );
    }
    step
}

/// A name as npm links binaries into node_modules/.bin: letters, digits, `-`, `_` and `.`, not
/// starting with `-` or `.`.
fn is_bin_name(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Package runners accept only options that do not change which package runs; `runner` names
/// the runner in refusals.
fn runner_options(runner: &str, words: &[Word], mut i: usize) -> Step {
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        match arg {
            "--" => return Step::Next(i + 1),
            "-y" | "--yes" | "--no" | "-q" | "--quiet" | "--silent" | "--bun" => i += 1,
            _ if arg.starts_with('-') => {
                return refuse(runner, arg, "changes which package or shell runs");
            }
            _ => return Step::Next(i),
        }
    }
    Step::Next(i)
}

fn multiplexer(words: &[Word], index: usize, name: &str) -> Target {
    match words.get(index + 1) {
        Some(applet) if is_posix_shell(basename(&applet.text)) => Target::Opaque {
            index,
            reason: Reason::new(
                Rule::ShellPayload,
                format!(
                    "`{name} {}` runs a shell, whose code needs a person even when `{name}` is \
                     allowlisted",
                    applet.text
                ),
            ),
        },
        Some(applet) => Target::Refused(Reason::new(
            Rule::MultiplexerApplet,
            format!(
                "`{name} {}`: only shell applets of a multiplexer are accepted",
                applet.text
            ),
        )),
        None => Target::Refused(Reason::new(
            Rule::MultiplexerApplet,
            format!("`{name}` without an applet"),
        )),
    }
}

/// Decides how a shell at `index` runs: inline code, a script file, or something opaque.
fn shell(words: &[Word], index: usize) -> Target {
    let shell_word = &words[index].text;
    let by_path = shell_word.contains('/');
    let mut login = false;
    let opaque = |why: String| Target::Opaque {
        index,
        reason: Reason::new(Rule::ShellPayload, why),
    };
    let mut i = index + 1;
    while let Some(word) = words.get(i) {
        let arg = word.text.as_str();
        if let Some((letter, why)) = unsafe_command_letter(arg) {
            return opaque(format!(
                "`{shell_word} {arg}`: `-{letter}` {why}; its inline code is approved only as an \
                 exact command"
            ));
        }
        if is_command_flag(arg) {
            let Some(payload) = words.get(i + 1) else {
                return Target::Refused(Reason::new(
                    Rule::SyntaxError,
                    format!("`{shell_word} {arg}` without a command string"),
                ));
            };
            if payload.text.starts_with(['-', '+']) {
                // The shell keeps parsing options after `-c`; the command string is a later word.
                return opaque(format!(
                    "`{shell_word} {arg} {}`: an option after `{arg}` hides which word is the \
                     command string",
                    payload.text
                ));
            }
            login |= arg.starts_with('-') && !arg.starts_with("--") && arg.contains('l');
            let carriers = i + 2 < words.len();
            let foreign = !is_bash_compatible(basename(shell_word));
            if by_path || login || carriers || foreign {
                let why = if carriers {
                    "passes positional arguments into its inline code"
                } else if login {
                    "is a login shell, which first runs profile scripts"
                } else if foreign {
                    "has syntax the bash grammar does not cover"
                } else {
                    "is named by path"
                };
                return opaque(format!(
                    "`{shell_word}` {why}; its inline code needs a person (approve the exact \
                     command), even when the shell is allowlisted"
                ));
            }
            return Target::InlineShell {
                shell: index,
                payload: i + 1,
            };
        }
        match arg {
            "-l" | "--login" => login = true,
            "--" => {
                return match words.get(i + 1) {
                    Some(_) if !login => Target::ShellScript {
                        shell: index,
                        script: i + 1,
                    },
                    _ => opaque(format!("`{shell_word}` reads commands from stdin")),
                };
            }
            _ if arg.starts_with('-') || arg.starts_with('+') => {
                return opaque(format!(
                    "`{shell_word} {arg}`: shell options can change what runs"
                ));
            }
            _ if login => {
                return opaque(format!(
                    "`{shell_word}` is a login shell, which first runs profile scripts"
                ));
            }
            _ => {
                return Target::ShellScript {
                    shell: index,
                    script: i,
                };
            }
        }
        i += 1;
    }
    opaque(format!("`{shell_word}` reads commands from stdin"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(argv: &[&str]) -> Target {
        unwrap(&Word::direct_argv(argv)).target
    }

    fn through(argv: &[&str]) -> Vec<usize> {
        unwrap(&Word::direct_argv(argv)).through
    }

    fn program(argv: &[&str]) -> Option<usize> {
        match target(argv) {
            Target::Program { index, .. } => Some(index),
            _ => None,
        }
    }

    #[test]
    fn unwraps_transparent_wrappers() {
        assert_eq!(program(&["env", "rg", "x"]), Some(1));
        assert_eq!(program(&["nice", "-n", "5", "rg"]), Some(3));
        assert_eq!(program(&["nice", "-10", "rg"]), Some(2));
        assert_eq!(program(&["nohup", "rg"]), Some(1));
        assert_eq!(program(&["stdbuf", "-o", "L", "rg"]), Some(3));
        assert_eq!(program(&["stdbuf", "-oL", "rg"]), Some(2));
        assert_eq!(program(&["timeout", "-s", "KILL", "5s", "rg"]), Some(4));
        assert_eq!(program(&["time", "-p", "rg"]), Some(2));
        assert_eq!(program(&["caffeinate", "-d", "-w", "42", "rg"]), Some(4));
        assert_eq!(program(&["sandbox-exec", "-D", "PROFILE", "rg"]), Some(3));
        assert_eq!(program(&["npx", "--yes", "tsc"]), Some(2));
        assert_eq!(program(&["npm", "exec", "--", "tsc"]), Some(3));
        assert_eq!(program(&["npm", "test"]), Some(0));
        assert_eq!(program(&["npx", "env", "rg"]), Some(1));
        assert_eq!(program(&["gtimeout", "5", "rg"]), Some(2));
        assert_eq!(program(&["ionice", "-c", "3", "rg"]), Some(3));
        assert_eq!(program(&["ionice", "-c3", "-t", "rg"]), Some(3));
        assert_eq!(program(&["taskset", "-c", "0,1", "rg", "x"]), Some(3));
        assert_eq!(program(&["chrt", "-f", "10", "rg"]), Some(3));
        assert_eq!(program(&["setsid", "-w", "rg"]), Some(2));
        // No command: the wrapper is the program.
        assert_eq!(program(&["chrt", "rg"]), Some(0));
        assert_eq!(program(&["ionice", "-p", "42"]), Some(0));
        assert_eq!(program(&["taskset", "-p", "1", "42"]), Some(0));
    }

    #[test]
    fn denies_wrappers_that_change_what_runs() {
        for argv in [
            &["env", "-S", "sh -c x"][..],
            &["env", "--split-string=rg -n"],
            &["env", "FOO=bar", "rg"],
            &["env", "-P", "/usr/bin", "rg"],
            &["env", "--unset"],
            &["env", "-u", "PATH", "rg"],
            &["timeout", "--bogus", "5s", "rg"],
            &["nice", "--bogus", "rg"],
            &["npx", "-c", "rm -rf /"],
            &["busybox", "sed", "-n", "1p"],
            &["busybox"],
            &["env", "env", "env", "env", "env", "rg"],
            &["ionice", "--bogus", "rg"],
            &["setsid", "-x", "rg"],
        ] {
            assert!(matches!(target(argv), Target::Refused(_)), "{argv:?}");
        }
    }

    #[test]
    fn keeps_opaque_wrappers_as_their_own_target() {
        for argv in [
            &["sudo", "rg"][..],
            &["flock", "/tmp/l", "rg"],
            &["docker", "-H", "unix:///x", "run", "alpine", "id"],
            &["ip", "netns", "exec", "n", "id"],
            &["/bin/sh", "-c", "ls"],
            &["bash", "-lc", "ls"],
            &["sh", "-c", "$0", "touch"],
            &["busybox", "sh", "-c", "ls"],
            &["bash", "--rcfile", "x", "y.sh"],
            &["bash", "-s"],
            &["bash", "-kc", "tr a LD_PRELOAD=/tmp/evil.so"],
            &["bash", "-ic", "git status"],
            &["sh", "-c", "-k", "ls"],
            &["sh", "-c", "+o"],
            &["pnpm", "dlx", "cowsay"],
            &["zsh", "-c", "ls"],
            &["fish", "-c", "ls"],
        ] {
            assert!(matches!(target(argv), Target::Opaque { .. }), "{argv:?}");
        }
    }

    #[test]
    fn finds_inline_shell_payloads_and_scripts() {
        assert_eq!(
            target(&["sh", "-c", "ls"]),
            Target::InlineShell {
                shell: 0,
                payload: 2
            }
        );
        assert_eq!(
            target(&["nice", "bash", "run.sh"]),
            Target::ShellScript {
                shell: 1,
                script: 2
            }
        );
    }

    #[test]
    fn names_every_program_looked_through_but_not_the_target() {
        assert_eq!(through(&["rg", "x"]), Vec::<usize>::new());
        assert_eq!(through(&["env", "nice", "-n", "5", "rg"]), vec![0, 1]);
        assert_eq!(through(&["timeout", "5s", "sh", "-c", "ls"]), vec![0, 2]);
        assert_eq!(through(&["nice", "bash", "run.sh"]), vec![0, 1]);
        assert_eq!(through(&["npx", "--yes", "tsc"]), vec![0]);
        assert_eq!(through(&["npm", "exec", "--", "tsc"]), vec![0]);
        assert_eq!(
            through(&["env", "sudo", "rg"]),
            vec![0],
            "sudo is the target"
        );
        assert_eq!(
            through(&["nohup"]),
            Vec::<usize>::new(),
            "alone, it is the target"
        );
    }
}
