//! The approval binding: what exactly a person approved, pinned so that a different command cannot
//! run under the same approval.
//!
//! A binding is a set of sha256 digests, one per bound field: the canonical working directory
//! (symlinks resolved), the exact argv, the env overrides (keys and values), the agent id, the
//! session key, the canonical path of the resolved executable and, in `script`, the program
//! text read from files: the script when the program is one or an interpreter runs a file (its
//! contents' digest), or the files a tool reads its program from — sed's and awk's `-f` scripts,
//! the makefiles GNU make reads (see `binding/program_files.rs`; a digest over the list of their
//! canonical paths and contents, for makefiles and their remake sources which file they are). It is computed when the approval is requested and recomputed
//! right before execution; [`Binding::mismatch`] names the first field that differs, and a
//! difference is a denial (`approval binding mismatch: <field>`).
//!
//! Only digests are kept, so a stored binding never holds env values (which may be secrets).
//! Files the program opens as it runs are not bound: modules a script imports, files a makefile
//! `include`s or its recipes run, data files.
//!
//! Script identification fails closed: when a program file cannot be named exactly — several
//! operands that are files, inline code mixed with a file, a program read from stdin, an
//! unreadable file, an option that is not understood, code loaded from a search path —
//! [`Binding::compute`] refuses with a [`BindingError`] and no approval-backed run may be
//! minted.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::exec::parse::Word;
use crate::exec::unwrap::{Target, Unwrapped, unwrap};

mod program_files;
mod shell;

use program_files::Tool;

/// A sha256 digest; fields are compared as digests so the stored form never holds the values.
pub type Digest = [u8; 32];

/// Everything that is bound, as the caller knows it at request time and again right before
/// execution.
#[derive(Debug, Clone, Copy)]
pub struct BindingInput<'a> {
    /// The working directory as requested; it is canonicalized, so a swapped symlink shows.
    pub cwd: &'a Path,
    /// The exact argv that will be executed, program name first.
    pub argv: &'a [String],
    /// Environment overrides passed to the command (not the gateway's own environment).
    pub env: &'a BTreeMap<String, String>,
    /// The agent that asked.
    pub agent_id: &'a str,
    /// The session the request came from.
    pub session_key: &'a str,
    /// The executable that `argv[0]` resolved to; it is canonicalized and pinned.
    pub resolved_executable: &'a Path,
}

/// One bound field, named as in the denial reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingField {
    /// The canonical working directory.
    Cwd,
    /// The exact argument vector.
    Argv,
    /// The env overrides, keys and values.
    Env,
    /// The requesting agent.
    AgentId,
    /// The requesting session.
    SessionKey,
    /// The canonical path of the resolved executable.
    Executable,
    /// The program text read from files: the script the program runs, or the files a tool reads
    /// its program from (`sed -f`, `awk -f`, make's makefiles).
    Script,
}

/// The digests of every bound field, in a form that can be stored and compared later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    cwd: Digest,
    argv: Digest,
    env: Digest,
    agent_id: Digest,
    session_key: Digest,
    executable: Digest,
    script: Option<Digest>,
}

/// Why a binding could not be computed (at request time: no approval may be minted) or decoded.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// There is no program to bind.
    #[error("cannot bind an empty argv")]
    EmptyArgv,
    /// The working directory does not exist or cannot be resolved.
    #[error("cannot resolve working directory {path}: {source}")]
    Cwd {
        /// The directory as requested.
        path: PathBuf,
        /// Why canonicalization failed.
        source: io::Error,
    },
    /// The resolved executable does not exist or cannot be resolved.
    #[error("cannot resolve executable {path}: {source}")]
    Executable {
        /// The executable as resolved by the caller.
        path: PathBuf,
        /// Why canonicalization failed.
        source: io::Error,
    },
    /// The program file an interpreter runs cannot be identified exactly.
    #[error("cannot identify the script {program} runs: {reason}")]
    ScriptNotIdentified {
        /// The interpreter's name, as invoked.
        program: String,
        /// Which ambiguity was found.
        reason: ScriptAmbiguity,
    },
    /// The script file was identified but could not be read to hash it.
    #[error("cannot read script {path}: {source}")]
    ScriptUnreadable {
        /// The script file.
        path: PathBuf,
        /// Why reading failed.
        source: io::Error,
    },
    /// A stored binding is not in the format [`Binding::encode`] writes.
    #[error("malformed stored binding: {reason}")]
    Malformed {
        /// What was wrong with it.
        reason: &'static str,
    },
}

