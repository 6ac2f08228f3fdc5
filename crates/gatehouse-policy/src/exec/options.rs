//! One option-grammar reader for every tool whose command line the policy reads: the
//! interpreters and carriers whose inline code is looked for, the safe bins' profiles and the
//! modelled wrappers. A grammar lists the tool's options, which take a value and whether that
//! value may be the next word; how it reads clusters, abbreviations, `--` and operands is the
//! tool's getopt.
//!
//! Reading an option's value as the program (`python3 -W ignore -c …` taken as the script
//! `ignore`), or the program as a value, is how inline code slips past, so a word is only
//! classified by a grammar that knows the option; an unknown option fails the parse.

/// How an option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// No value.
    Flag,
    /// A value: the rest of the cluster (`-Wignore`), else the next word; `--opt=v` or
    /// `--opt v`.
    Required,
    /// An optional value, attached only: the rest of the cluster (`-i.bak`) or `--opt=v`.
    Attached,
    /// The characters of this set right after the letter are its value and the cluster goes on
    /// (perl `-l0ne`: `-l0`, `-n`, `-e`).
    Leading(&'static str),
    /// Two values, always the next two words (jq `--arg NAME VALUE`); the first is recorded.
    Pair,
}

/// What an option means for the program that runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Changes nothing about which code runs.
    Plain,
    /// Needs no program: prints something and exits (`--version`), or finds its own files
    /// (`node --test`, `php -S`), so it does not read one from stdin.
    Info,
    /// Its value is program text (`-c`, `-e`, `--eval`, sed `-e`).
    Code,
    /// Takes program text typed in later: an interactive mode, or a debugger on stdin or on a
    /// port (`node --inspect`, which anyone reaching the port can drive).
    Stdin,
    /// Its value names the program file (`-f`), so no operand is the program.
    ProgramFile,
    /// Its value names a module or setting that is loaded before the program; each tool
    /// checks it.
    Module,
    /// Its value names a module that is the program itself (python `-m`); the tool checks it.
    RunsModule,
    /// Its value names a file of settings that can load code (node `--env-file`, which may set
    /// `NODE_OPTIONS=--import=data:…`), so it counts as code whatever the file.
    Settings,
    /// A real option of the tool that a profile refuses (a safe bin's `sort -o`): known, so an
    /// abbreviation of another option is not read as it, and refused.
    Denied,
}

/// One option, by its short letter, its long name, or both.
#[derive(Debug)]
pub(crate) struct Opt<'a> {
    pub(crate) short: Option<char>,
    pub(crate) long: Option<&'a str>,
    pub(crate) arity: Arity,
    pub(crate) role: Role,
    /// Everything after it belongs to the program (python `-c`, `-m`).
    pub(crate) ends: bool,
}

/// A plain option without a value.
pub(crate) const fn flag<'a>(short: Option<char>, long: Option<&'a str>) -> Opt<'a> {
    opt(short, long, Arity::Flag, Role::Plain)
}

/// An option with this arity and role.
pub(crate) const fn opt<'a>(
    short: Option<char>,
    long: Option<&'a str>,
    arity: Arity,
    role: Role,
) -> Opt<'a> {
    Opt {
        short,
        long,
        arity,
        role,
        ends: false,
    }
}

/// An option after which every word belongs to the program.
pub(crate) const fn ending(short: char, arity: Arity, role: Role) -> Opt<'static> {
    Opt {
        short: Some(short),
        long: None,
        arity,
        role,
        ends: true,
    }
}

/// What `-5` is to a tool that reads a count that way (`head -5` is `head -n 5`).
pub(crate) static NUMERIC_SHORTHAND: Opt<'static> = opt(None, None, Arity::Flag, Role::Plain);

