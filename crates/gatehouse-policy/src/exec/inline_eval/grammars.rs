//! The option tables of the interpreters and carriers whose inline code is looked for. Each
//! lists every option of the real tool that Gatehouse lets through, with how it takes a value;
//! an option missing here fails closed (the command is approved only as an exact command).

use crate::exec::options::Arity::{Attached, Flag, Leading, Required};
use crate::exec::options::Role::{
    Code, Info, Module, Plain, ProgramFile, RunsModule, Settings, Stdin,
};
use crate::exec::options::{Arity, Role};
use crate::exec::options::{Grammar, Opt, ending, flag, opt};

const OCTAL: &str = "01234567";

/// CPython (`python -h`): `-c` and `-m` end the options, `-W`, `-X` and
/// `--check-hash-based-pycs` take a value (`-W`'s may name a module to import), `-i` reads
/// code from stdin after the script.
pub(crate) const PYTHON: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('b'), None),
        flag(Some('B'), None),
        flag(Some('d'), None),
        flag(Some('E'), None),
        flag(Some('I'), None),
        flag(Some('O'), None),
        flag(Some('P'), None),
        flag(Some('q'), None),
        flag(Some('R'), None),
        flag(Some('s'), None),
        flag(Some('S'), None),
        flag(Some('u'), None),
        flag(Some('v'), None),
        flag(Some('x'), None),
        flag(Some('3'), None),
        flag(Some('t'), None),
        flag(Some('U'), None),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('?'), None, Flag, Info),
        opt(Some('V'), Some("version"), Flag, Info),
        opt(None, Some("help-env"), Flag, Info),
        opt(None, Some("help-xoptions"), Flag, Info),
        opt(None, Some("help-all"), Flag, Info),
        opt(Some('i'), None, Flag, Stdin),
        ending('c', Required, Code),
        ending('m', Required, RunsModule),
        // A warning filter whose category has a dot imports that module.
        opt(Some('W'), None, Required, Module),
        opt(Some('X'), None, Required, Plain),
        opt(Some('Q'), None, Required, Plain),
        opt(None, Some("check-hash-based-pycs"), Required, Plain),
    ],
    permute: false,
    abbreviations: false,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// perl (`perlrun`): `-e`/`-E` are code, `-I` takes the rest of the cluster or the next word,
/// `-M`/`-m`/`-x`/`-i`/`-F`/`-C`/`-V` only the rest of the cluster, `-0`/`-l` only octal
/// digits (the cluster goes on), and `-d` starts the debugger, which reads stdin.
pub(crate) const PERL: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('a'), None),
        flag(Some('c'), None),
        flag(Some('f'), None),
        flag(Some('g'), None),
        flag(Some('n'), None),
        flag(Some('p'), None),
        flag(Some('s'), None),
        flag(Some('S'), None),
        flag(Some('t'), None),
        flag(Some('T'), None),
        flag(Some('u'), None),
        flag(Some('U'), None),
        flag(Some('w'), None),
        flag(Some('W'), None),
        flag(Some('X'), None),
        opt(Some('0'), None, Leading(OCTAL), Plain),
        opt(Some('l'), None, Leading(OCTAL), Plain),
        opt(Some('C'), None, Attached, Plain),
        opt(Some('F'), None, Attached, Plain),
        opt(Some('i'), None, Attached, Plain),
        opt(Some('x'), None, Attached, Plain),
        opt(Some('V'), None, Attached, Info),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('d'), None, Attached, Stdin),
        opt(Some('M'), None, Attached, Module),
        opt(Some('m'), None, Attached, Module),
        opt(Some('I'), None, Required, Plain),
        opt(Some('e'), None, Required, Code),
        opt(Some('E'), None, Required, Code),
    ],
    permute: false,
    abbreviations: false,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// node (`node --help`): `-e`/`-p` are code; `-r`, `--import`, `--loader` and
