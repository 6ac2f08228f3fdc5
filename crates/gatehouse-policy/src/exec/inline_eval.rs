//! Interpreters and carriers running code given on the command line (`python -c`, `awk '…'`,
//! `find -exec`, `xargs cmd`): allowlisting the interpreter must not approve arbitrary code.

use super::unwrap::basename;

/// Programs that run code or other programs, so an allowlist entry for them is never derived
/// by allow-always and they never qualify as safe bins.
const INTERPRETER_LIKE: &[&str] = &[
    "node",
    "nodejs",
    "bun",
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
    "rscript",
    "tclsh",
    "wish",
    "expect",
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
    "sqlite3",
    "vim",
    "nvim",
    "emacs",
    "ed",
    "ex",
];

/// Whether a program runs code or other programs given to it.
pub(crate) fn is_interpreter_like(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    is_python(&name) || INTERPRETER_LIKE.contains(&name.as_str())
}

fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|prefix| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// Whether this program, called with these arguments, runs code written on the command line.
/// Returns a short description of the construct for the reason.
pub(crate) fn inline_code(program: &str, args: &[String]) -> Option<&'static str> {
    let name = basename(program).to_ascii_lowercase();
    let hit = match name.as_str() {
        n if is_python(n) => short_cluster_hit(args, &['c'], &['W', 'X', 'm', 'Q'], &[]),
        "node" | "nodejs" | "bun" => {
            short_cluster_hit(args, &['e', 'p'], &['r'], &["--eval", "--print"])
        }
        "deno" => args.first().is_some_and(|a| a == "eval"),
        "ruby" => short_cluster_hit(args, &['e'], &['r', 'I', 'C', 'E', 'x'], &[]),
        "perl" => short_cluster_hit(
            args,
            &['e', 'E'],
            &['M', 'm', 'I', 'i', 'x', 'd', 'D', 'C'],
            &[],
        ),
        "php" => short_cluster_hit(
            args,
            &['r', 'B', 'R', 'E'],
            &['c', 'd', 'f', 'F', 'z', 't', 'S'],
            &[],
        ),
        "julia" => short_cluster_hit(args, &['e', 'E'], &[], &["--eval", "--print"]),
        "osascript" => short_cluster_hit(args, &['e'], &['l', 's'], &[]),
        "elixir" => args.iter().any(|a| a == "-e" || a == "--eval"),
        "gdb" | "lldb" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-ex" | "--ex" | "-iex" | "--iex" | "-o" | "--one-line"
            ) || a.starts_with("--eval-command")
                || a.starts_with("-eval-command")
                || a.starts_with("--init-eval-command")
        }),
        "awk" | "gawk" | "mawk" | "nawk" => awk_program_inline(args),
        "sed" | "gsed" => sed_runs_commands(args),
        "find" | "gfind" => args
            .iter()
            .any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")),
        "xargs" | "gxargs" => xargs_runs_command(args),
        _ => false,
    };
    hit.then_some(match name.as_str() {
        "awk" | "gawk" | "mawk" | "nawk" => "an inline awk program",
        "sed" | "gsed" => "a sed script that executes or writes",
        "find" | "gfind" => "find -exec/-ok, which runs commands",
        "xargs" | "gxargs" => "xargs running a command",
        _ => "inline interpreter code",
    })
}

/// Scans options up to the first operand. A cluster hits when a code flag appears before any
/// flag that takes the rest of the cluster as its value (`-bc` hits, `-Wc` does not).
fn short_cluster_hit(args: &[String], code: &[char], valued: &[char], long: &[&str]) -> bool {
    for arg in args {
        if arg == "--" || !arg.starts_with('-') || arg == "-" {
            return false;
        }
        if let Some(name) = arg.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if long.iter().any(|l| l.trim_start_matches('-') == name) {
                return true;
            }
            continue;
        }
        for c in arg.chars().skip(1) {
            if code.contains(&c) {
                return true;
            }
            if valued.contains(&c) {
                break;
            }
        }
    }
    false
}

