//! The layout of the approval ids the manager mints, and their short ids.
//!
//! A minted id is a version 8 UUID that carries its creation time (big-endian milliseconds) in
//! its last 48 bits. Its first 80 bits are random but for the version and variant (74 random
//! bits): the short id people type is a prefix, and it must not be shared by every approval
//! created in the same minute. Stores may rely on the time part to keep their id index cheap to
//! write (each insert lands at the index's end; see `gatehouse-store`'s `approvals_db::ids`),
//! so it is part of the contract: [`minted_at_ms`] reads it back.
//!
//! The short id is an id's first 32 bits, the 8 hex digits chat cards show and people type
//! ([`short_id`]). Ids are random there so that the short id names one approval; the manager
//! keeps every stored short id in memory to keep it so (see `short_ids.rs`).

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

/// The 48 bits a version 8 (RFC 4122 variant) UUID carries in its last group, which for an id
/// from [`mint_approval_id`] is its creation time; `None` for any other id.
pub fn minted_at_ms(id: &Uuid) -> Option<u64> {
    if id.get_version() != Some(Version::Custom) || id.get_variant() != Variant::RFC4122 {
        return None;
    }
    let mut millis = [0u8; 8];
    millis[2..].copy_from_slice(&id.as_bytes()[TIME_BYTES]);
    Some(u64::from_be_bytes(millis))
}

/// How many hex digits of an id make its short id: what chat cards show and people type.
pub const SHORT_ID_DIGITS: usize = 8;

/// The short id of `id` as a number: its first 32 bits, that is its first [`SHORT_ID_DIGITS`]
/// hex digits. Two approvals sharing one would make the short id on a card ambiguous.
pub fn short_id(id: &Uuid) -> u32 {
    let [a, b, c, d, ..] = *id.as_bytes();
    u32::from_be_bytes([a, b, c, d])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_id_carries_its_creation_time() {
        let id = mint_approval_id(1_700_000_000_123);
        assert_eq!(minted_at_ms(&id), Some(1_700_000_000_123));
        assert!(
            id.to_string()
                .ends_with(&format!("-{:012x}", 1_700_000_000_123u64)),
            "{id}"
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
    fn only_version_8_ids_carry_a_time() {
        for id in [
            "7d444840-9dc0-11d1-b245-5ffdce74fad2",
            "0198a2f0-7b2a-7c1e-9c4d-3e5f6a7b8c9d",
            // Version 8 with a variant other than RFC 4122's.
            "00000000-0000-8000-c000-00000000002a",
        ] {
            assert_eq!(minted_at_ms(&Uuid::parse_str(id).unwrap()), None, "{id}");
        }
        assert_eq!(minted_at_ms(&Uuid::new_v4()), None);
    }
}