/// `--test-reporter` load a module (a `data:` URL is code); `--env-file*` and
/// `--openssl-config` read settings that can load code (`NODE_OPTIONS`, an OpenSSL engine);
/// `-i` is the REPL on stdin, and `--inspect*` open a debugger port through which whoever
/// reaches it runs code (`--inspect=0.0.0.0` invites the network). Node has no abbreviations
/// and refuses unknown options, so an unknown `--name=value` is left to it.
pub(crate) const NODE: Grammar<'static> = Grammar {
    opts: &[
        opt(Some('e'), Some("eval"), Required, Code),
        opt(Some('p'), Some("print"), Required, Code),
        opt(Some('r'), Some("require"), Required, Module),
        opt(None, Some("import"), Required, Module),
        opt(None, Some("loader"), Required, Module),
        opt(None, Some("experimental-loader"), Required, Module),
        opt(Some('i'), Some("interactive"), Flag, Stdin),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(None, Some("v8-options"), Flag, Info),
        opt(None, Some("completion-bash"), Flag, Info),
        opt(Some('C'), Some("conditions"), Required, Plain),
        opt(None, Some("env-file"), Required, Settings),
        opt(None, Some("env-file-if-exists"), Required, Settings),
        opt(None, Some("input-type"), Required, Plain),
        opt(None, Some("experimental-default-type"), Required, Plain),
        opt(None, Some("title"), Required, Plain),
        opt(None, Some("inspect-port"), Required, Plain),
        opt(None, Some("redirect-warnings"), Required, Plain),
        opt(None, Some("diagnostic-dir"), Required, Plain),
        opt(None, Some("report-dir"), Required, Plain),
        opt(None, Some("report-directory"), Required, Plain),
        opt(None, Some("report-filename"), Required, Plain),
        opt(None, Some("report-signal"), Required, Plain),
        opt(None, Some("icu-data-dir"), Required, Plain),
        opt(None, Some("openssl-config"), Required, Settings),
        opt(None, Some("tls-cipher-list"), Required, Plain),
        opt(None, Some("tls-keylog"), Required, Plain),
        opt(None, Some("unhandled-rejections"), Required, Plain),
        opt(None, Some("dns-result-order"), Required, Plain),
        opt(None, Some("heapsnapshot-signal"), Required, Plain),
        opt(None, Some("cpu-prof-dir"), Required, Plain),
        opt(None, Some("cpu-prof-name"), Required, Plain),
        opt(None, Some("heap-prof-dir"), Required, Plain),
        opt(None, Some("heap-prof-name"), Required, Plain),
        opt(None, Some("max-http-header-size"), Required, Plain),
        opt(None, Some("disable-warning"), Required, Plain),
        opt(None, Some("watch-path"), Required, Plain),
        opt(None, Some("test-name-pattern"), Required, Plain),
        opt(None, Some("test-skip-pattern"), Required, Plain),
        opt(None, Some("test-reporter"), Required, Module),
        opt(None, Some("test-reporter-destination"), Required, Plain),
        opt(None, Some("test-concurrency"), Required, Plain),
        opt(None, Some("test-shard"), Required, Plain),
        opt(None, Some("test-timeout"), Required, Plain),
        opt(None, Some("stack-trace-limit"), Required, Plain),
        opt(None, Some("allow-fs-read"), Required, Plain),
        opt(None, Some("allow-fs-write"), Required, Plain),
        opt(None, Some("run"), Required, Info),
        opt(None, Some("inspect"), Attached, Stdin),
        opt(None, Some("inspect-brk"), Attached, Stdin),
        opt(None, Some("inspect-wait"), Attached, Stdin),
        opt(Some('c'), Some("check"), Flag, Plain),
        opt(None, Some("test"), Flag, Info),
        flag(None, Some("test-only")),
        flag(None, Some("watch")),
        flag(None, Some("watch-preserve-output")),
        flag(None, Some("no-warnings")),
        flag(None, Some("trace-warnings")),
        flag(None, Some("no-deprecation")),
        flag(None, Some("trace-deprecation")),
        flag(None, Some("throw-deprecation")),
        flag(None, Some("pending-deprecation")),
        flag(None, Some("trace-uncaught")),
        flag(None, Some("trace-exit")),
        flag(None, Some("trace-sigint")),
        flag(None, Some("trace-sync-io")),
        flag(None, Some("enable-source-maps")),
        // With these node loads a module through a symlink to `/dev/stdin` as the pipe's text
        // (it otherwise resolves the link and finds no file), so a file planted as such a link
        // turns the pipe before node into code.
        opt(None, Some("preserve-symlinks"), Flag, Settings),
        opt(None, Some("preserve-symlinks-main"), Flag, Settings),
        flag(None, Some("abort-on-uncaught-exception")),
        flag(None, Some("expose-gc")),
        flag(None, Some("jitless")),
        flag(None, Some("no-addons")),
        flag(None, Some("no-global-search-paths")),
        flag(None, Some("zero-fill-buffers")),
        flag(None, Some("use-openssl-ca")),
        flag(None, Some("use-bundled-ca")),
        flag(None, Some("frozen-intrinsics")),
        flag(None, Some("cpu-prof")),
        flag(None, Some("heap-prof")),
        flag(None, Some("prof")),
        flag(None, Some("permission")),
        flag(None, Some("experimental-permission")),
        flag(None, Some("allow-child-process")),
        flag(None, Some("allow-worker")),
        flag(None, Some("allow-addons")),
        flag(None, Some("allow-wasi")),
        flag(None, Some("experimental-vm-modules")),
        flag(None, Some("experimental-strip-types")),
        flag(None, Some("experimental-transform-types")),
        flag(None, Some("experimental-detect-module")),
        flag(None, Some("no-experimental-detect-module")),
        flag(None, Some("experimental-require-module")),
        flag(None, Some("no-experimental-require-module")),
        flag(None, Some("experimental-wasm-modules")),
        flag(None, Some("experimental-test-coverage")),
        flag(None, Some("experimental-test-module-mocks")),
        flag(None, Some("no-experimental-fetch")),
        flag(None, Some("insecure-http-parser")),
        flag(None, Some("report-on-fatalerror")),
        flag(None, Some("report-uncaught-exception")),
        flag(None, Some("report-on-signal")),
        flag(None, Some("report-compact")),
        flag(None, Some("openssl-legacy-provider")),
        flag(None, Some("enable-fips")),
        flag(None, Some("force-fips")),
    ],
    permute: false,
    abbreviations: false,
    unknown_attached_ok: true,
    numeric_shorthand: false,
};

