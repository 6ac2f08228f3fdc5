//! Interpreters and carriers running code given on the command line (`python -c`, `awk '…'`,
//! `find -exec`, `xargs cmd`): allowlisting the interpreter must not approve arbitrary code.

pub(crate) mod grammars;
mod interpreters;
mod sed_script;

use std::path::{Path, PathBuf};

use self::interpreters::Found;
use std::collections::HashSet;
use std::sync::LazyLock;

use super::carriers::carriers;
use super::options::{Grammar, Role, is_stdin_path};
use super::unwrap::basename;

/// Programs that, given no arguments, read a program or commands from stdin and run them
/// (`ed` and `dc` run `!command`, `sqlite3` runs `.system`); all of them also run code named
/// or written on their command line. Python is matched by [`is_python`].
const STDIN_PROGRAM_RUNNERS: &[&str] = &[
    "r",
    "rscript",
    "node",
    "nodejs",
    "deno",
    "ruby",
    "irb",
    "perl",
    "php",
    "julia",
    "osascript",
    "gdb",
    "lldb",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "sqlite3",
    "ed",
    "ex",
    "dc",
];

/// The other programs that run code or other programs given to them.
const OTHER_CODE_RUNNERS: &[&str] = &[
    "racket",
    "guile",
    "sbcl",
    "jrunscript",
    "ghc",
    "ghci",
    "runghc",
    "clojure",
    "clj",
    "bb",
    "octave",
    "gnuplot",
    "qjs",
    "psql",
    "mysql",
    "mariadb",
    "vi",
    "view",
    "m4",
    "bun",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "gsed",
    "find",
    "gfind",
    "xargs",
    "gxargs",
    "make",
    "gmake",
    "env",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "ash",
    "busybox",
    "toybox",
    "pwsh",
    "powershell",
    "elixir",
    "erl",
    "groovy",
    "scala",
    "jshell",
    "vim",
    "nvim",
    "emacs",
];

/// Whether a program runs code or other programs given to it, so an allowlist entry for it is
/// never derived by allow-always and it never qualifies as a safe bin.
pub(crate) fn is_interpreter_like(name: &str) -> bool {
    static NAMES: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
        STDIN_PROGRAM_RUNNERS
            .iter()
            .chain(OTHER_CODE_RUNNERS)
            .copied()
            .chain(carriers().map(|carrier| carrier.program))
            .collect()
    });
    let lower;
    let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
        lower = name.to_ascii_lowercase();
        lower.as_str()
    } else {
        name
    };
    is_python(name) || NAMES.contains(name)
}

/// Whether `program`, given no arguments, runs what arrives on its stdin. With stdin from a
/// pipe, whatever the previous command prints runs. At the head of a command a bare `python3`
/// reads what its runner gives it (`system.run` gives nothing) and is judged as before.
pub(crate) fn reads_program_from_stdin(program: &str) -> bool {
    let name = basename(program).to_ascii_lowercase();
    is_python(&name) || STDIN_PROGRAM_RUNNERS.contains(&name.as_str())
}

fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|prefix| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// Whether this program, called with these arguments, runs code written on the command line
/// (or fed on stdin, where another command of the same line writes it). Returns a short
/// description of the construct for the reason.
pub(crate) fn inline_code(program: &str, args: &[String]) -> Option<&'static str> {
    let name = basename(program).to_ascii_lowercase();
    if let Some(interpreter) = interpreters::find(&name) {
        return match interpreters::read(interpreter, args) {
            Found::Code => Some(INLINE),
            Found::Stdin => Some(INTERACTIVE),
            Found::Unknown => Some(UNKNOWN_OPTION),
            Found::Files => None,
        };
    }
    match name.as_str() {
        n if is_python(n) => interpreter_code(&PYTHON_RULES, args),
        "node" | "nodejs" => interpreter_code(&NODE_RULES, args),
        "ruby" => interpreter_code(&RUBY_RULES, args),
        "perl" => interpreter_code(&PERL_RULES, args),
        "php" => interpreter_code(&PHP_RULES, args),
        "awk" | "gawk" | "mawk" | "nawk" => awk_code(args),
        "sed" | "gsed" => sed_code(args),
        "xargs" | "gxargs" => xargs_code(args),
        "make" | "gmake" => make_code(args),
        "find" | "gfind" => {
            let runs = args
                .iter()
                .any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"));
            runs.then_some("a command for every file it finds")
        }
        _ => None,
    }
}

