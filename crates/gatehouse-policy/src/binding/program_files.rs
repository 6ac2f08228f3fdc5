//! Tools whose program is in files rather than in argv: sed's and awk's `-f` scripts and the
//! makefiles GNU make reads. Approving `make deploy` or `awk -f report.awk data.csv` approves
//! what those files say at that moment, so their contents are bound.
//!
//! Arguments are read with the option grammars the policy judges these tools by, so both agree
//! on which word names a program file; an option the grammar does not know refuses the binding,
//! and so does an option whose value is the next word and starts with `-` (`sed -l -f x.sed`:
//! BSD sed's `-l` is a flag, BWK awk skips an unknown `-e`, so there `-f` is an option).
//! The tool is named by argv[0]; `binding.rs` refuses one whose resolved executable's name
//! denotes another program (`./awk` a link to `python3`).
//! Per tool:
//!
//! - **sed** (`sed`, `gsed`): every `-f`/`--file` script, in order, read as GNU sed reads options
//!   (also after operands), which finds every file BSD sed would.
//! - **awk** (`awk`, `gawk`, `mawk`, `nawk`): every `-f`/`--file` and `-E`/`--exec` program file
//!   and gawk's `-DFILE`/`--debug=FILE` debugger commands (which can `eval` code), in order.
//!   `-i`/`--include` and `-l`/`--load` load from `AWKPATH` and are refused, as are `-W` words
//!   other than `version`, `usage`, `help` and `copyright`, and `AWKPATH` itself beside a file
//!   (gawk looks a `-f` name up on it).
//! - **GNU make** (`make`, `gmake`): every `-f`/`--file`/`--makefile` makefile in order or,
//!   without one, the first of `GNUmakefile`, `makefile` and `Makefile` that exists, in the
//!   directory the `-C`s lead to (none: refused, since make would then try to build one with
//!   its built-in rules). Each makefile by its contents and by which file it is (device, inode,
//!   size, times; of the name make opens and of the file it leads to), since make remakes a
//!   makefile older than a remake source; beside it, the files make's built-in rules could
//!   remake it from (see [`Bound::remake_sources`]). Refused: `-B`/`--always-make` (remakes
//!   every makefile regardless of times); a `-f` or `-C` value starting with `~` (make expands
//!   it to a home directory); a makefile whose name ends in a suffix of make's default
//!   `.SUFFIXES` (a suffix rule remakes `rules.s` from `rules.S`, a name not beside it as a
//!   prefix); `MAKEFILES`, `VPATH`, `MAKEFLAGS` or `GNUMAKEFLAGS` in the request's env or a
//!   wrapper's assignments at all (they name makefiles, search paths or options argv does not
//!   show); a command-line definition of one of those or of a name that is not a plain
//!   identifier (make expands `V$()PATH`); `--eval` text containing `$` or one of those names;
//!   BSD make.
//!
//! Without such a file (sed's or awk's program is then the first operand) nothing is bound
//! here: argv binds the program. Data operands are never bound, nor are files the program
//! opens as it runs (`include`d makefiles, awk's `@include`, sed's `r` files).
//!
//! The digest is the sha256 over the (path, digest) pairs in order, each length-prefixed, with
//! canonical paths, so a file found at another path differs even with the same contents; a
//! file's digest is of its contents, a makefile's of its contents and identity, a remake
//! source's of its identity.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{BindingError, Digest, Launch, ScriptAmbiguity, digest_fields, hash_file, identity_of};
use crate::exec::inline_eval::AWK_INFO_WORDS;
use crate::exec::inline_eval::grammars;
use crate::exec::options::{Grammar, Opt, Parsed, Role, Unknown};

/// A tool whose program is read from files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tool {
    /// GNU or BSD sed.
    Sed,
    /// gawk, mawk, nawk, busybox's awk.
    Awk,
    /// GNU make.
    GnuMake,
    /// BSD make, whose makefile lookup (`.depend`, `-m` directories, `sys.mk`) is not bound.
    OtherMake,
}

/// Whether this host's `make` is BSD make (macOS ships GNU make).
const BSD_MAKE_HOST: bool = cfg!(any(
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
));

/// The names GNU make looks for, in its order, when no `-f` is given.
const DEFAULT_MAKEFILES: [&str; 3] = ["GNUmakefile", "makefile", "Makefile"];