/// ruby (`ruby --help`): `-e` is code; `-C`, `-E`, `-I`, `-r` take a value, `-F`, `-i`,
/// `-x`, `-K` only the rest of the cluster, `-0`/`-W` only digits.
pub(crate) const RUBY: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('a'), None),
        flag(Some('c'), None),
        flag(Some('d'), Some("debug")),
        flag(Some('l'), None),
        flag(Some('n'), None),
        flag(Some('p'), None),
        flag(Some('s'), None),
        flag(Some('S'), None),
        flag(Some('U'), None),
        flag(Some('w'), Some("verbose")),
        flag(Some('y'), None),
        flag(None, Some("jit")),
        flag(None, Some("yjit")),
        flag(None, Some("rjit")),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(None, Some("copyright"), Flag, Info),
        opt(Some('0'), None, Leading(OCTAL), Plain),
        opt(Some('W'), None, Leading("012"), Plain),
        opt(Some('F'), None, Attached, Plain),
        opt(Some('i'), None, Attached, Plain),
        opt(Some('x'), None, Attached, Plain),
        opt(Some('K'), None, Attached, Plain),
        opt(Some('C'), None, Required, Plain),
        opt(Some('E'), Some("encoding"), Required, Plain),
        opt(Some('I'), None, Required, Plain),
        opt(Some('r'), None, Required, Module),
        opt(Some('e'), None, Required, Code),
        opt(None, Some("enable"), Required, Plain),
        opt(None, Some("disable"), Required, Plain),
        opt(None, Some("external-encoding"), Required, Plain),
        opt(None, Some("internal-encoding"), Required, Plain),
        opt(None, Some("dump"), Required, Plain),
        opt(None, Some("backtrace-limit"), Required, Plain),
        opt(None, Some("crash-report"), Required, Plain),
        opt(None, Some("parser"), Required, Plain),
    ],
    permute: false,
    abbreviations: false,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// php (`php -h`): `-r`, `-B`, `-R`, `-E` are code, `-f`/`-F` name the program file, `-d`
/// sets an ini entry (checked: some load code), `-a` is the interactive shell on stdin.
pub(crate) const PHP: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('n'), Some("no-php-ini")),
        flag(Some('e'), Some("profile-info")),
        flag(Some('H'), Some("hide-args")),
        flag(Some('l'), Some("syntax-check")),
        flag(Some('q'), Some("no-header")),
        flag(Some('s'), Some("syntax-highlight")),
        flag(Some('w'), Some("strip")),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('i'), Some("info"), Flag, Info),
        opt(Some('m'), Some("modules"), Flag, Info),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(None, Some("ini"), Flag, Info),
        opt(Some('a'), Some("interactive"), Flag, Stdin),
        opt(Some('c'), Some("php-ini"), Required, Plain),
        opt(Some('d'), Some("define"), Required, Module),
        opt(Some('f'), Some("file"), Required, ProgramFile),
        opt(Some('F'), Some("process-file"), Required, ProgramFile),
        opt(Some('r'), Some("run"), Required, Code),
        opt(Some('B'), Some("process-begin"), Required, Code),
        opt(Some('R'), Some("process-code"), Required, Code),
        opt(Some('E'), Some("process-end"), Required, Code),
        opt(Some('z'), Some("zend-extension"), Required, Plain),
        opt(Some('S'), Some("server"), Required, Info),
        opt(Some('t'), Some("docroot"), Required, Plain),
        opt(None, Some("rf"), Required, Info),
        opt(None, Some("rfunction"), Required, Info),
        opt(None, Some("rc"), Required, Info),
        opt(None, Some("rclass"), Required, Info),
        opt(None, Some("re"), Required, Info),
        opt(None, Some("rextension"), Required, Info),
        opt(None, Some("rz"), Required, Info),
        opt(None, Some("rzendextension"), Required, Info),
        opt(None, Some("ri"), Required, Info),
        opt(None, Some("rextinfo"), Required, Info),
    ],
    permute: false,
    abbreviations: false,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// The options of GNU sed 4.9 and BSD sed together: `-l N` is GNU's line length, `-I ext`
