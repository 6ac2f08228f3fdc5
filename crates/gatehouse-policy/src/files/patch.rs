//! The `apply_patch` format (OpenAI Codex's, as OpenClaw's `apply-patch.ts` reads it), parsed
//! only as far as the paths it touches and the size of what it adds.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md
//! +text
//! *** Update File: src/a.rs
//! *** Move to: src/b.rs
//! @@ fn main
//! -old
//! +new
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! The control flow follows OpenClaw's parser step for step (where a hunk ends, which lines are
//! headers, the `<<EOF` wrapper it tolerates), because a line this parser read as content but
//! the executor as a header would be a path nobody checked. Whitespace is trimmed as JavaScript's
//! `trim()` does; text with a character on which JavaScript's and Rust's (Codex's) trimming
//! disagree, or with a lone carriage return, is refused rather than guessed at.

/// What a patch does to one path, in patch order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    /// `*** Add File:` — creates (or replaces) the file with `len` bytes.
    Add {
        /// The path as written.
        path: String,
        /// Bytes the file will hold.
        len: u64,
    },
    /// `*** Delete File:`.
    Delete {
        /// The path as written.
        path: String,
    },
    /// `*** Update File:`, optionally `*** Move to:` another path.
    Update {
        /// The path as written.
        path: String,
        /// The destination of a move, as written.
        move_to: Option<String>,
    },
}

/// Why a patch does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Empty after trimming.
    #[error("the patch is empty")]
    Empty,
    /// Not framed by `*** Begin Patch` … `*** End Patch`.
    #[error("the first line must be '*** Begin Patch' and the last '*** End Patch'")]
    Boundaries,
    /// No hunk between the markers.
    #[error("the patch changes no file")]
    NoHunks,
    /// A line where a hunk header was expected.
    #[error(
        "line {line}: not a hunk header ('*** Add File: ', '*** Delete File: ', '*** Update File: ')"
    )]
    NotAHeader {
        /// 1-based line number.
        line: usize,
    },
    /// An update hunk with no change lines, or a malformed one.
    #[error("line {line}: {why}")]
    BadUpdate {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: &'static str,
    },
    /// A header with an empty path.
    #[error("line {line}: the hunk header names no path")]
    NoPath {
        /// 1-based line number.
        line: usize,
    },
    /// Characters JavaScript and Rust trim differently, or a lone carriage return.
    #[error("the patch contains {0}, which the patch tools do not read alike")]
    Ambiguous(String),
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Parses a patch into the operations it performs.
pub fn parse_patch(input: &str) -> Result<Vec<PatchOp>, PatchError> {
    refuse_ambiguous(input)?;
    let trimmed = js_trim(input);
    if trimmed.is_empty() {
        return Err(PatchError::Empty);
    }
    let lines: Vec<&str> = trimmed
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let lines = unwrap_heredoc(&lines)?;
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut at = 0;
    while at < body.len() {
        // Line numbers count from the `*** Begin Patch` line, as OpenClaw's messages do.
        let (op, consumed) = parse_hunk(&body[at..], at + 2)?;
        ops.push(op);
        at += consumed;
    }
    if ops.is_empty() {
        return Err(PatchError::NoHunks);
    }
    Ok(ops)
}

/// The strict frame, or the same inside a `<<EOF` … `EOF` wrapper.
fn unwrap_heredoc<'a, 'b>(lines: &'b [&'a str]) -> Result<&'b [&'a str], PatchError> {
    let framed =
        |l: &[&str]| l.len() >= 2 && js_trim(l[0]) == BEGIN && js_trim(l[l.len() - 1]) == END;
    if framed(lines) {
        return Ok(lines);
    }
    if lines.len() >= 4
        && ["<<EOF", "<<'EOF'", "<<\"EOF\""].contains(&lines[0])
        && lines[lines.len() - 1].ends_with("EOF")
    {
        let inner = &lines[1..lines.len() - 1];
        if framed(inner) {
            return Ok(inner);
        }
    }
    Err(PatchError::Boundaries)
}

/// One hunk at the start of `lines`, and how many lines it used.
fn parse_hunk(lines: &[&str], line: usize) -> Result<(PatchOp, usize), PatchError> {
    let header = js_trim(lines[0]);
    let path = |marker: &str| {
        let path = &header[marker.len()..];
        if path.is_empty() {
            Err(PatchError::NoPath { line })
        } else {
            Ok(path.to_owned())
        }
    };
    if header.starts_with(ADD) {
        let added = lines[1..].iter().take_while(|l| l.starts_with('+'));
        let (mut count, mut len) = (0, 0u64);
        for content in added {
            count += 1;
            // Each `+line` becomes `line\n`.
            len += content.len() as u64;
        }
        return Ok((
            PatchOp::Add {
                path: path(ADD)?,
                len,
            },
            1 + count,
        ));
    }
    if header.starts_with(DELETE) {
        return Ok((
            PatchOp::Delete {
                path: path(DELETE)?,
            },
            1,
        ));
    }
    if !header.starts_with(UPDATE) {
        return Err(PatchError::NotAHeader { line });
    }
    let target = path(UPDATE)?;
    let mut consumed = 1;
    let mut move_to = None;
    if let Some(candidate) = lines.get(1).map(|l| js_trim(l))
        && let Some(dest) = candidate.strip_prefix(MOVE_TO)
    {
        if dest.is_empty() {
            return Err(PatchError::NoPath { line: line + 1 });
        }
        move_to = Some(dest.to_owned());
        consumed += 1;
    }
    let mut chunks = 0;
    while let Some(next) = lines.get(consumed) {
        if js_trim(next).is_empty() {
            consumed += 1;
            continue;
        }
        if next.starts_with("***") {
            break;
        }
        consumed += update_chunk(&lines[consumed..], line + consumed, chunks == 0)?;
        chunks += 1;
    }
    if chunks == 0 {
        return Err(PatchError::BadUpdate {
            line,
            why: "the update hunk changes nothing",
        });
    }
    Ok((
        PatchOp::Update {
            path: target,
            move_to,
        },
        consumed,
    ))
}