/// Variables that make GNU make read files not named on its command line: `MAKEFILES` lists
/// makefiles read before the others, `VPATH` directories searched for the files a makefile can
/// be remade from, and `MAKEFLAGS`/`GNUMAKEFLAGS` carry options (`--eval=include x.mk`,
/// `-B`) and definitions that argv does not show.
const MAKE_SETTINGS: [&str; 4] = ["MAKEFILES", "VPATH", "MAKEFLAGS", "GNUMAKEFLAGS"];

impl Tool {
    /// The tool a program's file name denotes, ignoring trailing version digits (`gawk-5.3`).
    pub(super) fn named(name: &str) -> Option<Tool> {
        let name = name.to_ascii_lowercase();
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
        match stem {
            "sed" | "gsed" => Some(Tool::Sed),
            "awk" | "gawk" | "mawk" | "nawk" => Some(Tool::Awk),
            "make" if BSD_MAKE_HOST => Some(Tool::OtherMake),
            "make" | "gmake" => Some(Tool::GnuMake),
            "bmake" | "pmake" | "bsdmake" => Some(Tool::OtherMake),
            _ => None,
        }
    }
}

/// The files `tool` reads its program from, `None` when its program is all in argv; refused
/// when those files cannot be named exactly.
pub(super) fn bind(
    tool: Tool,
    program: &str,
    args: &[String],
    launch: &Launch<'_>,
) -> Result<Option<Bound>, BindingError> {
    let files = match tool {
        Tool::Sed => sed(program, args)?,
        Tool::Awk => awk(program, args, launch)?,
        Tool::GnuMake => return make(program, args, launch),
        Tool::OtherMake => {
            return Err(refused(
                program,
                ScriptAmbiguity::NotGnuMake(program.to_owned()),
            ));
        }
    };
    if files.is_empty() {
        return Ok(None);
    }
    let mut bound = Bound::default();
    for file in files {
        bound.contents(program, launch.cwd, file)?;
    }
    Ok(Some(bound))
}

/// sed's `-f` scripts. The BSD reading (options end at the first operand) finds a subset.
fn sed<'a>(program: &str, args: &'a [String]) -> Result<Vec<&'a str>, BindingError> {
    let parsed = parse(&grammars::SED_GNU, program, args)?;
    Ok(values(&parsed, Role::ProgramFile))
}

/// awk's program files; refuses what loads code from a search path or is not understood.
fn awk<'a>(
    program: &str,
    args: &'a [String],
    launch: &Launch<'_>,
) -> Result<Vec<&'a str>, BindingError> {
    let parsed = parse(&grammars::AWK, program, args)?;
    let mut files = Vec::new();
    for &(opt, value) in &parsed.options {
        match opt.role {
            Role::Module => {
                let written = written(opt, value);
                return Err(refused(
                    program,
                    ScriptAmbiguity::ModuleFromSearchPath(written),
                ));
            }
            Role::ProgramFile => files.extend(value),
            Role::Plain
                if opt.short == Some('W')
                    && !AWK_INFO_WORDS.contains(&value.unwrap_or_default()) =>
            {
                let written = written(opt, value);
                return Err(refused(program, ScriptAmbiguity::UnknownOption(written)));
            }
            // gawk's debugger reads its commands from this file; `eval` among them runs code.
            Role::Plain if opt.short == Some('D') => files.extend(value),
            _ => {}
        }
    }
    if !files.is_empty() && launch.sets("AWKPATH").is_some() {
        return Err(refused(
            program,
            ScriptAmbiguity::FilesFromSetting("AWKPATH".to_owned()),
        ));
    }
    Ok(files)
}

