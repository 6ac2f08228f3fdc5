//! The interpreters beyond python, node, ruby, perl, php, awk, sed and make (which have rules of
//! their own in the parent module): how each takes code on its command line, as data.
//!
//! Each is read either with a getopt grammar ([`Reader::Getopt`], from `grammars`) or, for tools
//! whose options are whole words (`-eval`, `-cp`, `-Command`), with a [`WordOptions`] list. An
//! option a table does not know fails closed as inline code, since it might take the program's
//! place, unless the tool itself refuses every option it does not know
//! ([`WordOptions::unknown_rejected`]: then nothing runs).

use super::grammars;
use crate::exec::options::{Grammar, Role, is_stdin_path};

/// How one interpreter's command line is read.
pub(super) enum Reader {
    /// getopt-style clusters and long options.
    Getopt(&'static Grammar<'static>),
    /// Whole option words.
    Words(&'static WordOptions),
}

/// An interpreter and how its inline code is found.
pub(super) struct Interpreter {
    /// Lower-cased names it is installed under.
    pub(super) names: &'static [&'static str],
    pub(super) reader: Reader,
    /// First operands that are a built-in code runner, not a script (`deno eval`).
    pub(super) code_subcommands: &'static [&'static str],
    /// Given options but no program, it reads its program from stdin.
    pub(super) stdin_without_program: bool,
    /// Operands from this one on are code (`sqlite3 DB SQL…`, `powershell COMMAND`).
    pub(super) code_operands_from: Option<usize>,
}

/// Options given as whole words, each listed with what it does.
pub(super) struct WordOptions {
    /// Their value (the next word, or after `=`) is code, or they run code named by it.
    pub(super) code: &'static [&'static str],
    /// Code typed in later: a REPL, a debugger, a listening port.
    pub(super) stdin: &'static [&'static str],
    /// Their value is a file of code or of settings that can load code; read from stdin when it
    /// is `-`.
    pub(super) files: &'static [&'static str],
    /// Take the next word (or `=value`) as a plain value.
    pub(super) valued: &'static [&'static str],
    /// Take no value.
    pub(super) flags: &'static [&'static str],
    /// Prefixes with an attached plain value (`-Dname=value`, `-Xmx1g`).
    pub(super) attached: &'static [&'static str],
    /// Prefixes whose attached value is code (vim's `+cmd`).
    pub(super) code_prefixes: &'static [&'static str],
    /// Option names match case-insensitively and by any unambiguous prefix (PowerShell).
    pub(super) case_insensitive: bool,
    /// The tool refuses any option it does not know and runs nothing.
    pub(super) unknown_rejected: bool,
}

/// What a table interpreter's command line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// Code written on the command line.
    Code,
    /// Code typed in later, or from stdin.
    Stdin,
    /// An option the table does not know.
    Unknown,
    /// Nothing but a program file (or nothing at all).
    Files,
}

/// The interpreter of this (lower-cased) name, if it is in the table.
pub(super) fn find(name: &str) -> Option<&'static Interpreter> {
    INTERPRETERS
        .iter()
        .find(|interpreter| interpreter.names.contains(&name))
}

/// Reads `args` as `interpreter` does.
pub(super) fn read(interpreter: &Interpreter, args: &[String]) -> Found {
    let (found, operands, options) = match interpreter.reader {
        Reader::Getopt(grammar) => match grammar.parse(args) {
            Err(_) => return Found::Unknown,
            Ok(parsed) => {
                let mut found = Found::Files;
                for (opt, value) in &parsed.options {
                    match opt.role {
                        Role::Code | Role::Settings => return Found::Code,
                        Role::Stdin => found = Found::Stdin,
                        Role::ProgramFile | Role::Module if value.is_some_and(is_stdin_path) => {
                            found = Found::Stdin;
                        }
                        _ => {}
                    }
                }
                let info = parsed.has(Role::Info) || parsed.has(Role::ProgramFile);
                let options = !parsed.options.is_empty() && !info;
                (found, parsed.operands, options)
            }
        },
        Reader::Words(words) => read_words(words, args),
    };
    if found != Found::Files {
        return found;
    }
    if interpreter
        .code_operands_from
        .is_some_and(|from| operands.len() > from)
    {
        return Found::Code;
    }
    match operands.first() {
        Some(first) if interpreter.code_subcommands.contains(first) => Found::Code,
        Some(first) if is_stdin_path(first) => Found::Stdin,
        None if options && interpreter.stdin_without_program => Found::Stdin,
        _ => Found::Files,
    }
}

