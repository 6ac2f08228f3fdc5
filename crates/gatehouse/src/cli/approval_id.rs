//! The approval id `request` and `run` choose for the approval their call may create, so the
//! person at the terminal is told which approval to answer (or look for) as soon as the gateway
//! holds it, and only then: a call refused outright (no token, `forbidden`, a full pending cap)
//! names no approval that never existed. The id is minted here as the gateway mints its own
//! (so the store indexes it as cheaply), to be looked for while the call waits.

use std::time::Duration;

use gatehouse_approvals::mint_approval_id;
use serde_json::{Value, json};

use super::client::{ServerArgs, block_on, refused_with};

/// The first and the longest pause between two looks for the approval while the call waits.
const FIRST_LOOK: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// Ids minted before giving up on `id_in_use`: each clash has odds of stored approvals in 2^32.
const MINT_ATTEMPTS: u32 = 3;

/// Calls `method` (`exec.approval.request` or `system.run`) with a fresh approval id in
/// `params`, naming the approval once the gateway holds it. A call refused as `id_in_use` (the
/// id's short form is another approval's) created nothing and is made again with a new id.
pub(crate) fn call_naming_approval(
    server: &ServerArgs,
    method: &str,
    params: Value,
) -> anyhow::Result<Value> {
    block_on(async {
        let mut attempt = 1;
        loop {
            let id = mint_approval_id(super::now_ms()).to_string();
            match call_as(server, method, params.clone(), &id).await {
                Err(error) if refused_with(&error, "id_in_use") && attempt < MINT_ATTEMPTS => {
                    attempt += 1;
                }
                answer => return answer,
            }
        }
    })
}

/// Calls `method` with approval id `id`, naming it on stderr once the gateway holds it.
async fn call_as(
    server: &ServerArgs,
    method: &str,
    mut params: Value,
    id: &str,
) -> anyhow::Result<Value> {
    params["id"] = json!(id);
    let request = server.call_async(method, params);
    let mut request = std::pin::pin!(request);
    tokio::select! {
        answer = &mut request => return answer,
        () = announce_once_held(server, id) => {}
    }
    request.await
}

/// Looks for approval `id` (the requester may read its own) until the gateway holds it, then
/// names it on stderr. Any answer but `not_found` ends the looking without a word: the request
/// itself reports what is wrong.
async fn announce_once_held(server: &ServerArgs, id: &str) {
    let mut pause = FIRST_LOOK;
    loop {
        tokio::time::sleep(pause).await;
        match server
            .call_async("exec.approval.get", json!({"id": id}))
            .await
        {
            Ok(_) => {
                eprintln!("gatehouse: waiting for a decision on approval {id}");
                return;
            }
            Err(error) if refused_with(&error, "not_found") => {
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            Err(_) => return,
        }
    }
}
