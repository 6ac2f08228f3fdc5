//! The built-in safe-bin profiles as data: one table per program, read with the one option
//! grammar reader (`exec::options`), with examples that must and must not pass (checked by
//! `tests::every_example_holds`, in the spirit of codex's execpolicy program definitions).
//!
//! A table lists **every** option of the real tool (GNU coreutils 9, grep 3, jq 1.7; BSD names
//! where they differ), not only the allowed ones: an abbreviation is resolved the way the
//! tool's getopt resolves it, against all of them, so `grep --binary` is grep's boolean
//! `--binary` (`-U`, refused), not the profile's `--binary-files`. Options the profile does not
//! allow are [`Role::Denied`]; an option missing from the table is unknown and refused too.

use crate::exec::options::Arity::{Flag, Pair, Required};
use crate::exec::options::Role::{Denied, Plain};
use crate::exec::options::{Grammar, Opt, opt};

/// One safe bin: its option table, operand limits and examples.
pub(crate) struct SafeBinSpec {
    pub(crate) name: &'static str,
    pub(crate) grammar: Grammar<'static>,
    /// Fewest operands.
    pub(crate) min_operands: usize,
    /// Most operands; `Some(0)` means stdin only (and `-` is stdin, not an operand).
    pub(crate) max_operands: Option<usize>,
    /// Argument lists the profile must accept (read by the example test only).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "examples are checked by a test")
    )]
    pub(crate) should_match: &'static [&'static [&'static str]],
    /// Argument lists the profile must refuse (read by the example test only).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "examples are checked by a test")
    )]
    pub(crate) should_not_match: &'static [&'static [&'static str]],
}

/// An allowed option without a value.
const fn allowed(short: Option<char>, long: Option<&'static str>) -> Opt<'static> {
    opt(short, long, Flag, Plain)
}

/// An allowed option with a value (checked: not empty, not a path).
const fn valued(short: Option<char>, long: Option<&'static str>) -> Opt<'static> {
    opt(short, long, Required, Plain)
}

/// A real option of the tool the profile refuses.
const fn denied(short: Option<char>, long: Option<&'static str>) -> Opt<'static> {
    opt(short, long, Flag, Denied)
}

/// A GNU filter's grammar: options anywhere (getopt permutes), abbreviations resolved.
const fn gnu(opts: &'static [Opt<'static>], numeric_shorthand: bool) -> Grammar<'static> {
    Grammar {
        opts,
        permute: true,
        abbreviations: true,
        unknown_attached_ok: false,
        numeric_shorthand,
    }
}

/// The built-in specs.
pub(crate) const SAFE_BINS: &[SafeBinSpec] = &[JQ, GREP, CUT, SORT, UNIQ, HEAD, TAIL, TR, WC];

/// The spec of a safe bin Gatehouse ships a profile for.
pub(crate) fn builtin(name: &str) -> Option<&'static SafeBinSpec> {
    SAFE_BINS.iter().find(|spec| spec.name == name)
}

