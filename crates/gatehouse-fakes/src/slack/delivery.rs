//! HTTP mode: events, interactions and slash commands POSTed to the app's Request URL with
//! `X-Slack-Signature` v0 and `X-Slack-Request-Timestamp`, plus deliberate bad variants.

use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::Sha256;

use super::envelopes::EnvelopeType;
use crate::clock::now_secs;

/// How the fake signs one delivery.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Signature {
    /// Signed with the configured secret.
    #[default]
    Valid,
    /// Signed with a different secret.
    Bad,
    /// No signature header at all.
    Missing,
}

/// One request sent (or to be sent) to the Request URL, kept for replays.
#[derive(Clone, Debug)]
pub(crate) struct Delivery {
    pub(crate) id: String,
    pub(crate) url: String,
    content_type: &'static str,
    body: String,
    timestamp: String,
    signature: Option<String>,
}

/// HTTP-mode configuration and history.
#[derive(Debug, Default)]
pub(crate) struct HttpMode {
    pub(crate) request_url: Option<String>,
    pub(crate) signing_secret: Option<String>,
    deliveries: Vec<Delivery>,
}

/// `v0=` + hex(HMAC-SHA256(secret, `v0:{timestamp}:{body}`)), as Slack signs requests.
pub(crate) fn sign(secret: &str, timestamp: &str, body: &str) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        // HMAC takes keys of any length; this arm exists only to avoid a panic path.
        Err(_) => return String::new(),
    };
    mac.update(format!("v0:{timestamp}:{body}").as_bytes());
    format!("v0={}", hex::encode(mac.finalize().into_bytes()))
}

/// The body Slack sends for each envelope type: JSON for events, `payload=` for interactions,
/// flat form fields for slash commands.
fn encode(kind: EnvelopeType, payload: &Value) -> Result<(&'static str, String), String> {
    match kind {
        EnvelopeType::EventsApi => Ok(("application/json", payload.to_string())),
        EnvelopeType::Interactive => {
            serde_urlencoded::to_string([("payload", payload.to_string())])
                .map(|body| ("application/x-www-form-urlencoded", body))
                .map_err(|e| e.to_string())
        }
        EnvelopeType::SlashCommands => {
            let fields: Vec<(String, String)> = payload
                .as_object()
                .unwrap_or(&Map::new())
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect();
            serde_urlencoded::to_string(fields)
                .map(|body| ("application/x-www-form-urlencoded", body))
                .map_err(|e| e.to_string())
        }
    }
}

impl HttpMode {
    /// Builds and remembers a signed delivery; `offset_secs` moves its timestamp (negative is stale).
    pub(crate) fn prepare(
        &mut self,
        kind: EnvelopeType,
        payload: &Value,
        signature: Signature,
        offset_secs: i64,
    ) -> Result<Delivery, String> {
        let url = self
            .request_url
            .clone()
            .ok_or("no request_url configured (POST /_fake/config)")?;
        let secret = self
            .signing_secret
            .clone()
            .ok_or("no signing_secret configured (POST /_fake/config)")?;
        let (content_type, body) = encode(kind, payload)?;
        let now = i64::try_from(now_secs()).unwrap_or(i64::MAX);
        let timestamp = now.saturating_add(offset_secs).to_string();
        let signature = match signature {
            Signature::Valid => Some(sign(&secret, &timestamp, &body)),
            Signature::Bad => Some(sign(&format!("{secret}-not-the-secret"), &timestamp, &body)),
            Signature::Missing => None,
        };
        let delivery = Delivery {
            id: format!("delivery-{}", self.deliveries.len() + 1),
            url,
            content_type,
            body,
            timestamp,
            signature,
        };
        self.deliveries.push(delivery.clone());
        Ok(delivery)
    }

    /// A previous delivery, byte for byte, for replay tests.
    pub(crate) fn find(&self, id: &str) -> Option<Delivery> {
        self.deliveries.iter().find(|d| d.id == id).cloned()
    }
}

/// POSTs a delivery and reports the app's answer.
pub(crate) async fn send(http: &reqwest::Client, delivery: &Delivery) -> Value {
    let mut request = http
        .post(&delivery.url)
        .header("content-type", delivery.content_type)
        .header("x-slack-request-timestamp", &delivery.timestamp)
        .body(delivery.body.clone());
    if let Some(signature) = &delivery.signature {
        request = request.header("x-slack-signature", signature);
    }
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            json!({"delivery_id": delivery.id, "status": status, "body": body,
                   "timestamp": delivery.timestamp})
        }
        Err(error) => json!({"delivery_id": delivery.id, "error": error.to_string()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_like_slacks_documented_example() {
        // From Slack's "Verifying requests from Slack" guide.
        let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        assert_eq!(
            sign("8f742231b10e8888abcd99yyyzzz85a5", "1531420618", body),
            "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
        );
    }

    #[test]
    fn encodes_each_envelope_type_like_slack() {
        let (kind, body) =
            encode(EnvelopeType::Interactive, &json!({"type": "block_actions"})).unwrap();
        assert_eq!(kind, "application/x-www-form-urlencoded");
        assert_eq!(body, "payload=%7B%22type%22%3A%22block_actions%22%7D");
        let (_, body) = encode(
            EnvelopeType::SlashCommands,
            &json!({"command": "/approve", "text": "a b"}),
        )
        .unwrap();
        assert_eq!(body, "command=%2Fapprove&text=a+b");
    }

    #[test]
    fn bad_and_stale_variants_differ_from_the_valid_signature() {
        let mut mode = HttpMode {
            request_url: Some("http://x".into()),
            signing_secret: Some("s".into()),
            ..HttpMode::default()
        };
        let payload = json!({"type": "block_actions"});
        let valid = mode
            .prepare(EnvelopeType::Interactive, &payload, Signature::Valid, 0)
            .unwrap();
        let bad = mode
            .prepare(EnvelopeType::Interactive, &payload, Signature::Bad, 0)
            .unwrap();
        let stale = mode
            .prepare(EnvelopeType::Interactive, &payload, Signature::Valid, -600)
            .unwrap();
        assert_eq!(
            valid.signature,
            Some(sign("s", &valid.timestamp, &valid.body))
        );
        assert_ne!(bad.signature, Some(sign("s", &bad.timestamp, &bad.body)));
        assert!(
            stale.timestamp.parse::<i64>().unwrap()
                <= valid.timestamp.parse::<i64>().unwrap() - 600
        );
        assert_eq!(mode.find("delivery-1").map(|d| d.body), Some(valid.body));
    }
}
