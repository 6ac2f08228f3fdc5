//! Integration tests of the approvals core against real files and a real SQLite store.

// The approval binding over real files, symlinks and scripts.
mod binding;