/// BSD's in-place suffix; `-i` takes only an attached suffix (GNU).
const SED_OPTS: &[Opt<'static>] = &[
    flag(Some('n'), Some("quiet")),
    flag(None, Some("silent")),
    flag(None, Some("debug")),
    flag(None, Some("follow-symlinks")),
    flag(None, Some("posix")),
    flag(None, Some("sandbox")),
    flag(Some('E'), Some("regexp-extended")),
    flag(Some('r'), None),
    flag(Some('s'), Some("separate")),
    flag(Some('u'), Some("unbuffered")),
    flag(Some('z'), Some("null-data")),
    flag(None, Some("zero-terminated")),
    flag(Some('b'), Some("binary")),
    flag(Some('a'), None),
    opt(None, Some("help"), Flag, Info),
    opt(None, Some("version"), Flag, Info),
    opt(Some('e'), Some("expression"), Required, Code),
    opt(Some('f'), Some("file"), Required, ProgramFile),
    opt(Some('l'), Some("line-length"), Required, Plain),
    opt(Some('i'), Some("in-place"), Attached, Plain),
    opt(Some('I'), None, Required, Plain),
];

/// GNU sed permutes: `sed p -e 'e id'` runs `e id` (and `p` is a file).
pub(crate) const SED_GNU: Grammar<'static> = Grammar {
    opts: SED_OPTS,
    permute: true,
    abbreviations: true,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// BSD sed stops at the first operand.
pub(crate) const SED_BSD: Grammar<'static> = Grammar {
    opts: SED_OPTS,
    permute: false,
    abbreviations: true,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// gawk 5 (with mawk's `-W`): `-e`/`--source` are code wherever they appear, `-f`/`-E` name
/// program files, `-i`/`-l` load a source file or an extension.
pub(crate) const AWK: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('b'), Some("characters-as-bytes")),
        flag(Some('c'), Some("traditional")),
        flag(Some('g'), Some("gen-pot")),
        flag(Some('M'), Some("bignum")),
        flag(Some('n'), Some("non-decimal-data")),
        flag(Some('N'), Some("use-lc-numeric")),
        flag(Some('O'), Some("optimize")),
        flag(Some('P'), Some("posix")),
        flag(Some('r'), Some("re-interval")),
        flag(Some('s'), Some("no-optimize")),
        flag(Some('S'), Some("sandbox")),
        flag(Some('t'), Some("lint-old")),
        flag(Some('k'), Some("csv")),
        opt(Some('C'), Some("copyright"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('V'), Some("version"), Flag, Info),
        opt(None, Some("usage"), Flag, Info),
        opt(Some('d'), Some("dump-variables"), Attached, Plain),
        opt(Some('D'), Some("debug"), Attached, Plain),
        opt(Some('L'), Some("lint"), Attached, Plain),
        opt(Some('o'), Some("pretty-print"), Attached, Plain),
        opt(Some('p'), Some("profile"), Attached, Plain),
        opt(None, Some("persist"), Attached, Plain),
        opt(Some('F'), Some("field-separator"), Required, Plain),
        opt(Some('v'), Some("assign"), Required, Plain),
        opt(Some('W'), None, Required, Plain),
        opt(Some('f'), Some("file"), Required, ProgramFile),
        opt(Some('E'), Some("exec"), Required, ProgramFile),
        opt(Some('i'), Some("include"), Required, Module),
        opt(Some('l'), Some("load"), Required, Module),
        opt(Some('e'), Some("source"), Required, Code),
    ],
    permute: false,
    abbreviations: true,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// GNU findutils xargs (with BSD's `-J`, `-R`, `-S`): `--replace`, `--max-lines` and `--eof`