/// jq 1.7: one filter operand; options read exactly (jq has no abbreviations). Options that read
/// files or the environment are refused, and so are filters that do (checked separately).
const JQ: SafeBinSpec = SafeBinSpec {
    name: "jq",
    grammar: Grammar {
        opts: &[
            allowed(Some('n'), Some("null-input")),
            allowed(Some('r'), Some("raw-output")),
            allowed(Some('j'), Some("join-output")),
            allowed(Some('a'), Some("ascii-output")),
            allowed(Some('s'), Some("slurp")),
            allowed(Some('c'), Some("compact-output")),
            allowed(Some('e'), Some("exit-status")),
            allowed(Some('S'), Some("sort-keys")),
            allowed(Some('C'), Some("color-output")),
            allowed(Some('M'), Some("monochrome-output")),
            allowed(Some('R'), Some("raw-input")),
            allowed(None, Some("tab")),
            allowed(None, Some("seq")),
            allowed(None, Some("stream")),
            valued(None, Some("indent")),
            opt(None, Some("arg"), Pair, Plain),
            opt(None, Some("argjson"), Pair, Plain),
            denied(None, Some("argfile")),
            denied(None, Some("rawfile")),
            denied(None, Some("slurpfile")),
            denied(None, Some("from-file")),
            denied(Some('f'), None),
            denied(None, Some("library-path")),
            denied(Some('L'), None),
            denied(None, Some("args")),
            denied(None, Some("jsonargs")),
        ],
        permute: true,
        abbreviations: false,
        unknown_attached_ok: false,
        numeric_shorthand: false,
    },
    min_operands: 0,
    max_operands: Some(1),
    should_match: &[
        &["-r", ".items[0].name"],
        &["."],
        &[".env"],
        &["--arg", "k", "v", ".[$k]"],
        &["--arg", "k", "v", ".name"],
        &["-n", "--arg", "k", "v", "$k"],
        &["-c", "--indent", "2", "."],
    ],
    should_not_match: &[
        &[".", "/etc/passwd"],
        &["-n", "input"],
        &["input"],
        &["env"],
        &[".x | env"],
        &["$ENV.HOME"],
        &["$__loc__"],
        &["--raw", "."],
        &["-f", "x.jq"],
        &["--rawfile", "k", "x", "."],
        &["--arg", "k"],
        &["-", ".env"],
        &["", ".env"],
        &["./x"],
    ],
};