/// awk takes its program from the first operand unless `-f`/`--file` names a program file.
fn awk_program_inline(args: &[String]) -> bool {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-f" | "--file" => return false,
            "-e" | "--source" => return true,
            "--" => return args.get(i + 1).is_some(),
            "-F" | "-v" | "--field-separator" | "--assign" => i += 2,
            a if a.starts_with("--file=") || (a.starts_with("-f") && a.len() > 2) => return false,
            a if a.starts_with("--source=") || (a.starts_with("-e") && a.len() > 2) => return true,
            a if a.starts_with('-') && a.len() > 1 => i += 1,
            _ => return true,
        }
    }
    false
}

/// sed scripts given inline (by `-e` or as the first operand) that use `e`, `w`/`W` or the
/// `e`/`w` flags of `s`. Scripts from `-f` files are not inspected here.
fn sed_runs_commands(args: &[String]) -> bool {
    let mut scripts: Vec<&str> = Vec::new();
    let mut from_file = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_str();
        i += 1;
        match arg {
            "-e" | "--expression" => {
                if let Some(script) = args.get(i) {
                    scripts.push(script);
                }
                i += 1;
            }
            "-f" | "--file" => {
                from_file = true;
                i += 1;
            }
            "--" => break,
            _ if arg.starts_with("--expression=") => {
                scripts.push(arg.trim_start_matches("--expression="));
            }
            _ if arg.starts_with("--file=") => from_file = true,
            _ if arg.starts_with("-e") && arg.len() > 2 => scripts.push(&arg[2..]),
            _ if arg.starts_with("-f") && arg.len() > 2 => from_file = true,
            _ if arg.starts_with('-') && arg.len() > 1 => {
                if arg.contains('e') && !arg.starts_with("--") {
                    // `-ne 's/x/y/e'`: the e ends the cluster and takes the next word.
                    if let Some(script) = args.get(i) {
                        scripts.push(script);
                    }
                    i += 1;
                }
            }
            _ => {
                if scripts.is_empty() && !from_file {
                    scripts.push(arg);
                }
                break;
            }
        }
    }
    scripts.iter().any(|script| sed_script_executes(script))
}

/// A small sed tokenizer: addresses, then a command letter; `s` and `y` have delimited
/// parts. Anything it cannot follow counts as executing.
fn sed_script_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '{' || c == '}' || c == '!' || c == ',' {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == '$' || c == '~' || c == '+' {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delimiter = if c == '\\' {
                chars.get(i + 1).copied()
            } else {
                Some('/')
            };
            let Some(delimiter) = delimiter else {
                return true;
            };
            i += if c == '\\' { 2 } else { 1 };
            match skip_delimited(&chars, i, delimiter) {
                Some(next) => i = next,
                None => return true,
            }
            continue;
        }
        match c {
            'e' | 'w' | 'W' => return true,
            's' | 'y' => {
                let Some(&delimiter) = chars.get(i + 1) else {
                    return true;
                };
                let mut next = i + 2;
                for _ in 0..2 {
                    match skip_delimited(&chars, next, delimiter) {
                        Some(after) => next = after,
                        None => return true,
                    }
                }
                while let Some(&flag) = chars.get(next) {
                    if flag == ';' || flag == '\n' || flag == '}' {
                        break;
                    }
                    if c == 's' && (flag == 'e' || flag == 'w' || flag == 'W') {
                        return true;
                    }
                    next += 1;
                }
                i = next;
            }
            'a' | 'i' | 'c' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l' | 'L' | 'r' | 'R' => {
                while i < chars.len() && chars[i] != '\n' && chars[i] != ';' {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z' | '=' | 'F' => {
                i += 1;
            }
            _ => return true,
        }
    }
    false
}

fn skip_delimited(chars: &[char], mut i: usize, delimiter: char) -> Option<usize> {
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == delimiter {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// xargs runs `echo` when no command is given; any operand names a command to run.
fn xargs_runs_command(args: &[String]) -> bool {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_str();
        match arg {
            "--" => return args.get(i + 1).is_some(),
            "-I" | "-L" | "-n" | "-P" | "-s" | "-d" | "-E" | "-a" | "--delimiter"
            | "--arg-file" | "--max-args" | "--max-procs" | "--max-lines" | "--replace" => i += 2,
            _ if arg.starts_with('-') && arg.len() > 1 => i += 1,
            _ => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(argv: &[&str]) -> bool {
        let args: Vec<String> = argv[1..].iter().map(|a| (*a).to_owned()).collect();
        inline_code(argv[0], &args).is_some()
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
        assert!(!hit(&["xargs"]));
    }
}
