//! Paths as the host will use them, made absolute before Gatehouse judges them.
//!
//! The gateway resolves a relative path against the agent's workspace, but the host resolves it
//! against its own `cwd`; when the two differ, a relative path would be checked in one place and
//! opened in another. So every path leaves this crate absolute, joined to the hook's `cwd`
//! exactly as the host joins it, and the approver is told.

use gatehouse_policy::files::{PatchOp, parse_patch};

use super::args::Args;
use crate::error::HookError;

/// `raw` (a path parameter) as an absolute path; a relative one is joined to `cwd`
/// and noted in `adjustments`. `~` is refused: whose home it names depends on which process
/// expands it (the host's user, or the gateway's for the HTTP hook).
pub(crate) fn absolute(
    args: &Args<'_>,
    param: &'static str,
    raw: &str,
    cwd: &str,
    adjustments: &mut Vec<String>,
) -> Result<String, HookError> {
    if raw.is_empty() {
        return Err(args.invalid(param, "is empty".to_owned()));
    }
    if raw.starts_with('~') {
        return Err(args.invalid(
            param,
            format!("{raw:?} starts with '~'; ask for the absolute path instead"),
        ));
    }
    if raw.starts_with('/') {
        return Ok(raw.to_owned());
    }
    let joined = join(cwd, raw);
    adjustments.push(format!(
        "the relative path {raw:?} was judged as {joined:?} (joined to the hook's cwd)"
    ));
    Ok(joined)
}

/// The required path parameter `param`, made absolute as [`absolute`] does.
pub(crate) fn absolute_param(
    args: &Args<'_>,
    param: &'static str,
    cwd: &str,
    adjustments: &mut Vec<String>,
) -> Result<String, HookError> {
    absolute(args, param, args.string(param)?, cwd, adjustments)
}

/// A glob that stays under the directory it searches: not absolute, no `~`, no `..`
/// component. Glob and Grep calls are judged as reads of their directory, so a pattern that
/// reaches outside it would search what was never judged.
pub(crate) fn contained_glob(
    args: &Args<'_>,
    param: &'static str,
    glob: &str,
) -> Result<(), HookError> {
    let escapes = glob.starts_with('/')
        || glob.starts_with('~')
        || glob.split(['/', '\\']).any(|part| part == "..");
    if escapes {
        return Err(args.invalid(
            param,
            format!(
                "{glob:?} reaches outside the searched directory; give that directory as `path`"
            ),
        ));
    }
    Ok(())
}

/// A Codex patch with every relative file path joined to `cwd` (Codex applies a patch's
/// paths relative to its session's cwd), checked by parsing both texts with the policy's own
/// patch parser: the rewritten patch must name the same operations on the joined paths, or the
/// call is refused. A patch the parser refuses is passed on unchanged; the gateway refuses it
/// with the parser's reason (`patch-unparsed`).
///
/// Only header lines written at the start of a line are rewritten; a content line starts with
/// ` `, `+`, `-` or `@@`, so none is touched. A header the parser reads elsewhere (indented)
/// stays relative, the comparison sees it, and the call is refused.
pub(crate) fn absolute_patch(
    args: &Args<'_>,
    param: &'static str,
    patch: &str,
    cwd: &str,
    adjustments: &mut Vec<String>,
) -> Result<String, HookError> {
    let Ok(original) = parse_patch(patch) else {
        return Ok(patch.to_owned());
    };
    let mut joined_any = false;
    let rewritten: Vec<String> = patch
        .split('\n')
        .map(|line| match split_header(line) {
            Some((marker, path)) if !path.starts_with('/') => {
                joined_any = true;
                format!("{marker}{}", join(cwd, path))
            }
            _ => line.to_owned(),
        })
        .collect();
    let rewritten = rewritten.join("\n");
    let expected: Vec<PatchOp> = original.iter().map(|op| joined_op(op, cwd)).collect();
    if parse_patch(&rewritten).ok().as_ref() != Some(&expected) {
        return Err(args.invalid(
            param,
            "has a file header Gatehouse could not make absolute (an indented or unusual \
             '*** … File:' line); write each header at the start of its line"
                .to_owned(),
        ));
    }
    if joined_any {
        adjustments.push(format!(
            "the patch's relative file paths were judged joined to the hook's cwd {cwd:?}"
        ));
    }
    Ok(rewritten)
}

/// The markers of the patch lines that name a path, as the policy's parser spells them.
const PATH_MARKERS: [&str; 4] = [
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
];

fn split_header(line: &str) -> Option<(&'static str, &str)> {
    PATH_MARKERS
        .iter()
        .find_map(|marker| line.strip_prefix(marker).map(|path| (*marker, path)))
}

fn joined_op(op: &PatchOp, cwd: &str) -> PatchOp {
    // As Codex reads a header: the path is everything after the marker's one space, so
    // `*** Add File:  x` names ` x`, relative.
    let absolute = |path: &str| {
        if path.starts_with('/') {
            path.to_owned()
        } else {
            join(cwd, path)
        }
    };
    match op {
        PatchOp::Add { path, len } => PatchOp::Add {
            path: absolute(path),
            len: *len,
        },
        PatchOp::Delete { path } => PatchOp::Delete {
            path: absolute(path),
        },
        PatchOp::Update { path, move_to } => PatchOp::Update {
            path: absolute(path),
            move_to: move_to.as_deref().map(absolute),
        },
    }
}

/// `relative` under `dir`, as `Path::join` would spell it for a relative path.
fn join(dir: &str, relative: &str) -> String {
    format!("{}/{relative}", dir.trim_end_matches('/'))
}
