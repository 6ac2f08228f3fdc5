//! One segment → what really runs, where it lives, and what (if anything) satisfies it.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::allowlist::{CompiledAllowlist, literal_pattern};
use super::evaluation::{LookedThrough, Reason, Rule, SatisfiedBy, SegmentEvaluation};
use super::inline_eval::{
    ProgramFile, inline_code, is_interpreter_like, program_files, reads_program_from_stdin,
    strict_only_code,
};
use super::parse::{ParsedSegment, Word, parse_shell};
use super::policy::{AllowlistEntry, ExecPolicy};
use super::profiles;
use super::resolve::Resolver;
use super::safe_bins::SafeBins;
use super::shells::runs_inline_code as opaque_inline_shell;
use super::unwrap::{Target, Unwrapped, basename, unwrap};

/// `sh -c` payloads followed before giving up; deeper nesting fails analysis.
pub(crate) const MAX_SHELL_DEPTH: usize = 3;

/// Builtins that only pass code or names to the shell itself; their effect cannot be analyzed.
const CARRIER_BUILTINS: &[&str] = &[
    "eval",
    "source",
    ".",
    "exec",
    "alias",
    "unalias",
    "trap",
    "builtin",
    "command",
    "enable",
    "hash",
    "set",
    "shopt",
    "let",
    "declare",
    "typeset",
    "local",
    "readonly",
    "fc",
    "coproc",
    "mapfile",
    "readarray",
    "read",
    "export",
    "unset",
    // These assign variables named by an argument (whose subscript bash evaluates, running
    // any command substitution in it), change the directory, or run commands on their own.
    "getopts",
    "wait",
    "pushd",
    "popd",
    "history",
    "bind",
    "complete",
    "compgen",
    "compopt",
];

/// Builtins that shadow a program of the same name on `PATH`, with the options by which the
/// builtin alone evaluates a variable name (`printf -v 'a[$(id)]'`, `test -v 'a[$(id)]'`) or
/// assigns one (`printf -v PATH …`). Judged as the program otherwise; refused with these.
const SHADOWING_BUILTINS: &[(&str, &[&str])] = &[
    ("printf", &["-v"]),
    ("test", &["-v", "-R"]),
    ("[", &["-v", "-R"]),
];

/// Builtins with no effect outside the shell process.
const SAFE_BUILTINS: &[&str] = &["cd", "true", "false", "pwd", ":"];

/// The builtins of bash and dash that a shell string may name, besides [`CARRIER_BUILTINS`]
/// and [`SAFE_BUILTINS`]: an assignment in front of any of them is refused (see
/// [`assignment_before_builtin`]). POSIX special builtins are among them, and so are the
/// regular ones that shadow a program on `PATH` (`echo`, `printf`, `test`, `kill`).
const OTHER_BUILTINS: &[&str] = &[
    "break", "continue", "exit", "return", "shift", "times", "umask", "ulimit", "echo", "printf",
    "test", "[", "kill", "type", "jobs", "fg", "bg", "disown", "suspend", "logout", "dirs", "help",
    "caller", "chdir", "newgrp",
];

/// Whether the shell runs `word` itself rather than a program.
fn is_builtin(word: &str) -> bool {
    SAFE_BUILTINS.contains(&word)
        || CARRIER_BUILTINS.contains(&word)
        || OTHER_BUILTINS.contains(&word)
}

/// `NAME=value` in front of a builtin: the POSIX special builtins (`:`, `exit`, `times`, …)
/// keep the assignment for the rest of the shell, as dash does and bash does in POSIX mode
/// (where it also exports it), so `PATH=/tmp/x : ; ls` runs `/tmp/x/ls` under `sh`. Which
/// builtins keep it differs between shells and modes; rather than model every shell, any
/// assignment in front of any builtin is refused.
fn assignment_before_builtin(segment: &ParsedSegment, builtin: &str) -> Reason {
    Reason::new(
        Rule::EnvAssignment,
        format!(
            "`{}` in front of the builtin `{builtin}` can stay set for every later command \
             (`PATH`, `IFS`, `LD_PRELOAD`, `BASH_ENV` …), which the analysis does not follow",
            segment.assignments.join(" ")
        ),
    )
}

