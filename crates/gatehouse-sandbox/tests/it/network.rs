//! The network: none by default (a new, empty namespace), the host's when allowed.

use std::net::TcpListener;

use gatehouse_sandbox::Isolation;

use crate::support::Fixture;

/// Connects to `port` on the loopback address with bash's `/dev/tcp`, and lists the network
/// interfaces the run sees.
fn connect_script(port: u16) -> String {
    format!(
        "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected || echo refused; \
         tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
    )
}

#[test]
fn a_sandboxed_run_cannot_reach_a_listener_on_the_hosts_loopback_by_default() {
    let fixture = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let settings = fixture.settings(Isolation::Ephemeral);
    assert!(!settings.network);
    let seen = fixture.sh_ok(&settings, &connect_script(port));
    assert_eq!(seen, "refused\nlo\n", "only its own loopback");
    assert!(listener.accept().is_err(), "nothing reached the host");
}

#[test]
fn network_true_shares_the_hosts_network() {
    let fixture = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut settings = fixture.settings(Isolation::Ephemeral);
    settings.network = true;
    let seen = fixture.sh_ok(&settings, &connect_script(port));
    assert!(seen.starts_with("connected\n"), "{seen}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok(), "the host's listener was reached");
}