/// Code that only `strictInlineEval` treats as inline: a makefile named on the command line
/// (`make -f FILE`) is program text the agent chose, as `--eval` text is, while the default
/// makefile is the project's.
pub(crate) fn strict_only_code(program: &str, args: &[String]) -> Option<&'static str> {
    let name = basename(program).to_ascii_lowercase();
    let makefile = matches!(name.as_str(), "make" | "gmake")
        && grammars::MAKE
            .parse(args)
            .is_ok_and(|parsed| parsed.has(Role::ProgramFile));
    makefile.then_some("a makefile named on the command line (`-f`)")
}

/// A file a code runner reads program text from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProgramFile<'a> {
    /// The path as the tool opens it, relative to the directory the command runs in.
    pub(crate) path: String,
    /// The arguments the path is built from (a script operand; `-C` directories), whose words
    /// say whether the shell changes them first. Empty for a default name (`Makefile`).
    pub(crate) written_in: Vec<&'a str>,
    /// A directory is a program too: node runs its package, python its `__main__.py`.
    pub(crate) directory_ok: bool,
}

/// The files a code runner reads program text from: an interpreter's script operand (with the
/// extensions node tries), `-f`-style values and module paths, awk's `-f` and `-i` files,
/// sed's `-f` scripts, make's `-f` makefiles or its default ones, each below the directory a
/// `-C` moves to. The caller makes sure each is a plain file on disk: a name that reaches stdin
/// through a symlink or the working directory (`stdin` run from `/dev`) is code another
/// command writes, which the text alone cannot show. Arguments [`inline_code`] refuses
/// (unknown options) give nothing here.
pub(crate) fn program_files<'a>(program: &str, args: &'a [String]) -> Vec<ProgramFile<'a>> {
    let name = basename(program).to_ascii_lowercase();
    let (grammars, rules): (&[&Grammar<'static>], Option<&Rules>) = match name.as_str() {
        n if is_python(n) => (&[&grammars::PYTHON], Some(&PYTHON_RULES)),
        "node" | "nodejs" => (&[&grammars::NODE], Some(&NODE_RULES)),
        "ruby" => (&[&grammars::RUBY], Some(&RUBY_RULES)),
        "perl" => (&[&grammars::PERL], Some(&PERL_RULES)),
        "php" => (&[&grammars::PHP], Some(&PHP_RULES)),
        "awk" | "gawk" | "mawk" | "nawk" => (&[&grammars::AWK], None),
        "sed" | "gsed" => (&[&grammars::SED_GNU, &grammars::SED_BSD], None),
        "make" | "gmake" => (&[&grammars::MAKE], None),
        _ => return Vec::new(),
    };
    let is_node = matches!(name.as_str(), "node" | "nodejs");
    let is_make = matches!(name.as_str(), "make" | "gmake");
    // ruby and make run from their `-C` directory, so their files are read below it.
    let moves_to_dir = matches!(name.as_str(), "ruby") || is_make;
    let module_paths = rules.is_none_or(|rules| rules.module_paths);
    let mut files: Vec<ProgramFile<'a>> = Vec::new();
    let mut add = |file: ProgramFile<'a>| {
        if !files.contains(&file) {
            files.push(file);
        }
    };
    for grammar in grammars {
        let Ok(parsed) = grammar.parse(args) else {
            continue;
        };
        let dirs: Vec<&'a str> = parsed
            .options
            .iter()
            .filter(|(opt, _)| moves_to_dir && opt.short == Some('C'))
            .filter_map(|(_, value)| *value)
            .collect();
        let under_dirs = |path: &str| {
            dirs.iter()
                .rev()
                .fold(PathBuf::from(path), |path, dir| Path::new(dir).join(path))
                .to_string_lossy()
                .into_owned()
        };
        let file = |path: &str, written: &'a str, directory_ok: bool| {
            let mut written_in = vec![written];
            written_in.extend(&dirs);
            ProgramFile {
                path: under_dirs(path),
                written_in,
                directory_ok,
            }
        };
        for (opt, value) in &parsed.options {
            let Some(value) = *value else { continue };
            let is_file = match opt.role {
                Role::ProgramFile => true,
                Role::Module => module_paths && value.contains('/'),
                _ => false,
            };
            if is_file {
                add(file(value, value, false));
            }
        }
        if is_make && !parsed.has(Role::ProgramFile) {
            for default in ["GNUmakefile", "makefile", "Makefile"] {
                add(ProgramFile {
                    path: under_dirs(default),
                    written_in: dirs.clone(),
                    directory_ok: false,
                });
            }
        }
        if let Some(rules) = rules
            && !parsed.has(Role::ProgramFile)
            && !parsed.has(Role::RunsModule)
            && let Some(program) = parsed.operands.first().copied()
            && !rules.stdin_operands.contains(&program)
        {
            add(file(program, program, true));
            if is_node {
                for extension in NODE_EXTENSIONS {
                    add(file(&format!("{program}{extension}"), program, false));
                }
            }
        }
    }
    files
}