/// One `@@` chunk of an update hunk; returns the lines it used.
fn update_chunk(lines: &[&str], line: usize, first: bool) -> Result<usize, PatchError> {
    let start = if lines[0] == "@@" || lines[0].starts_with("@@ ") {
        1
    } else if first {
        0
    } else {
        return Err(PatchError::BadUpdate {
            line,
            why: "expected a '@@' context marker",
        });
    };
    if start >= lines.len() {
        return Err(PatchError::BadUpdate {
            line: line + 1,
            why: "the update chunk has no lines",
        });
    }
    let mut parsed = 0;
    for content in &lines[start..] {
        if *content == END_OF_FILE {
            if parsed == 0 {
                return Err(PatchError::BadUpdate {
                    line: line + 1,
                    why: "the update chunk has no lines",
                });
            }
            parsed += 1;
            break;
        }
        match content.chars().next() {
            None | Some(' ' | '+' | '-') => parsed += 1,
            Some(_) if parsed == 0 => {
                return Err(PatchError::BadUpdate {
                    line: line + 1,
                    why: "a change line must start with ' ', '+' or '-'",
                });
            }
            Some(_) => break,
        }
    }
    Ok(parsed + start)
}

/// JavaScript's `String.prototype.trim`: its WhiteSpace and LineTerminator characters.
fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Refuses characters only one of JavaScript's and Rust's `trim` removes (U+0085 NEL, U+180E,
/// U+FEFF) and carriage returns not followed by a line feed.
fn refuse_ambiguous(input: &str) -> Result<(), PatchError> {
    if let Some(c) = input
        .chars()
        .find(|c| matches!(c, '\u{85}' | '\u{180e}' | '\u{feff}'))
    {
        return Err(PatchError::Ambiguous(crate::text::describe_char(c)));
    }
    let bytes = input.as_bytes();
    let lone_cr = bytes
        .iter()
        .enumerate()
        .any(|(i, b)| *b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
    if lone_cr {
        return Err(PatchError::Ambiguous("a lone carriage return".to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(path: &str, len: u64) -> PatchOp {
        PatchOp::Add {
            path: path.into(),
            len,
        }
    }

    #[test]
    fn parses_every_hunk_kind() {
        let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n+\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@ fn main\n-old\n+new\n ctx\n*** End of File\n*** Delete File: old.txt\n*** End Patch\n";
        assert_eq!(
            parse_patch(patch),
            Ok(vec![
                add("docs/new.md", 7),
                PatchOp::Update {
                    path: "src/a.rs".into(),
                    move_to: Some("src/b.rs".into())
                },
                PatchOp::Delete {
                    path: "old.txt".into()
                },
            ])
        );
    }

    #[test]
    fn accepts_crlf_and_the_heredoc_wrapper() {
        let patch = "<<'EOF'\r\n*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\nEOF";
        assert_eq!(
            parse_patch(patch),
            Ok(vec![PatchOp::Delete { path: "a".into() }])
        );
    }

    #[test]
    fn an_update_may_start_without_a_context_marker() {
        let patch = "*** Begin Patch\n*** Update File: a\n-x\n+y\n@@\n z\n*** End Patch";
        assert!(parse_patch(patch).is_ok());
    }

    #[test]
    fn indented_header_inside_an_update_is_a_context_line() {
        // A context line (` `-prefixed) that looks like a header is content, as in OpenClaw.
        let patch =
            "*** Begin Patch\n*** Update File: a\n@@\n *** Add File: /etc/x\n+y\n*** End Patch";
        assert_eq!(
            parse_patch(patch),
            Ok(vec![PatchOp::Update {
                path: "a".into(),
                move_to: None
            }])
        );
    }

    #[test]
    fn denies_unparseable_patches() {
        for patch in [
            "",
            "   ",
            "*** Begin Patch\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\n+x",
            "diff --git a/x b/x\n--- a/x\n+++ b/x",
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n-x\nnot a change\n*** End Patch",
            "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\n+x\n\u{feff}*** Add File: b\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\r+x\n*** End Patch",
        ] {
            assert!(parse_patch(patch).is_err(), "{patch:?}");
        }
    }

    #[test]
    fn keeps_spaces_inside_paths_as_written() {
        let patch = "*** Begin Patch\n*** Add File:  a b \n+x\n*** End Patch";
        assert_eq!(parse_patch(patch), Ok(vec![add(" a b", 2)]));
    }
}
