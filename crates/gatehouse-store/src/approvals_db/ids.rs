//! Approval ids that keep the database's id index cheap to write.
//!
//! The store finds an approval by `(id_order, id)`, where `id_order` is a function of the id
//! alone. A random id as the index's first column would send every insert to a random page of
//! an index that grows with the history: at 2,000 approvals a second each commit and each
//! checkpoint then writes one scattered page per approval, and the latency tail grew with the
//! history (docs/performance.md, "Ninth round"). Ids minted by [`mint_approval_id`] carry their
//! creation time in their last 48 bits, which is their `id_order`, so each insert lands on the
//! index's last page. Their first 80 bits are random but for the version and variant (74
//! random bits): the short id people type is a prefix, and it must not be shared by every
//! approval created in the same minute.
//!
//! The short id is an id's first 32 bits, the 8 hex digits chat cards show and people type
//! ([`short_id`]). Ids are random there so that the short id names one approval; the approval
//! manager keeps every stored short id in memory to keep it so (see `gatehouse-approvals`).
//!
//! Any other version 8 UUID orders by its last 48 bits too, whatever they mean, and every other
//! id (a requester's v4, or one minted before this layout) orders as 0. Both are correct, since
//! the order is a function of the id; ids that order as 0 are as costly to index as every id
//! used to be.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use uuid::{Builder, Uuid, Variant, Version};

/// Bytes of the id that hold the creation time (big-endian milliseconds, 48 bits).
const TIME_BYTES: std::ops::Range<usize> = 10..16;

/// A fresh approval id: a version 8 UUID, random except for `created_at_ms` (its low 48 bits,
/// enough until the year 10889) in its last group.
pub fn mint_approval_id(created_at_ms: u64) -> Uuid {
    let mut bytes = *Uuid::new_v4().as_bytes();
    bytes[TIME_BYTES].copy_from_slice(&created_at_ms.to_be_bytes()[2..]);
    Builder::from_custom_bytes(bytes).into_uuid()
}

/// How many hex digits of an id make its short id: what chat cards show and people type.
pub const SHORT_ID_DIGITS: usize = 8;

/// The short id of `id` as a number: its first 32 bits, that is its first [`SHORT_ID_DIGITS`]
/// hex digits. Two approvals sharing one would make the short id on a card ambiguous.
pub fn short_id(id: &Uuid) -> u32 {
    let [a, b, c, d, ..] = *id.as_bytes();
    u32::from_be_bytes([a, b, c, d])
}

/// Where `id` sorts in the id index: the last 48 bits of a version 8 UUID (the time a minted
/// id carries), 0 for any other text.
///
/// Stored beside each id and looked up by, so it is frozen: a change would leave stored rows
/// where no lookup finds them and let an id in twice. Changing it takes a migration that
/// recomputes the column (a test pins known values).
pub(super) fn id_order(id: &str) -> i64 {
    let Ok(uuid) = Uuid::try_parse(id) else {
        return 0;
    };
    if uuid.get_version() != Some(Version::Custom) || uuid.get_variant() != Variant::RFC4122 {
        return 0;
    }
    let mut millis = [0u8; 8];
    millis[2..].copy_from_slice(&uuid.as_bytes()[TIME_BYTES]);
    // 48 bits always fit.
    i64::from_be_bytes(millis)
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

    #[test]
    fn minted_ids_are_version_8_and_their_short_ids_differ() {
        let first = mint_approval_id(42);
        let second = mint_approval_id(42);
        assert_eq!(first.get_version(), Some(Version::Custom));
        assert_eq!(first.get_variant(), Variant::RFC4122);
        assert_ne!(first.to_string()[..8], second.to_string()[..8]);
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
    fn the_short_id_is_the_first_eight_hex_digits() {
        let id = Uuid::parse_str("0f98895b-dead-4bad-8bad-0123456789ab").unwrap();
        assert_eq!(short_id(&id), 0x0f98_895b);
        assert_eq!(
            format!("{:08x}", short_id(&id)),
            id.to_string()[..SHORT_ID_DIGITS]
        );
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