/// What node appends to a program name it cannot find as written.
const NODE_EXTENSIONS: &[&str] = &[".js", ".cjs", ".mjs", ".json", ".node"];

const INLINE: &str = "inline interpreter code";
const FROM_STDIN: &str = "a program read from stdin or a path that may lead there (`/dev/…`, \
     `/proc/…`, `..`), which another command can write";
const INTERACTIVE: &str =
    "code typed in later (an interactive mode, or a debugger on stdin or on a network port)";
const UNKNOWN_OPTION: &str =
    "an option Gatehouse does not know, which may carry code or take the program's place";
const MODULE_CODE: &str = "code through a module or setting option";
const RUNNING_MODULE: &str = "a module (`-m`) not known to keep to files; it may run its arguments";

/// An interpreter whose program is its first operand, and what its loaded modules may be.
struct Rules {
    grammar: &'static Grammar<'static>,
    /// Whether a module option's value only names code on disk.
    module_ok: fn(&str) -> bool,
    /// First operands that are not a script but a built-in reading stdin (`node inspect`).
    stdin_operands: &'static [&'static str],
    /// A module value with a `/` is a file path (`node -r ./hook.js`, `ruby -r ./lib`).
    module_paths: bool,
}

const PYTHON_RULES: Rules = Rules {
    grammar: &grammars::PYTHON,
    module_ok: python_module_ok,
    stdin_operands: &[],
    module_paths: false,
};
const PERL_RULES: Rules = Rules {
    grammar: &grammars::PERL,
    module_ok: perl_module_ok,
    stdin_operands: &[],
    module_paths: false,
};
const NODE_RULES: Rules = Rules {
    grammar: &grammars::NODE,
    module_ok: node_module_ok,
    stdin_operands: &["inspect"],
    module_paths: true,
};
const RUBY_RULES: Rules = Rules {
    grammar: &grammars::RUBY,
    module_ok: |_| true,
    stdin_operands: &[],
    module_paths: true,
};
const PHP_RULES: Rules = Rules {
    grammar: &grammars::PHP,
    module_ok: php_ini_ok,
    stdin_operands: &[],
    module_paths: false,
};