/// Why the shell would run `words` as a builtin that hands code or names to the shell itself,
/// or one that shadows the program it would be judged as (`shell_mode`: `printf` and `test`
/// are builtins only to a shell). Asked of the first word and again of every program word
/// found behind a wrapper: after the keyword `time` the shell still runs its own builtins
/// (`time printf -v 'a[$(id)]' x`), and a carrier is refused behind any wrapper.
fn builtin_refusal(words: &[Word], shell_mode: bool) -> Option<Reason> {
    let first = words.first()?;
    if CARRIER_BUILTINS.contains(&first.text.as_str()) {
        return Some(Reason::new(
            Rule::ShellCarrier,
            format!("`{}` hands code or names to the shell itself", first.text),
        ));
    }
    if !shell_mode {
        return None;
    }
    let (name, options) = SHADOWING_BUILTINS
        .iter()
        .find(|(name, _)| first.text == *name)?;
    let args = &words[1..];
    // `printf` takes options only before its format; `test` reads an operator anywhere.
    let searched = if *name == "printf" {
        let end = args
            .iter()
            .position(|w| w.text == "--" || !w.text.starts_with('-'))
            .unwrap_or(args.len());
        &args[..end]
    } else {
        args
    };
    let option = searched
        .iter()
        .find(|w| options.iter().any(|o| w.text.starts_with(o)))?;
    Some(Reason::new(
        Rule::ShellCarrier,
        format!(
            "the shell's own `{name}` runs, not the program, and with `{}` it evaluates a \
             variable name, which can run code",
            option.text
        ),
    ))
}

/// `time A=1 cmd` assigns `A` for `cmd`, as a plain `A=1 cmd` does: bash reads a `NAME=value`
/// word after the keyword as an assignment, not as a program.
fn assignment_refusal(word: &Word) -> Option<Reason> {
    let (name, _) = word.text.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_name.then(|| {
        Reason::new(
            Rule::EnvAssignment,
            format!(
                "`{}` changes the program's environment, which can change what it does",
                word.text
            ),
        )
    })
}

/// How a program segment was reached and where it runs.
#[derive(Debug, Clone, Copy)]
struct ProgramContext {
    /// Through a package runner: resolve in `node_modules/.bin` only.
    package_bin: bool,
    /// Its stdin is the previous command's output.
    stdin_piped: bool,
    /// A shell reads the command (not a direct argv).
    shell_mode: bool,
}

/// The policy parts every segment is checked against, prepared once per request.
pub(crate) struct Checker<'p> {
    pub(crate) policy: &'p ExecPolicy,
    pub(crate) allowlist: Rc<CompiledAllowlist>,
    pub(crate) safe_bins: SafeBins<'p>,
}

/// A segment's evaluation plus the facts the request-level decision needs.
#[derive(Debug)]
pub(crate) struct SegmentOutcome {
    pub(crate) evaluation: SegmentEvaluation,
    /// Inline interpreter code was found (what `strictInlineEval` acts on).
    pub(crate) inline_eval: bool,
    /// What allow-always would store for this segment.
    pub(crate) persist: Option<String>,
}