/// The options of a whole-word tool, up to its first operand; returns what they do, the
/// operands, and whether options without a program were given.
fn read_words<'a>(words: &WordOptions, args: &'a [String]) -> (Found, Vec<&'a str>, bool) {
    let matches = |list: &[&str], name: &str| {
        list.iter().any(|known| {
            if words.case_insensitive {
                let bare = |s: &str| s.trim_start_matches(['-', '/']).to_ascii_lowercase();
                let (known, name) = (bare(known), bare(name));
                !name.is_empty() && known.starts_with(&name)
            } else {
                *known == name
            }
        })
    };
    let mut found = Found::Files;
    let mut info = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            return (found, args[i..].iter().map(String::as_str).collect(), false);
        }
        let is_option = arg.starts_with('-') && arg != "-" || arg.starts_with('+');
        if !is_option {
            let operands = args[i - 1..].iter().map(String::as_str).collect();
            return (found, operands, false);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (arg.as_str(), None),
        };
        // A code option wins over any other reading of an abbreviation.
        let code_prefixed = words.code_prefixes.iter().any(|p| arg.starts_with(p));
        if code_prefixed || matches(words.code, name) {
            return (Found::Code, Vec::new(), false);
        }
        if matches(words.stdin, name) {
            found = Found::Stdin;
        } else if matches(words.files, name) {
            let value = inline.or_else(|| {
                i += 1;
                args.get(i - 1).map(String::as_str)
            });
            if value.is_none_or(is_stdin_path) {
                found = Found::Stdin;
            }
            info = true;
        } else if matches(words.valued, name) {
            if inline.is_none() {
                i += 1;
            }
        } else if matches(words.flags, name) {
            info |= name.contains("version") || name.contains("help");
        } else if words
            .attached
            .iter()
            .any(|prefix| arg.len() > prefix.len() && arg.starts_with(prefix))
        {
        } else if words.unknown_rejected {
            return (Found::Files, Vec::new(), false);
        } else {
            return (Found::Unknown, Vec::new(), false);
        }
    }
    (found, Vec::new(), !args.is_empty() && !info)
}