/// Options first: code, stdin modes and modules; then the program, which is a file operand,
/// or stdin when options were given but no operand. A bare interpreter (no options it knows)
/// is not flagged here: its stdin is a pipe only inside a pipeline, which this function cannot
/// see (an argv request runs with stdin closed), and the conformance cases allow a bare
/// allowlisted `python3`.
fn interpreter_code(rules: &Rules, args: &[String]) -> Option<&'static str> {
    let Ok(parsed) = rules.grammar.parse(args) else {
        return Some(UNKNOWN_OPTION);
    };
    for (opt, value) in &parsed.options {
        let value = value.unwrap_or_default();
        match opt.role {
            Role::Code => return Some(INLINE),
            Role::Stdin => return Some(INTERACTIVE),
            Role::ProgramFile | Role::Module | Role::RunsModule if is_stdin_path(value) => {
                return Some(FROM_STDIN);
            }
            Role::Module if !(rules.module_ok)(value) => return Some(MODULE_CODE),
            Role::Settings => return Some(MODULE_CODE),
            Role::RunsModule if !python_runnable_module(value) => return Some(RUNNING_MODULE),
            _ => {}
        }
    }
    if parsed.has(Role::RunsModule) || parsed.has(Role::ProgramFile) {
        return None;
    }
    match parsed.operands.first() {
        Some(program) if is_stdin_path(program) || rules.stdin_operands.contains(program) => {
            Some(FROM_STDIN)
        }
        Some(_) => None,
        // A `--version`-style option, or one that finds its own files (`node --test`), needs no
        // program (and nothing known at all is judged as bare: see above).
        None if parsed.options.is_empty()
            || parsed.options.iter().any(|(opt, _)| opt.role == Role::Info) =>
        {
            None
        }
        None => Some(FROM_STDIN),
    }
}

/// Modules `python -m` may run: tools that work on files and have no option that evaluates
/// code or imports a module named on the command line (or in a config file it names). Others
/// may (`timeit`, `pdb -c`, `code`, `unittest` calling a named function), and so do some file
/// tools: `pylint --init-hook=CODE` and `--load-plugins`, `pytest -p MODULE` and `--pdbcls`,
/// `mypy --python-executable` and config `plugins`, flake8's `local-plugins` from
/// `--append-config`, isort's plugin options; they need a person or an exact approval. A local
/// module is as good as a script only when approved as one.
const PYTHON_RUNNABLE_MODULES: &[&str] = &[
    "venv",
    "json.tool",
    "py_compile",
    "compileall",
    "tabnanny",
    "black",
    "pyflakes",
    "ruff",
];

fn python_runnable_module(module: &str) -> bool {
    PYTHON_RUNNABLE_MODULES.contains(&module)
}

/// A warning filter (`-W action:message:category:module:lineno`) imports the module its
/// category names (`ignore::this.X` runs `this`, `antigravity` opens a browser) before the
/// program starts; a category without a dot is a builtin one and imports nothing.
fn python_module_ok(filter: &str) -> bool {
    filter
        .split(':')
        .nth(2)
        .is_none_or(|category| !category.contains('.'))
}

/// `-MFoo=a,b` becomes `use Foo split(/,/, q\0a,b\0)`, but anything else after the name is
/// pasted into code (`-M'5;system"id"'`), so only a module name and plain import words pass.
fn perl_module_ok(value: &str) -> bool {
    let (name, imports) = value.split_once('=').unwrap_or((value, ""));
    let name = name.strip_prefix('-').unwrap_or(name);
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    name_ok
        && imports
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:,.-+/@%".contains(c))
}

/// A module node loads by name or path; a URL (`data:text/javascript,…`) is code itself.
fn node_module_ok(value: &str) -> bool {
    !value.contains(':')
}

/// php ini entries that include code before or after the script (`auto_prepend_file`), or let
/// an include read a `data:` URL.
fn php_ini_ok(value: &str) -> bool {
    let key = value.split('=').next().unwrap_or(value).trim();
    !["auto_prepend_file", "auto_append_file", "allow_url_include"]
        .iter()
        .any(|denied| key.eq_ignore_ascii_case(denied))
}

