//! The tool-call gate's per-call checks, each beside its baseline measured in the same run:
//! a path check against a bare `std::fs::canonicalize` of the same path, a URL check (no DNS)
//! against a bare `url::Url::parse` of the same URL.
//!
//! Run: `cargo bench -p gatehouse-policy --bench tool_call -- --warm-up-time 1 --measurement-time 3`
//! The last lines print the ratios (medians of batches), which are the budgets' unit.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::hint::black_box;
use std::os::unix::fs::symlink;

use criterion::{Criterion, criterion_group, criterion_main};
use gatehouse_policy::files::{FileOp, FileRules, FileRulesConfig, FileTool, check_file};
use gatehouse_policy::urls::{UrlRules, UrlRulesConfig, check_url};
use support::median_batch_ns;

/// A workspace path as agents send them: relative, three levels down.
const RELATIVE: &str = "crates/policy/src/lib.rs";
/// Through a symlinked directory inside the workspace.
const VIA_SYMLINK: &str = "current/src/lib.rs";
const URL_NAME: &str = "https://docs.example.com/guide/install.html?lang=en#linux";
const URL_LITERAL: &str = "http://93.184.215.14:8080/status";

fn bench_tool_call(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(dir.path()).unwrap().join("workspace");
    fs::create_dir_all(ws.join("crates/policy/src")).unwrap();
    fs::write(ws.join(RELATIVE), "//! lib").unwrap();
    symlink("crates/policy", ws.join("current")).unwrap();
    let mut config = FileRulesConfig::new(&ws);
    config.workspace_only = true;
    let rules = FileRules::new(config).unwrap();
    let absolute = ws.join(RELATIVE).display().to_string();
    let urls = UrlRules::new(UrlRulesConfig::new("tools.web.fetch")).unwrap();

    // Every check must succeed, or the figures would time a refusal.
    for path in [RELATIVE, VIA_SYMLINK, absolute.as_str()] {
        check_file(path, FileOp::Read, FileTool::Fs, &rules).unwrap();
    }
    check_url(URL_NAME, &urls).unwrap();
    check_url(URL_LITERAL, &urls).unwrap();

    let mut group = c.benchmark_group("tool_call");
    let read = |path: &str| check_file(path, FileOp::Read, FileTool::Fs, &rules);
    group.bench_function("check_file relative read", |b| {
        b.iter(|| black_box(read(black_box(RELATIVE))))
    });
    group.bench_function("check_file absolute read", |b| {
        b.iter(|| black_box(read(black_box(&absolute))))
    });
    group.bench_function("check_file read through a symlink", |b| {
        b.iter(|| black_box(read(black_box(VIA_SYMLINK))))
    });
    group.bench_function("baseline: canonicalize (same file)", |b| {
        b.iter(|| black_box(fs::canonicalize(black_box(&absolute))))
    });
    group.bench_function("check_url host name (no DNS)", |b| {
        b.iter(|| black_box(check_url(black_box(URL_NAME), &urls)))
    });
    group.bench_function("check_url IP literal", |b| {
        b.iter(|| black_box(check_url(black_box(URL_LITERAL), &urls)))
    });
    group.bench_function("baseline: Url::parse (host name URL)", |b| {
        b.iter(|| black_box(url::Url::parse(black_box(URL_NAME))))
    });
    group.finish();

    println!("ratios (median of batches, this run):");
    let canonicalize = median_batch_ns(BATCH, || {
        drop(black_box(fs::canonicalize(black_box(&absolute))))
    });
    for (label, path) in [
        ("relative read", RELATIVE),
        ("absolute read", absolute.as_str()),
        ("read through a symlink", VIA_SYMLINK),
    ] {
        let check = median_batch_ns(BATCH, || drop(black_box(read(black_box(path)))));
        report(label, check, "canonicalize", canonicalize);
    }
    for (label, url) in [("host-name URL", URL_NAME), ("IP-literal URL", URL_LITERAL)] {
        let parse = median_batch_ns(BATCH, || drop(black_box(url::Url::parse(black_box(url)))));
        let check = median_batch_ns(BATCH, || drop(black_box(check_url(black_box(url), &urls))));
        report(label, check, "Url::parse", parse);
    }
}

fn report(label: &str, check_ns: f64, baseline: &str, baseline_ns: f64) {
    println!(
        "  {label:>24}: check {:7.2} µs   {baseline} {:6.2} µs   ratio {:.2}x",
        check_ns / 1000.0,
        baseline_ns / 1000.0,
        check_ns / baseline_ns
    );
}

/// Calls per timed batch.
const BATCH: u32 = 2000;

criterion_group!(benches, bench_tool_call);
criterion_main!(benches);