/// The ways an interpreter's program file can fail to be identified exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptAmbiguity {
    /// More than one operand names an existing file, so any of them could be code.
    SeveralFiles(usize),
    /// Inline code (`-c`, `-e`, …) is given together with an operand naming a file.
    InlineCodeWithFile,
    /// No program is named, so the interpreter would read it from stdin, which cannot be bound.
    ProgramFromStdin,
    /// The only program operand does not name a readable regular file.
    NotAFile(String),
    /// An `env` wrapper option that this module does not understand.
    UnknownEnvOption(String),
    /// A flag loads code from a search path (`python -m`, `node -r`), which cannot be pinned.
    ModuleFromSearchPath(String),
    /// A dispatch wrapper (`nice`, `timeout`, …) whose target the policy cannot name.
    UnclearWrapper(String),
    /// An option of a tool that reads its program from files (sed, awk, make) that is not
    /// understood, so which words name program files cannot be told.
    UnknownOption(String),
    /// A variable that changes which files a tool reads code from (`MAKEFILES`, `VPATH`,
    /// `AWKPATH`), set in the request's env, by a wrapper, or on make's command line.
    FilesFromSetting(String),
    /// make finds no makefile in the directory it runs in, and would try to build one with its
    /// built-in rules (copying `Makefile.sh`, checking out `Makefile,v`).
    NoMakefile(String),
    /// A make other than GNU make, whose makefile lookup is not the one bound here.
    NotGnuMake(String),
    /// An option (`-B`/`--always-make`) that makes make remake its makefiles from files whose
    /// contents are not bound, even when nothing changed.
    RemakesMakefiles(String),
    /// A make `-f` or `-C` value starting with `~`, which make expands to a home directory.
    HomeDirectory(String),
    /// A make command-line definition whose variable name is not a plain identifier (make
    /// expands `V$()PATH=x` to `VPATH`), so which variable it sets cannot be told.
    UnclearDefinition(String),
    /// A makefile named with a suffix of make's built-in suffix rules, which could remake it
    /// from a file of another name (`rules.s` from `rules.S`).
    MakefileSuffix(String),
    /// An option of sed, awk or make given a next word that starts with `-` as its value, which
    /// another implementation of the tool reads as an option (`sed -l -f x.sed` on BSD sed).
    OptionAsValue(String),
    /// argv[0] names sed, awk or make (or an interpreter) but the executable it resolved to is
    /// another of those (`./awk` a link to `python3`), so its arguments cannot be read by name.
    OtherProgram(String),
}

/// The denial raised when a recomputed binding differs from the approved one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("approval binding mismatch: {field}")]
pub struct BindingMismatch {
    /// The first differing field, in declaration order of [`BindingField`].
    pub field: BindingField,
}

/// An interpreter whose program is a file operand.
struct Interpreter {
    /// File name without trailing version digits (`python3.12` → `python`).
    name: &'static str,
    /// Flags that pass the program inline, so argv already binds it.
    inline: &'static [&'static str],
    /// Flags that load code from a search path, which no file hash can pin.
    modules: &'static [&'static str],
}

const fn interpreter(
    name: &'static str,
    inline: &'static [&'static str],
    modules: &'static [&'static str],
) -> Interpreter {
    Interpreter {
        name,
        inline,
        modules,
    }
}

const NODE_INLINE: &[&str] = &["-e", "--eval", "-p", "--print"];
const NODE_MODULES: &[&str] = &["-r", "--require", "--import", "--loader"];

/// The interpreters this module recognises; any other program binds only its executable.
const INTERPRETERS: &[Interpreter] = &[
    interpreter("sh", &["-c"], &[]),
    interpreter("bash", &["-c"], &[]),
    interpreter("dash", &["-c"], &[]),
    interpreter("zsh", &["-c"], &[]),
    interpreter("ksh", &["-c"], &[]),
    interpreter("mksh", &["-c"], &[]),
    interpreter("fish", &["-c", "--command"], &[]),
    interpreter("python", &["-c"], &["-m"]),
    interpreter("pypy", &["-c"], &["-m"]),
    interpreter("node", NODE_INLINE, NODE_MODULES),
    interpreter("nodejs", NODE_INLINE, NODE_MODULES),
    interpreter("bun", NODE_INLINE, NODE_MODULES),
    interpreter("ruby", &["-e"], &["-r"]),
    interpreter("perl", &["-e", "-E"], &["-M", "-m"]),
    interpreter("php", &["-r"], &[]),
    interpreter("lua", &["-e"], &["-l"]),
    interpreter("tclsh", &[], &[]),
    interpreter("Rscript", &["-e"], &[]),
];

/// Arguments that make an interpreter print something and exit without running a program.
const INFORMATIONAL: &[&str] = &["--version", "-V", "--help", "-h"];

impl Binding {
    /// Computes the binding, refusing when any bound file cannot be identified exactly.
    pub fn compute(input: &BindingInput<'_>) -> Result<Binding, BindingError> {
        Binding::compute_with_files(input).map(|(binding, _)| binding)
    }