/// A tool's option grammar.
#[derive(Debug)]
pub(crate) struct Grammar<'a> {
    pub(crate) opts: &'a [Opt<'a>],
    /// GNU getopt permutes: options may follow operands (GNU sed `sed p -e 'e id'`).
    pub(crate) permute: bool,
    /// GNU getopt_long accepts any unambiguous prefix of a long option (`--expr=…`).
    pub(crate) abbreviations: bool,
    /// An unknown `--name=value` is taken as a flag: node rejects unknown options itself and
    /// passes V8 flags (`--max-old-space-size=4096`) written that way; the value is attached,
    /// so it cannot shift which word is the program.
    pub(crate) unknown_attached_ok: bool,
    /// A cluster of digits is a count ([`NUMERIC_SHORTHAND`], with the digits as its value).
    pub(crate) numeric_shorthand: bool,
}

/// A parsed command line: options in order with their values, then the operands.
#[derive(Debug)]
pub(crate) struct Parsed<'g, 'a> {
    pub(crate) options: Vec<(&'g Opt<'g>, Option<&'a str>)>,
    /// Operands in order; for a tool that stops at the first operand, it and everything after.
    pub(crate) operands: Vec<&'a str>,
    /// Which `options` (by index) took their value from the next word (`-f FILE`) rather than
    /// attached (`-fFILE`, `--file=FILE`): another tool's grammar may read that word as an
    /// option instead.
    pub(crate) next_word: Vec<usize>,
    /// The values of [`Arity::Pair`] options beyond the first, in order.
    pub(crate) second_values: Vec<&'a str>,
}

impl Parsed<'_, '_> {
    /// Whether some given option has this role.
    pub(crate) fn has(&self, role: Role) -> bool {
        self.options.iter().any(|(opt, _)| opt.role == role)
    }
}

/// The grammar does not know an option (or it is ambiguous, or misused): what it does with the
/// words around it cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unknown<'a> {
    /// The argument the option was found in, as written (`-z`, `--bogus=1`).
    pub(crate) word: &'a str,
}

impl<'g> Grammar<'g> {
    fn short(&self, letter: char) -> Option<&'g Opt<'g>> {
        self.opts.iter().find(|opt| opt.short == Some(letter))
    }

