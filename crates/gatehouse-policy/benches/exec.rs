//! Placeholder replaced by the exec benchmark.
fn main() {}