/// GNU make's makefiles and what they could be remade from. `--version` and `--help` print and
/// exit without reading any.
fn make(
    program: &str,
    args: &[String],
    launch: &Launch<'_>,
) -> Result<Option<Bound>, BindingError> {
    let parsed = parse(&grammars::MAKE, program, args)?;
    if parsed.has(Role::Info) {
        return Ok(None);
    }
    // `-B` remakes every makefile from a remake source even when nothing changed.
    if let Some((opt, _)) = parsed
        .options
        .iter()
        .find(|(opt, _)| opt.short == Some('B'))
    {
        let written = written(opt, None);
        return Err(refused(program, ScriptAmbiguity::RemakesMakefiles(written)));
    }
    // make expands a leading `~` (`-f ~/x.mk`, `-C ~user`) to a home directory.
    let home = parsed.options.iter().find(|(opt, value)| {
        (opt.short == Some('C') || opt.role == Role::ProgramFile)
            && value.is_some_and(|value| value.starts_with('~'))
    });
    if let Some(&(opt, value)) = home {
        let written = written(opt, value);
        return Err(refused(program, ScriptAmbiguity::HomeDirectory(written)));
    }
    if let Some(reason) = make_file_setting(&parsed, launch) {
        return Err(refused(program, reason));
    }
    // make changes to every `-C` directory in turn, each relative to the one before, and only
    // then reads its makefiles, `-f` ones too.
    let dir = parsed
        .options
        .iter()
        .filter(|(opt, _)| opt.short == Some('C'))
        .filter_map(|(_, value)| *value)
        .fold(launch.cwd.to_path_buf(), |dir, next| dir.join(next));
    let mut makefiles = values(&parsed, Role::ProgramFile);
    if makefiles.is_empty() {
        // A name that exists at all is the one make picks, even a dangling symlink (refused
        // below as not a file).
        let found = DEFAULT_MAKEFILES
            .into_iter()
            .find(|name| fs::symlink_metadata(dir.join(name)).is_ok());
        let Some(found) = found else {
            let dir = dir.to_string_lossy().into_owned();
            return Err(refused(program, ScriptAmbiguity::NoMakefile(dir)));
        };
        makefiles.push(found);
    }
    // A suffix rule remakes `rules.s` from `rules.S`, a name the remake sources below miss.
    if let Some(makefile) = makefiles.iter().find(|name| has_built_in_suffix(name)) {
        let makefile = (*makefile).to_owned();
        return Err(refused(program, ScriptAmbiguity::MakefileSuffix(makefile)));
    }
    let mut bound = Bound::default();
    for makefile in makefiles {
        bound.makefile(program, &dir, makefile)?;
        bound.remake_sources(&dir.join(makefile))?;
    }
    Ok(Some(bound))
}

/// Why make's variables could make it read files no option names, if they can: a variable of
/// [`MAKE_SETTINGS`] set in the environment at all (by name, never its value, which may be a
/// secret), a command-line definition of one or of a name that is not a plain identifier (make
/// expands `V$()PATH`), or `--eval` text that mentions one or expands anything. Names compare
/// case-insensitively, more than make does, to fail closed.
fn make_file_setting(parsed: &Parsed<'_, '_>, launch: &Launch<'_>) -> Option<ScriptAmbiguity> {
    let is_setting = |name: &str| {
        MAKE_SETTINGS
            .iter()
            .any(|setting| setting.eq_ignore_ascii_case(name))
    };
    if let Some(name) = launch.names().find(|name| is_setting(name)) {
        return Some(ScriptAmbiguity::FilesFromSetting(name.to_owned()));
    }
    for word in parsed.operands.iter().filter(|word| word.contains('=')) {
        let name = definition_name(word);
        if !is_identifier(name) {
            return Some(ScriptAmbiguity::UnclearDefinition((*word).to_owned()));
        }
        if is_setting(name) {
            return Some(ScriptAmbiguity::FilesFromSetting((*word).to_owned()));
        }
    }
    let mentions = |text: &str| {
        let text = text.to_ascii_uppercase();
        text.contains('$') || MAKE_SETTINGS.iter().any(|name| text.contains(name))
    };
    values(parsed, Role::Code)
        .into_iter()
        .any(mentions)
        .then(|| ScriptAmbiguity::FilesFromSetting("--eval".to_owned()))
}

/// The variable a command-line definition sets: the words before `=` without the operator
/// (`:=`, `::=`, `:::=`, `+=`, `?=`, `!=`).
fn definition_name(word: &str) -> &str {
    let before = word.split_once('=').map_or(word, |(name, _)| name);
    [":::", "::", ":", "+", "?", "!"]
        .into_iter()
        .find_map(|operator| before.strip_suffix(operator))
        .unwrap_or(before)
}

