//! The id index's order: where an approval id sorts, so that the ids the manager mints keep
//! the database's id index cheap to write.
//!
//! The store finds an approval by `(id_order, id)`, where `id_order` is a function of the id
//! alone. A random id as the index's first column would send every insert to a random page of
//! an index that grows with the history: at 2,000 approvals a second each commit and each
//! checkpoint then writes one scattered page per approval, and the latency tail grew with the
//! history (docs/performance.md, "Ninth round"). Ids minted by
//! [`gatehouse_approvals::mint_approval_id`] carry their creation time in their last 48 bits
//! (see `gatehouse-approvals`' `ids.rs`), which is their `id_order`, so each insert lands on the
//! index's last page.
//!
//! Any other version 8 UUID orders by its last 48 bits too, whatever they mean, and every other
//! id (a requester's v4, or one minted before this layout) orders as 0. Both are correct, since
//! the order is a function of the id; ids that order as 0 are as costly to index as every id
//! used to be.

use gatehouse_approvals::minted_at_ms;
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use uuid::Uuid;

/// Where `id` sorts in the id index: the last 48 bits of a version 8 UUID (the time a minted
/// id carries), 0 for any other text.
///
/// Stored beside each id and looked up by, so it is frozen: a change would leave stored rows
/// where no lookup finds them and let an id in twice. Changing it takes a migration that
/// recomputes the column (a test pins known values).
pub(super) fn id_order(id: &str) -> i64 {
    let Some(millis) = Uuid::try_parse(id).ok().as_ref().and_then(minted_at_ms) else {
        return 0;
    };
    // 48 bits always fit.
    i64::try_from(millis).unwrap_or(0)
}

/// Makes [`id_order`] callable as `gatehouse_id_order(id)` on `conn`, for the migration that
/// fills the column in rows written before it existed.
pub(super) fn define_sql_function(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "gatehouse_id_order",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(id_order(ctx.get_raw(0).as_str().unwrap_or_default())),
    )
}

#[cfg(test)]
mod tests {
    use gatehouse_approvals::mint_approval_id;

    use super::*;

    #[test]
    fn a_minted_id_orders_by_its_creation_time() {
        let id = mint_approval_id(1_700_000_000_123).to_string();
        assert_eq!(id_order(&id), 1_700_000_000_123);
        assert!(
            id.ends_with(&format!("-{:012x}", 1_700_000_000_123u64)),
            "{id}"
        );
        assert!(
            id_order(&mint_approval_id(5).to_string()) < id_order(&mint_approval_id(6).to_string())
        );
    }

    /// Stored rows hold these values; see `id_order`'s doc before changing any.
    #[test]
    fn the_order_of_known_ids_never_changes() {
        for (id, order) in [
            ("0badc0de-0000-8000-8000-0000000003e7", 999),
            ("f3a1c2d4-5e6f-8a7b-9c8d-0193a1b2c3d4", 0x0193_a1b2_c3d4),
            ("7d444840-9dc0-11d1-b245-5ffdce74fad2", 0),
            ("0198a2f0-7b2a-7c1e-9c4d-3e5f6a7b8c9d", 0),
        ] {
            assert_eq!(id_order(id), order, "{id}");
        }
    }

    #[test]
    fn any_other_id_orders_as_zero() {
        for id in [
            "7d444840-9dc0-11d1-b245-5ffdce74fad2",
            "0198a2f0-7b2a-7c1e-9c4d-3e5f6a7b8c9d",
            "not an id",
            "",
            // Version 8 with a variant other than RFC 4122's.
            "00000000-0000-8000-c000-00000000002a",
        ] {
            assert_eq!(id_order(id), 0, "{id}");
        }
        assert_eq!(id_order(&Uuid::new_v4().to_string()), 0);
    }
}
