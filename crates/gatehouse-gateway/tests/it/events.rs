use gatehouse_gateway::{Access, Limits, Scope};
use serde_json::json;

use crate::support::{ADMIN, AGENT, APPROVER, Frame, Server};

#[tokio::test]
async fn fans_out_every_event_to_every_connection_with_one_sequence() {
    let server = Server::start(Limits::default()).await;
    let mut first = server.ws().await;
    first.connect(ADMIN).await;
    let mut second = server.ws().await;
    second.connect(APPROVER).await;
    let seqs: Vec<u64> = (0..5)
        .map(|i| {
            server
                .state
                .events()
                .publish("test.tick", &json!({"i": i}), Access::AnyScope)
        })
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    for ws in [&mut first, &mut second] {
        for (i, seq) in seqs.iter().enumerate() {
            assert_eq!(
                ws.json().await,
                json!({"type":"event","event":"test.tick","payload":{"i":i},"seq":seq})
            );
        }
    }
}

#[tokio::test]
async fn delivers_events_only_to_tokens_in_their_audience() {
    let server = Server::start(Limits::default()).await;
    let mut agent = server.ws().await;
    agent.connect(AGENT).await;
    let mut approver = server.ws().await;
    approver.connect(APPROVER).await;
    let hidden =
        server
            .state
            .events()
            .publish("approval", &json!({}), Access::Scope(Scope::Approvals));
    let shared = server
        .state
        .events()
        .publish("notice", &json!({}), Access::AnyScope);
    assert_eq!(approver.json().await["seq"], hidden);
    assert_eq!(approver.json().await["seq"], shared);
    // The agent's first event is the shared one: it never saw the approval, only a gap in seq.
    assert_eq!(agent.json().await["seq"], shared);
}

#[tokio::test]
async fn drops_a_slow_consumer_with_a_reason_while_others_keep_receiving() {
    let server = Server::start(Limits {
        event_queue: 4,
        ..Limits::default()
    })
    .await;
    let mut slow = server.ws().await;
    slow.connect(ADMIN).await;
    let mut fast = server.ws().await;
    fast.connect(ADMIN).await;
    let reader = tokio::spawn(async move {
        let mut seqs = Vec::new();
        while seqs.len() < 200 {
            seqs.push(fast.json().await["seq"].as_u64().unwrap());
        }
        seqs
    });
    // 200 frames of 256 KiB overflow the socket buffers of a client that does not read.
    let pad = "x".repeat(256 * 1024);
    for i in 0..200 {
        server
            .state
            .events()
            .publish("test.big", &json!({"i": i, "pad": pad}), Access::AnyScope);
        tokio::task::yield_now().await;
    }
    let fast_seqs = reader.await.unwrap();
    assert!(fast_seqs.windows(2).all(|w| w[1] == w[0] + 1));
    let mut slow_seqs: Vec<u64> = Vec::new();
    let reason = loop {
        match slow.frame().await {
            Frame::Json(frame) => slow_seqs.push(frame["seq"].as_u64().unwrap()),
            Frame::Close(code, reason) => {
                assert_eq!(code, 1008);
                break reason;
            }
        }
    };
    assert!(reason.starts_with("slow_consumer: "), "{reason}");
    assert!(
        slow_seqs.len() < 200,
        "received all {} events",
        slow_seqs.len()
    );
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l == "gatehouse_slow_consumers_dropped_total 1"),
        "{metrics}"
    );
}
