//! The approval id `request`, `run` and `mcp` choose for the approval their call may create, so
//! the person at the terminal (or the MCP client) is told which approval to answer (or look for)
//! as soon as the gateway holds it, and only then: a call refused outright (no token, `forbidden`, a full pending cap)
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
        let (_, answer) =
            call_with_approval_id(server, method, params, |id| announce_once_held(server, id))
                .await?;
        Ok(answer)
    })
}

/// Calls `method` with a freshly minted approval id in `params` while `watch(id)` runs beside
/// it (to tell someone about the approval as it waits), minting again on `id_in_use`. Returns
/// the id the call was made with and its answer; the answer comes whether or not the watch
/// has finished.
pub(crate) async fn call_with_approval_id<Watch, Watching>(
    server: &ServerArgs,
    method: &str,
    params: Value,
    mut watch: Watch,
) -> anyhow::Result<(String, Value)>
where
    Watch: FnMut(String) -> Watching,
    Watching: Future<Output = ()>,
{
    let mut attempt = 1;
    loop {
        let id = mint_approval_id(super::now_ms()).to_string();
        let mut params = params.clone();
        params["id"] = json!(id);
        let request = server.call_async(method, params);
        let mut request = std::pin::pin!(request);
        let answer = tokio::select! {
            answer = &mut request => answer,
            () = watch(id.clone()) => request.await,
        };
        match answer {
            Err(error) if refused_with(&error, "id_in_use") && attempt < MINT_ATTEMPTS => {
                attempt += 1;
            }
            answer => return answer.map(|answer| (id, answer)),
        }
    }
}

/// Names approval `id` on stderr once the gateway holds it.
async fn announce_once_held(server: &ServerArgs, id: String) {
    if once_held(server, &id).await.is_some() {
        eprintln!("gatehouse: waiting for a decision on approval {id}");
    }
}

/// Looks for approval `id` (the requester may read its own) until the gateway holds it, and
/// returns it as `exec.approval.get` answers. Any answer but `not_found` ends the looking with
/// `None`: the request itself reports what is wrong. A call that asks nobody (the allowlist
/// lets it through) never creates the approval, so this looks until it is dropped.
pub(crate) async fn once_held(server: &ServerArgs, id: &str) -> Option<Value> {
    let mut pause = FIRST_LOOK;
    loop {
        tokio::time::sleep(pause).await;
        match server
            .call_async("exec.approval.get", json!({"id": id}))
            .await
        {
            Ok(approval) => return Some(approval),
            Err(error) if refused_with(&error, "not_found") => {
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            Err(_) => return None,
        }
    }
}