/// (`-i`, `-l`, `-e`) take an optional value that must be attached, so the next word is the
/// command.
pub(crate) const XARGS: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('0'), Some("null")),
        flag(Some('o'), Some("open-tty")),
        flag(Some('p'), Some("interactive")),
        flag(Some('r'), Some("no-run-if-empty")),
        flag(Some('t'), Some("verbose")),
        flag(Some('x'), Some("exit")),
        flag(None, Some("show-limits")),
        opt(None, Some("help"), Flag, Info),
        opt(None, Some("version"), Flag, Info),
        opt(Some('a'), Some("arg-file"), Required, Plain),
        opt(Some('d'), Some("delimiter"), Required, Plain),
        opt(Some('E'), None, Required, Plain),
        opt(Some('I'), None, Required, Plain),
        opt(Some('L'), None, Required, Plain),
        opt(Some('n'), Some("max-args"), Required, Plain),
        opt(Some('P'), Some("max-procs"), Required, Plain),
        opt(Some('s'), Some("max-chars"), Required, Plain),
        opt(None, Some("process-slot-var"), Required, Plain),
        opt(Some('J'), None, Required, Plain),
        opt(Some('R'), None, Required, Plain),
        opt(Some('S'), None, Required, Plain),
        opt(Some('e'), Some("eof"), Attached, Plain),
        opt(Some('i'), Some("replace"), Attached, Plain),
        opt(Some('l'), Some("max-lines"), Attached, Plain),
    ],
    permute: false,
    abbreviations: true,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// GNU make 4.4: `-E`/`--eval` are makefile text, `-f`/`--file`/`--makefile` name a makefile;
/// `-j`, `-l`, `-O`, `--debug` and `--shuffle` take only an attached value (a separate number
/// after `-j` is then read as a target, which is harmless). GNU getopt permutes and
/// abbreviates.
pub(crate) const MAKE: Grammar<'static> = Grammar {
    opts: &[
        flag(Some('b'), None),
        flag(Some('m'), None),
        flag(Some('B'), Some("always-make")),
        flag(Some('d'), None),
        flag(Some('e'), Some("environment-overrides")),
        flag(Some('i'), Some("ignore-errors")),
        flag(Some('k'), Some("keep-going")),
        flag(Some('L'), Some("check-symlink-times")),
        flag(Some('n'), Some("just-print")),
        flag(None, Some("dry-run")),
        flag(None, Some("recon")),
        flag(Some('p'), Some("print-data-base")),
        flag(Some('q'), Some("question")),
        flag(Some('r'), Some("no-builtin-rules")),
        flag(Some('R'), Some("no-builtin-variables")),
        flag(Some('s'), Some("silent")),
        flag(None, Some("quiet")),
        flag(None, Some("no-silent")),
        flag(Some('S'), Some("no-keep-going")),
        flag(None, Some("stop")),
        flag(Some('t'), Some("touch")),
        flag(None, Some("trace")),
        flag(Some('w'), Some("print-directory")),
        flag(None, Some("no-print-directory")),
        flag(None, Some("warn-undefined-variables")),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(None, Some("debug"), Attached, Plain),
        opt(Some('j'), Some("jobs"), Attached, Plain),
        opt(Some('l'), Some("load-average"), Attached, Plain),
        opt(None, Some("max-load"), Attached, Plain),
        opt(Some('O'), Some("output-sync"), Attached, Plain),
        opt(None, Some("shuffle"), Attached, Plain),
        opt(Some('C'), Some("directory"), Required, Plain),
        opt(Some('I'), Some("include-dir"), Required, Plain),
        opt(Some('o'), Some("old-file"), Required, Plain),
        opt(None, Some("assume-old"), Required, Plain),
        opt(Some('W'), Some("what-if"), Required, Plain),
        opt(None, Some("new-file"), Required, Plain),
        opt(None, Some("assume-new"), Required, Plain),
        opt(Some('f'), Some("file"), Required, ProgramFile),
        opt(None, Some("makefile"), Required, ProgramFile),
        opt(Some('E'), Some("eval"), Required, Code),
    ],
    permute: true,
    abbreviations: true,
    unknown_attached_ok: false,
    numeric_shorthand: false,
};

/// A getopt-style grammar that stops at the first operand, with long abbreviations as GNU
/// getopt_long reads them (`abbreviations`).
const fn stops_at_operand(opts: &'static [Opt<'static>], abbreviations: bool) -> Grammar<'static> {
    Grammar {
        opts,
        permute: false,
        abbreviations,
        unknown_attached_ok: false,
        numeric_shorthand: false,
    }
}

/// A long option after which every word belongs to the program.
const fn long_ending(long: &'static str, arity: Arity, role: Role) -> Opt<'static> {
    Opt {
        short: None,
        long: Some(long),
        arity,
        role,
        ends: true,
    }
}

/// deno's options before its subcommand; `deno eval` and `deno repl` are code
/// (`interpreters`), `deno run FILE` is not.
pub(crate) const DENO: Grammar<'static> = stops_at_operand(
    &[
        flag(Some('q'), Some("quiet")),
        flag(None, Some("unstable")),
        opt(Some('L'), Some("log-level"), Required, Plain),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('V'), Some("version"), Flag, Info),
    ],
    false,
);

