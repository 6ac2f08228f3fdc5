//! The gateway running on this machine, found without being told: the admin token `serve`
//! generated in its data directory (when no tokens are configured) is read and sent to a
//! loopback address, and only when
//!
//! - the token file belongs to this user and nobody else can read it (a file others can read
//!   is refused with the fix, as `serve` refuses it), and
//! - the process listening on that address runs as this user, found in `/proc/net/tcp{,6}`: if
//!   the gateway is not running, another user's process could be listening on its port to
//!   collect the token, and it is not sent there.

use std::fs::Metadata;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::cli::layout::ADMIN_TOKEN_FILE;
use crate::cli::tokens::read_admin_token;

/// What this machine's data directory offers for a URL.
pub(crate) enum LocalToken {
    /// The admin token, safe to send to the URL.
    Found { secret: String, path: PathBuf },
    /// The URL is not a loopback address: this machine's token is not for it.
    NotLocal,
    /// No admin token file (configured tokens, or `serve` never ran here).
    NoFile(PathBuf),
    /// Nothing listens on the URL's port.
    NotListening,
}

/// This machine's admin token for `url`, under the rules of the module docs; an error when a
/// token exists but may not be sent (the file is loose, or another user listens on the port).
pub(crate) fn admin_token(data_dir: &Path, url: &str) -> anyhow::Result<LocalToken> {
    let Some((host, port)) = loopback_host_port(url) else {
        return Ok(LocalToken::NotLocal);
    };
    let path = data_dir.join(ADMIN_TOKEN_FILE);
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(LocalToken::NoFile(path));
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    private_to_me(&path, &metadata, "admin token file")?;
    let me = rustix::process::geteuid().as_raw();
    let listeners = listeners_on(port).context(
        "cannot tell which user listens on the gateway's port (/proc/net/tcp), so this machine's \
         admin token is not sent; pass --token",
    )?;
    let serving: Vec<u32> = listeners
        .iter()
        .filter(|listener| listener.serves(host))
        .map(|listener| listener.uid)
        .collect();
    if serving.is_empty() {
        return Ok(LocalToken::NotListening);
    }
    if let Some(other) = serving.iter().find(|uid| **uid != me) {
        bail!(
            "the process listening on {url} runs as another user (uid {other}, you are {me}), so \
             this machine's admin token ({}) is not sent to it; pass --token if you trust it",
            path.display()
        );
    }
    let secret = read_admin_token(&path)?;
    Ok(LocalToken::Found {
        secret: secret.expose().to_owned(),
        path,
    })
}

/// Refuses a file holding a secret that another user owns or that group or others can read.
pub(crate) fn private_to_me(path: &Path, metadata: &Metadata, what: &str) -> anyhow::Result<()> {
    let me = rustix::process::geteuid().as_raw();
    if metadata.uid() != me {
        bail!(
            "{what} {} belongs to uid {}, not to you (uid {me}); run the command as its owner, \
             or pass --token",
            path.display(),
            metadata.uid()
        );
    }
    let mode = metadata.mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "{what} {} is readable by group or others (mode {mode:o}), so it is not used: run \
             `chmod 600 {}` (and replace the token if others may have read it)",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// The host and port of `url` when it is a plain `http://` URL to a loopback address (an IP
/// literal or `localhost`).
fn loopback_host_port(url: &str) -> Option<(Host, u16)> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split('/').next()?;
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, port) = v6.split_once("]:")?;
            (host, port)
        }
        None => authority.rsplit_once(':')?,
    };
    let port: u16 = port.parse().ok()?;
    let host = match host {
        "localhost" => Host::Localhost,
        literal => match literal.parse::<IpAddr>().ok()? {
            ip if ip.is_loopback() => Host::Ip(ip),
            _ => return None,
        },
    };
    Some((host, port))
}

/// A loopback host as a URL names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    Ip(IpAddr),
    /// Either loopback address.
    Localhost,
}

/// A listening TCP socket on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listener {
    address: IpAddr,
    uid: u32,
}

impl Listener {
    /// Whether a connection to `host` on its port reaches this socket.
    fn serves(&self, host: Host) -> bool {
        if self.address.is_unspecified() {
            return true;
        }
        match host {
            Host::Ip(ip) => self.address == ip,
            Host::Localhost => self.address.is_loopback(),
        }
    }
}

