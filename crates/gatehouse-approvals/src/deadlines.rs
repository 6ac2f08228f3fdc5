//! One timer for all approvals: a min-heap of deadlines drained by a single task.
//!
//! A tokio task with its own sleep per pending approval would cost several hundred bytes each;
//! a heap entry costs 32. The heap is drained by the manager's timer task, which sleeps until
//! the earliest deadline or until an earlier one is pushed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;
use uuid::Uuid;

/// What happens when a deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Due {
    /// A pending approval times out.
    Expire,
    /// A settled approval's grace period ends; it leaves memory.
    Evict,
}

/// Deadlines in wall-clock milliseconds, earliest first.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    heap: Mutex<BinaryHeap<Reverse<(u64, Uuid, Due)>>>,
    earlier: Notify,
}

impl Deadlines {
    /// Schedules `due` for `id` at `at_ms`, waking the timer task if it is now the earliest.
    pub(crate) fn push(&self, at_ms: u64, id: Uuid, due: Due) {
        let mut heap = self.heap.lock().unwrap_or_else(PoisonError::into_inner);
        let earliest = heap
            .peek()
            .is_none_or(|Reverse((first, _, _))| at_ms < *first);
        heap.push(Reverse((at_ms, id, due)));
        drop(heap);
        if earliest {
            self.earlier.notify_one();
        }
    }

    /// Removes and returns every deadline at or before `now_ms`, and the next one after it.
    pub(crate) fn take_due(&self, now_ms: u64) -> (Vec<(Uuid, Due)>, Option<u64>) {
        let mut heap = self.heap.lock().unwrap_or_else(PoisonError::into_inner);
        let mut due = Vec::new();
        while let Some(Reverse((at_ms, id, kind))) = heap.peek().copied() {
            if at_ms > now_ms {
                return (due, Some(at_ms));
            }
            heap.pop();
            due.push((id, kind));
        }
        (due, None)
    }

    /// Resolves when a deadline earlier than all others was pushed (or one was pushed while
    /// the timer task was busy: `Notify` keeps one permit).
    pub(crate) async fn earlier_pushed(&self) {
        self.earlier.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_due_deadlines_in_order_and_reports_the_next() {
        let deadlines = Deadlines::default();
        let (a, b, c) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        deadlines.push(300, c, Due::Expire);
        deadlines.push(100, a, Due::Expire);
        deadlines.push(200, b, Due::Evict);
        assert_eq!(
            deadlines.take_due(250),
            (vec![(a, Due::Expire), (b, Due::Evict)], Some(300))
        );
        assert_eq!(deadlines.take_due(250), (vec![], Some(300)));
        assert_eq!(deadlines.take_due(300), (vec![(c, Due::Expire)], None));
    }
}
