//! `gatehouse-fakes`: runs the fake chat platforms (and the other fakes) for manual tests
//! and end-to-end suites.
//!
//! Each flag starts one fake on the given address; the base URL of each is printed on one
//! line (`telegram http://127.0.0.1:8081`) so a test harness can read it when asking for port 0.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use gatehouse_fakes::FakeHandle;
use gatehouse_fakes::dns::DnsHandle;
use gatehouse_fakes::model::Script;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Local fake Telegram, Discord and Slack servers, a DNS server and fake model APIs (see
/// docs/fakes.md).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Serve the fake Telegram Bot API on this address, e.g. 127.0.0.1:8081.
    #[arg(long, value_name = "ADDR")]
    telegram: Option<SocketAddr>,
    /// Serve the fake Discord REST API and gateway on this address.
    #[arg(long, value_name = "ADDR")]
    discord: Option<SocketAddr>,
    /// Serve the fake Slack Web API and Socket Mode on this address.
    #[arg(long, value_name = "ADDR")]
    slack: Option<SocketAddr>,
    /// Serve DNS (UDP and TCP) on this address, e.g. 127.0.0.1:5353.
    #[arg(long, value_name = "ADDR")]
    dns: Option<SocketAddr>,
    /// The names the DNS server answers, as JSON (see docs/fakes.md); others are NXDOMAIN.
    #[arg(long, value_name = "FILE", requires = "dns")]
    dns_zone: Option<PathBuf>,
    /// Serve a fake Anthropic Messages API (for Claude Code) on this address.
    #[arg(long, value_name = "ADDR")]
    anthropic: Option<SocketAddr>,
    /// The turns the fake Anthropic model plays, as JSON (see docs/fakes.md).
    #[arg(long, value_name = "FILE", requires = "anthropic")]
    anthropic_script: Option<PathBuf>,
    /// Serve a fake OpenAI Responses API (for Codex) on this address.
    #[arg(long, value_name = "ADDR")]
    openai: Option<SocketAddr>,
    /// The turns the fake OpenAI model plays, as JSON.
    #[arg(long, value_name = "FILE", requires = "openai")]
    openai_script: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // `RUST_LOG` as `level` or `target=level` directives; errors only when unset or unreadable.
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|value| value.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::ERROR));
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .init();
    let args = Args::parse();
    let mut running: Vec<FakeHandle> = Vec::new();
    if let Some(addr) = args.telegram {
        running.push(started(
            "telegram",
            addr,
            gatehouse_fakes::telegram::spawn(addr).await,
        )?);
    }
    if let Some(addr) = args.discord {
        running.push(started(
            "discord",
            addr,
            gatehouse_fakes::discord::spawn(addr).await,
        )?);
    }
    if let Some(addr) = args.slack {
        running.push(started(
            "slack",
            addr,
            gatehouse_fakes::slack::spawn(addr).await,
        )?);
    }
    if let Some(addr) = args.anthropic {
        let script = script(args.anthropic_script.as_deref())?;
        running.push(started(
            "anthropic",
            addr,
            gatehouse_fakes::model::anthropic::spawn(addr, script).await,
        )?);
    }
    if let Some(addr) = args.openai {
        let script = script(args.openai_script.as_deref())?;
        running.push(started(
            "openai",
            addr,
            gatehouse_fakes::model::openai::spawn(addr, script).await,
        )?);
    }
    let dns = match args.dns {
        Some(addr) => Some(dns(addr, args.dns_zone).await?),
        None => None,
    };
    anyhow::ensure!(
        !running.is_empty() || dns.is_some(),
        "nothing to serve: give at least one of --telegram, --discord, --slack, --dns, --anthropic, --openai"
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    for fake in running {
        fake.shutdown().await;
    }
    if let Some(dns) = dns {
        dns.shutdown().await;
    }
    Ok(())
}

/// Starts the DNS server with the zone file's names; prints `dns <addr>`.
async fn dns(addr: SocketAddr, zone: Option<PathBuf>) -> anyhow::Result<DnsHandle> {
    let server = gatehouse_fakes::dns::spawn(addr)
        .await
        .with_context(|| format!("starting the DNS server on {addr}"))?;
    if let Some(path) = zone {
        let json = read_json(&path, "DNS zone")?;
        server
            .load_json(&json)
            .with_context(|| format!("loading the DNS zone {}", path.display()))?;
    }
    println!("dns {}", server.addr);
    Ok(server)
}

/// A model script from its file; no file is an empty script (the model only says "done").
fn script(path: Option<&Path>) -> anyhow::Result<Script> {
    let Some(path) = path else {
        return Ok(Script::default());
    };
    let json = read_json(path, "model script")?;
    Script::from_json(&json).with_context(|| format!("loading the model script {}", path.display()))
}

fn read_json(path: &Path, what: &str) -> anyhow::Result<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the {what} {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing the {what} {}", path.display()))
}

/// Prints `<platform> <base url>` for harnesses, or says which fake failed to start.
fn started(
    platform: &str,
    addr: SocketAddr,
    spawned: Result<FakeHandle, gatehouse_fakes::FakeError>,
) -> anyhow::Result<FakeHandle> {
    let fake = spawned.with_context(|| format!("starting the {platform} fake on {addr}"))?;
    println!("{platform} {}", fake.base_url);
    Ok(fake)
}
