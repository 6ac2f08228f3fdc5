//! The typed pass: the model read from the document tree, again and again, until it accepts
//! what is left, so every value it refuses is reported in one load.
//!
//! serde stops at the first refused value. So each refusal is recorded, the refused value is
//! set aside (its object entry or list element removed from the tree) and the pass runs again;
//! each run removes one value, so the loop ends. Setting a value aside must never make a
//! problem of its own: a struct left without a required field it did have ("missing field
//! `id`" after a wrong-typed `id` was removed) is set aside in turn without a second report.
//! Rules checked after this pass skip what a removal could have disturbed (see
//! [`Outcome::may_echo`]).

use crate::keypath::{KeyPath, Segment};
use crate::model::Config;
use crate::tree::{Node, Object};

/// Refusals after which the pass stops: a file this broken is fixed from the top anyway, and
/// each run costs a pass over the whole document.
const MAX_REFUSALS: usize = 100;

/// What the typed pass found.
pub(crate) struct Outcome {
    /// The model, once it accepted what was left; `None` when the document's root was refused
    /// or the pass stopped early.
    pub(crate) config: Option<Config>,
    /// Values the model refused, by written path, in the order found.
    pub(crate) refused: Vec<Refusal>,
    /// Keys the model did not read, each once, with the keys it reads at that level.
    pub(crate) ignored: Vec<Ignored>,
    /// Paths (as written) of the values set aside.
    set_aside: Vec<KeyPath>,
    /// The tree the model was read from last, to map its paths back to written ones.
    tree: Node,
}

/// A value the model refused.
pub(crate) struct Refusal {
    /// Where, as written in the file.
    pub(crate) path: KeyPath,
    /// Why, in the operator's words.
    pub(crate) message: String,
}

/// A key the model did not read.
pub(crate) struct Ignored {
    /// Where, as written in the file.
    pub(crate) path: KeyPath,
    /// The keys the model reads in the same object, for a "did you mean".
    pub(crate) fields: &'static [&'static str],
}

/// Reads the model from `tree`, setting refused values aside until it is accepted.
pub(crate) fn run(mut tree: Node) -> Outcome {
    let mut refused = Vec::new();
    let mut ignored: Vec<Ignored> = Vec::new();
    let mut set_aside: Vec<KeyPath> = Vec::new();
    let config = loop {
        let mut skipped = Vec::new();
        let mut record = |path: serde_ignored::Path<'_>| skipped.push(KeyPath::from_ignored(&path));
        let result: Result<Config, _> =
            serde_path_to_error::deserialize(serde_ignored::Deserializer::new(&tree, &mut record));
        for path in skipped {
            let written = tree.written_path(&path);
            if !ignored.iter().any(|known| known.path == written) {
                let fields = tree
                    .object(path.parent().segments())
                    .map_or(&[][..], Object::fields);
                ignored.push(Ignored {
                    path: written,
                    fields,
                });
            }
        }
        let error = match result {
            Ok(config) => break Some(config),
            Err(error) => error,
        };
        let path = KeyPath::from_path_to_error(error.path());
        let written = tree.written_path(&path);
        let error = error.into_inner();
        let echo = error
            .missing_field()
            .is_some_and(|field| set_aside.contains(&written.key(field)));
        if refused.len() >= MAX_REFUSALS {
            break None;
        }
        let removed = tree.remove(path.segments());
        if !(echo && removed) {
            refused.push(Refusal {
                path: written.clone(),
                message: error.into_message(),
            });
        }
        if !removed {
            break None;
        }
        set_aside.push(written);
    };
    Outcome {
        config,
        refused,
        ignored,
        set_aside,
        tree,
    }
}

impl Outcome {
    /// `path` of the accepted model as written in the file.
    pub(crate) fn written_path(&self, path: &KeyPath) -> KeyPath {
        self.tree.written_path(path)
    }

    /// Whether a rule broken at `path` (as written) could be an echo of a value set aside: it
    /// lies in, or above, the object that held the value (`runTimeoutMs` compared with a
    /// `maxRunTimeoutMs` of the wrong type, a token whose only source was refused). For a list
    /// element that is the object holding the list, whose rules see its length (`enabled:
    /// true` needs an approver), except the list's other elements: rules compare elements only
    /// to find duplicates, which a removal cannot create. Such a problem is left for the next
    /// load: it may be real, but reporting it could send the operator after a value that is
    /// fine.
    pub(crate) fn may_echo(&self, path: &KeyPath) -> bool {
        self.set_aside.iter().any(|removed| {
            let (holder, list) = match removed.segments().last() {
                Some(Segment::Index(_)) => {
                    let list = removed.parent();
                    (list.parent(), Some(list))
                }
                _ => (removed.parent(), None),
            };
            let in_other_elements = list
                .as_ref()
                .is_some_and(|list| path.starts_with(list) && path != list);
            holder.starts_with(path) || (path.starts_with(&holder) && !in_other_elements)
        })
    }
}
