//! A restart cancels what an earlier run left pending, durably and with events.

use gatehouse_approvals::{
    ApprovalError, ApprovalState, DeliveredMessage, EventKind, IdDisclosure, ManagerConfig,
};
use gatehouse_policy::ApprovalDecision;

use crate::support::{next_event, open, start};

#[tokio::test]
async fn cancels_pending_approvals_of_an_earlier_run_with_events() {
    let h = start().await;
    let pending = h.create("make pending").await;
    let message = DeliveredMessage {
        channel: "telegram".to_owned(),
        account_id: None,
        chat_id: "-100123".to_owned(),
        message_id: "77".to_owned(),
        thread_id: Some("42".to_owned()),
    };
    h.manager
        .record_delivery(pending, message.clone())
        .await
        .unwrap();
    let decided = h.create("make decided").await;
    h.manager
        .resolve(
            &decided.to_string(),
            ApprovalDecision::AllowOnce,
            "alice",
            IdDisclosure::Hidden,
        )
        .await
        .unwrap();
    let dir = h.dir;
    drop(h.manager);
    drop(h.events);

    let (manager, mut events) = open(dir.path(), ManagerConfig::default()).await;
    let event = next_event(&mut events);
    assert_eq!(event.id, pending);
    assert!(
        matches!(event.kind, EventKind::Cancelled { ref reason } if reason == "gateway-restart")
    );
    assert!(
        events.try_recv().is_none(),
        "only the pending approval is cancelled"
    );

    let record = manager.await_decision(pending).await.unwrap();
    assert_eq!(
        (record.state, record.reason.as_deref()),
        (ApprovalState::Cancelled, Some("gateway-restart"))
    );
    assert_eq!(
        record.messages,
        vec![message],
        "the chat message can be updated"
    );
    assert!(matches!(
        manager
            .resolve(
                &pending.to_string(),
                ApprovalDecision::AllowOnce,
                "a",
                IdDisclosure::Hidden
            )
            .await,
        Err(ApprovalError::Cancelled { .. })
    ));
    let kept = manager
        .get(&decided.to_string(), IdDisclosure::Hidden)
        .await
        .unwrap();
    assert_eq!(
        kept.state,
        ApprovalState::Allowed,
        "settled approvals survive a restart"
    );
    assert!(
        manager.consume_allow_once(decided).await.is_ok(),
        "an unused allow-once still grants its run"
    );
}
