//! End-to-end tests of the `gatehouse` binary.

// `gatehouse serve`: the real binary on a free port with a temporary data directory.
mod serve;

// The Control UI in headless Chromium, driven over the DevTools protocol like a person.
mod browser;
// A minimal Chrome DevTools Protocol client for `browser`.
mod cdp;
