//! Whether a sed script runs a command (`e`, the `e` flag of `s`) or writes a file (`w`, `W`,
//! the `w` flag), under every reading the seds Gatehouse runs beside give it.
//!
//! The script is walked as sed compiles it: addresses, then a command letter and its
//! argument, whose end decides where the next command starts. Losing that place is how code
//! hides: a reader that ends a label at `;` runs into `e` where GNU sed 4.9, which ends it at
//! whitespace, runs it (`:a e id`); one that ends `a` text at `;` reads the rest of the line as
//! an `s` whose replacement swallows the `e` on the next line. So each argument is read to
//! where sed ends it, and where GNU and BSD sed differ (labels) the script is read both ways.
//! What the reader cannot follow counts as executing.

/// Where a label ends: GNU sed 4.9 stops at whitespace or `;`, BSD sed (macOS) reads to the
/// end of the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Labels {
    Gnu,
    Bsd,
}

/// Whether `script` executes or writes under either sed's reading. `-e` pieces are joined
/// with newlines before they get here, as sed joins them (`-e 'a\' -e TEXT` is one command).
pub(super) fn executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    [Labels::Gnu, Labels::Bsd]
        .into_iter()
        .any(|labels| executes_as(&chars, labels))
}

/// The space characters of the C locale, which sed's `ISSPACE` and `ISBLANK` test bytes
/// against. Other Unicode spaces are word characters to sed.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t')
}

fn executes_as(chars: &[char], labels: Labels) -> bool {
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if is_space(c) || matches!(c, ';' | '{' | '}' | '!' | ',') {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || matches!(c, '$' | '~' | '+') {
            i += 1;
            continue;
        }
        let next = match c {
            '/' => skip_regex(chars, i + 1, '/'),
            '\\' => match chars.get(i + 1) {
                Some(&delimiter) if usable_delimiter(delimiter) => {
                    skip_regex(chars, i + 2, delimiter)
                }
                _ => None,
            },
            'e' | 'w' | 'W' => None,
            's' => substitution(chars, i + 1),
            'y' => transliteration(chars, i + 1),
            'a' | 'i' | 'c' => Some(skip_text(chars, i + 1)),
            'r' | 'R' | '#' => Some(line_end(chars, i + 1)),
            ':' | 'b' | 't' | 'T' => skip_label(chars, i + 1, labels),
            'q' | 'Q' | 'l' | 'L' => skip_number(chars, i + 1),
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z' | '=' | 'F' => {
                Some(i + 1)
            }
            _ => None,
        };
        match next {
            Some(next) => i = next,
            None => return true,
        }
    }
    false
}

/// A delimiter sed and this reader agree on: ASCII, and neither a newline nor a backslash
/// (which GNU sed refuses). A multi-byte delimiter is one character to sed in a UTF-8 locale
/// and several bytes in the C locale.
fn usable_delimiter(c: char) -> bool {
    c.is_ascii() && c != '\n' && c != '\\'
}

/// `s/regex/replacement/flags`: `None` when it executes (`e`) or writes (`w`), or cannot be
/// followed.
fn substitution(chars: &[char], i: usize) -> Option<usize> {
    let delimiter = *chars.get(i).filter(|c| usable_delimiter(**c))?;
    let replacement = skip_regex(chars, i + 1, delimiter)?;
    let mut next = skip_plain(chars, replacement, delimiter)?;
    loop {
        match chars.get(next) {
            None | Some(';' | '\n' | '}' | '#') => return Some(next),
            Some(&flag) if is_blank(flag) || flag.is_ascii_digit() => next += 1,
            Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => next += 1,
            // `e` runs the pattern space, `w` writes a file; any other letter is an error to
            // sed and not followed here.
            Some(_) => return None,
        }
    }
}

/// `y/source/target/`: two plain parts (no bracket expressions), then the end of the command.
fn transliteration(chars: &[char], i: usize) -> Option<usize> {
    let delimiter = *chars.get(i).filter(|c| usable_delimiter(**c))?;
    let target = skip_plain(chars, i + 1, delimiter)?;
    let end = skip_plain(chars, target, delimiter)?;
    command_end(chars, end)
}