    /// Exact long name, else (for getopt_long tools) its one unambiguous prefix match.
    fn long(&self, name: &str) -> Option<&'g Opt<'g>> {
        if let Some(exact) = self.opts.iter().find(|opt| opt.long == Some(name)) {
            return Some(exact);
        }
        if !self.abbreviations || name.is_empty() {
            return None;
        }
        let mut matches = self
            .opts
            .iter()
            .filter(|opt| opt.long.is_some_and(|long| long.starts_with(name)));
        match (matches.next(), matches.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }

    /// Parses `args` (the words after the program name).
    pub(crate) fn parse<'a>(&self, args: &'a [String]) -> Result<Parsed<'g, 'a>, Unknown<'a>> {
        let mut parsed = Parsed {
            options: Vec::new(),
            operands: Vec::new(),
            next_word: Vec::new(),
            second_values: Vec::new(),
        };
        let rest_are_operands = |parsed: &mut Parsed<'g, 'a>, from: usize| {
            parsed.operands.extend(
                args.get(from..)
                    .unwrap_or_default()
                    .iter()
                    .map(String::as_str),
            );
        };
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            i += 1;
            if arg == "--" {
                rest_are_operands(&mut parsed, i);
                break;
            }
            if arg == "-" || !arg.starts_with('-') {
                parsed.operands.push(arg);
                if self.permute {
                    continue;
                }
                rest_are_operands(&mut parsed, i);
                break;
            }
            let known = match arg.strip_prefix("--") {
                Some(long) => self.long_option(long, args, &mut i, &mut parsed),
                None => self.cluster(&arg[1..], args, &mut i, &mut parsed),
            };
            let ended = known.ok_or(Unknown { word: arg })?;
            if ended {
                rest_are_operands(&mut parsed, i);
                break;
            }
        }
        Ok(parsed)
    }

    /// The value of an option whose value may be the next word, taking that word.
    fn next_word<'a>(
        args: &'a [String],
        i: &mut usize,
        parsed: &mut Parsed<'g, 'a>,
    ) -> Option<&'a str> {
        parsed.next_word.push(parsed.options.len());
        let next = args.get(*i).map(String::as_str);
        *i += 1;
        next
    }

    /// The two next words of an [`Arity::Pair`] option; the second goes to `second_values`.
    fn pair<'a>(args: &'a [String], i: &mut usize, parsed: &mut Parsed<'g, 'a>) -> Option<&'a str> {
        let first = Self::next_word(args, i, parsed)?;
        let second = args.get(*i).map(String::as_str)?;
        *i += 1;
        parsed.second_values.push(second);
        Some(first)
    }

    /// One `--name[=value]`; returns whether it ends the options, `None` when it is unknown.
    fn long_option<'a>(
        &self,
        long: &'a str,
        args: &'a [String],
        i: &mut usize,
        parsed: &mut Parsed<'g, 'a>,
    ) -> Option<bool> {
        let (name, inline) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let Some(opt) = self.long(name) else {
            return match inline {
                Some(_) if self.unknown_attached_ok => Some(false),
                _ => None,
            };
        };
        let value = match opt.arity {
            Arity::Flag if inline.is_some() => return None,
            Arity::Flag => None,
            Arity::Required => match inline {
                Some(value) => Some(value),
                None => Self::next_word(args, i, parsed),
            },
            Arity::Pair if inline.is_some() => return None,
            Arity::Pair => Some(Self::pair(args, i, parsed)?),
            Arity::Attached | Arity::Leading(_) => inline,
        };
        parsed.options.push((opt, value));
        Some(opt.ends)
    }

    /// One `-abc` cluster; returns whether it ends the options, `None` when a letter is unknown.
    fn cluster<'a>(
        &self,
        cluster: &'a str,
        args: &'a [String],
        i: &mut usize,
        parsed: &mut Parsed<'g, 'a>,
    ) -> Option<bool> {
        if self.numeric_shorthand && cluster.bytes().all(|b| b.is_ascii_digit()) {
            parsed.options.push((&NUMERIC_SHORTHAND, Some(cluster)));
            return Some(false);
        }
        let mut rest = cluster;
        while let Some(letter) = rest.chars().next() {
            rest = &rest[letter.len_utf8()..];
            let opt = self.short(letter)?;
            let value = match opt.arity {
                Arity::Flag => None,
                Arity::Required if rest.is_empty() => Self::next_word(args, i, parsed),
                Arity::Required => Some(std::mem::take(&mut rest)),
                Arity::Pair if rest.is_empty() => Some(Self::pair(args, i, parsed)?),
                Arity::Pair => return None,
                Arity::Attached => (!rest.is_empty()).then(|| std::mem::take(&mut rest)),
                Arity::Leading(set) => {
                    let end = rest
                        .char_indices()
                        .find(|(_, c)| !set.contains(*c))
                        .map_or(rest.len(), |(at, _)| at);
                    let (value, after) = rest.split_at(end);
                    rest = after;
                    Some(value)
                }
            };
            parsed.options.push((opt, value));
            if opt.ends {
                return Some(true);
            }
        }
        Some(false)
    }
}