/// grep 3: stdin only, the pattern through `-e`/`--regexp` (a positional pattern would free a
/// slot for a file name); recursion, file lists and pattern files refused.
const GREP: SafeBinSpec = SafeBinSpec {
    name: "grep",
    grammar: gnu(
        &[
            valued(Some('e'), Some("regexp")),
            valued(Some('m'), Some("max-count")),
            valued(Some('A'), Some("after-context")),
            valued(Some('B'), Some("before-context")),
            valued(Some('C'), Some("context")),
            valued(None, Some("binary-files")),
            valued(None, Some("label")),
            allowed(Some('i'), Some("ignore-case")),
            allowed(Some('y'), None),
            allowed(None, Some("no-ignore-case")),
            allowed(Some('v'), Some("invert-match")),
            allowed(Some('c'), Some("count")),
            allowed(Some('n'), Some("line-number")),
            allowed(Some('o'), Some("only-matching")),
            allowed(Some('q'), Some("quiet")),
            allowed(None, Some("silent")),
            allowed(Some('s'), Some("no-messages")),
            allowed(Some('w'), Some("word-regexp")),
            allowed(Some('x'), Some("line-regexp")),
            allowed(Some('E'), Some("extended-regexp")),
            allowed(Some('F'), Some("fixed-strings")),
            allowed(Some('G'), Some("basic-regexp")),
            allowed(Some('P'), Some("perl-regexp")),
            allowed(Some('h'), Some("no-filename")),
            allowed(Some('H'), Some("with-filename")),
            allowed(Some('a'), Some("text")),
            allowed(Some('b'), Some("byte-offset")),
            allowed(Some('z'), Some("null-data")),
            allowed(Some('Z'), Some("null")),
            allowed(None, Some("line-buffered")),
            denied(Some('f'), Some("file")),
            denied(None, Some("exclude-from")),
            denied(None, Some("exclude")),
            denied(None, Some("include")),
            denied(None, Some("exclude-dir")),
            denied(None, Some("include-dir")),
            denied(Some('R'), Some("dereference-recursive")),
            denied(Some('D'), Some("devices")),
            denied(Some('d'), Some("directories")),
            denied(Some('r'), Some("recursive")),
            denied(Some('l'), Some("files-with-matches")),
            denied(Some('L'), Some("files-without-match")),
            denied(Some('U'), Some("binary")),
            denied(None, Some("bz2decompress")),
            denied(None, Some("color")),
            denied(None, Some("colour")),
            denied(None, Some("decompress")),
            denied(None, Some("fixed-regexp")),
            denied(None, Some("group-separator")),
            denied(None, Some("no-group-separator")),
            denied(None, Some("help")),
            denied(Some('T'), Some("initial-tab")),
            denied(None, Some("mmap")),
            denied(Some('u'), Some("unix-byte-offsets")),
            denied(Some('V'), Some("version")),
        ],
        false,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[
        &["-i", "-e", "needle"],
        &["--regexp=needle", "-c"],
        &["--ignore-c", "-e", "needle"],
        &["--binary-files=text", "-e", "needle"],
        &["-e", "x", "-"],
    ],
    should_not_match: &[
        &["needle"],
        &["-e", "x", ".env"],
        &["-r", "-e", "x"],
        &["-e", "x", "--binary", "secret"],
        &["-e", "x", "--bin", "text"],
        &["-f", "patterns"],
        &["-e", "/etc/passwd"],
    ],
};

/// cut: stdin only.
const CUT: SafeBinSpec = SafeBinSpec {
    name: "cut",
    grammar: gnu(
        &[
            valued(Some('b'), Some("bytes")),
            valued(Some('c'), Some("characters")),
            valued(Some('f'), Some("fields")),
            valued(Some('d'), Some("delimiter")),
            valued(None, Some("output-delimiter")),
            allowed(Some('s'), Some("only-delimited")),
            allowed(Some('n'), None),
            allowed(Some('z'), Some("zero-terminated")),
            allowed(None, Some("complement")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        false,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[&["-d", ",", "-f", "1"], &["-f1"], &["-d", "$", "-f", "2"]],
    should_not_match: &[&["-f1", "--", "../x"], &["-f", "1", "data.csv"], &["-f"]],
};

/// sort: stdin only; writing files, temporary directories, helper programs and file lists
/// refused.
const SORT: SafeBinSpec = SafeBinSpec {
    name: "sort",
    grammar: gnu(
        &[
            valued(Some('k'), Some("key")),
            valued(Some('t'), Some("field-separator")),
            valued(Some('S'), Some("buffer-size")),
            valued(None, Some("parallel")),
            valued(None, Some("batch-size")),
            allowed(Some('b'), Some("ignore-leading-blanks")),
            allowed(Some('d'), Some("dictionary-order")),
            allowed(Some('f'), Some("ignore-case")),
            allowed(Some('g'), Some("general-numeric-sort")),
            allowed(Some('h'), Some("human-numeric-sort")),
            allowed(Some('i'), Some("ignore-nonprinting")),
            allowed(Some('M'), Some("month-sort")),
            allowed(Some('n'), Some("numeric-sort")),
            allowed(Some('R'), Some("random-sort")),
            allowed(Some('r'), Some("reverse")),
            allowed(Some('V'), Some("version-sort")),
            allowed(Some('c'), None),
            allowed(Some('C'), None),
            allowed(Some('s'), Some("stable")),
            allowed(Some('u'), Some("unique")),
            allowed(Some('z'), Some("zero-terminated")),
            denied(None, Some("compress-program")),
            denied(None, Some("files0-from")),
            denied(Some('o'), Some("output")),
            denied(None, Some("random-source")),
            denied(Some('T'), Some("temporary-directory")),
            denied(None, Some("check")),
            denied(None, Some("debug")),
            denied(None, Some("heapsort")),
            denied(None, Some("help")),
            denied(Some('m'), Some("merge")),
            denied(None, Some("mergesort")),
            denied(None, Some("mmap")),
            denied(None, Some("qsort")),
            denied(None, Some("radixsort")),
            denied(None, Some("sort")),
            denied(None, Some("version")),
        ],
        false,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[&["-t,", "-k2", "-rn"], &["--ke=1,1", "-rn"], &["-u"]],
    should_not_match: &[
        &["-o", "out"],
        &["-T", "/tmp"],
        &["--f=1"],
        &["--compress-pr=sh"],
        &["names.txt"],
    ],
};

/// uniq: stdin only.
const UNIQ: SafeBinSpec = SafeBinSpec {
    name: "uniq",
    grammar: gnu(
        &[
            valued(Some('f'), Some("skip-fields")),
            valued(Some('s'), Some("skip-chars")),
            valued(Some('w'), Some("check-chars")),
            allowed(Some('c'), Some("count")),
            allowed(Some('d'), Some("repeated")),
            allowed(Some('D'), None),
            allowed(Some('u'), Some("unique")),
            allowed(Some('i'), Some("ignore-case")),
            allowed(Some('z'), Some("zero-terminated")),
            denied(None, Some("all-repeated")),
            denied(None, Some("group")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        false,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[&["-c"], &["-f", "1", "-i"]],
    should_not_match: &[&["in.txt"], &["-c", "in.txt", "out.txt"]],
};

/// head: stdin only; `-5` is `-n 5`.
const HEAD: SafeBinSpec = SafeBinSpec {
    name: "head",
    grammar: gnu(
        &[
            valued(Some('n'), Some("lines")),
            valued(Some('c'), Some("bytes")),
            allowed(Some('q'), Some("quiet")),
            allowed(None, Some("silent")),
            allowed(Some('v'), Some("verbose")),
            allowed(Some('z'), Some("zero-terminated")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        true,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[
        &["-n", "5"],
        &["-5"],
        &["-qn5"],
        &["--li", "5"],
        &["-n", "1", "-"],
    ],
    should_not_match: &[&["/etc/passwd"], &["-n"], &["--lines="], &["-n", "~/x"]],
};

/// tail: stdin only; following refused (it never ends).
const TAIL: SafeBinSpec = SafeBinSpec {
    name: "tail",
    grammar: gnu(
        &[
            valued(Some('n'), Some("lines")),
            valued(Some('c'), Some("bytes")),
            allowed(Some('q'), Some("quiet")),
            allowed(None, Some("silent")),
            allowed(Some('v'), Some("verbose")),
            allowed(Some('z'), Some("zero-terminated")),
            denied(Some('f'), Some("follow")),
            denied(Some('F'), None),
            denied(None, Some("retry")),
            denied(None, Some("pid")),
            denied(None, Some("debug")),
            denied(None, Some("max-unchanged-stats")),
            denied(Some('s'), Some("sleep-interval")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        true,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[&["-n", "1"], &["-q"], &["-20"]],
    should_not_match: &[&["-fn", "1"], &["--fo"], &["-F"], &["log.txt"]],
};

/// tr: one or two sets.
const TR: SafeBinSpec = SafeBinSpec {
    name: "tr",
    grammar: gnu(
        &[
            allowed(Some('c'), Some("complement")),
            allowed(Some('C'), None),
            allowed(Some('d'), Some("delete")),
            allowed(Some('s'), Some("squeeze-repeats")),
            allowed(Some('t'), Some("truncate-set1")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        false,
    ),
    min_operands: 1,
    max_operands: Some(2),
    should_match: &[&["a-z", "A-Z"], &["-d", "\\r"], &["$", "_"]],
    should_not_match: &[&["-S", "a", "b"], &["/", "_"], &[], &["a", "b", "c"]],
};

/// wc: stdin only.
const WC: SafeBinSpec = SafeBinSpec {
    name: "wc",
    grammar: gnu(
        &[
            allowed(Some('c'), Some("bytes")),
            allowed(Some('m'), Some("chars")),
            allowed(Some('l'), Some("lines")),
            allowed(Some('L'), Some("max-line-length")),
            allowed(Some('w'), Some("words")),
            denied(None, Some("files0-from")),
            denied(None, Some("debug")),
            denied(None, Some("total")),
            denied(None, Some("help")),
            denied(None, Some("version")),
        ],
        false,
    ),
    min_operands: 0,
    max_operands: Some(0),
    should_match: &[&["-l"], &["-l", "-"], &["--li"]],
    should_not_match: &[&["--files0-from=x"], &["-l", "a.txt"]],
};
