//! The one integration-test binary of `gatehouse-store`.

// Helpers here are test code too; clippy.toml's test allowance only reaches `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The approval store contract on SQLite and PostgreSQL: transitions, CAS outcomes,
// consumption, lookup, retention, grants.
mod approvals_db;
// The store contract's subjects: one store of each kind behind the `ApprovalStore` trait.
mod stores;
// Several PostgreSQL stores (gateways) on one database: one winner, one run, one migration.
mod replicas;
// Upgrading a shared database: migrations that need every replica stopped wait for them.
mod upgrades;
// Approval managers on PostgreSQL stores sharing a database: decisions, adoption, expiry.
mod replica_managers;
// The PostgreSQL event log: appended with each transition, numbered in commit order, caught up.
mod event_log;
// exec-approvals.json as a document replicas share: the file's contract, concurrency, import.
mod shared_documents;
// Operating replicas' stores: the write queue's bound, pending caps and approval routes held
// across replicas.
mod replica_ops;
// exec-approvals.json on disk: baseHash, 0600, migration, redaction, dedupe, merges.
mod approvals_file_store;
// The approvals database under concurrency and restarts; its file mode and schema guards.
mod approvals_db_durability;
// Chat shared by PostgreSQL gateways: the connections' lease, the buttons of cards sent.
mod chat_leases;
// The chat outbox: conditional steps, fenced attempts, pruning, the upgrade that adds it.
mod outbox;
// Group commit: outcomes of operations batched together, read-your-writes, closing the writer.
mod approvals_db_batching;
// Other processes: concurrent writers, and writers killed with SIGKILL mid-write.
mod child_processes;
// decision-cases.jsonl kinds `approvals-file` and `effective-policy`.
mod conformance;
// Agent resolution and composition beyond the conformance cases (invalid values, precedence).
mod resolution;
// Temporary directories and sample approvals shared by the modules.
mod support;
// The hash-chained audit log: tamper detection, crash repair, rotation, file modes.
mod audit;