/// awk: `-e`/`--source` anywhere is code; otherwise the program is a `-f` file or, without
/// one, the first operand.
fn awk_code(args: &[String]) -> Option<&'static str> {
    let Ok(parsed) = grammars::AWK.parse(args) else {
        return Some(UNKNOWN_OPTION);
    };
    for (opt, value) in &parsed.options {
        let value = value.unwrap_or_default();
        match opt.role {
            Role::Code => return Some(AWK_INLINE),
            Role::ProgramFile | Role::Module if is_stdin_path(value) => return Some(FROM_STDIN),
            // mawk's `-W version` and friends print and exit; other `-W` words are options
            // (gawk: `-W source=…`) that are not looked into.
            Role::Plain if opt.short == Some('W') && !AWK_INFO_WORDS.contains(&value) => {
                return Some(UNKNOWN_OPTION);
            }
            _ => {}
        }
    }
    let inline = !parsed.has(Role::ProgramFile) && !parsed.operands.is_empty();
    inline.then_some(AWK_INLINE)
}

/// The `-W` words with which mawk and gawk print something and exit, reading no program file;
/// every other `-W` word is an option (mawk's `-W exec FILE`, gawk's `-W file=…`).
pub(crate) const AWK_INFO_WORDS: &[&str] = &["version", "v", "usage", "help", "copyright"];

const AWK_INLINE: &str = "an inline awk program";
const SED_EXECUTES: &str = "a sed script that executes or writes";

/// sed scripts given inline (by `-e` or as the first operand) that use `e`, `w`/`W` or the
/// `e`/`w` flags of `s` (see [`sed_script`]). Scripts from `-f` files are not inspected here,
/// but a `-f` reading stdin is code another command writes. Both GNU (options anywhere) and
/// BSD (options before the first operand) readings are checked, and on a BSD host also the one
/// where `-i` takes the next word as its suffix.
fn sed_code(args: &[String]) -> Option<&'static str> {
    sed_code_on(args, BSD_SED_HOST)
}

/// Whether this host's `sed` is BSD's, whose `-i` always takes a suffix: the next word when
/// none is attached (`sed -i '' 'w ~/.profile' f` writes a file there, while GNU sed reads
/// `''` as the script).
const BSD_SED_HOST: bool = cfg!(any(
    target_os = "macos",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
));

fn sed_code_on(args: &[String], bsd_host: bool) -> Option<&'static str> {
    let suffix_dropped = bsd_host.then(|| without_in_place_suffix(args)).flatten();
    let mut readings = vec![(&grammars::SED_GNU, args), (&grammars::SED_BSD, args)];
    if let Some(dropped) = &suffix_dropped {
        readings.push((&grammars::SED_BSD, dropped.as_slice()));
    }
    let mut scripts: Vec<String> = Vec::new();
    for (grammar, args) in readings {
        let Ok(parsed) = grammar.parse(args) else {
            return Some(UNKNOWN_OPTION);
        };
        // sed joins its `-e` pieces with newlines into one script, so a piece can end inside a
        // command the next one finishes (`-e 'a\' -e TEXT`).
        let mut pieces: Vec<&str> = Vec::new();
        for (opt, value) in &parsed.options {
            let value = value.unwrap_or_default();
            match opt.role {
                Role::Code => pieces.push(value),
                Role::ProgramFile if is_stdin_path(value) => return Some(FROM_STDIN),
                // GNU reads a line length; BSD's `-l` takes no value, making this word the
                // script, so only a number is unambiguous.
                Role::Plain
                    if opt.short == Some('l')
                        && (value.is_empty() || !value.chars().all(|c| c.is_ascii_digit())) =>
                {
                    return Some(UNKNOWN_OPTION);
                }
                _ => {}
            }
        }
        if !pieces.is_empty() {
            scripts.push(pieces.join("\n"));
        } else if !parsed.has(Role::ProgramFile) {
            scripts.extend(parsed.operands.first().map(|script| (*script).to_owned()));
        }
    }
    scripts
        .iter()
        .any(|script| sed_script::executes(script))
        .then_some(SED_EXECUTES)
}

