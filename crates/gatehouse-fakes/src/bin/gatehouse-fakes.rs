//! `gatehouse-fakes`: runs the fake chat platforms for manual tests and end-to-end suites.
//!
//! Each flag starts one fake on the given address; the base URL of each is printed on one
//! line (`telegram http://127.0.0.1:8081`) so a test harness can read it when asking for port 0.

use std::net::SocketAddr;

use anyhow::Context;
use clap::Parser;
use gatehouse_fakes::FakeHandle;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Local fake Telegram, Discord and Slack servers (see docs/fakes.md).
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
    anyhow::ensure!(
        !running.is_empty(),
        "nothing to serve: give at least one of --telegram, --discord, --slack"
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    for fake in running {
        fake.shutdown().await;
    }
    Ok(())
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