/// Every listening socket on `port`, from `/proc/net/tcp` and `/proc/net/tcp6`.
fn listeners_on(port: u16) -> anyhow::Result<Vec<Listener>> {
    let mut found = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            // A kernel without IPv6 has no tcp6 table.
            Err(error) if v6 && error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error).with_context(|| format!("cannot read {file}")),
        };
        found.extend(
            parse_table(&text, v6)
                .filter(|(p, _)| *p == port)
                .map(|(_, l)| l),
        );
    }
    Ok(found)
}

/// The listening sockets of one `/proc/net/tcp*` table, with their ports. Lines it cannot
/// read are skipped: they cannot be the gateway's, and the caller then finds no listener.
fn parse_table(text: &str, v6: bool) -> impl Iterator<Item = (u16, Listener)> + '_ {
    const LISTEN: &str = "0A";
    text.lines().skip(1).filter_map(move |line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, state, uid) = (fields.get(1)?, fields.get(3)?, fields.get(7)?);
        if *state != LISTEN {
            return None;
        }
        let (address, port) = local.split_once(':')?;
        let port = u16::from_str_radix(port, 16).ok()?;
        let address = if v6 {
            IpAddr::V6(ipv6_from_hex(address)?)
        } else {
            IpAddr::V4(ipv4_from_hex(address)?)
        };
        Some((
            port,
            Listener {
                address,
                uid: uid.parse().ok()?,
            },
        ))
    })
}

/// The kernel prints an address as the 32-bit words it holds in network byte order, each
/// formatted as a number in the machine's own order: reading each word back the same way gives
/// the bytes in network order again, on any machine.
fn ipv4_from_hex(hex: &str) -> Option<Ipv4Addr> {
    let word = u32::from_str_radix(hex, 16).ok()?;
    Some(Ipv4Addr::from(word.to_ne_bytes()))
}

fn ipv6_from_hex(hex: &str) -> Option<Ipv6Addr> {
    if hex.len() != 32 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (index, chunk) in bytes.chunks_mut(4).enumerate() {
        let word = u32::from_str_radix(hex.get(index * 8..index * 8 + 8)?, 16).ok()?;
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    Some(Ipv6Addr::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_loopback_urls_only() {
        let v4 = Host::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(
            loopback_host_port("http://127.0.0.1:18790"),
            Some((v4, 18790))
        );
        assert_eq!(
            loopback_host_port("http://[::1]:9/"),
            Some((Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)), 9))
        );
        assert_eq!(
            loopback_host_port("http://localhost:80/x"),
            Some((Host::Localhost, 80))
        );
        for other in [
            "https://127.0.0.1:1",
            "http://10.0.0.1:18790",
            "http://gatehouse.example:18790",
            "http://127.0.0.1",
        ] {
            assert_eq!(loopback_host_port(other), None, "{other}");
        }
    }

    #[test]
    fn finds_listening_sockets_and_their_owners_in_the_kernel_table() {
        // 127.0.0.1:18790 listening as uid 1000, 0.0.0.0:22 as root, an established socket.
        let native = |ip: [u8; 4]| format!("{:08X}", u32::from_ne_bytes(ip));
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {}:4966 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1\n\
             1: {}:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2\n\
             2: {}:4966 {}:D431 01 00000000:00000000 00:00000000 00000000  1000        0 3\n",
            native([127, 0, 0, 1]),
            native([0, 0, 0, 0]),
            native([127, 0, 0, 1]),
            native([127, 0, 0, 1]),
        );
        let found: Vec<(u16, Listener)> = parse_table(&table, false).collect();
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert_eq!(
            found,
            [
                (
                    18790,
                    Listener {
                        address: loopback,
                        uid: 1000
                    }
                ),
                (
                    22,
                    Listener {
                        address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                        uid: 0
                    }
                ),
            ]
        );
        assert!(
            found[1].1.serves(Host::Localhost),
            "a wildcard listener serves loopback"
        );
        assert!(!found[0].1.serves(Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST))));
    }

    #[test]
    fn finds_its_own_listener() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = rustix::process::geteuid().as_raw();
        let found = listeners_on(port).unwrap();
        assert!(
            found
                .iter()
                .any(|l| l.uid == me && l.serves(Host::Localhost)),
            "{found:?}"
        );
    }
}