/// Rscript (R 4.4): `-e` is code; the `--` options are R's start-up switches.
pub(crate) const RSCRIPT: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), None, Required, Code),
        flag(None, Some("verbose")),
        opt(None, Some("default-packages"), Attached, Plain),
        flag(None, Some("vanilla")),
        flag(None, Some("no-environ")),
        flag(None, Some("no-site-file")),
        flag(None, Some("no-init-file")),
        flag(None, Some("no-save")),
        flag(None, Some("no-restore")),
        flag(None, Some("save")),
        flag(None, Some("restore")),
        flag(None, Some("slave")),
        flag(None, Some("no-echo")),
        flag(None, Some("silent")),
        opt(None, Some("version"), Flag, Info),
        opt(None, Some("help"), Flag, Info),
    ],
    false,
);

/// R (R 4.4): `-e` is code, `-f`/`--file` the program, `-d`/`--debugger` a program to run R
/// under; without `-f` or `-e` R reads its program from stdin.
pub(crate) const R: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), None, Required, Code),
        opt(Some('f'), Some("file"), Required, ProgramFile),
        opt(Some('d'), Some("debugger"), Required, Code),
        opt(None, Some("debugger-args"), Required, Code),
        opt(Some('g'), Some("gui"), Required, Plain),
        opt(None, Some("interactive"), Flag, Stdin),
        long_ending("args", Flag, Plain),
        flag(None, Some("vanilla")),
        flag(None, Some("no-save")),
        flag(None, Some("save")),
        flag(None, Some("no-restore")),
        flag(None, Some("no-restore-data")),
        flag(None, Some("no-restore-history")),
        flag(None, Some("restore")),
        flag(None, Some("no-environ")),
        flag(None, Some("no-site-file")),
        flag(None, Some("no-init-file")),
        flag(None, Some("no-readline")),
        flag(Some('q'), Some("quiet")),
        flag(None, Some("silent")),
        flag(Some('s'), Some("no-echo")),
        flag(None, Some("slave")),
        flag(None, Some("verbose")),
        opt(None, Some("encoding"), Attached, Plain),
        opt(None, Some("min-vsize"), Attached, Plain),
        opt(None, Some("max-vsize"), Attached, Plain),
        opt(None, Some("min-nsize"), Attached, Plain),
        opt(None, Some("max-nsize"), Attached, Plain),
        opt(None, Some("max-ppsize"), Attached, Plain),
        opt(None, Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
    ],
    false,
);

/// lua 5.x and LuaJIT: `-e` is code, `-l` requires a module by name, `-i` is the REPL;
/// LuaJIT's `-b` saves bytecode (its words are its own), `-j` loads a `jit.*` module.
pub(crate) const LUA: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), None, Required, Code),
        opt(Some('l'), None, Required, Module),
        opt(Some('i'), None, Flag, Stdin),
        opt(Some('v'), None, Flag, Info),
        flag(Some('E'), None),
        flag(Some('W'), None),
        ending('b', Flag, Info),
        opt(Some('j'), None, Required, Module),
        opt(Some('O'), None, Attached, Plain),
    ],
    false,
);

/// expect: `-c` is code, `-f`/`-b` name the program file, `-i` and the debugger (`-D`) read
/// stdin.
pub(crate) const EXPECT: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('c'), None, Required, Code),
        opt(Some('f'), None, Required, ProgramFile),
        opt(Some('b'), None, Required, ProgramFile),
        opt(Some('i'), None, Flag, Stdin),
        opt(Some('D'), None, Required, Stdin),
        flag(Some('d'), None),
        flag(Some('n'), None),
        flag(Some('N'), None),
        opt(Some('v'), None, Flag, Info),
    ],
    false,
);

/// tclsh and wish take only a script (and `-encoding NAME`, read here as unknown): no option
/// carries code, and without a script they read stdin.
pub(crate) const TCLSH: Grammar<'static> = stops_at_operand(&[], false);