/// Whether a program operand or `-f` value may make the tool read its program from stdin, or
/// from some other file that is not a plain file on disk. `/dev/stdin` has many spellings
/// (`/dev/../dev/stdin`, `../../../dev/stdin`, `/proc/self/root/dev/stdin`, `/dev/fd/0`), so
/// rather than list them this fails closed: `-`, any path that (with empty and `.` components
/// dropped) is under `/dev` or `/proc` (or `dev/…`, `proc/…` relative, which is that from `/`),
/// and any path with a `..` component, which may climb anywhere.
pub(crate) fn is_stdin_path(path: &str) -> bool {
    if path == "-" {
        return true;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.contains(&"..") {
        return true;
    }
    let absolute = path.starts_with('/');
    let under_special = matches!(parts.first(), Some(&"dev" | &"proc"));
    under_special && (absolute || parts.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOY: Grammar<'static> = Grammar {
        opts: &[
            flag(Some('n'), Some("quiet")),
            opt(Some('e'), Some("expression"), Arity::Required, Role::Code),
            opt(Some('i'), Some("in-place"), Arity::Attached, Role::Plain),
            opt(Some('l'), None, Arity::Leading("01234567"), Role::Plain),
            ending('m', Arity::Required, Role::RunsModule),
            flag(None, Some("quit")),
        ],
        permute: false,
        abbreviations: true,
        unknown_attached_ok: false,
        numeric_shorthand: false,
    };

    fn parse(args: &[&str]) -> Result<(Vec<String>, Vec<String>), String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let parsed = TOY
            .parse(&args)
            .map_err(|unknown| unknown.word.to_owned())?;
        let options = parsed
            .options
            .iter()
            .map(|(opt, value)| {
                let name = opt
                    .short
                    .map_or_else(|| opt.long.unwrap_or("?").to_owned(), |c| c.to_string());
                format!("{name}={}", value.unwrap_or("-"))
            })
            .collect();
        let operands = parsed.operands.iter().map(|s| (*s).to_owned()).collect();
        Ok((options, operands))
    }

    #[test]
    fn takes_values_from_the_cluster_or_the_next_word() {
        let (options, operands) = parse(&["-ne", "x", "y"]).unwrap();
        assert_eq!(options, ["n=-", "e=x"]);
        assert_eq!(operands, ["y"]);
        let (options, operands) = parse(&["-l0ne", "x"]).unwrap();
        assert_eq!(options, ["l=0", "n=-", "e=x"]);
        assert!(operands.is_empty());
        let (options, operands) = parse(&["-i", "x"]).unwrap();
        assert_eq!(options, ["i=-"]);
        assert_eq!(operands, ["x"]);
        let (options, operands) = parse(&["-m", "mod", "-e", "x"]).unwrap();
        assert_eq!(options, ["m=mod"]);
        assert_eq!(operands, ["-e", "x"]);
        let (options, _) = parse(&["--expr=x", "--in-place"]).unwrap();
        assert_eq!(options, ["e=x", "i=-"]);
    }

    #[test]
    fn tells_which_values_were_the_next_word() {
        let args: Vec<String> = [
            "-n",
            "-e",
            "x",
            "-ey",
            "--expression",
            "z",
            "--expression=w",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
        let parsed = TOY.parse(&args).unwrap();
        assert_eq!(parsed.next_word, [1, 3]);
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        let unknown = |word: &str| Err(word.to_owned());
        assert_eq!(parse(&["-z"]), unknown("-z"));
        assert_eq!(parse(&["-nz", "x"]), unknown("-nz"));
        assert_eq!(
            parse(&["--qu"]),
            unknown("--qu"),
            "ambiguous: --quiet, --quit"
        );
        assert_eq!(parse(&["--bogus=1"]), unknown("--bogus=1"));
        assert_eq!(parse(&["--quiet=1"]), unknown("--quiet=1"));
    }

    #[test]
    fn recognises_stdin_paths() {
        for path in [
            "-",
            "/dev/stdin",
            "//dev/./stdin",
            "/dev/fd/0",
            "/proc/self/fd/0",
        ] {
            assert!(is_stdin_path(path), "{path}");
        }
        for path in [
            "/dev/../dev/stdin",
            "../../../dev/stdin",
            "/proc/self/root/dev/stdin",
            "/dev/fd/../fd/0",
            "/dev//../dev/stdin",
            "dev/stdin",
            "/dev/null",
            "lib/../x.sed",
            "..",
        ] {
            assert!(is_stdin_path(path), "{path}");
        }
        for path in [
            "x.sed",
            "./x.sed",
            "dev",
            "scripts/a.awk",
            "/opt/x..y",
            "--",
        ] {
            assert!(!is_stdin_path(path), "{path}");
        }
    }
}
