//! Executing serenity's REST requests so that every failure keeps what the chat core needs.
//!
//! serenity's own methods turn an error answer into an `ErrorResponse` that drops the headers
//! and, for Discord's 429 body (which has no `code`), the `retry_after` too. So the adapter
//! builds requests with serenity's routes and builders and reads the answer itself: through
//! serenity's rate limiter in production (it waits out 429s on its own), or directly against an
//! `apiUrl` (serenity ignores the proxy with its limiter on), where a 429 becomes
//! [`ChatError::RateLimited`] with Discord's `retry_after` for the core's `Deliverer`.

use gatehouse_chat::ChatError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serenity::http::{Http, HttpBuilder, LightMethod, Request, Route};

use crate::classify;
use crate::config::DiscordConfig;
use crate::error::DiscordError;

/// The REST side of the adapter.
#[derive(Debug)]
pub(crate) struct Rest {
    http: Http,
    client: reqwest::Client,
}

impl Rest {
    /// A client for `config`: rate limiter on and no proxy without `apiUrl`, the reverse with.
    /// The chat core's pacer lets at most `max_connections` calls run at once, so no more
    /// connections than that are opened; idle ones are kept as many, for a while.
    pub(crate) fn new(config: &DiscordConfig) -> Result<Self, DiscordError> {
        let client = reqwest::Client::builder()
            .timeout(config.call_timeout)
            .pool_max_idle_per_host(config.max_connections)
            .pool_idle_timeout(std::time::Duration::from_secs(90))
            .build()
            .map_err(|error| DiscordError::Client {
                reason: error.without_url().to_string(),
            })?;
        let http = http_builder(config).client(client.clone()).build();
        Ok(Self { http, client })
    }

    /// Sends `body` (if any) as JSON and decodes the answer.
    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        route: Route<'_>,
        method: LightMethod,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<T, ChatError> {
        let response = self.execute(request(route, method, body)?).await?;
        let bytes = response.bytes().await.map_err(classify::transport)?;
        // Permanent, not transient: the call itself succeeded, and repeating it could deliver a
        // second card.
        serde_json::from_slice(&bytes)
            .map_err(|e| classify::permanent(format!("unexpected answer from discord: {e}")))
    }

    /// Sends `body` (if any) and ignores the answer's body.
    pub(crate) async fn send(
        &self,
        route: Route<'_>,
        method: LightMethod,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<(), ChatError> {
        self.execute(request(route, method, body)?).await.map(drop)
    }

    /// Deletes or edits what `route` names; a 404 "Unknown Message" (code 10008) counts as
    /// done, since an earlier attempt whose answer was lost, or a moderator, already deleted it:
    /// nothing is left that could show a stale button.
    pub(crate) async fn unless_gone(
        &self,
        route: Route<'_>,
        method: LightMethod,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<(), ChatError> {
        let response = self.perform(request(route, method, body)?).await?;
        if response.status().is_success() {
            return Ok(());
        }
        let failure = classify::ApiFailure::read(response).await;
        if failure.status == 404 && failure.code() == Some(classify::UNKNOWN_MESSAGE) {
            return Ok(());
        }
        Err(failure.into_error())
    }

    async fn execute(&self, request: Request<'_>) -> Result<reqwest::Response, ChatError> {
        let response = self.perform(request).await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(classify::ApiFailure::read(response).await.into_error())
        }
    }

    /// One attempt, answered with whatever status Discord gave.
    async fn perform(&self, request: Request<'_>) -> Result<reqwest::Response, ChatError> {
        let response = match &self.http.ratelimiter {
            Some(limiter) => limiter.perform(request).await.map_err(classify::serenity)?,
            None => {
                let built = request
                    .build(&self.client, self.http.token(), self.http.proxy.as_deref())
                    .map_err(classify::serenity)?
                    .build()
                    .map_err(classify::transport)?;
                self.client
                    .execute(built)
                    .await
                    .map_err(classify::transport)?
            }
        };
        Ok(response)
    }
}

fn request<'a>(
    route: Route<'a>,
    method: LightMethod,
    body: Option<&(impl Serialize + ?Sized)>,
) -> Result<Request<'a>, ChatError> {
    let body = body
        .map(serde_json::to_vec)
        .transpose()
        .map_err(|e| classify::permanent(format!("request body not encodable: {e}")))?;
    Ok(Request::new(route, method).body(body))
}

/// serenity's HTTP settings for `config`; the gateway client gets its own `Http` from this too.
pub(crate) fn http_builder(config: &DiscordConfig) -> HttpBuilder {
    let builder =
        HttpBuilder::new(config.bot_token.expose()).application_id(config.application_id.into());
    match &config.api_url {
        // serenity honours the proxy only with its rate limiter disabled.
        Some(url) => builder
            .proxy(url.trim_end_matches('/'))
            .ratelimiter_disabled(true),
        None => builder,
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_config::Secret;

    use super::*;

    #[test]
    fn keeps_the_rate_limiter_in_production_and_drops_it_for_an_api_url() {
        let mut config = DiscordConfig::new(Secret::new("token"), 42);
        let production = http_builder(&config).build();
        assert!(production.ratelimiter.is_some());
        assert_eq!(production.proxy, None);
        assert_eq!(production.token(), "Bot token");

        config.api_url = Some("http://127.0.0.1:8082/".into());
        let fake = http_builder(&config).build();
        assert!(
            fake.ratelimiter.is_none(),
            "serenity ignores the proxy otherwise"
        );
        assert_eq!(fake.proxy.as_deref(), Some("http://127.0.0.1:8082"));
    }
}