/// `[A-Za-z_][A-Za-z0-9_.]*`: a name make takes as written, with nothing to expand.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// GNU make 4.3's default `.SUFFIXES` (`make -p -f /dev/null`): a target ending in one can be
/// remade by a suffix rule from the same stem with another of them (`.s` from `.S`, `.c` from
/// `.y`). `.lm`, which older makes list, is kept.
const BUILT_IN_SUFFIXES: [&str; 36] = [
    ".out", ".a", ".ln", ".o", ".c", ".cc", ".C", ".cpp", ".p", ".f", ".F", ".m", ".r", ".y", ".l",
    ".ym", ".yl", ".s", ".S", ".mod", ".sym", ".def", ".h", ".info", ".dvi", ".tex", ".texinfo",
    ".texi", ".txinfo", ".w", ".ch", ".web", ".sh", ".elc", ".el", ".lm",
];

/// Whether a makefile's name ends in a [`BUILT_IN_SUFFIXES`] one, compared case-insensitively
/// (more than make does, to fail closed).
fn has_built_in_suffix(name: &str) -> bool {
    let name = name.as_bytes();
    BUILT_IN_SUFFIXES.iter().any(|suffix| {
        name.len()
            .checked_sub(suffix.len())
            .and_then(|at| name.get(at..))
            .is_some_and(|end| end.eq_ignore_ascii_case(suffix.as_bytes()))
    })
}

/// The bound files as (path, digest) pairs, in the order the tool reads them.
#[derive(Debug, Default)]
pub(super) struct Bound(Vec<(PathBuf, Digest)>);

impl Bound {
    /// Adds a program file (see [`program_file`]) by its canonical path and contents.
    fn contents(&mut self, program: &str, dir: &Path, name: &str) -> Result<(), BindingError> {
        let file = program_file(program, dir, name)?;
        let digest = hash_file(&file)?;
        self.0.push((file, digest));
        Ok(())
    }

    /// Adds a makefile by its contents and by which file it is (device, inode, size, times),
    /// both of the file and of the name make opens: make remakes a makefile that is older than
    /// a remake source (`Makefile.sh`), so setting its time back changes what runs.
    fn makefile(&mut self, program: &str, dir: &Path, name: &str) -> Result<(), BindingError> {
        let file = program_file(program, dir, name)?;
        let unreadable = |path: &Path| {
            let path = path.to_path_buf();
            move |source| BindingError::ScriptUnreadable { path, source }
        };
        let target = fs::metadata(&file).map_err(unreadable(&file))?;
        let named = dir.join(name);
        let link = fs::symlink_metadata(&named).map_err(unreadable(&named))?;
        let contents = hash_file(&file)?;
        let digest = digest_fields([
            contents.as_slice(),
            &identity_of(&target),
            &identity_of(&link),
        ]);
        self.0.push((file, digest));
        Ok(())
    }

    /// Adds which files GNU make's built-in rules could remake `makefile` from before reading
    /// it again. make tries the makefile's name with any suffix (`Makefile.sh` is copied over
    /// `Makefile` when newer, `Makefile.c` compiled into it, through chains such as
    /// `Makefile.y` → `.c` → `.o`), `s.Makefile`, `RCS/Makefile,v` and `SCCS/s.Makefile`. Every
    /// entry of the makefile's directory named so (and of its `RCS/` and `SCCS/`) is bound by
    /// which file it is (device, inode, size, times), so one created, edited or touched after
    /// approval differs. Directories a makefile's own `VPATH` names are not searched.
    fn remake_sources(&mut self, makefile: &Path) -> Result<(), BindingError> {
        let (Some(dir), Some(name)) = (makefile.parent(), makefile.file_name()) else {
            return Ok(());
        };
        let name = name.as_encoded_bytes();
        let sccs_name = [b"s.".as_slice(), name].concat();
        let mut sources = entries(dir, true, |entry| {
            (entry.starts_with(name) && entry != name) || entry.starts_with(&sccs_name)
        })?;
        sources.extend(entries(&dir.join("RCS"), false, |entry| {
            entry.starts_with(name)
        })?);
        sources.extend(entries(&dir.join("SCCS"), false, |entry| {
            entry.starts_with(&sccs_name)
        })?);
        sources.sort();
        for source in sources {
            // Followed as make follows it; a dangling link by itself. One gone since it was
            // listed is not there for make either.
            let meta = fs::metadata(&source).or_else(|_| fs::symlink_metadata(&source));
            if let Ok(meta) = meta {
                let digest = digest_fields([b"remake source".as_slice(), &identity_of(&meta)]);
                self.0.push((source, digest));
            }
        }
        Ok(())
    }