impl Checker<'_> {
    /// Evaluates a segment, appending one outcome (or several, for an unwrapped `sh -c`).
    /// An `Err` means analysis itself failed.
    pub(crate) fn check(
        &self,
        segment: &ParsedSegment,
        resolver: &mut Resolver,
        shell_mode: bool,
        depth: usize,
        out: &mut Vec<SegmentOutcome>,
    ) -> Result<(), Reason> {
        let words = &segment.words;
        let argv: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let Some(first) = words.first() else {
            return Err(Reason::new(Rule::EmptyCommand, "no command to run"));
        };
        if first.text.trim().is_empty() {
            return Err(Reason::new(Rule::EmptyCommand, "the program name is empty"));
        }
        let refused = |resolved: Option<PathBuf>, reason: Reason| SegmentOutcome {
            evaluation: SegmentEvaluation {
                program_argv: argv.clone(),
                argv: argv.clone(),
                resolved_path: resolved,
                satisfied_by: None,
                allowlist_entry: None,
                reason,
                looked_through: Vec::new(),
            },
            inline_eval: false,
            persist: None,
        };
        if let Some(reason) = builtin_refusal(words, shell_mode) {
            out.push(refused(None, reason));
            return Ok(());
        }
        if shell_mode && !segment.assignments.is_empty() && is_builtin(&first.text) {
            if first.text == "cd" {
                // `CDPATH=/ cd dev` goes where the assigned `CDPATH` says: nowhere known.
                resolver.changed_dir(None);
            }
            out.push(refused(
                None,
                assignment_before_builtin(segment, &first.text),
            ));
            return Ok(());
        }
        if shell_mode && SAFE_BUILTINS.contains(&first.text.as_str()) {
            if first.text == "cd" {
                resolver.changed_dir(cd_target(&words[1..]));
            }
            out.push(SegmentOutcome {
                evaluation: SegmentEvaluation {
                    program_argv: argv.clone(),
                    argv,
                    resolved_path: None,
                    satisfied_by: Some(SatisfiedBy::Builtin),
                    allowlist_entry: None,
                    reason: Reason::new(
                        Rule::AllowlistSatisfied,
                        format!("`{}` is a shell builtin with no outside effect", first.text),
                    ),
                    looked_through: Vec::new(),
                },
                inline_eval: false,
                persist: None,
            });
            return Ok(());
        }
        if !segment.assignments.is_empty() {
            let resolved = resolver.resolve_program(&first.text, first.tilde);
            out.push(refused(
                resolved,
                Reason::new(
                    Rule::EnvAssignment,
                    format!(
                        "`{}` changes the program's environment, which can change what it does",
                        segment.assignments.join(" ")
                    ),
                ),
            ));
            return Ok(());
        }
        let Unwrapped { target, through } = unwrap(words);
        let decisive = target_index(&target).map_or(&words[..0], |index| &words[..=index]);
        if let Some(word) = decisive.iter().find(|w| w.has_expansion) {
            return Err(Reason::new(
                Rule::ParameterExpansion,
                format!(
                    "`{}` decides what runs and is only known at run time",
                    word.text
                ),
            ));
        }
        if let Some(word) = decisive.iter().find(|w| w.glob) {
            return Err(Reason::new(
                Rule::UnsupportedSyntax,
                format!("glob `{}` decides what runs", word.text),
            ));
        }
        let looked_through: Vec<LookedThrough> = through
            .iter()
            .map(|&index| LookedThrough {
                word: words[index].text.clone(),
                resolved_path: resolver.resolve_program(&words[index].text, words[index].tilde),
            })
            .collect();
        let first_outcome = out.len();
        match target {
            Target::Refused(reason) => {
                let resolved = resolver.resolve_program(&first.text, first.tilde);
                out.push(refused(resolved, reason));
            }
            Target::InlineShell { payload, .. } => {
                let piped = segment.stdin_piped;
                self.inline_shell(&words[payload], piped, resolver, depth, out)?;
            }
            Target::ShellScript { shell, script } => {
                out.push(self.shell_script(words, shell, script, argv, resolver));
            }
            Target::Opaque { index, reason } => {
                // A carrier never authorizes what it carries: not even an allowlist entry for
                // the carrier itself satisfies the segment.
                let word = &words[index];
                let resolved = resolver.resolve_program(&word.text, word.tilde);
                let args = &argv[index + 1..];
                let inline_eval = inline_code(&word.text, args).is_some()
                    || opaque_inline_shell(&word.text, args);
                out.push(SegmentOutcome {
                    evaluation: SegmentEvaluation {
                        program_argv: argv[index..].to_vec(),
                        argv,
                        resolved_path: resolved,
                        satisfied_by: None,
                        allowlist_entry: None,
                        reason,
                        looked_through: Vec::new(),
                    },
                    inline_eval,
                    persist: None,
                });
            }
            Target::Program { index, package_bin } => {
                // The first word was asked above. Behind `time`, a shell keyword, the shell
                // still runs builtins and assignments (`time printf -v 'a[$(id)]' x`).
                let behind_wrapper = (index > 0)
                    .then(|| {
                        builtin_refusal(&words[index..], shell_mode)
                            .or_else(|| assignment_refusal(&words[index]))
                    })
                    .flatten();
                if let Some(reason) = behind_wrapper {
                    out.push(refused(None, reason));
                } else {
                    if words[index].text == "cd" {
                        resolver.changed_dir(cd_target(&words[index + 1..]));
                    }
                    let piped = segment.stdin_piped;
                    let context = ProgramContext {
                        package_bin,
                        stdin_piped: piped,
                        shell_mode,
                    };
                    out.push(self.program(words, index, context, argv, resolver));
                }
            }
        }
        for outcome in &mut out[first_outcome..] {
            let inner = &mut outcome.evaluation.looked_through;
            inner.splice(0..0, looked_through.iter().cloned());
        }
        Ok(())
    }

    /// `sh -c 'payload'`: the payload's segments stand in for this one. When the shell's stdin
    /// is a pipe, every command inside may read it.
    fn inline_shell(
        &self,
        payload: &Word,
        stdin_piped: bool,
        resolver: &Resolver,
        depth: usize,
        out: &mut Vec<SegmentOutcome>,
    ) -> Result<(), Reason> {
        if payload.has_expansion {
            return Err(Reason::new(
                Rule::ParameterExpansion,
                "the outer shell expands variables inside the inline code before it runs",
            ));
        }
        if depth + 1 > MAX_SHELL_DEPTH {
            return Err(Reason::new(
                Rule::TooDeep,
                format!("shells nested more than {MAX_SHELL_DEPTH} deep"),
            ));
        }
        let mut segments = parse_shell(&payload.text).map_err(|inner| {
            Reason::new(inner.rule, format!("inside `sh -c`: {}", inner.detail))
        })?;
        let mut inner_resolver = resolver.clone();
        for segment in &mut segments {
            segment.stdin_piped |= stdin_piped;
        }
        for segment in &segments {
            self.check(segment, &mut inner_resolver, true, depth + 1, out)?;
        }
        Ok(())
    }

    fn shell_script(
        &self,
        words: &[Word],
        shell: usize,
        script: usize,
        argv: Vec<String>,
        resolver: &Resolver,
    ) -> SegmentOutcome {
        let script_word = &words[script];
        let shell_word = &words[shell];
        let script_path = resolver.resolve_script(&script_word.text, script_word.tilde);
        let args = &argv[script + 1..];
        let script_entry = script_path
            .as_deref()
            .and_then(|path| self.allowlisted(path, args));
        // The shell carries the script: only an entry for the script itself satisfies it.
        let (satisfied_by, reason, allowlist_entry) = match (&script_path, script_entry) {
            (None, ..) => (
                None,
                Reason::new(
                    Rule::Unresolved,
                    format!(
                        "script `{}` not found in the working directory",
                        script_word.text
                    ),
                ),
                None,
            ),
            (Some(path), Some(entry)) => (
                Some(SatisfiedBy::Allowlist),
                Reason::new(
                    Rule::AllowlistSatisfied,
                    format!("an allowlist entry matches script `{}`", path.display()),
                ),
                Some(entry),
            ),
            (Some(path), None) => (
                None,
                Reason::new(
                    Rule::NoAllowlistMatch,
                    format!(
                        "no allowlist entry matches script `{}`; an entry for `{}` does not \
                         cover the scripts it runs",
                        path.display(),
                        shell_word.text
                    ),
                ),
                None,
            ),
        };
        let persist = script_path.as_deref().and_then(path_string);
        SegmentOutcome {
            evaluation: SegmentEvaluation {
                program_argv: argv[shell..].to_vec(),
                argv,
                resolved_path: script_path,
                satisfied_by,
                allowlist_entry,
                reason,
                looked_through: Vec::new(),
            },
            inline_eval: false,
            persist,
        }
    }

    fn program(
        &self,
        words: &[Word],
        index: usize,
        context: ProgramContext,
        argv: Vec<String>,
        resolver: &Resolver,
    ) -> SegmentOutcome {
        let ProgramContext {
            package_bin,
            stdin_piped,
            shell_mode,
        } = context;
        let word = &words[index];
        let name = basename(&word.text).to_owned();
        let args = &argv[index + 1..];
        let resolved = if package_bin {
            resolver.resolve_package_bin(&word.text)
        } else {
            resolver.resolve_program(&word.text, word.tilde)
        };
        let real_name = resolved
            .as_deref()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        let reads_pipe =
            |program: &str| stdin_piped && args.is_empty() && reads_program_from_stdin(program);
        let strict = self.policy.strict_inline_eval;
        let inline = inline_code(&word.text, args)
            .or_else(|| real_name.and_then(|real| inline_code(real, args)))
            .or_else(|| strict.then(|| strict_only_code(&word.text, args)).flatten())
            .or_else(|| {
                (reads_pipe(&name) || real_name.is_some_and(reads_pipe))
                    .then_some("a program read from the pipe before it")
            })
            .or_else(|| {
                // The name as called and the real one (`python3` → `python3.11`) usually read
                // the same files; each is opened once.
                let mut files = program_files(&word.text, args);
                for file in real_name
                    .map(|real| program_files(real, args))
                    .unwrap_or_default()
                {
                    if !files.contains(&file) {
                        files.push(file);
                    }
                }
                files
                    .iter()
                    .any(|file| !opens_only_plain_files(resolver, &words[index + 1..], args, file))
                    .then_some(UNPLAIN_PROGRAM_FILE)
            });
        let lower = name.to_ascii_lowercase();
        let configured = profiles::refusal(&lower, args).or_else(|| {
            real_name.and_then(|real| profiles::refusal(&real.to_ascii_lowercase(), args))
        });
        let (satisfied_by, reason, allowlist_entry) = match (&resolved, inline) {
            (None, _) => (
                None,
                Reason::new(
                    Rule::Unresolved,
                    if package_bin {
                        format!("`{name}` is not installed in node_modules/.bin")
                    } else {
                        format!("`{}` does not resolve to an executable on PATH", word.text)
                    },
                ),
                None,
            ),
            (Some(_), Some(what)) => (
                None,
                Reason::new(
                    Rule::InlineEval,
                    format!("`{name}` runs {what}; approve the exact command instead"),
                ),
                None,
            ),
            (Some(_), None) if let Some(why) = configured => (
                None,
                Reason::new(
                    Rule::ProgramOption,
                    format!("{why}; a person decides, even when `{name}` is allowlisted"),
                ),
                None,
            ),
            (Some(path), None) => {
                let globbed = words[index + 1..].iter().any(|w| w.glob);
                // A `$` a shell expands; in an argv every `$`, since a host may hand the argv
                // to a shell (OpenClaw's safe-bin rule).
                let expanded = words[index + 1..]
                    .iter()
                    .find(|w| w.has_expansion || (!shell_mode && w.text.contains('$')))
                    .map(|w| w.text.as_str());
                let skill =
                    self.policy.auto_allow_skills && self.is_trusted_skill(&word.text, path);
                self.satisfy(&name, path, args, (globbed, expanded), skill)
            }
        };
        let interpreter = is_interpreter_like(&name) || real_name.is_some_and(is_interpreter_like);
        let persist = if interpreter || inline.is_some() {
            None
        } else {
            resolved.as_deref().and_then(path_string)
        };
        SegmentOutcome {
            evaluation: SegmentEvaluation {
                program_argv: argv[index..].to_vec(),
                argv,
                resolved_path: resolved,
                satisfied_by,
                allowlist_entry,
                reason,
                looked_through: Vec::new(),
            },
            inline_eval: inline.is_some(),
            persist,
        }
    }

    /// The allowlist entry that matches the resolved path and arguments, if any.
    fn allowlisted(&self, path: &Path, args: &[String]) -> Option<AllowlistEntry> {
        let index = self.allowlist.matching_entry(path, args)?;
        self.policy.allowlist.get(index).cloned()
    }

    /// Allowlist first, then safe bins, then trusted skill binaries; the entry is the
    /// allowlist's, when it was one.
    fn satisfy(
        &self,
        name: &str,
        path: &Path,
        args: &[String],
        (globbed, expanded): (bool, Option<&str>),
        trusted_skill: bool,
    ) -> (Option<SatisfiedBy>, Reason, Option<AllowlistEntry>) {
        if let Some(entry) = self.allowlisted(path, args) {
            return (
                Some(SatisfiedBy::Allowlist),
                Reason::new(
                    Rule::AllowlistSatisfied,
                    format!("an allowlist entry matches `{}`", path.display()),
                ),
                Some(entry),
            );
        }
        let mut refusal = None;
        if self.safe_bins.is_listed(name) {
            match self.safe_bins.check(name, path, args, globbed, expanded) {
                Ok(()) => {
                    return (
                        Some(SatisfiedBy::SafeBins),
                        Reason::new(
                            Rule::AllowlistSatisfied,
                            format!("`{name}` is a safe bin called within its profile"),
                        ),
                        None,
                    );
                }
                Err(reason) => refusal = Some(reason),
            }
        }
        if trusted_skill {
            return (
                Some(SatisfiedBy::Skills),
                Reason::new(
                    Rule::AllowlistSatisfied,
                    format!("`{name}` is a trusted skill binary"),
                ),
                None,
            );
        }
        let reason = refusal.unwrap_or_else(|| {
            Reason::new(
                Rule::NoAllowlistMatch,
                format!("no allowlist entry matches `{}`", path.display()),
            )
        });
        (None, reason, None)
    }

    /// A skill binary is trusted only when named bare, as the agent's skill tells it to run
    /// it (`skill-bin`, never `./skill-bin` or `bin/skill-bin`, which name a file of the
    /// working directory's choosing), and when that name resolves to the recorded path.
    fn is_trusted_skill(&self, written: &str, path: &Path) -> bool {
        if written.contains('/') {
            return false;
        }
        self.policy.skill_bins.iter().any(|skill| {
            skill.name.trim() == written
                && (skill.resolved_path == path
                    || std::fs::canonicalize(&skill.resolved_path).is_ok_and(|real| real == path))
        })
    }
}