    /// The files [`Binding::compute`] reads to bind `input`, canonical: the executable, then
    /// the files it reads its program from (the script, `sed -f`'s and `awk -f`'s files, the
    /// makefiles and what they could be remade from). A runner that starts the run where it
    /// may see other files than the host's (a sandbox, whose home is its own) checks that it
    /// sees each of these at the same path.
    pub fn program_files(input: &BindingInput<'_>) -> Result<Vec<PathBuf>, BindingError> {
        Binding::compute_with_files(input).map(|(_, files)| files)
    }

    /// The binding and the files it read.
    fn compute_with_files(
        input: &BindingInput<'_>,
    ) -> Result<(Binding, Vec<PathBuf>), BindingError> {
        let program = input.argv.first().ok_or(BindingError::EmptyArgv)?;
        let cwd = canonical_cwd(input)?;
        let executable = fs::canonicalize(input.resolved_executable).map_err(|source| {
            BindingError::Executable {
                path: input.resolved_executable.to_path_buf(),
                source,
            }
        })?;
        let launch = Launch {
            cwd: &cwd,
            env: input.env,
            assigned: Vec::new(),
        };
        let source = script_operand(program, &executable, &input.argv[1..], &launch)?;
        let script = match &source {
            Some(Script::File(path)) => Some(hash_file(path)?),
            Some(Script::Program(bound)) => Some(bound.digest()),
            None => None,
        };
        let mut files = vec![executable.clone()];
        if let Some(source) = &source {
            files.extend(source.paths().map(Path::to_path_buf));
        }
        // A script run directly is bound by its contents already (an edit names `script`).
        let identity = if matches!(&source, Some(Script::File(path)) if *path == executable) {
            Vec::new()
        } else {
            file_identity(&executable).map_err(|source| BindingError::Executable {
                path: input.resolved_executable.to_path_buf(),
                source,
            })?
        };
        let binding = Binding {
            cwd: digest_fields([cwd.as_os_str().as_encoded_bytes()]),
            argv: digest_fields(input.argv.iter().map(String::as_bytes)),
            env: digest_fields(
                input
                    .env
                    .iter()
                    .flat_map(|(key, value)| [key.as_bytes(), value.as_bytes()]),
            ),
            agent_id: digest_fields([input.agent_id.as_bytes()]),
            session_key: digest_fields([input.session_key.as_bytes()]),
            executable: digest_fields([
                executable.as_os_str().as_encoded_bytes(),
                identity.as_slice(),
            ]),
            script,
        };
        files.dedup();
        Ok((binding, files))
    }

    /// Recomputes the binding from what is about to run and names the first field that differs.
    /// A field that can no longer be computed (the cwd vanished, the script became unreadable or
    /// ambiguous) counts as differing.
    pub fn verify(&self, input: &BindingInput<'_>) -> Result<(), BindingMismatch> {
        self.verify_against(Binding::compute(input))
    }

    /// Compares with a binding recomputed right before the run; a failed recomputation counts
    /// as a mismatch of the field it concerns.
    fn verify_against(&self, now: Result<Binding, BindingError>) -> Result<(), BindingMismatch> {
        match now {
            Ok(now) => match self.mismatch(&now) {
                Some(field) => Err(BindingMismatch { field }),
                None => Ok(()),
            },
            Err(error) => Err(BindingMismatch {
                field: error.field(),
            }),
        }
    }

    /// The first field, in [`BindingField`] order, whose digest differs between two bindings.
    pub fn mismatch(&self, other: &Binding) -> Option<BindingField> {
        let pairs = [
            (BindingField::Cwd, self.cwd == other.cwd),
            (BindingField::Argv, self.argv == other.argv),
            (BindingField::Env, self.env == other.env),
            (BindingField::AgentId, self.agent_id == other.agent_id),
            (
                BindingField::SessionKey,
                self.session_key == other.session_key,
            ),
            (
                BindingField::Executable,
                self.executable == other.executable,
            ),
            (BindingField::Script, self.script == other.script),
        ];
        pairs
            .into_iter()
            .find_map(|(field, same)| (!same).then_some(field))
    }

    /// Whether a script file's contents are part of the binding.
    pub fn binds_script(&self) -> bool {
        self.script.is_some()
    }

    /// The stable stored form: canonical JSON with a lower-case hex digest per field
    /// (`{"version":1,"cwd":"…",…,"script":null}`), so a stored approval can name the field
    /// that differs.
    pub fn encode(&self) -> String {
        let mut out = String::from("{\"version\":1");
        for (field, digest) in self.fields() {
            out.push_str(",\"");
            out.push_str(field.as_str());
            out.push_str("\":");
            match digest {
                Some(digest) => {
                    out.push('"');
                    push_hex(&mut out, digest);
                    out.push('"');
                }
                None => out.push_str("null"),
            }
        }
        out.push('}');
        out
    }