    /// The files, canonical, in the order the tool reads them.
    pub(super) fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(|(path, _)| path.as_path())
    }

    /// One digest over every pair, each part length-prefixed.
    pub(super) fn digest(&self) -> Digest {
        digest_fields(
            self.0
                .iter()
                .flat_map(|(path, digest)| [path.as_os_str().as_encoded_bytes(), digest]),
        )
    }
}

/// The canonical path of a program file: `name` as the tool opens it, relative to `dir`. It
/// must be a regular file on disk; `-` is stdin, and a name under `/dev` or `/proc` means this
/// process's files here and the tool's there.
fn program_file(program: &str, dir: &Path, name: &str) -> Result<PathBuf, BindingError> {
    if name == "-" {
        return Err(refused(program, ScriptAmbiguity::ProgramFromStdin));
    }
    fs::canonicalize(dir.join(name))
        .ok()
        .filter(|path| path.is_file() && !path.starts_with("/dev") && !path.starts_with("/proc"))
        .ok_or_else(|| refused(program, ScriptAmbiguity::NotAFile(name.to_owned())))
}

/// The entries of `dir` whose names pass `keep`. A directory that must exist and cannot be
/// listed refuses the binding; an optional one (`RCS/`) that is missing has none.
fn entries(
    dir: &Path,
    required: bool,
    keep: impl Fn(&[u8]) -> bool,
) -> Result<Vec<PathBuf>, BindingError> {
    let unreadable = |source| BindingError::ScriptUnreadable {
        path: dir.to_path_buf(),
        source,
    };
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error)
            if !required
                && matches!(
                    error.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
        {
            return Ok(Vec::new());
        }
        Err(error) => return Err(unreadable(error)),
    };
    let mut kept = Vec::new();
    for entry in listing {
        let name = entry.map_err(unreadable)?.file_name();
        if keep(name.as_encoded_bytes()) {
            kept.push(dir.join(name));
        }
    }
    Ok(kept)
}

/// The values given to options of this role, in order; an option missing its value (the tool
/// then refuses to start) names nothing.
fn values<'a>(parsed: &Parsed<'_, 'a>, role: Role) -> Vec<&'a str> {
    parsed
        .options
        .iter()
        .filter(|(opt, _)| opt.role == role)
        .filter_map(|(_, value)| *value)
        .collect()
}

/// An option as a person would write it, for a reason: `-i lib`, `--load`.
fn written(opt: &Opt, value: Option<&str>) -> String {
    let name = match (opt.short, opt.long) {
        (Some(letter), _) => format!("-{letter}"),
        (None, Some(long)) => format!("--{long}"),
        (None, None) => String::new(),
    };
    match value {
        Some(value) => format!("{name} {value}"),
        None => name,
    }
}

/// Parses `args` with `grammar` for the binding, refusing an option it does not know and an
/// option whose value is a next word starting with `-`: another implementation reads that word
/// as an option (BSD sed's `-l` is a flag, so `sed -l -f x.sed` runs `x.sed` there; BWK awk
/// skips an unknown `-e` and reads `-f` next).
fn parse<'a>(
    grammar: &Grammar<'static>,
    program: &str,
    args: &'a [String],
) -> Result<Parsed<'static, 'a>, BindingError> {
    let parsed = grammar
        .parse(args)
        .map_err(|unknown| not_understood(program, unknown))?;
    let option_like = parsed.next_word.iter().find_map(|&index| {
        let &(opt, value) = parsed.options.get(index)?;
        value
            .filter(|value| value.starts_with('-') && *value != "-")
            .map(|value| written(opt, Some(value)))
    });
    match option_like {
        Some(written) => Err(refused(program, ScriptAmbiguity::OptionAsValue(written))),
        None => Ok(parsed),
    }
}

fn not_understood(program: &str, unknown: Unknown<'_>) -> BindingError {
    refused(
        program,
        ScriptAmbiguity::UnknownOption(unknown.word.to_owned()),
    )
}

fn refused(program: &str, reason: ScriptAmbiguity) -> BindingError {
    BindingError::ScriptNotIdentified {
        program: program.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests;
