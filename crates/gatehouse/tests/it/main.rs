//! End-to-end tests of the `gatehouse` binary.

// `gatehouse serve`: the real binary on a free port with a temporary data directory.
mod serve;
// `gatehouse audit verify|tail`: exit codes and output on intact and tampered logs.
mod audit;