/// julia 1.11: `-e`/`-E` are code, `-m` runs a package's `main`, `-L` loads a file first,
/// `-i` is the REPL, `--machine-file` starts workers over ssh and `--bug-report` downloads and
/// runs a tool; `--worker` reads its program from stdin.
pub(crate) const JULIA: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), Some("eval"), Required, Code),
        opt(Some('E'), Some("print"), Required, Code),
        opt(Some('m'), Some("module"), Required, Code),
        opt(None, Some("machine-file"), Required, Code),
        opt(None, Some("bug-report"), Required, Code),
        opt(Some('L'), Some("load"), Required, ProgramFile),
        opt(Some('i'), Some("interactive"), Flag, Stdin),
        opt(None, Some("worker"), Attached, Stdin),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(None, Some("help-hidden"), Flag, Info),
        flag(Some('q'), Some("quiet")),
        opt(None, Some("project"), Attached, Plain),
        opt(Some('J'), Some("sysimage"), Required, Plain),
        opt(Some('H'), Some("home"), Required, Plain),
        opt(None, Some("startup-file"), Required, Plain),
        opt(None, Some("handle-signals"), Required, Plain),
        opt(None, Some("sysimage-native-code"), Required, Plain),
        opt(None, Some("compiled-modules"), Required, Plain),
        opt(None, Some("pkgimages"), Required, Plain),
        opt(Some('t'), Some("threads"), Required, Plain),
        opt(None, Some("gcthreads"), Required, Plain),
        opt(Some('p'), Some("procs"), Required, Plain),
        opt(None, Some("banner"), Required, Plain),
        opt(None, Some("color"), Required, Plain),
        opt(None, Some("history-file"), Required, Plain),
        opt(None, Some("depwarn"), Required, Plain),
        opt(None, Some("warn-overwrite"), Required, Plain),
        opt(None, Some("warn-scope"), Required, Plain),
        opt(Some('C'), Some("cpu-target"), Required, Plain),
        opt(Some('O'), Some("optimize"), Attached, Plain),
        opt(None, Some("min-optlevel"), Required, Plain),
        opt(Some('g'), None, Attached, Plain),
        opt(None, Some("inline"), Required, Plain),
        opt(None, Some("check-bounds"), Required, Plain),
        opt(None, Some("math-mode"), Required, Plain),
        opt(None, Some("code-coverage"), Attached, Plain),
        opt(None, Some("track-allocation"), Attached, Plain),
        opt(None, Some("heap-size-hint"), Required, Plain),
    ],
    true,
);

/// bun 1.x: `-e`/`-p` are code, `-r`/`--preload` load a module first, `-c`/`--config` and
/// `--env-file` read settings that can preload code, `--inspect*` open a debugger port; its
/// running subcommands (`x`, `create`, `exec`, `repl`) are carriers.
pub(crate) const BUN: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), Some("eval"), Required, Code),
        opt(Some('p'), Some("print"), Required, Code),
        opt(Some('r'), Some("preload"), Required, ProgramFile),
        opt(Some('c'), Some("config"), Required, Settings),
        opt(None, Some("env-file"), Required, Settings),
        opt(None, Some("shell"), Required, Settings),
        opt(None, Some("inspect"), Attached, Stdin),
        opt(None, Some("inspect-wait"), Attached, Stdin),
        opt(None, Some("inspect-brk"), Attached, Stdin),
        opt(None, Some("cwd"), Required, Plain),
        opt(None, Some("conditions"), Required, Plain),
        opt(None, Some("port"), Required, Plain),
        opt(None, Some("tsconfig-override"), Required, Plain),
        opt(Some('d'), Some("define"), Required, Plain),
        opt(None, Some("drop"), Required, Plain),
        opt(Some('l'), Some("loader"), Required, Plain),
        opt(None, Some("main-fields"), Required, Plain),
        opt(None, Some("extension-order"), Required, Plain),
        opt(None, Some("filter"), Required, Plain),
        opt(None, Some("install"), Required, Plain),
        opt(None, Some("title"), Required, Plain),
        flag(None, Some("silent")),
        flag(None, Some("smol")),
        flag(None, Some("hot")),
        flag(None, Some("watch")),
        flag(None, Some("no-clear-screen")),
        flag(None, Some("no-install")),
        flag(Some('i'), None),
        flag(None, Some("prefer-offline")),
        flag(None, Some("prefer-latest")),
        flag(Some('b'), Some("bun")),
        flag(None, Some("if-present")),
        flag(None, Some("no-macros")),
        flag(None, Some("expose-gc")),
        flag(None, Some("no-deprecation")),
        flag(None, Some("throw-deprecation")),
        flag(None, Some("zero-fill-buffers")),
        flag(None, Some("no-addons")),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(None, Some("revision"), Flag, Info),
    ],
    false,
);

/// osascript: `-e` is code, `-i` interactive; without a script it reads stdin.
pub(crate) const OSASCRIPT: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), None, Required, Code),
        opt(Some('i'), None, Flag, Stdin),
        opt(Some('l'), None, Required, Plain),
        opt(Some('s'), None, Required, Plain),
    ],
    false,
);