/// A part without bracket expressions (a replacement, a `y` set): up to the unescaped
/// delimiter. An unescaped newline inside is an error to sed, and not followed here: reading
/// on past it is how a command on the next line would be taken for part of this one.
fn skip_plain(chars: &[char], mut i: usize, delimiter: char) -> Option<usize> {
    while let Some(&c) = chars.get(i) {
        if c == delimiter {
            return Some(i + 1);
        }
        match c {
            '\\' => i += 2,
            '\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// A regex (an address, the first part of `s`): up to the unescaped delimiter outside any
/// bracket expression. A delimiter inside brackets (`s/[/]/x/`) is a literal to both GNU and
/// BSD sed but, as backslashes are literal there too, the readings drift (`[\/]`); a bracket
/// expression holding the delimiter or a newline is refused rather than followed.
fn skip_regex(chars: &[char], mut i: usize, delimiter: char) -> Option<usize> {
    while let Some(&c) = chars.get(i) {
        if c == delimiter {
            return Some(i + 1);
        }
        match c {
            '\\' => i += 2,
            '[' => i = skip_bracket(chars, i + 1, delimiter)?,
            '\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// The rest of a bracket expression after its `[`: a leading `^` and `]` are members, and
/// `[:class:]`, `[=x=]` and `[.x.]` run to their own closing pair. Returns the index after the
/// closing `]`, or `None` if the delimiter or a newline falls inside.
fn skip_bracket(chars: &[char], mut i: usize, delimiter: char) -> Option<usize> {
    if chars.get(i) == Some(&'^') {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while let Some(&c) = chars.get(i) {
        if c == delimiter || c == '\n' {
            return None;
        }
        match (c, chars.get(i + 1)) {
            (']', _) => return Some(i + 1),
            ('[', Some(&kind)) if matches!(kind, ':' | '=' | '.') => {
                let mut j = i + 2;
                loop {
                    let inner = *chars.get(j)?;
                    if inner == delimiter || inner == '\n' {
                        return None;
                    }
                    if inner == kind && chars.get(j + 1) == Some(&']') {
                        break;
                    }
                    j += 1;
                }
                i = j + 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// `a`, `i` and `c` text (GNU's one-line form and the `a\` form alike) runs to the first newline
/// that no backslash escapes; `;` and `}` are part of it.
fn skip_text(chars: &[char], mut i: usize) -> usize {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '\n' => return i,
            _ => i += 1,
        }
    }
    i
}

/// A file name (`r`, `R`) runs to the end of the line, `;` included.
fn line_end(chars: &[char], i: usize) -> usize {
    chars[i.min(chars.len())..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |at| i + at)
}

/// A label after `:`, `b`, `t` or `T`. A label with a character outside ASCII is not followed:
/// whether such a byte is a space depends on the locale sed runs in.
fn skip_label(chars: &[char], mut i: usize, labels: Labels) -> Option<usize> {
    while chars.get(i).copied().is_some_and(is_blank) {
        i += 1;
    }
    let end = match labels {
        Labels::Gnu => chars[i.min(chars.len())..]
            .iter()
            .position(|&c| is_space(c) || c == ';')
            .map_or(chars.len(), |at| i + at),
        Labels::Bsd => line_end(chars, i),
    };
    chars[i.min(end)..end]
        .iter()
        .all(char::is_ascii)
        .then_some(end)
}

/// `q`, `Q`, `l` and `L` take an optional number, then the command ends.
fn skip_number(chars: &[char], mut i: usize) -> Option<usize> {
    while chars
        .get(i)
        .is_some_and(|&c| is_blank(c) || c.is_ascii_digit())
    {
        i += 1;
    }
    command_end(chars, i)
}

/// After a command that takes nothing more: blanks, then the end of the script, a newline, `;`,
/// `}` or a `#` comment. Anything else is an error to GNU sed and not followed here.
fn command_end(chars: &[char], mut i: usize) -> Option<usize> {
    while chars.get(i).copied().is_some_and(is_blank) {
        i += 1;
    }
    match chars.get(i) {
        None | Some('\n' | ';' | '}' | '#') => Some(i),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::executes;

    #[test]
    fn reads_labels_as_gnu_and_bsd_sed_end_them() {
        assert!(executes(":a e id"));
        assert!(executes(":a\te id"));
        assert!(executes("ba e id"));
        assert!(
            executes(":a s/x/\nw out\n/p/p"),
            "BSD: the label is the line"
        );
        assert!(!executes(":a;N;$!ba;s/\\n/ /g"));
        assert!(!executes(":a\n$!N\nta"));
        assert!(
            executes(":a\u{a0}x"),
            "a label outside ASCII is not followed"
        );
    }

    #[test]
    fn reads_text_and_file_names_to_the_end_of_the_line() {
        assert!(executes("a x;s/x/\ne id\n/p/p"));
        assert!(executes("r x;s/x/\ne id\n/p/p"));
        assert!(
            executes("a x\\\ny\ne id"),
            "an escaped newline continues the text"
        );
        assert!(!executes("a x; e and w are text here"));
        assert!(!executes("r in;w.txt"));
    }

    #[test]
    fn reads_bracket_expressions_in_regexes() {
        assert!(executes("s/[/]/;s|/w out|x|"));
        assert!(
            executes("s/[\\/]/x/"),
            "the delimiter inside brackets is refused"
        );
        assert!(executes("/[[:alpha:]/]/p"));
        assert!(!executes("s/[]a]/x/g"));
        assert!(!executes("s/[^]a]x/y/"), "`]` first is a member");
        assert!(!executes("/[[:space:]]$/d"));
        assert!(!executes("s/a[bc]d/x/"));
    }

    #[test]
    fn finds_execution_and_writes_in_commands_and_flags() {
        assert!(executes("1e id"));
        assert!(executes("s/x/id/e"));
        assert!(executes("s/x/y/w out"));
        assert!(executes("$W out"));
        assert!(executes("q e"));
        assert!(executes("y/a/b/e"));
        assert!(executes("s€a€b€"));
        assert!(
            executes("s/a/b/#;s/x/\ne id\n/p/p"),
            "`#` after the flags is a comment"
        );
        assert!(executes("s/x/\ne id\n/"), "an unescaped newline in a part");
        assert!(!executes("s/a/b/ g # note; e and w are comment text"));
        assert!(!executes("s/x/y/g;5q;l 80;y/ab/cd/"));
        assert!(!executes("/start/,/end/{p;q}"));
    }
}