    /// The sha256 (hex) of [`Binding::encode`]'s output: one value to compare or index.
    pub fn hash_hex(&self) -> String {
        let mut out = String::with_capacity(64);
        push_hex(&mut out, &Sha256::digest(self.encode().as_bytes()).into());
        out
    }

    /// Parses exactly what [`Binding::encode`] writes; anything else (other spacing, order or
    /// version) is refused, never guessed at.
    pub fn decode(text: &str) -> Result<Binding, BindingError> {
        let mut rest = text
            .strip_prefix("{\"version\":1")
            .ok_or(malformed("unknown version"))?;
        let mut next = |field: BindingField| -> Result<Option<Digest>, BindingError> {
            let after_name = rest
                .strip_prefix(",\"")
                .and_then(|r| r.strip_prefix(field.as_str()))
                .and_then(|r| r.strip_prefix("\":"))
                .ok_or(malformed("fields out of order"))?;
            if let Some(after) = after_name.strip_prefix("null") {
                rest = after;
                return Ok(None);
            }
            let (value, after) = after_name
                .strip_prefix('"')
                .and_then(|r| r.split_once('"'))
                .ok_or(malformed("digest is not a string"))?;
            rest = after;
            parse_hex(value).map(Some)
        };
        let required = |digest: Option<Digest>| digest.ok_or(malformed("required field absent"));
        let binding = Binding {
            cwd: required(next(BindingField::Cwd)?)?,
            argv: required(next(BindingField::Argv)?)?,
            env: required(next(BindingField::Env)?)?,
            agent_id: required(next(BindingField::AgentId)?)?,
            session_key: required(next(BindingField::SessionKey)?)?,
            executable: required(next(BindingField::Executable)?)?,
            script: next(BindingField::Script)?,
        };
        if rest != "}" {
            return Err(malformed("trailing data"));
        }
        Ok(binding)
    }

    fn fields(&self) -> [(BindingField, Option<&Digest>); 7] {
        [
            (BindingField::Cwd, Some(&self.cwd)),
            (BindingField::Argv, Some(&self.argv)),
            (BindingField::Env, Some(&self.env)),
            (BindingField::AgentId, Some(&self.agent_id)),
            (BindingField::SessionKey, Some(&self.session_key)),
            (BindingField::Executable, Some(&self.executable)),
            (BindingField::Script, self.script.as_ref()),
        ]
    }
}

impl BindingField {
    /// The name used in denial reasons and in the stored form (camelCase, as on the wire).
    pub fn as_str(self) -> &'static str {
        match self {
            BindingField::Cwd => "cwd",
            BindingField::Argv => "argv",
            BindingField::Env => "env",
            BindingField::AgentId => "agentId",
            BindingField::SessionKey => "sessionKey",
            BindingField::Executable => "executable",
            BindingField::Script => "script",
        }
    }
}

impl fmt::Display for BindingField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl BindingError {
    /// The bound field this failure concerns, so a failed recomputation is reported as a
    /// mismatch of that field.
    pub fn field(&self) -> BindingField {
        match self {
            BindingError::EmptyArgv => BindingField::Argv,
            BindingError::Cwd { .. } => BindingField::Cwd,
            BindingError::Executable { .. } => BindingField::Executable,
            BindingError::ScriptNotIdentified { .. }
            | BindingError::ScriptUnreadable { .. }
            | BindingError::Malformed { .. } => BindingField::Script,
        }
    }
}

impl fmt::Display for ScriptAmbiguity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptAmbiguity::SeveralFiles(count) => {
                write!(f, "{count} operands name files, expected exactly one")
            }
            ScriptAmbiguity::InlineCodeWithFile => {
                f.write_str("inline code is mixed with a file operand")
            }
            ScriptAmbiguity::ProgramFromStdin => {
                f.write_str("the program would be read from stdin")
            }
            ScriptAmbiguity::NotAFile(operand) => {
                write!(f, "operand {operand:?} is not a regular file")
            }
            ScriptAmbiguity::UnknownEnvOption(option) => {
                write!(f, "env option {option:?} is not understood")
            }
            ScriptAmbiguity::ModuleFromSearchPath(flag) => {
                write!(f, "{flag:?} loads code from a search path")
            }
            ScriptAmbiguity::UnclearWrapper(wrapper) => {
                write!(f, "what {wrapper:?} runs cannot be named")
            }
            ScriptAmbiguity::UnknownOption(option) => {
                write!(f, "option {option:?} is not understood")
            }
            ScriptAmbiguity::FilesFromSetting(setting) => {
                write!(f, "{setting:?} changes which files it reads code from")
            }
            ScriptAmbiguity::NoMakefile(dir) => write!(
                f,
                "no makefile in {dir:?}; make would try to build one with its built-in rules"
            ),
            ScriptAmbiguity::RemakesMakefiles(option) => write!(
                f,
                "{option:?} makes make remake its makefiles from files whose contents are not \
                 bound"
            ),
            ScriptAmbiguity::HomeDirectory(option) => write!(
                f,
                "{option:?} starts with `~`, which make expands to a home directory"
            ),
            ScriptAmbiguity::UnclearDefinition(word) => write!(
                f,
                "definition {word:?} does not name a plain variable, so what it sets cannot be told"
            ),
            ScriptAmbiguity::MakefileSuffix(name) => write!(
                f,
                "makefile {name:?} ends in a suffix make's built-in rules could remake it from \
                 another file by"
            ),
            ScriptAmbiguity::OptionAsValue(option) => write!(
                f,
                "{option:?} takes a word starting with `-` as its value, which other versions \
                 read as an option"
            ),
            ScriptAmbiguity::OtherProgram(executable) => write!(
                f,
                "it runs {executable:?}, a different program than its name says"
            ),
            ScriptAmbiguity::NotGnuMake(program) => write!(
                f,
                "{program:?} is not GNU make, the only make whose makefiles can be named"
            ),
        }
    }
}