/// BSD sed's reading of a bare `-i`: the word after it is the suffix, so the arguments without
/// that word parse as BSD sed sees them. `None` without a bare `-i` before the operands.
fn without_in_place_suffix(args: &[String]) -> Option<Vec<String>> {
    let parsed = grammars::SED_BSD.parse(args).ok()?;
    let bare_in_place = parsed
        .options
        .iter()
        .any(|(opt, value)| opt.short == Some('i') && value.is_none_or(str::is_empty));
    if !bare_in_place || parsed.operands.is_empty() {
        return None;
    }
    // BSD sed stops at the first operand, so the operands are the tail of the arguments.
    let at = args.len() - parsed.operands.len();
    let mut rest = args.to_vec();
    rest.remove(at);
    Some(rest)
}

/// xargs runs a command built from its input: the one its operands name or, without any,
/// `echo` looked up on `PATH`, which is never judged here (an `echo` the agent placed on
/// `PATH` would run), so both are refused.
fn xargs_code(args: &[String]) -> Option<&'static str> {
    match grammars::XARGS.parse(args) {
        Ok(parsed) if parsed.operands.is_empty() => {
            Some("`echo`, looked up on PATH and not judged, with its input as arguments")
        }
        Ok(_) => Some("a command built from its input"),
        Err(_) => Some(UNKNOWN_OPTION),
    }
}

