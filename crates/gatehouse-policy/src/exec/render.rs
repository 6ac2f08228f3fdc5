//! The shell string a runner hands to `sh -c`, with each safe-bin segment re-rendered as the
//! reference renders it: the program by its absolute, resolved path and every argument
//! single-quoted, so the shell neither searches `PATH` for it nor expands anything in it.
//!
//! A safe bin is judged at the path `PATH` gave when the command was evaluated; the shell
//! searches `PATH` again when it runs, and a file planted meanwhile in an earlier directory of
//! the runner's `PATH` would run instead, unjudged. The rest of the text (other segments,
//! operators, comments, newlines) is kept byte for byte: only a span the analysis itself read
//! as one safe-bin command is replaced, and only by the words it analysed, so the rendered
//! text runs the same programs with the same arguments (`tests/it/shell_oracle.rs` checks this
//! under bash and dash).

use std::path::Path;

use super::evaluation::{ExecEvaluation, SatisfiedBy, SegmentEvaluation};
use super::parse::{ParsedSegment, parse_shell};

/// `source` with every safe-bin segment rendered by absolute path with literal arguments.
///
/// A segment is rendered only when it is one of the command's own (not a command inside an
/// `sh -c` payload: then the text is returned as it is), ran through no wrapper, has no
/// assignment, and its resolved file has the name it was called by (a multi-call binary such
/// as busybox picks its applet by that name). Everything else is kept as written.
pub fn render_for_shell(source: &str, evaluation: &ExecEvaluation) -> String {
    let Ok(parsed) = parse_shell(source) else {
        return source.to_owned();
    };
    // A payload's commands replace their shell's segment, so the two lists pair up one to
    // one only when nothing was unwrapped into several.
    if parsed.len() != evaluation.segments.len() {
        return source.to_owned();
    }
    let mut rendered = String::with_capacity(source.len() + 32);
    let mut copied = 0;
    for (segment, judged) in parsed.iter().zip(&evaluation.segments) {
        let Some(text) = literal_safe_bin(segment, judged) else {
            continue;
        };
        let Some(kept) = source.get(copied..segment.span.start) else {
            return source.to_owned();
        };
        rendered.push_str(kept);
        rendered.push_str(&text);
        copied = segment.span.end;
    }
    match source.get(copied..) {
        Some(rest) => rendered.push_str(rest),
        None => return source.to_owned(),
    }
    rendered
}

/// The segment as `'/abs/path' 'arg' …`, when it is a safe bin this module may render.
fn literal_safe_bin(segment: &ParsedSegment, judged: &SegmentEvaluation) -> Option<String> {
    if judged.satisfied_by != Some(SatisfiedBy::SafeBins)
        || !judged.looked_through.is_empty()
        || !segment.assignments.is_empty()
        || segment.span.is_empty()
    {
        return None;
    }
    let words: Vec<&str> = segment.words.iter().map(|w| w.text.as_str()).collect();
    if words != judged.argv || judged.program_argv != judged.argv {
        return None;
    }
    let program = judged.resolved_path.as_deref()?;
    let called = Path::new(words.first()?).file_name()?;
    if !program.is_absolute() || program.file_name()? != called {
        return None;
    }
    let program = program.to_str()?;
    let quoted: Vec<String> = std::iter::once(program)
        .chain(words[1..].iter().copied())
        .map(single_quoted)
        .collect();
    Some(quoted.join(" "))
}

/// `word` in single quotes, where every byte is literal; a `'` inside is closed, escaped and
/// reopened (`'\''`).
fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_every_byte_literally() {
        assert_eq!(single_quoted("a b"), "'a b'");
        assert_eq!(single_quoted("it's"), r"'it'\''s'");
        assert_eq!(single_quoted(""), "''");
        assert_eq!(single_quoted("$k"), "'$k'");
    }
}