/// The canonical working directory of a run: symlinks resolved, so a swapped one shows.
fn canonical_cwd(input: &BindingInput<'_>) -> Result<PathBuf, BindingError> {
    fs::canonicalize(input.cwd).map_err(|source| BindingError::Cwd {
        path: input.cwd.to_path_buf(),
        source,
    })
}

/// Where the program runs and the variables it is given, as far as they decide which files a
/// tool reads its program from.
struct Launch<'a> {
    /// The canonical working directory.
    cwd: &'a Path,
    /// The request's env overrides.
    env: &'a BTreeMap<String, String>,
    /// `NAME=VALUE` words of the wrappers in front of the program (`env MAKEFILES=x make`),
    /// which set variables the request's env does not show.
    assigned: Vec<(&'a str, &'a str)>,
}

impl Launch<'_> {
    /// The value the program sees for `name`, from a wrapper's assignment or the request's env.
    fn sets(&self, name: &str) -> Option<&str> {
        self.assigned
            .iter()
            .rev()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| *value)
            .or_else(|| self.env.get(name).map(String::as_str))
    }

    /// Every variable name the program is given here: wrappers' assignments, then the
    /// request's env.
    fn names(&self) -> impl Iterator<Item = &str> {
        let assigned = self.assigned.iter().map(|(key, _)| *key);
        assigned.chain(self.env.keys().map(String::as_str))
    }

    /// The same launch, with these wrapper words' assignments added.
    fn assigning<'b>(&'b self, words: &'b [String]) -> Launch<'b> {
        let mut assigned: Vec<(&'b str, &'b str)> = self.assigned.clone();
        assigned.extend(
            words
                .iter()
                .filter(|word| !word.starts_with('-'))
                .filter_map(|word| word.split_once('=')),
        );
        Launch {
            cwd: self.cwd,
            env: self.env,
            assigned,
        }
    }
}

/// What the program reads its code from, when that is files.
enum Script {
    /// One file, bound by its contents alone: a `#!` script run directly, or the file an
    /// interpreter runs.
    File(PathBuf),
    /// The files a tool reads its program from (sed, awk, make), hashed as one list.
    Program(program_files::Bound),
}

impl Script {
    /// The files read, in order.
    fn paths(&self) -> Box<dyn Iterator<Item = &Path> + '_> {
        match self {
            Script::File(path) => Box::new(std::iter::once(path.as_path())),
            Script::Program(bound) => Box::new(bound.paths()),
        }
    }
}