/// make runs the makefiles it reads (trusted when make is allowlisted), but `--eval`/`-E`
/// text is a makefile written on the command line (`$(shell …)` runs at once), a `-f` file
/// that is stdin (or a path that may lead there) is one another command writes, and a
/// variable override (`SHELL=…`, `CC=…`, `.SHELLFLAGS=…`) changes what every recipe runs.
/// `-C dir` with `-f` reads the file relative to `dir`, so the pair fails closed.
fn make_code(args: &[String]) -> Option<&'static str> {
    let Ok(parsed) = grammars::MAKE.parse(args) else {
        return Some(UNKNOWN_OPTION);
    };
    let changes_dir = parsed.options.iter().any(|(opt, _)| opt.short == Some('C'));
    for (opt, value) in &parsed.options {
        let value = value.unwrap_or_default();
        match opt.role {
            Role::Code => return Some("makefile text given with `--eval`"),
            Role::ProgramFile if changes_dir || is_stdin_path(value) => return Some(FROM_STDIN),
            _ => {}
        }
    }
    parsed
        .operands
        .iter()
        .any(|operand| operand.contains('='))
        .then_some("a variable override, which changes what recipes run")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(argv: &[&str]) -> bool {
        let args: Vec<String> = argv[1..].iter().map(|a| (*a).to_owned()).collect();
        inline_code(argv[0], &args).is_some()
    }

    /// A program that runs what its stdin brings runs code: it is never a safe bin, and
    /// allow-always never stores it.
    #[test]
    fn every_stdin_program_runner_is_interpreter_like() {
        for name in STDIN_PROGRAM_RUNNERS.iter().chain(&["python3", "pypy"]) {
            assert!(reads_program_from_stdin(name), "{name}");
            assert!(is_interpreter_like(name), "{name}");
        }
    }

    /// On a BSD host `sed -i '' SCRIPT` edits in place with an empty suffix, so SCRIPT is the
    /// script; on a GNU host `''` is the script and SCRIPT a file.
    #[test]
    fn reads_the_word_after_a_bare_in_place_as_bsd_sed_does_on_bsd_hosts() {
        let args =
            |words: &[&str]| -> Vec<String> { words.iter().map(|w| (*w).to_owned()).collect() };
        let writes = args(&["-i", "", "w /tmp/x", "f"]);
        assert!(sed_code_on(&writes, true).is_some());
        assert!(sed_code_on(&writes, false).is_none());
        assert!(sed_code_on(&args(&["-n", "-i", "", "1e id", "f"]), true).is_some());
        assert!(sed_code_on(&args(&["-i", "", "s/a/b/", "f"]), true).is_none());
        // An attached suffix, or GNU's `-i SCRIPT FILE`, leaves the words as they are.
        assert!(sed_code_on(&args(&["-i.bak", "s/a/b/", "f"]), true).is_none());
        assert!(sed_code_on(&args(&["-i", "s/a/b/", "f"]), false).is_none());
    }

    #[test]
    fn finds_inline_code() {
        assert!(hit(&["python3", "-c", "print(1)"]));
        assert!(hit(&["python3", "-bc", "x"]));
        assert!(hit(&["python3.13", "-cprint(1)"]));
        assert!(hit(&["/usr/bin/node", "--eval=1"]));
        assert!(hit(&["bun", "-pconsole.log(1)"]));
        assert!(hit(&["perl", "-ne", "print"]));
        assert!(hit(&["php", "-B", "x"]));
        assert!(hit(&["awk", "BEGIN{}"]));
        assert!(hit(&["sed", "-es/.*/id/e", "/dev/null"]));
        assert!(hit(&["sed", "1w /tmp/x"]));
        assert!(hit(&["find", ".", "-exec", "id", ";"]));
        assert!(hit(&["xargs", "id"]));
        assert!(hit(&["gdb", "-ex", "shell id"]));
        assert!(hit(&["python3", "-W", "ignore", "-c", "x"]));
        assert!(hit(&["perl", "-I", ".", "-e", "x"]));
        assert!(hit(&["sed", "-l", "5", "1e id"]));
        assert!(hit(&["xargs", "--replace", "id"]));
        assert!(hit(&["awk", "-f", "x.awk", "-e", "BEGIN{}"]));
        assert!(hit(&["sed", "-f", "-", "x"]));
        assert!(hit(&["perl", "-w"]), "options but no program: stdin");
        assert!(hit(&["osascript", "-l", "JavaScript", "-e", "x"]));
        assert!(hit(&["bun", "--preload", "x", "-e", "x"]));
        assert!(hit(&["xargs"]), "runs `echo` from PATH");
        assert!(hit(&["make", "--eval=$(shell id)"]));
        assert!(hit(&["make", "test", "-E", "x"]));
        assert!(hit(&["make", "-kE$(shell id)"]));
        assert!(hit(&["make", "--ev", "x"]));
        assert!(hit(&["make", "-f", "-"]));
        assert!(hit(&["make", "--makefile=/dev/stdin"]));
        assert!(hit(&["make", "test", "SHELL=/tmp/x"]));
        assert!(hit(&["make", "--bogus"]));
        assert!(hit(&["python3", "-m", "pylint", "--init-hook=x"]));
        assert!(hit(&["python3", "-m", "pytest", "-p", "x"]));
    }

    #[test]
    fn ignores_code_from_files_and_lookalikes() {
        assert!(!hit(&["python3", "-Wc", "x"]));
        assert!(!hit(&["python3", "script.py", "-c"]));
        assert!(!hit(&["node", "--evalish=1"]));
        assert!(!hit(&["perl", "-Me", "x"]));
        assert!(!hit(&["php", "-F", "f.php"]));
        assert!(!hit(&["awk", "-F,", "-f", "x.awk", "d.csv"]));
        assert!(!hit(&["sed", "-f", "x.sed", "in"]));
        assert!(!hit(&["sed", "-n", "s/a/b/p"]));
        assert!(!hit(&["make", "test"]));
        assert!(!hit(&["make", "-j8", "-C", "sub", "test"]));
        assert!(!hit(&["make", "-f", "build.mk", "all"]));
        assert!(
            !hit(&["python3"]),
            "bare: stdin is a pipe only inside a pipeline"
        );
        assert!(!hit(&["python3", "--version"]));
        assert!(!hit(&["python3", "-m", "ruff", "check", "."]));
        assert!(!hit(&["osascript", "-l", "JavaScript", "x.js"]));
    }
}