/// The word that decides what runs, if the target has one.
const UNPLAIN_PROGRAM_FILE: &str = "a program file that may not be a regular file on disk \
     (a device, a `/proc` file, a path to stdin, or a name known only at run time)";

/// Whether `file` opens nothing but a plain file (see [`Resolver::opens_only_plain_files`]).
/// The words it was written in (`args` are the words after the program) say whether the shell
/// changes it first: an expansion or glob is known only at run time, and a `~` is expanded only
/// at the start of a whole word that is the path itself.
fn opens_only_plain_files(
    resolver: &Resolver,
    words: &[Word],
    args: &[String],
    file: &ProgramFile<'_>,
) -> bool {
    let mut tilde = false;
    for written in &file.written_in {
        let holder = args.iter().position(|arg| {
            let arg = arg.as_bytes().as_ptr_range();
            let value = written.as_bytes().as_ptr_range();
            arg.start <= value.start && value.end <= arg.end
        });
        let Some(word) = holder.and_then(|at| words.get(at)) else {
            return false;
        };
        if word.has_expansion || word.glob {
            return false;
        }
        if word.tilde {
            let is_the_path = file.written_in.len() == 1
                && word.text.len() == written.len()
                && file.path == *written;
            if !is_the_path {
                return false;
            }
            tilde = true;
        }
    }
    resolver.opens_only_plain_files(&file.path, tilde, file.directory_ok)
}

/// The directory a `cd` moves to, when its words say it plainly: one literal word (after an
/// optional `--`) that is not an option, `-` or an expansion, with whether it starts with an
/// unquoted `~`. `cd` alone goes to `HOME`, which is not followed.
fn cd_target(operands: &[Word]) -> Option<(&str, bool)> {
    let operands = match operands {
        [end, rest @ ..] if end.text == "--" => rest,
        all => all,
    };
    match operands {
        [dir] if !dir.has_expansion && !dir.glob && !dir.text.starts_with('-') => {
            Some((&dir.text, dir.tilde))
        }
        _ => None,
    }
}

fn target_index(target: &Target) -> Option<usize> {
    match target {
        Target::Program { index, .. } | Target::Opaque { index, .. } => Some(*index),
        Target::ShellScript { script, .. } => Some(*script),
        Target::InlineShell { payload, .. } => Some(payload.saturating_sub(1)),
        Target::Refused(_) => None,
    }
}

/// What allow-always stores for a resolved path: a pattern matching that path alone, or
/// nothing when no stored pattern can say it exactly.
fn path_string(path: &Path) -> Option<String> {
    literal_pattern(path)
}