/// What a program name denotes for the binding.
enum Kind {
    /// An interpreter whose program is a file operand.
    Interpreter(&'static Interpreter),
    /// A tool that reads its program from files named by options, or found by name.
    Tool(Tool),
    /// `busybox` or `toybox`, whose first argument names the applet that runs.
    Multiplexer,
}

/// Multiplexers whose first argument is the applet; the applet's files are bound.
const MULTIPLEXERS: &[&str] = &["busybox", "toybox"];

fn kind_of(program: &str) -> Option<Kind> {
    if let Some(interpreter) = find_interpreter(program) {
        return Some(Kind::Interpreter(interpreter));
    }
    let name = file_name(program)?;
    if MULTIPLEXERS.contains(&name) {
        return Some(Kind::Multiplexer);
    }
    Tool::named(name).map(Kind::Tool)
}

/// Names the files whose contents must be bound, if any.
///
/// The executable itself is bound when it is a script (`#!`). An interpreter binds exactly one
/// file operand; a tool the files its program is read from. `env` prefixes, dispatch wrappers
/// and multiplexers are looked through, so `env python x.py` binds `x.py` and `nice make` the
/// makefile.
fn script_operand(
    program: &str,
    executable: &Path,
    args: &[String],
    launch: &Launch<'_>,
) -> Result<Option<Script>, BindingError> {
    if file_name(program) == Some("env") {
        return env_target(args, launch);
    }
    if let Some(wrapped) = through_wrappers(program, args, launch) {
        return wrapped;
    }
    same_program(program, executable)?;
    // By the executable's name (`./py` a link to python) only what does not dispatch on argv[0]:
    // busybox run as `echo` runs its `echo` applet, whose arguments name no applet.
    let known = kind_of(program).or_else(|| {
        executable
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(kind_of)
            .filter(|kind| !matches!(kind, Kind::Multiplexer))
    });
    match known {
        Some(kind) => run_by(kind, program, args, launch),
        None if starts_with_shebang(executable) => Ok(Some(Script::File(executable.to_path_buf()))),
        None => Ok(None),
    }
}

/// Refuses when argv[0]'s name and the executable's file name denote different programs and
/// one is sed, awk or make (`./awk` a link to python3, `./make` to bmake): its arguments would
/// be read by the wrong grammar. Names of one family agree (`awk` running `mawk`), and a
/// multiplexer (busybox) runs the applet argv[0] names.
fn same_program(program: &str, executable: &Path) -> Result<(), BindingError> {
    let runs = executable.file_name().and_then(|name| name.to_str());
    let differ = match (kind_of(program), runs.and_then(kind_of)) {
        (Some(Kind::Tool(named)), Some(Kind::Tool(actual))) => named != actual,
        (Some(Kind::Tool(_)), Some(Kind::Interpreter(_)))
        | (Some(Kind::Interpreter(_) | Kind::Multiplexer), Some(Kind::Tool(_))) => true,
        _ => false,
    };
    if !differ {
        return Ok(());
    }
    Err(BindingError::ScriptNotIdentified {
        program: program.to_owned(),
        reason: ScriptAmbiguity::OtherProgram(runs.unwrap_or_default().to_owned()),
    })
}

/// The files a program of this kind reads its code from.
fn run_by(
    kind: Kind,
    program: &str,
    args: &[String],
    launch: &Launch<'_>,
) -> Result<Option<Script>, BindingError> {
    match kind {
        Kind::Interpreter(interpreter) => {
            interpreter_program(program, interpreter, args, launch.cwd)
                .map(|file| file.map(Script::File))
        }
        Kind::Tool(tool) => {
            program_files::bind(tool, program, args, launch).map(|list| list.map(Script::Program))
        }
        Kind::Multiplexer => match args.split_first() {
            // A nested multiplexer is refused rather than followed without end.
            Some((applet, rest)) if !applet.starts_with('-') => match kind_of(applet) {
                Some(Kind::Multiplexer) => Err(BindingError::ScriptNotIdentified {
                    program: program.to_owned(),
                    reason: ScriptAmbiguity::UnclearWrapper(program.to_owned()),
                }),
                Some(kind) => run_by(kind, applet, rest, launch),
                None => Ok(None),
            },
            // `busybox --list` and the like run no applet.
            _ => Ok(None),
        },
    }
}

/// Looks through `env [-i] [NAME=VALUE…] program args…` to the program it runs.
fn env_target(args: &[String], launch: &Launch<'_>) -> Result<Option<Script>, BindingError> {
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        if first == "-i" || first == "-" || first == "--ignore-environment" {
            rest = tail;
        } else if first.starts_with('-') {
            return Err(BindingError::ScriptNotIdentified {
                program: "env".to_owned(),
                reason: ScriptAmbiguity::UnknownEnvOption(first.clone()),
            });
        } else if first.contains('=') {
            rest = tail;
        } else {
            break;
        }
    }
    let Some((program, tail)) = rest.split_first() else {
        return Ok(None);
    };
    let assignments = args.get(..args.len() - rest.len()).unwrap_or_default();
    wrapped_program(program, tail, &launch.assigning(assignments))
}

/// The script of a program a wrapper starts: an interpreter's operand, a tool's program files,
/// or the program itself when it is a `#!` script in the working directory.
fn wrapped_program(
    program: &str,
    args: &[String],
    launch: &Launch<'_>,
) -> Result<Option<Script>, BindingError> {
    match kind_of(program) {
        Some(kind) => run_by(kind, program, args, launch),
        None => {
            let candidate = launch.cwd.join(program);
            Ok(starts_with_shebang(&candidate).then_some(Script::File(candidate)))
        }
    }
}

