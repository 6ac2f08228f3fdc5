//! A sandboxed run ends with its run: when the runner kills bubblewrap (a timeout, a caller
//! gone), when the gateway itself dies, and when the run's own program exits and leaves
//! something behind. The sandboxed program is in a session of its own (`--new-session`), so
//! the runner's process-group kill does not reach it directly: these tests show that it ends
//! anyway.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gatehouse_sandbox::{Isolation, Plan};

use crate::support::{Fixture, output};

/// Pids of processes whose whole command line is `args`, as the host sees them.
fn processes(args: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted))
        .collect()
}

/// `sh -c script`, planned in an `ephemeral` sandbox.
fn planned_sh(fixture: &Fixture, script: &str) -> Plan {
    fixture
        .plan(
            &fixture.settings(Isolation::Ephemeral),
            &["sh", "-c", script],
            &BTreeMap::new(),
        )
        .unwrap()
}

fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "timed out waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn killing_bubblewrap_kills_everything_in_the_sandbox() {
    let fixture = Fixture::new();
    // A unique duration marks this test's processes.
    let marker = ["sleep", "9871.25"];
    let script = format!("{0} {1} & {0} {1}", marker[0], marker[1]);
    let planned = planned_sh(&fixture, &script);
    let mut bwrap = planned
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("both sleeps started", || processes(&marker).len() == 2);
    // What the runner does at a timeout: SIGKILL to what it spawned.
    bwrap.kill().unwrap();
    bwrap.wait().unwrap();
    wait_until("the sandbox is gone", || processes(&marker).is_empty());
}

#[test]
fn the_sandbox_dies_with_the_process_that_started_it() {
    let fixture = Fixture::new();
    let marker = ["sleep", "9872.25"];
    let planned = planned_sh(&fixture, &marker.join(" "));
    // A stand-in for the gateway: a shell that starts bubblewrap as the plan says, then waits.
    let bwrap = planned.command();
    let mut gateway = Command::new("/bin/sh");
    gateway
        .arg("-c")
        .arg("\"$@\" & wait")
        .arg("gateway")
        .arg(bwrap.get_program())
        .args(bwrap.get_args())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    planned.env().apply(&mut gateway);
    let mut gateway = gateway.spawn().unwrap();
    wait_until("the sleep started", || processes(&marker).len() == 1);
    gateway.kill().unwrap();
    gateway.wait().unwrap();
    wait_until("the sandbox is gone", || processes(&marker).is_empty());
}

#[test]
fn what_a_run_leaves_behind_ends_with_it() {
    let fixture = Fixture::new();
    let marker = ["sleep", "9873.25"];
    let script = format!("{} & echo started", marker.join(" "));
    let planned = planned_sh(&fixture, &script);
    let started = Instant::now();
    // The background sleep holds stdout open; it must end when the run does, or this waits.
    let run = output(&planned);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "started\n");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(processes(&marker).is_empty());
}