/// racket 8: `-e` is code, `-f`/`-t`/`-r`/`-u` load files, `-l`/`-p` require libraries,
/// `-i` is the REPL.
pub(crate) const RACKET: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), Some("eval"), Required, Code),
        opt(Some('f'), Some("load"), Required, ProgramFile),
        opt(Some('t'), Some("require"), Required, ProgramFile),
        opt(Some('r'), Some("script"), Required, ProgramFile),
        opt(Some('u'), Some("require-script"), Required, ProgramFile),
        opt(Some('l'), Some("lib"), Required, Module),
        opt(Some('p'), None, Required, Module),
        opt(Some('i'), Some("repl"), Flag, Stdin),
        flag(Some('m'), Some("main")),
        flag(Some('n'), Some("no-lib")),
        flag(Some('c'), Some("no-compiled")),
        flag(Some('q'), Some("no-init-file")),
        flag(Some('U'), Some("no-user-path")),
        flag(Some('j'), Some("no-jit")),
        flag(Some('d'), Some("no-delay")),
        flag(Some('b'), Some("binary")),
        flag(Some('y'), Some("make")),
        opt(Some('W'), Some("warn"), Required, Plain),
        opt(Some('L'), Some("syslog"), Required, Plain),
        opt(Some('X'), Some("collects"), Required, Plain),
        opt(Some('S'), Some("search"), Required, Plain),
        opt(Some('A'), Some("addon"), Required, Plain),
        opt(Some('I'), None, Required, Plain),
        opt(Some('N'), Some("name"), Required, Plain),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
    ],
    false,
);

/// guile 3: `-c` is code (and ends the options), `-s` the script, `-e` names the procedure to
/// call, `-l` loads a file first, `--listen` opens a REPL port.
pub(crate) const GUILE: Grammar<'static> = stops_at_operand(
    &[
        Opt {
            short: Some('c'),
            long: None,
            arity: Required,
            role: Code,
            ends: true,
        },
        Opt {
            short: Some('s'),
            long: None,
            arity: Required,
            role: ProgramFile,
            ends: true,
        },
        opt(Some('e'), None, Required, Code),
        opt(Some('l'), None, Required, ProgramFile),
        opt(None, Some("listen"), Attached, Stdin),
        opt(Some('L'), None, Required, Plain),
        opt(Some('C'), None, Required, Plain),
        opt(Some('x'), None, Required, Plain),
        opt(None, Some("use-srfi"), Required, Plain),
        opt(None, Some("language"), Required, Plain),
        flag(Some('q'), None),
        flag(None, Some("debug")),
        flag(None, Some("no-debug")),
        flag(None, Some("auto-compile")),
        flag(None, Some("fresh-auto-compile")),
        flag(None, Some("no-auto-compile")),
        opt(Some('v'), Some("version"), Flag, Info),
        opt(Some('h'), Some("help"), Flag, Info),
    ],
    false,
);

/// SBCL 2: `--eval` is code, `--load`/`--script` name files, `--core`, `--sysinit` and
/// `--userinit` load settings that are code.
pub(crate) const SBCL: Grammar<'static> = stops_at_operand(
    &[
        opt(None, Some("eval"), Required, Code),
        opt(None, Some("load"), Required, ProgramFile),
        long_ending("script", Required, ProgramFile),
        opt(None, Some("core"), Required, Settings),
        opt(None, Some("sysinit"), Required, Settings),
        opt(None, Some("userinit"), Required, Settings),
        opt(None, Some("dynamic-space-size"), Required, Plain),
        opt(None, Some("control-stack-size"), Required, Plain),
        opt(None, Some("tls-limit"), Required, Plain),
        flag(None, Some("non-interactive")),
        flag(None, Some("no-sysinit")),
        flag(None, Some("no-userinit")),
        flag(None, Some("disable-debugger")),
        flag(None, Some("noinform")),
        flag(None, Some("quit")),
        flag(None, Some("disable-ldb")),
        flag(None, Some("lose-on-corruption")),
        flag(None, Some("merge-core-pages")),
        flag(None, Some("no-merge-core-pages")),
        flag(None, Some("end-runtime-options")),
        flag(None, Some("end-toplevel-options")),
        opt(None, Some("version"), Flag, Info),
        opt(None, Some("help"), Flag, Info),
    ],
    false,
);

/// The common shape of the rest (scala, clojure, babashka, octave, gnuplot, dc, QuickJS): `-e`
/// or `--eval` is code; any other option is not modelled and fails closed.
pub(crate) const EVAL_E: Grammar<'static> = stops_at_operand(
    &[
        opt(Some('e'), Some("eval"), Required, Code),
        opt(Some('h'), Some("help"), Flag, Info),
        opt(Some('v'), Some("version"), Flag, Info),
    ],
    false,
);