/// Looks through the dispatch wrappers the policy looks through (`nice`, `timeout 5`, `nohup`,
/// `stdbuf -oL`, …, `env` among them further in), so `nice bash deploy.sh` binds `deploy.sh`
/// as `bash deploy.sh` does. `None` when `program` is no such wrapper; a wrapper whose target
/// the policy cannot name refuses the binding.
fn through_wrappers(
    program: &str,
    args: &[String],
    launch: &Launch<'_>,
) -> Option<Result<Option<Script>, BindingError>> {
    let argv: Vec<&str> = std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect();
    let words = Word::direct_argv(&argv);
    let Unwrapped { target, through } = unwrap(&words);
    if through.is_empty() {
        return None;
    }
    let word = |index: usize| argv.get(index).copied().unwrap_or_default();
    let rest = |index: usize| {
        args.get(index..)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    };
    // The wrappers' words before the program: `env`'s assignments among them.
    let before = |index: usize| args.get(..index.saturating_sub(1)).unwrap_or_default();
    Some(match target {
        Target::Program { index, .. } => {
            wrapped_program(word(index), &rest(index), &launch.assigning(before(index)))
        }
        Target::ShellScript { shell, .. } | Target::InlineShell { shell, .. } => {
            wrapped_program(word(shell), &rest(shell), &launch.assigning(before(shell)))
        }
        Target::Opaque { .. } | Target::Refused(_) => Err(BindingError::ScriptNotIdentified {
            program: program.to_owned(),
            reason: ScriptAmbiguity::UnclearWrapper(program.to_owned()),
        }),
    })
}

/// Picks the interpreter's program file: exactly one operand (or `--opt=value`) naming an
/// existing file, no inline-code flag beside it and no module loaded from a search path.
fn interpreter_program(
    program: &str,
    interpreter: &Interpreter,
    args: &[String],
    cwd: &Path,
) -> Result<Option<PathBuf>, BindingError> {
    let refuse = |reason| BindingError::ScriptNotIdentified {
        program: program.to_owned(),
        reason,
    };
    let mut inline = false;
    let mut operands = Vec::new();
    let mut files = Vec::new();
    let mut options_done = false;
    for arg in args {
        let operand = if options_done || !arg.starts_with('-') || arg == "-" {
            operands.push(arg);
            Some(arg.as_str())
        } else if arg == "--" {
            options_done = true;
            None
        } else {
            if interpreter.modules.iter().any(|flag| is_flag(arg, flag)) {
                return Err(refuse(ScriptAmbiguity::ModuleFromSearchPath(arg.clone())));
            }
            inline |= interpreter.inline.iter().any(|flag| is_flag(arg, flag));
            arg.split_once('=').map(|(_, value)| value)
        };
        if let Some(candidate) = operand.filter(|value| !value.is_empty()) {
            let path = cwd.join(candidate);
            if path.exists() {
                files.push(path);
            }
        }
    }
    if inline {
        return match files.len() {
            0 => Ok(None),
            _ => Err(refuse(ScriptAmbiguity::InlineCodeWithFile)),
        };
    }
    if files.len() > 1 {
        return Err(refuse(ScriptAmbiguity::SeveralFiles(files.len())));
    }
    match (operands.first(), files.pop()) {
        (_, Some(file)) if file.is_file() => Ok(Some(file)),
        (_, Some(file)) => Err(refuse(ScriptAmbiguity::NotAFile(
            file.to_string_lossy().into_owned(),
        ))),
        (Some(first), None) => Err(refuse(ScriptAmbiguity::NotAFile((*first).clone()))),
        (None, None) if only_informational(args) => Ok(None),
        (None, None) => Err(refuse(ScriptAmbiguity::ProgramFromStdin)),
    }
}

/// Whether `arg` is `flag`, `--flag=value`, or a short flag with its value attached (`-mpip`).
fn is_flag(arg: &str, flag: &str) -> bool {
    if arg == flag {
        return true;
    }
    match flag.strip_prefix("--") {
        Some(_) => arg
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('=')),
        None => flag.len() == 2 && arg.starts_with(flag) && !arg.starts_with("--"),
    }
}

fn only_informational(args: &[String]) -> bool {
    !args.is_empty() && args.iter().all(|arg| INFORMATIONAL.contains(&arg.as_str()))
}

/// The interpreter a program name denotes, ignoring trailing version digits, dots and dashes.
fn find_interpreter(program: &str) -> Option<&'static Interpreter> {
    let name = file_name(program)?;
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    INTERPRETERS.iter().find(|known| known.name == stem)
}

fn file_name(program: &str) -> Option<&str> {
    Path::new(program)
        .file_name()
        .and_then(|name| name.to_str())
}

fn starts_with_shebang(path: &Path) -> bool {
    let mut head = [0u8; 2];
    fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok()
        && head == *b"#!"
}

fn hash_file(path: &Path) -> Result<Digest, BindingError> {
    let unreadable = |source| BindingError::ScriptUnreadable {
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::File::open(path).map_err(unreadable)?;
    let mut hasher = Sha256::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = file.read(&mut buffer).map_err(unreadable)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().into())
}

/// Which file the executable is, cheaply: device, inode, size, and modification and status
/// change times. A binary replaced at the same path (a new inode, or new contents, which move
/// the times; the status change time cannot be set back) no longer matches, without hashing a
/// program of many megabytes on every run.
fn file_identity(path: &Path) -> io::Result<Vec<u8>> {
    fs::metadata(path).map(|meta| identity_of(&meta))
}

