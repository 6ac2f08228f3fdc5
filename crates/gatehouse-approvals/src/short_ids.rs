//! The short ids in use: one per approval in memory or in the store, so a new approval never
//! gets a short id a person has already seen on another approval's card.
//!
//! People answer by the 8 hex digits a card shows (`/approve 0f98895b allow-once`). Were two
//! approvals to share them, the one typed could be the other: an agent choosing its own id could
//! copy a victim's short id, or reuse that of its own approval that was just cancelled. The
//! store cannot answer "is this short id taken?" without reading every row (its id index is
//! ordered by creation time, and an index on the random short id would cost a write to a random
//! page per approval, the cost the id layout (`ids.rs`) exists to avoid), so
//! the manager keeps the set here: loaded from the store at start, claimed at create, released
//! when a create fails or history is pruned. Checking it is a hash lookup under a lock held for
//! that lookup alone. It costs about 6–11 bytes per stored approval.
//!
//! It is exact for one manager per database, which the gateway's lock on its data directory
//! ensures. An approval written by another process is not in it; lookups by prefix still find
//! it (they read the store), and refuse the prefix as ambiguous.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

use uuid::Uuid;

use crate::ids::short_id;

/// The multiset of short ids in use.
#[derive(Debug, Default)]
pub(crate) struct ShortIds {
    taken: Mutex<Taken>,
}

#[derive(Debug, Default)]
struct Taken {
    /// Every short id in use.
    once: HashSet<u32>,
    /// How many more approvals hold a short id already in `once`: only approvals stored
    /// before short ids were kept unique, or by another process, share one.
    more: HashMap<u32, u32>,
}

impl ShortIds {
    /// Adds short ids as stored, repeats included.
    pub(crate) fn load(&self, stored: impl IntoIterator<Item = u32>) {
        let mut taken = self.lock();
        for short in stored {
            if !taken.once.insert(short) {
                *taken.more.entry(short).or_default() += 1;
            }
        }
    }

    /// Takes `short` for a new approval; false when it is already in use.
    pub(crate) fn claim(&self, short: u32) -> bool {
        self.lock().once.insert(short)
    }

    /// Claims the short id of the first of up to `attempts` ids from `fresh` whose short id is
    /// free, and returns that id; `None` when every one was taken.
    pub(crate) fn claim_first(
        &self,
        attempts: usize,
        mut fresh: impl FnMut() -> Uuid,
    ) -> Option<Uuid> {
        (0..attempts)
            .map(|_| fresh())
            .find(|id| self.claim(short_id(id)))
    }

    /// Gives back one use of `short`: its approval was never stored, or has been pruned.
    pub(crate) fn release(&self, short: u32) {
        let mut taken = self.lock();
        match taken.more.get_mut(&short) {
            Some(1) => {
                taken.more.remove(&short);
            }
            Some(count) => *count -= 1,
            None => {
                taken.once.remove(&short);
            }
        }
    }

    /// How many short ids are in use, each counted once.
    pub(crate) fn len(&self) -> usize {
        self.lock().once.len()
    }

    /// A panic cannot leave the sets half changed: each change is one call on them.
    fn lock(&self) -> MutexGuard<'_, Taken> {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_short_id_in_use_until_it_is_released() {
        let shorts = ShortIds::default();
        assert!(shorts.claim(7));
        assert!(!shorts.claim(7));
        shorts.release(7);
        assert!(shorts.claim(7));
    }

    #[test]
    fn a_fresh_id_is_minted_again_while_its_short_id_is_taken() {
        let shorts = ShortIds::default();
        shorts.load([0x0f98_895b, 0xa1b2_c3d4]);
        let ids = [
            "0f98895b-0000-8000-8000-000000000001",
            "a1b2c3d4-0000-8000-8000-000000000002",
            "77777777-0000-8000-8000-000000000003",
        ]
        .map(|id| Uuid::parse_str(id).unwrap());
        let mut minted = ids.iter().copied();
        assert_eq!(
            shorts.claim_first(8, || minted.next().unwrap()),
            Some(ids[2])
        );
        assert!(
            !shorts.claim(0x7777_7777),
            "the id handed out holds its short id"
        );
        let mut taken = ids.iter().copied().cycle();
        assert_eq!(shorts.claim_first(3, || taken.next().unwrap()), None);
    }

    #[test]
    fn a_short_id_stored_twice_stays_in_use_until_both_are_released() {
        let shorts = ShortIds::default();
        shorts.load([5, 9, 5]);
        assert_eq!(shorts.len(), 2);
        shorts.release(5);
        assert!(!shorts.claim(5), "one approval still holds it");
        shorts.release(5);
        assert!(shorts.claim(5));
        assert!(!shorts.claim(9));
    }
}
