//! Each chat guide's "Dry run against the fake" (docs/channels/*.md), verbatim: its five `sh`
//! blocks are read from the guide and run with `sh -c` against the real binary and the
//! platform's fake; the request they make must be allowed by the button press they make, and
//! the `/start` they send must be answered with the sender's id.
//! Only what would clash with other tests on this machine is replaced: the fake runs in this
//! process on a free port (the guide starts the same server with `cargo run -p
//! gatehouse-fakes`), the gateway listens on a free port, and `/tmp/gatehouse-dry-run` is a
//! temporary directory. Needs `curl` and `jq`, as the guides say.

use std::net::SocketAddr;

use gatehouse_fakes::FakeHandle;

use crate::docs_shell::{DocShell, free_port, line_with, root, sh_blocks};

/// One guide's dry run: where it is, the fake it starts, the answer the request ends with.
struct Guide {
    file: &'static str,
    /// The first block: how the guide starts the fake.
    fake_command: &'static str,
    /// The fake's address as the guide writes it.
    fake_addr: &'static str,
    /// How the request's answer starts once the approver pressed "Allow once".
    allowed_by: &'static str,
    /// What the bot's answer to the last block's `/start` says first.
    introduced: &'static str,
}

const GUIDES: [Guide; 3] = [
    Guide {
        file: "telegram.md",
        fake_command: "cargo run -p gatehouse-fakes -- --telegram 127.0.0.1:8081",
        fake_addr: "127.0.0.1:8081",
        allowed_by: "allow-once (by telegram:42; approval ",
        introduced: "Your user id on telegram is 7.",
    },
    Guide {
        file: "discord.md",
        fake_command: "cargo run -p gatehouse-fakes -- --discord 127.0.0.1:8082",
        fake_addr: "127.0.0.1:8082",
        allowed_by: "allow-once (by discord:5000 (@user5000); approval ",
        introduced: "Your user id on discord is 7.",
    },
    Guide {
        file: "slack.md",
        fake_command: "cargo run -p gatehouse-fakes -- --slack 127.0.0.1:8083",
        fake_addr: "127.0.0.1:8083",
        allowed_by: "allow-once (by slack:U0APPROVER (@u0approver); approval ",
        introduced: "Your user id on slack is U0SOMEONE.",
    },
];

/// The guide's fake, started here on a free port.
async fn spawn_fake(file: &str) -> FakeHandle {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    match file {
        "telegram.md" => gatehouse_fakes::telegram::spawn(any).await,
        "discord.md" => gatehouse_fakes::discord::spawn(any).await,
        _ => gatehouse_fakes::slack::spawn(any).await,
    }
    .unwrap()
}

async fn dry_run(guide: &Guide) {
    let text = std::fs::read_to_string(root().join("docs/channels").join(guide.file)).unwrap();
    let blocks = sh_blocks(&text, "## Dry run against the fake");
    let [start_fake, start_gateway, ask, press, introduce] = blocks.as_slice() else {
        panic!("{}: expected 5 sh blocks, got {blocks:#?}", guide.file);
    };
    assert_eq!(
        crate::docs_shell::command_lines(std::slice::from_ref(start_fake)),
        [guide.fake_command],
        "{}",
        guide.file
    );
    let fake = spawn_fake(guide.file).await;
    let shell = DocShell::new();
    let work = shell.home.path().join("dry-run");
    let gateway_addr = format!("127.0.0.1:{}", free_port());
    let local = |block: &str| {
        block
            .replace(guide.fake_addr, &fake.addr.to_string())
            .replace("127.0.0.1:18791", &gateway_addr)
            .replace("/tmp/gatehouse-dry-run", &work.display().to_string())
    };

    let gateway = shell.start(&local(start_gateway));
    line_with(&gateway.stdout, "no problems found", "doctor's verdict").await;
    line_with(&gateway.stdout, "Gatehouse is listening on", "the gateway").await;
    let request = shell.start(&local(ask));
    line_with(
        &request.stderr,
        "waiting for a decision on approval",
        "the request",
    )
    .await;
    shell.run(&local(press)).await;
    let answer = request.succeeded().await;
    assert!(
        answer.starts_with(guide.allowed_by),
        "{}: {answer}",
        guide.file
    );
    let introduction = shell.run(&local(introduce)).await;
    assert!(
        introduction.contains(guide.introduced) && introduction.contains("not an approver"),
        "{}: {introduction}",
        guide.file
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_telegram_guide_dry_run_works_verbatim() {
    dry_run(&GUIDES[0]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_discord_guide_dry_run_works_verbatim() {
    dry_run(&GUIDES[1]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slack_guide_dry_run_works_verbatim() {
    dry_run(&GUIDES[2]).await;
}
