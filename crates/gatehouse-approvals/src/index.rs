//! The hot in-memory index: one small entry per pending (or recently settled) approval.
//!
//! The full request lives in the store; an entry keeps only what the fast paths need: the state,
//! the deadline, the offered decisions and the waiters. That keeps it far under the 2 KiB budget
//! per pending approval (see `docs/performance.md`).

use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use gatehouse_policy::ApprovalDecision;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::error::ApprovalError;
use crate::record::ApprovalRecord;

/// Where an approval stands, as far as the manager's fast paths need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Waiting for a decision.
    Pending,
    /// Decided; kept for the grace period so late answers get the winner.
    Decided(ApprovalDecision),
    /// Timed out or had no route; kept for the grace period.
    Expired,
    /// Withdrawn; kept for the grace period.
    Cancelled,
}

/// One approval in memory.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) status: Status,
    /// What allow-always would persist; `None` when allow-always is not offered. Boxed so an
    /// approval without it costs one pointer; dropped when the approval settles.
    pub(crate) allow_always: Option<Box<AllowAlwaysPlan>>,
    /// Created on the first `await_decision`, so approvals nobody waits on cost no allocation.
    pub(crate) waiters: Option<Arc<Waiters>>,
}

/// Those waiting for one approval to settle, and what it settled as: the store's record of the
/// winning change, handed over with the wake-up so a waiter need not read it back.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    pub(crate) wake: Notify,
    pub(crate) settled: OnceLock<ApprovalRecord>,
}

/// What an allow-always decision persists.
#[derive(Debug, Clone)]
pub(crate) enum AllowAlwaysPlan {
    /// Exec: allowlist entries for the agent's allowlist, written after the decision.
    Patterns {
        agent_id: String,
        patterns: Vec<String>,
    },
    /// A tool call: the store keeps the request's grant with the decision.
    Grant,
}

/// The index itself; keyed by the id's 128 bits so prefix search compares integers.
#[derive(Debug, Default)]
pub(crate) struct Index {
    entries: DashMap<Uuid, Entry>,
}

/// How a caller named an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    /// A complete id, which may also name an approval no longer in memory.
    Full(Uuid),
    /// A case-insensitive prefix of the hyphenated id.
    Prefix {
        /// The prefix as typed, lower-cased, for the store's search.
        text: String,
        /// The prefix's hex digits as a number, for the in-memory search.
        value: u128,
        /// How many hex digits the prefix has (1..=31).
        digits: u32,
    },
}

impl Index {
    /// Adds an entry unless the id is already in memory; returns whether it was added.
    pub(crate) fn insert_new(&self, id: Uuid, entry: Entry) -> bool {
        match self.entries.entry(id) {
            dashmap::Entry::Occupied(_) => false,
            dashmap::Entry::Vacant(slot) => {
                slot.insert(entry);
                true
            }
        }
    }

    pub(crate) fn remove(&self, id: &Uuid) {
        self.entries.remove(id);
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The status of an id, if it is in memory.
    pub(crate) fn status(&self, id: &Uuid) -> Option<Status> {
        self.entries.get(id).map(|entry| entry.status)
    }

    pub(crate) fn get(&self, id: &Uuid) -> Option<dashmap::mapref::one::Ref<'_, Uuid, Entry>> {
        self.entries.get(id)
    }

    pub(crate) fn get_mut(
        &self,
        id: &Uuid,
    ) -> Option<dashmap::mapref::one::RefMut<'_, Uuid, Entry>> {
        self.entries.get_mut(id)
    }

    /// Moves a pending entry to a settled status and wakes its waiters with `record`, the
    /// store's record of the change. Returns false when the entry is gone or already settled,
    /// which leaves it untouched.
    pub(crate) fn settle(&self, id: &Uuid, status: Status, record: &ApprovalRecord) -> bool {
        let waiters = match self.entries.get_mut(id) {
            Some(mut entry) if entry.status == Status::Pending => {
                entry.status = status;
                entry.allow_always = None;
                entry.waiters.take()
            }
            _ => return false,
        };
        if let Some(waiters) = waiters {
            // The cell is fresh: waiters are taken, and so filled, once.
            let _ = waiters.settled.set(record.clone());
            waiters.wake.notify_waiters();
        }
        true
    }

    /// Every id in memory whose first `digits` hex digits are `value`. Reads every entry:
    /// prefixes are typed by people, so this is not on a hot path.
    pub(crate) fn matching(&self, value: u128, digits: u32) -> Vec<Uuid> {
        let shift = 128 - 4 * digits;
        self.entries
            .iter()
            .map(|entry| *entry.key())
            .filter(|id| id.as_u128() >> shift == value)
            .collect()
    }
}

impl Key {
    /// Parses what a person typed: a complete id, or a prefix of its hyphenated form with
    /// hyphens (if any) where the full form has them. Anything else is refused.
    pub(crate) fn parse(text: &str) -> Result<Key, ApprovalError> {
        let invalid = || ApprovalError::InvalidKey {
            key: text.to_owned(),
        };
        if let Ok(id) = Uuid::try_parse(text) {
            return Ok(Key::Full(id));
        }
        if text.is_empty() || text.len() >= 36 {
            return Err(invalid());
        }
        let mut value: u128 = 0;
        let mut digits = 0;
        for (position, ch) in text.chars().enumerate() {
            if matches!(position, 8 | 13 | 18 | 23) {
                if ch == '-' {
                    continue;
                }
                return Err(invalid());
            }
            let nibble = ch.to_digit(16).ok_or_else(invalid)?;
            value = (value << 4) | u128::from(nibble);
            digits += 1;
        }
        Ok(Key::Prefix {
            text: text.to_ascii_lowercase(),
            value,
            digits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            status: Status::Pending,
            allow_always: None,
            waiters: None,
        }
    }

    fn index_of(ids: &[&str]) -> Index {
        let index = Index::default();
        for id in ids {
            assert!(index.insert_new(Uuid::parse_str(id).unwrap(), entry()));
        }
        index
    }

    const A: &str = "3f2a1b00-0000-4000-8000-000000000001";
    const B: &str = "3f2a1c00-0000-4000-8000-000000000002";

    #[test]
    fn an_index_slot_stays_small() {
        // The per-approval memory budget rests on this; see docs/performance.md.
        assert!(std::mem::size_of::<(Uuid, Entry)>() <= 40);
    }

    fn matching(index: &Index, key: &str) -> Vec<String> {
        let Key::Prefix { value, digits, .. } = Key::parse(key).unwrap() else {
            panic!("{key} is not a prefix");
        };
        let mut ids: Vec<String> = index
            .matching(value, digits)
            .iter()
            .map(Uuid::to_string)
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn matches_a_prefix_in_any_case_with_or_without_hyphens() {
        let index = index_of(&[A, B]);
        assert_eq!(matching(&index, "3F2A1B"), [A]);
        assert_eq!(matching(&index, "3f2a1b00-00"), [A]);
        assert_eq!(matching(&index, "3f2a1"), [A, B]);
        assert_eq!(matching(&index, "ffff"), Vec::<String>::new());
    }

    #[test]
    fn denies_malformed_keys() {
        for bad in ["", "xyz", "3f2a1b00x", "3f2a-1b", &format!("{A}0")] {
            assert!(
                matches!(Key::parse(bad), Err(ApprovalError::InvalidKey { .. })),
                "{bad}"
            );
        }
    }
}