const GDB: WordOptions = WordOptions {
    code: &[
        "-ex",
        "--ex",
        "-iex",
        "--iex",
        "-eval-command",
        "--eval-command",
        "-init-eval-command",
        "--init-eval-command",
        "-x",
        "--x",
        "-command",
        "--command",
        "-ix",
        "--ix",
        "-init-command",
        "--init-command",
        "-p",
        "--p",
        "-pid",
        "--pid",
        "-o",
        "--one-line",
        "-O",
        "--one-line-before-file",
        "-k",
        "--one-line-on-crash",
        "-s",
        "--source",
        "-S",
        "--source-before-file",
        "-K",
        "--source-on-crash",
        "-n",
        "--attach-name",
        "--attach-pid",
    ],
    stdin: &[],
    files: &[],
    valued: &[
        "-cd",
        "--cd",
        "-d",
        "--directory",
        "-se",
        "--se",
        "-core",
        "--core",
        "-c",
    ],
    flags: &[
        "-q",
        "-quiet",
        "--quiet",
        "-silent",
        "--silent",
        "-batch",
        "--batch",
        "-b",
        "-nx",
        "--nx",
        "-nh",
        "--nh",
        "-x",
        "--no-lldbinit",
        "-args",
        "--args",
        "-version",
        "--version",
        "-v",
        "-help",
        "--help",
        "-h",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const PWSH: WordOptions = WordOptions {
    code: &[
        "-command",
        "-c",
        "-encodedcommand",
        "-e",
        "-ec",
        "-commandwithargs",
        "-cwa",
    ],
    stdin: &["-interactive", "-noexit"],
    files: &["-file", "-configurationfile", "-settingsfile"],
    valued: &[
        "-executionpolicy",
        "-ep",
        "-inputformat",
        "-outputformat",
        "-workingdirectory",
        "-wd",
        "-custompipename",
        "-windowstyle",
        "-configurationname",
    ],
    flags: &[
        "-nologo",
        "-noninteractive",
        "-noprofile",
        "-noprofileloadtime",
        "-login",
        "-mta",
        "-sta",
        "-version",
        "-help",
        "-?",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: true,
    unknown_rejected: false,
};

const JRUNSCRIPT: WordOptions = WordOptions {
    code: &["-e"],
    stdin: &[],
    files: &["-f"],
    valued: &["-l", "-cp", "-classpath", "-encoding"],
    flags: &["-q", "-?", "-help"],
    attached: &["-D", "-J"],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const GROOVY: WordOptions = WordOptions {
    code: &["-e", "-l", "--configscript", "-b", "--basescript"],
    stdin: &[],
    files: &[],
    valued: &[
        "-c",
        "--encoding",
        "-cp",
        "-classpath",
        "--classpath",
        "--disableopt",
        "-pa",
    ],
    flags: &[
        "-a",
        "--autosplit",
        "-d",
        "--debug",
        "-i",
        "-n",
        "-p",
        "-v",
        "--version",
        "-h",
        "--help",
        "--compile-static",
        "--type-checked",
        "-indy",
        "--indy",
        "--parameters",
    ],
    attached: &["-D"],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

/// Every option of `elixir --help` (1.17). Elixir stops with "Unknown option" at any other, so
/// `elixir -eIO.puts(1)` runs nothing.
const ELIXIR: WordOptions = WordOptions {
    code: &["-e", "--eval", "--rpc-eval", "--erl", "-S", "--pipe-to"],
    stdin: &[],
    files: &["-r", "-pr", "--boot", "--erl-config", "--vm-args"],
    valued: &[
        "-pa",
        "-pz",
        "--app",
        "--cookie",
        "--logger-otp-reports",
        "--logger-sasl-reports",
        "--name",
        "--sname",
        "--boot-var",
    ],
    flags: &[
        "-v",
        "--version",
        "-h",
        "--help",
        "--no-halt",
        "--hidden",
        "--werl",
        "+iex",
        "+elixirc",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: true,
};

const ERL: WordOptions = WordOptions {
    code: &["-eval", "-s", "-run", "-S"],
    stdin: &[],
    files: &["-config", "-boot", "-args_file"],
    valued: &[
        "-sname",
        "-name",
        "-setcookie",
        "-pa",
        "-pz",
        "-mode",
        "-kernel",
        "-stdlib",
        "-sasl",
        "-emu_type",
        "-emu_flavor",
    ],
    flags: &[
        "-noshell",
        "-noinput",
        "-detached",
        "-hidden",
        "-version",
        "-extra",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const GHC: WordOptions = WordOptions {
    code: &["-e", "--interactive", "-ghci-script"],
    stdin: &[],
    files: &[],
    valued: &["-o", "-i", "-package", "-outputdir"],
    flags: &[
        "--version",
        "--help",
        "-v",
        "-O",
        "-O2",
        "-Wall",
        "--make",
        "-c",
        "-dynamic",
        "-threaded",
    ],
    attached: &["-O", "-W", "-f", "-X", "-i", "-l", "-L", "-I"],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const SQLITE3: WordOptions = WordOptions {
    code: &["-cmd", "--cmd", "-init", "--init"],
    stdin: &["-interactive", "--interactive"],
    files: &[],
    valued: &[
        "-separator",
        "--separator",
        "-newline",
        "--newline",
        "-nullvalue",
        "--nullvalue",
        "-vfs",
        "--vfs",
        "-pagecache",
        "-lookaside",
        "-maxsize",
        "-mmap",
    ],
    flags: &[
        "-ascii",
        "-bail",
        "-batch",
        "-box",
        "-column",
        "-csv",
        "-echo",
        "-header",
        "-noheader",
        "-html",
        "-json",
        "-line",
        "-list",
        "-markdown",
        "-quote",
        "-readonly",
        "-safe",
        "-stats",
        "-table",
        "-tabs",
        "-version",
        "-help",
        "-nofollow",
        "-append",
        "-deserialize",
        "-memtrace",
        "-zip",
        "-bom",
        "-A",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const PSQL: WordOptions = WordOptions {
    code: &[
        "-c",
        "--command",
        "-f",
        "--file",
        "-o",
        "--output",
        "-L",
        "--log-file",
    ],
    stdin: &[],
    files: &[],
    valued: &[
        "-d",
        "--dbname",
        "-h",
        "--host",
        "-p",
        "--port",
        "-U",
        "--username",
        "-v",
        "--set",
        "--variable",
        "-F",
        "--field-separator",
        "-R",
        "--record-separator",
        "-P",
        "--pset",
        "-T",
        "--table-attr",
    ],
    flags: &[
        "-A",
        "--no-align",
        "-a",
        "--echo-all",
        "-b",
        "--echo-errors",
        "-e",
        "--echo-queries",
        "-E",
        "--echo-hidden",
        "-n",
        "--no-readline",
        "-q",
        "--quiet",
        "-s",
        "--single-step",
        "-S",
        "--single-line",
        "-t",
        "--tuples-only",
        "-x",
        "--expanded",
        "-X",
        "--no-psqlrc",
        "-1",
        "--single-transaction",
        "-w",
        "--no-password",
        "-W",
        "--password",
        "-V",
        "--version",
        "-l",
        "--list",
        "--csv",
        "-H",
        "--html",
        "-z",
        "-0",
    ],
    attached: &[],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const MYSQL: WordOptions = WordOptions {
    code: &[
        "-e",
        "--execute",
        "--init-command",
        "--pager",
        "--tee",
        "--plugin-dir",
    ],
    stdin: &[],
    files: &["--defaults-file", "--defaults-extra-file"],
    valued: &[
        "-h",
        "--host",
        "-u",
        "--user",
        "-P",
        "--port",
        "-D",
        "--database",
        "-S",
        "--socket",
        "--protocol",
        "--default-character-set",
    ],
    flags: &[
        "-B",
        "--batch",
        "-N",
        "--skip-column-names",
        "-s",
        "--silent",
        "-t",
        "--table",
        "-v",
        "--verbose",
        "-V",
        "--version",
        "--help",
        "-r",
        "--raw",
        "-E",
        "--vertical",
        "-X",
        "--xml",
        "-H",
        "--html",
        "--no-defaults",
        "-A",
        "--no-auto-rehash",
    ],
    attached: &["-p", "--password"],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

const VIM: WordOptions = WordOptions {
    code: &[
        "-c",
        "--cmd",
        "-S",
        "-s",
        "-W",
        "-w",
        "-u",
        "-U",
        "--remote-send",
        "--remote-expr",
    ],
    stdin: &[],
    files: &[],
    valued: &["-i", "-T", "-t", "-q"],
    flags: &[
        "-R",
        "-M",
        "-m",
        "-n",
        "-N",
        "-e",
        "-E",
        "-b",
        "-l",
        "-d",
        "-y",
        "-Z",
        "-x",
        "-p",
        "-o",
        "-O",
        "-h",
        "--help",
        "--version",
        "--clean",
        "--noplugin",
        "-es",
        "-Es",
        "--headless",
    ],
    attached: &[],
    code_prefixes: &["+"],
    case_insensitive: false,
    unknown_rejected: false,
};

const EMACS: WordOptions = WordOptions {
    code: &[
        "--eval",
        "-eval",
        "--execute",
        "-l",
        "--load",
        "-f",
        "--funcall",
        "-batch-eval",
        "--script",
        "-script",
        "--init-directory",
        "-x",
    ],
    stdin: &["--daemon", "--bg-daemon", "--fg-daemon"],
    files: &[],
    valued: &["--chdir", "-d", "--display", "-L", "--directory"],
    flags: &[
        "-Q",
        "--quick",
        "-q",
        "--no-init-file",
        "--no-site-file",
        "-nw",
        "--no-window-system",
        "--batch",
        "-batch",
        "--version",
        "--help",
        "--no-splash",
        "-nsl",
        "--no-site-lisp",
    ],
    attached: &["+"],
    code_prefixes: &[],
    case_insensitive: false,
    unknown_rejected: false,
};

/// The table. Names are as installed (lower-cased: `R` is `r`).
const INTERPRETERS: &[Interpreter] = &[
    Interpreter {
        names: &["deno"],
        reader: Reader::Getopt(&grammars::DENO),
        code_subcommands: &["eval", "repl"],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["rscript"],
        reader: Reader::Getopt(&grammars::RSCRIPT),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["r"],
        reader: Reader::Getopt(&grammars::R),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["lua", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "luajit"],
        reader: Reader::Getopt(&grammars::LUA),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["expect"],
        reader: Reader::Getopt(&grammars::EXPECT),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["tclsh", "wish"],
        reader: Reader::Getopt(&grammars::TCLSH),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["julia"],
        reader: Reader::Getopt(&grammars::JULIA),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["bun"],
        reader: Reader::Getopt(&grammars::BUN),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["osascript"],
        reader: Reader::Getopt(&grammars::OSASCRIPT),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["racket"],
        reader: Reader::Getopt(&grammars::RACKET),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["guile"],
        reader: Reader::Getopt(&grammars::GUILE),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["sbcl"],
        reader: Reader::Getopt(&grammars::SBCL),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &[
            "scala", "clojure", "clj", "bb", "octave", "gnuplot", "dc", "qjs",
        ],
        reader: Reader::Getopt(&grammars::EVAL_E),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["gdb", "lldb"],
        reader: Reader::Words(&GDB),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["pwsh", "pwsh-preview"],
        reader: Reader::Words(&PWSH),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["powershell", "powershell.exe"],
        reader: Reader::Words(&PWSH),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: Some(0),
    },
    Interpreter {
        names: &["jrunscript"],
        reader: Reader::Words(&JRUNSCRIPT),
        code_subcommands: &[],
        stdin_without_program: true,
        code_operands_from: None,
    },
    Interpreter {
        names: &["groovy"],
        reader: Reader::Words(&GROOVY),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["elixir"],
        reader: Reader::Words(&ELIXIR),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["erl"],
        reader: Reader::Words(&ERL),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["ghc", "ghci", "runghc", "runhaskell"],
        reader: Reader::Words(&GHC),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["sqlite3"],
        reader: Reader::Words(&SQLITE3),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: Some(1),
    },
    Interpreter {
        names: &["psql"],
        reader: Reader::Words(&PSQL),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["mysql", "mariadb"],
        reader: Reader::Words(&MYSQL),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["vim", "nvim", "vi", "view", "vimdiff", "ex"],
        reader: Reader::Words(&VIM),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
    Interpreter {
        names: &["emacs"],
        reader: Reader::Words(&EMACS),
        code_subcommands: &[],
        stdin_without_program: false,
        code_operands_from: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn found(argv: &[&str]) -> Found {
        let interpreter = find(argv[0]).unwrap();
        let args: Vec<String> = argv[1..].iter().map(|a| (*a).to_owned()).collect();
        read(interpreter, &args)
    }

    #[test]
    fn finds_inline_code_of_every_listed_interpreter() {
        for argv in [
            &["deno", "eval", "Deno.exit()"][..],
            &["deno", "eval", "-p", "1"],
            &["rscript", "-e", "system('id')"],
            &["r", "-e", "system('id')"],
            &["r", "--no-save", "-e", "x"],
            &["lua", "-e", "os.execute('id')"],
            &["lua", "-eos.exit()"],
            &["luajit", "-e", "x"],
            &["expect", "-c", "spawn id"],
            &["julia", "-e", "run(`id`)"],
            &["julia", "-qe", "x"],
            &["julia", "--eval=x"],
            &["julia", "-E", "x"],
            &["julia", "--machine-file", "hosts"],
            &["bun", "-e", "x"],
            &["bun", "--print", "x"],
            &["bun", "--preload", "./p.ts", "-e", "x"],
            &["osascript", "-e", "do shell script \"id\""],
            &["gdb", "-ex", "shell id"],
            &["gdb", "-batch", "-x", "cmds.gdb"],
            &["lldb", "-o", "platform shell id"],
            &["pwsh", "-c", "id"],
            &["pwsh", "-Command", "id"],
            &["pwsh", "-NoProfile", "-EncodedCommand", "aQBkAA=="],
            &["pwsh", "-enc", "aQBkAA=="],
            &["pwsh", "-Comm", "id"],
            &["jrunscript", "-e", "x"],
            &["groovy", "-e", "x"],
            &["elixir", "-e", "System.cmd(\"id\", [])"],
            &["elixir", "--eval", "x"],
            &["erl", "-noshell", "-eval", "os:cmd(\"id\")"],
            &["erl", "-s", "os", "cmd"],
            &["racket", "-e", "(system \"id\")"],
            &["guile", "-c", "(system \"id\")"],
            &["sbcl", "--eval", "(run-program \"id\" nil)"],
            &["sbcl", "--non-interactive", "--eval", "x"],
            &["ghc", "-e", "x"],
            &["scala", "-e", "x"],
            &["clojure", "-e", "x"],
            &["bb", "-e", "x"],
            &["octave", "--eval", "system('id')"],
            &["gnuplot", "-e", "system('id')"],
            &["dc", "-e", "!id"],
            &["sqlite3", "-cmd", ".shell id", "x.db"],
            &["sqlite3", "x.db", ".shell id"],
            &["powershell", "-NoProfile", "Get-Process"],
            &["psql", "-c", "\\! id"],
            &["mysql", "-e", "system id"],
            &["vim", "-c", "!id"],
            &["vim", "+!id"],
            &["emacs", "--batch", "--eval", "(shell-command \"id\")"],
        ] {
            assert_eq!(found(argv), Found::Code, "{argv:?}");
        }
    }

    #[test]
    fn reads_stdin_modes_as_code_typed_in_later() {
        for argv in [
            &["lua", "-i"][..],
            &["lua", "-"],
            &["lua", "-W"],
            &["julia", "-i"],
            &["pwsh", "-NoExit", "x.ps1"],
            &["expect", "-f", "-"],
            &["osascript", "-l", "JavaScript"],
            &["r", "--no-save"],
        ] {
            assert_eq!(found(argv), Found::Stdin, "{argv:?}");
        }
    }

    #[test]
    fn fails_closed_on_unknown_options_unless_the_tool_refuses_them() {
        for argv in [
            &["lua", "-X", "x"][..],
            &["julia", "--bogus", "x.jl"],
            &["pwsh", "-Bogus", "x"],
            &["groovy", "-Z"],
            &["rscript", "--bogus=1", "x.R"],
        ] {
            assert_eq!(found(argv), Found::Unknown, "{argv:?}");
        }
        // Elixir stops at an option it does not know; `-eIO.puts(1)` is not `-e`.
        assert_eq!(found(&["elixir", "-eIO.puts(1)"]), Found::Files);
    }

    #[test]
    fn leaves_program_files_alone() {
        for argv in [
            &["deno", "run", "main.ts"][..],
            &["rscript", "--vanilla", "x.R"],
            &["lua", "x.lua"],
            &["julia", "--project=.", "-t", "4", "x.jl"],
            &["bun", "run", "build"],
            &["osascript", "x.scpt"],
            &["pwsh", "-NoProfile", "-File", "x.ps1"],
            &["pwsh", "-NoProfile", "x.ps1"],
            &["elixir", "x.exs"],
            &["sbcl", "--script", "x.lisp"],
            &["gdb", "--version"],
            &["sqlite3", "x.db"],
            &["vim", "--version"],
        ] {
            assert_eq!(found(argv), Found::Files, "{argv:?}");
        }
    }
}