/// [`file_identity`] of metadata already read.
fn identity_of(meta: &fs::Metadata) -> Vec<u8> {
    use std::os::unix::fs::MetadataExt as _;
    let fields = [
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime().cast_unsigned(),
        meta.mtime_nsec().cast_unsigned(),
        meta.ctime().cast_unsigned(),
        meta.ctime_nsec().cast_unsigned(),
    ];
    fields
        .iter()
        .flat_map(|field| field.to_be_bytes())
        .collect()
}

/// Hashes a sequence of byte strings, each length-prefixed so `["a b"]` and `["a", "b"]` differ.
fn digest_fields<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Digest {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

fn push_hex(out: &mut String, digest: &Digest) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
}

fn parse_hex(text: &str) -> Result<Digest, BindingError> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return Err(malformed("digest is not 64 hex digits"));
    }
    let mut digest = [0u8; 32];
    for (slot, pair) in digest.iter_mut().zip(bytes.chunks_exact(2)) {
        let high = hex_value(pair[0])?;
        let low = hex_value(pair[1])?;
        *slot = (high << 4) | low;
    }
    Ok(digest)
}

fn hex_value(byte: u8) -> Result<u8, BindingError> {
    match byte {
        b'0'..=b'9' => Ok(byte - b'0'),
        b'a'..=b'f' => Ok(byte - b'a' + 10),
        _ => Err(malformed("digest is not lower-case hex")),
    }
}

fn malformed(reason: &'static str) -> BindingError {
    BindingError::Malformed { reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Binding {
        Binding {
            cwd: [1; 32],
            argv: [2; 32],
            env: [3; 32],
            agent_id: [4; 32],
            session_key: [5; 32],
            executable: [6; 32],
            script: Some([7; 32]),
        }
    }

    #[test]
    fn encoded_binding_round_trips() {
        let with_script = sample();
        assert_eq!(Binding::decode(&with_script.encode()).unwrap(), with_script);
        let without = Binding {
            script: None,
            ..sample()
        };
        assert!(without.encode().ends_with(",\"script\":null}"));
        assert_eq!(Binding::decode(&without.encode()).unwrap(), without);
    }

    #[test]
    fn hash_covers_every_field() {
        let without_script = Binding {
            script: None,
            ..sample()
        };
        assert_eq!(sample().hash_hex().len(), 64);
        assert_ne!(sample().hash_hex(), without_script.hash_hex());
    }

    #[test]
    fn denies_malformed_stored_bindings() {
        let good = sample().encode();
        for bad in [
            String::new(),
            good.replace(":1,", ":2,"),
            good.replace("\"argv\"", "\"env\""),
            good.replace("\"0101", "\"010g"),
            good.replace("\"0101", "\"01"),
            good.replace("\"0101", "\"0A01"),
            good.replace(
                "\"0404040404040404040404040404040404040404040404040404040404040404\"",
                "null",
            ),
            good.replace(",", ", "),
            format!("{good} "),
            good.rsplit_once(',').unwrap().0.to_owned() + "}",
        ] {
            assert!(
                matches!(Binding::decode(&bad), Err(BindingError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn names_the_first_differing_field() {
        let approved = sample();
        assert_eq!(approved.mismatch(&sample()), None);
        let now = Binding {
            env: [9; 32],
            script: None,
            ..sample()
        };
        assert_eq!(approved.mismatch(&now), Some(BindingField::Env));
        assert_eq!(
            BindingMismatch {
                field: BindingField::SessionKey
            }
            .to_string(),
            "approval binding mismatch: sessionKey"
        );
    }

    #[test]
    fn argv_framing_separates_joined_words() {
        assert_ne!(
            digest_fields(["a b".as_bytes()]),
            digest_fields(["a".as_bytes(), "b".as_bytes()])
        );
        assert_ne!(
            digest_fields(["ab".as_bytes(), "".as_bytes()]),
            digest_fields(["a".as_bytes(), "b".as_bytes()])
        );
    }

    #[test]
    fn recognises_versioned_interpreters() {
        assert!(find_interpreter("/usr/bin/python3.12").is_some());
        assert!(find_interpreter("bash").is_some());
        assert!(find_interpreter("node20").is_some());
        assert!(find_interpreter("git").is_none());
        assert!(find_interpreter("shasum").is_none());
    }

    #[test]
    fn matches_flags_in_their_attached_forms() {
        assert!(is_flag("-m", "-m"));
        assert!(is_flag("-mpip", "-m"));
        assert!(is_flag("--require=./hook.js", "--require"));
        assert!(!is_flag("--requirement", "--require"));
        assert!(!is_flag("--eval", "-e"));
    }
}
