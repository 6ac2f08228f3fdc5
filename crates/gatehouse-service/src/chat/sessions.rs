//! Sessions tied to chat routes and their `/elevated` level, kept in one small JSON file in the
//! data directory (mode 0600, replaced atomically), so a level survives a restart. On a
//! database several gateways share, the same JSON is a shared document instead
//! ([`SESSIONS_DOCUMENT`]), so a level set through any replica applies on every one as soon as
//! its store hears of the change.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gatehouse_approvals::{DocumentBytes, DocumentStore};
use gatehouse_chat::{ConversationKey, Place, Platforms};
use gatehouse_policy::elevated::{ElevatedLevel, SenderIdentity};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::error::ServiceError;
use crate::policy::elevated::StoredLevel;

/// A chat conversation a session is bound to, as `session.bind` names it; kept as its
/// platform normalizes it (see [`Platforms::conversation`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BoundRoute {
    pub(crate) channel: String,
    pub(crate) to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) account_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thread_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    route: Option<BoundRoute>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elevated: Option<String>,
    /// Who set `elevated`, so each request can check that they may still grant it to its agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elevated_by: Option<StoredSender>,
    /// The token whose agent host bound the session (or set its level through
    /// `elevated.directive`): the level applies to that token's requests only, so a token
    /// restricted to other agents cannot borrow it by naming the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bound_by: Option<String>,
}

impl SessionEntry {
    /// Forgets the level and its setter; whether there was one.
    fn drop_level(&mut self) -> bool {
        self.elevated_by = None;
        self.elevated.take().is_some()
    }
}

/// A [`SenderIdentity`] as the sessions file keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredSender {
    channel: String,
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e164: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tag: Option<String>,
}

impl From<&SenderIdentity> for StoredSender {
    fn from(sender: &SenderIdentity) -> Self {
        StoredSender {
            channel: sender.channel.clone(),
            id: sender.id.clone(),
            from: sender.from.clone(),
            e164: sender.e164.clone(),
            name: sender.name.clone(),
            username: sender.username.clone(),
            tag: sender.tag.clone(),
        }
    }
}

impl From<StoredSender> for SenderIdentity {
    fn from(sender: StoredSender) -> Self {
        SenderIdentity {
            channel: sender.channel,
            id: sender.id,
            from: sender.from,
            e164: sender.e164,
            name: sender.name,
            username: sender.username,
            tag: sender.tag,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionsFile {
    #[serde(default)]
    sessions: BTreeMap<String, SessionEntry>,
}

/// The sessions bound where a message was typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BoundHere {
    /// Bound to the thread or topic itself.
    pub(crate) thread: Option<String>,
    /// Bound to the whole chat.
    pub(crate) chat: Option<String>,
}

impl BoundRoute {
    /// The route as its platform names the conversation, so two spellings of one place are one
    /// binding and a message typed there finds it.
    fn normalized(self, platforms: &Platforms) -> BoundRoute {
        let key = platforms.conversation(&self.channel, &self.to, self.thread_id.as_deref());
        BoundRoute {
            channel: self.channel.trim().to_owned(),
            to: key.chat,
            account_id: self.account_id,
            thread_id: key.thread,
        }
    }

    fn key(&self) -> ConversationKey {
        ConversationKey {
            chat: self.to.clone(),
            thread: self.thread_id.clone(),
        }
    }
}

/// The sessions document's name in a shared [`DocumentStore`].
pub(crate) const SESSIONS_DOCUMENT: &str = "sessions.json";

/// The durable session table.
#[derive(Debug)]
pub(crate) struct Sessions {
    backing: Backing,
    table: Mutex<SessionsFile>,
    /// Each platform's reading of a conversation, applied to every binding.
    platforms: Platforms,
}

/// Where the table is stored.
#[derive(Debug)]
enum Backing {
    /// This host's file.
    File(PathBuf),
    /// A document every gateway on the database shares, and the copy its store keeps current.
    Shared {
        documents: Arc<dyn DocumentStore>,
        current: Mutex<watch::Receiver<DocumentBytes>>,
    },
}

/// The sessions file as stored; absent is an empty table.
fn read_table(path: &Path) -> Result<SessionsFile, ServiceError> {
    match fs::read_to_string(path) {
        Ok(text) => parse_table(&text, &path.display().to_string()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(SessionsFile::default()),
        Err(error) => Err(ServiceError::Store {
            reason: format!("cannot read sessions file {}: {error}", path.display()),
        }),
    }
}

/// The table `text` holds; `origin` names it in the error.
fn parse_table(text: &str, origin: &str) -> Result<SessionsFile, ServiceError> {
    serde_json::from_str(text).map_err(|error| ServiceError::Store {
        reason: format!("sessions file {origin}: {error}"),
    })
}

/// A shared document's table; never written is an empty table.
fn shared_table(bytes: Option<&[u8]>) -> Result<SessionsFile, ServiceError> {
    match bytes {
        Some(bytes) => parse_table(&String::from_utf8_lossy(bytes), SHARED_ORIGIN),
        None => Ok(SessionsFile::default()),
    }
}

/// How errors name the shared document.
const SHARED_ORIGIN: &str = "database:sessions.json";

/// The refusal `serve` would stop at on the sessions file at `path` (unreadable or malformed),
/// found by the same reading, without writing anything, for `gatehouse doctor`.
pub fn check_sessions_file(path: &Path) -> Result<(), ServiceError> {
    read_table(path).map(drop)
}

impl Sessions {
    /// Loads the file (an absent file is an empty table); an unreadable or malformed one stops
    /// the start, since silently dropping stored levels would change decisions.
    /// Bindings written before their platform's reading are read through it.
    pub(crate) fn open(path: &Path, platforms: Platforms) -> Result<Sessions, ServiceError> {
        let table = normalized(read_table(path)?, &platforms);
        Ok(Sessions {
            backing: Backing::File(path.to_owned()),
            table: Mutex::new(table),
            platforms,
        })
    }

    /// The table as a document of `documents`, which every gateway on the database shares.
    /// When it has none yet, this host's file at `path` (if any) becomes it, so a first start
    /// on a shared database keeps the levels set before. Blocking.
    pub(crate) fn shared(
        documents: Arc<dyn DocumentStore>,
        path: &Path,
        platforms: Platforms,
    ) -> Result<Sessions, ServiceError> {
        let local = read_table(path)?;
        let mut refused = None;
        let stored = documents
            .update(SESSIONS_DOCUMENT, &mut |current| {
                if current.is_some() || local.sessions.is_empty() {
                    return None;
                }
                match serde_json::to_vec_pretty(&local) {
                    Ok(bytes) => Some(bytes),
                    Err(error) => {
                        refused = Some(error);
                        None
                    }
                }
            })
            .map_err(ServiceError::store)?;
        if let Some(error) = refused {
            return Err(ServiceError::internal(error));
        }
        let current = documents
            .follow(SESSIONS_DOCUMENT)
            .map_err(ServiceError::store)?;
        let table = normalized(shared_table(stored.as_deref())?, &platforms);
        Ok(Sessions {
            backing: Backing::Shared {
                documents,
                current: Mutex::new(current),
            },
            table: Mutex::new(table),
            platforms,
        })
    }

    /// The table, read again first if another gateway changed the shared document. A version
    /// this build cannot read keeps the last one it could (and says so): it was written by a
    /// newer replica, and the next change through this one replaces it anyway.
    fn table(&self) -> MutexGuard<'_, SessionsFile> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Backing::Shared { current, .. } = &self.backing {
            let mut current = current.lock().unwrap_or_else(PoisonError::into_inner);
            if current.has_changed().unwrap_or(false) {
                let bytes = current.borrow_and_update().clone();
                match shared_table(bytes.as_deref()) {
                    Ok(read) => *table = normalized(read, &self.platforms),
                    Err(error) => tracing::warn!(%error, "Keeping the sessions read before."),
                }
            }
        }
        table
    }

    /// Binds `session_key` to `route` for the agent host holding `token`; a route is bound to
    /// one session, so an earlier binding of the same route is removed. A session whose binding
    /// moves (it loses its route, is bound elsewhere, or by another token) loses its elevated
    /// level too: the owner controls a level from the conversation it was set in, and an
    /// `/elevated off` typed there now reaches another session, so a level left in force would
    /// outlive the owner's power to end it. Returns the sessions whose level was dropped.
    pub(crate) fn bind(
        &self,
        session_key: &str,
        route: BoundRoute,
        token: Option<&str>,
    ) -> Result<Vec<String>, ServiceError> {
        let route = route.normalized(&self.platforms);
        if self.is_bound(session_key, &route, token) {
            return Ok(Vec::new());
        }
        self.update(|table| {
            let mut dropped = Vec::new();
            for (key, entry) in &mut table.sessions {
                if key != session_key && entry.route.as_ref() == Some(&route) {
                    entry.route = None;
                    if entry.drop_level() {
                        dropped.push(key.clone());
                    }
                }
            }
            let entry = table.sessions.entry(session_key.to_owned()).or_default();
            let other_owner = entry
                .bound_by
                .as_deref()
                .is_some_and(|owner| Some(owner) != token);
            if (entry.route.is_some() || other_owner) && entry.drop_level() {
                dropped.push(session_key.to_owned());
            }
            entry.route = Some(route.clone());
            entry.bound_by = token.map(str::to_owned);
            dropped
        })
    }

    fn is_bound(&self, session_key: &str, route: &BoundRoute, token: Option<&str>) -> bool {
        let table = self.table();
        table.sessions.get(session_key).is_some_and(|entry| {
            entry.route.as_ref() == Some(route) && entry.bound_by.as_deref() == token
        })
    }

    /// The sessions bound where a message was typed on `channel`: the one bound to its thread
    /// or topic, and the one bound to the whole chat (each the first whose key the place
    /// lists, in the place's order).
    pub(crate) fn bound_in(&self, channel: &str, place: &Place) -> BoundHere {
        let table = self.table();
        let find = |keys: &[ConversationKey]| {
            keys.iter().find_map(|wanted| {
                table.sessions.iter().find_map(|(key, entry)| {
                    let route = entry.route.as_ref()?;
                    (route.channel == channel && route.key() == *wanted).then(|| key.clone())
                })
            })
        };
        BoundHere {
            thread: find(&place.thread),
            chat: find(&place.chat),
        }
    }

    /// The stored level of a session; a value this build cannot read counts as unset.
    pub(crate) fn level(&self, session_key: &str) -> Option<ElevatedLevel> {
        self.stored_level(session_key).map(|stored| stored.level)
    }

    /// The stored level of a session with who set it and for which token.
    pub(crate) fn stored_level(&self, session_key: &str) -> Option<StoredLevel> {
        let table = self.table();
        let entry = table.sessions.get(session_key)?;
        Some(StoredLevel {
            level: entry.elevated.as_deref()?.parse().ok()?,
            set_by: entry.elevated_by.clone().map(SenderIdentity::from),
            bound_by: entry.bound_by.clone(),
        })
    }

    /// Stores a session's level and its setter durably before returning. `token` is the agent
    /// host's that relays the directive (`elevated.directive`), refused with
    /// [`ServiceError::SessionNotOwned`] when another token bound the session and made its owner
    /// otherwise; `None` for `/elevated` typed in a chat, whose binding chose the session.
    pub(crate) fn set_level(
        &self,
        session_key: &str,
        level: ElevatedLevel,
        set_by: &SenderIdentity,
        token: Option<&str>,
    ) -> Result<(), ServiceError> {
        let refused = self.update(|table| {
            let entry = table.sessions.entry(session_key.to_owned()).or_default();
            if let Some(token) = token {
                match entry.bound_by.as_deref() {
                    Some(owner) if owner != token => return true,
                    Some(_) => {}
                    None => entry.bound_by = Some(token.to_owned()),
                }
            }
            entry.elevated = Some(level.as_str().to_owned());
            entry.elevated_by = Some(StoredSender::from(set_by));
            false
        })?;
        if refused {
            return Err(ServiceError::SessionNotOwned {
                token: token.unwrap_or_default().to_owned(),
                session_key: session_key.to_owned(),
            });
        }
        Ok(())
    }

    /// Applies `change` to the table and stores it durably before returning. On a shared
    /// store `change` applies to the latest stored table (another gateway's change included),
    /// and runs again if another change is stored first.
    fn update<T>(&self, mut change: impl FnMut(&mut SessionsFile) -> T) -> Result<T, ServiceError> {
        let documents = match &self.backing {
            Backing::File(path) => {
                let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
                let value = change(&mut table);
                let text = encode(&table)?;
                gatehouse_store::private_file::replace(path, &text).map_err(|error| {
                    ServiceError::Store {
                        reason: format!("cannot write the sessions file: {error}"),
                    }
                })?;
                return Ok(value);
            }
            Backing::Shared { documents, .. } => documents,
        };
        let mut outcome = None;
        documents
            .update(SESSIONS_DOCUMENT, &mut |current| {
                let changed = shared_table(current).and_then(|read| {
                    let mut table = normalized(read, &self.platforms);
                    let value = change(&mut table);
                    Ok((value, encode(&table)?, table))
                });
                match changed {
                    Ok((value, bytes, table)) => {
                        let stored = (current != Some(bytes.as_slice())).then_some(bytes);
                        outcome = Some(Ok((value, table)));
                        stored
                    }
                    Err(error) => {
                        outcome = Some(Err(error));
                        None
                    }
                }
            })
            .map_err(ServiceError::store)?;
        let (value, table) = outcome.unwrap_or_else(|| {
            Err(ServiceError::Internal {
                reason: "the shared sessions were stored without the change".into(),
            })
        })?;
        *self.table.lock().unwrap_or_else(PoisonError::into_inner) = table;
        Ok(value)
    }
}

/// Bindings as their platform reads the conversation (those written before its reading
/// included).
fn normalized(mut table: SessionsFile, platforms: &Platforms) -> SessionsFile {
    for entry in table.sessions.values_mut() {
        entry.route = entry.route.take().map(|route| route.normalized(platforms));
    }
    table
}

/// The table as the file (or the shared document) holds it.
fn encode(table: &SessionsFile) -> Result<Vec<u8>, ServiceError> {
    serde_json::to_vec_pretty(table).map_err(|error| ServiceError::Internal {
        reason: format!("cannot encode sessions: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// The session `/elevated` typed there reaches: the thread's, else the chat's.
    fn bound_to(
        sessions: &Sessions,
        channel: &str,
        chat: &str,
        thread: Option<&str>,
    ) -> Option<String> {
        let place = Place {
            thread: thread
                .map(|thread| ConversationKey::new(chat, Some(thread)))
                .into_iter()
                .collect(),
            chat: vec![ConversationKey::new(chat, None)],
        };
        let here = sessions.bound_in(channel, &place);
        here.thread.or(here.chat)
    }

    fn route(to: &str, thread: Option<&str>) -> BoundRoute {
        BoundRoute {
            channel: "telegram".into(),
            to: to.into(),
            account_id: None,
            thread_id: thread.map(str::to_owned),
        }
    }

    #[test]
    fn keeps_levels_and_bindings_across_a_reopen_in_a_0600_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.json");
        let sessions = Sessions::open(&path, Platforms::default()).unwrap();
        sessions
            .bind("s1", route("-100", Some("7")), Some("host"))
            .unwrap();
        let setter = SenderIdentity {
            channel: "telegram".into(),
            id: "4242".into(),
            username: Some("alice".into()),
            ..SenderIdentity::default()
        };
        sessions
            .set_level("s1", ElevatedLevel::Full, &setter, None)
            .unwrap();
        let reopened = Sessions::open(&path, Platforms::default()).unwrap();
        assert_eq!(
            reopened.stored_level("s1"),
            Some(StoredLevel {
                level: ElevatedLevel::Full,
                set_by: Some(setter),
                bound_by: Some("host".into()),
            })
        );
        assert_eq!(
            bound_to(&reopened, "telegram", "-100", Some("7")).as_deref(),
            Some("s1")
        );
        assert_eq!(bound_to(&reopened, "telegram", "-100", None), None);
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn binds_a_route_to_one_session_and_falls_back_from_thread_to_chat() {
        let dir = tempfile::tempdir().unwrap();
        let sessions =
            Sessions::open(&dir.path().join("sessions.json"), Platforms::default()).unwrap();
        sessions
            .bind("s1", route("42", None), Some("host"))
            .unwrap();
        sessions
            .bind("s2", route("42", None), Some("host"))
            .unwrap();
        assert_eq!(
            bound_to(&sessions, "telegram", "42", Some("9")).as_deref(),
            Some("s2")
        );
        assert_eq!(bound_to(&sessions, "discord", "42", None), None);
    }

    fn telegram_owner() -> SenderIdentity {
        SenderIdentity {
            channel: "telegram".into(),
            id: "4242".into(),
            ..SenderIdentity::default()
        }
    }

    /// A level lives as long as the binding it was set through: once `/elevated off` typed in
    /// that conversation would reach another session, the level is gone.
    #[test]
    fn drops_the_level_of_a_session_whose_binding_moves() {
        let dir = tempfile::tempdir().unwrap();
        let sessions =
            Sessions::open(&dir.path().join("sessions.json"), Platforms::default()).unwrap();
        let owner = telegram_owner();
        let full = |key: &str| {
            sessions
                .set_level(key, ElevatedLevel::Full, &owner, None)
                .unwrap()
        };

        // Unbound, a level stays when the session is first bound, and rebinding the same
        // route changes nothing.
        full("s1");
        assert_eq!(
            sessions
                .bind("s1", route("4242", None), Some("host"))
                .unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            sessions
                .bind("s1", route("4242", None), Some("host"))
                .unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(sessions.level("s1"), Some(ElevatedLevel::Full));

        // Another session takes the route: s1 loses it and its level.
        assert_eq!(
            sessions
                .bind("decoy", route("4242", None), Some("host"))
                .unwrap(),
            ["s1"]
        );
        assert_eq!(sessions.level("s1"), None);
        assert_eq!(sessions.stored_level("s1"), None);

        // A session moved to another conversation loses its level too.
        full("decoy");
        assert_eq!(
            sessions
                .bind("decoy", route("4242", Some("7")), Some("host"))
                .unwrap(),
            ["decoy"]
        );
        assert_eq!(sessions.level("decoy"), None);
        let reopened =
            Sessions::open(&dir.path().join("sessions.json"), Platforms::default()).unwrap();
        assert_eq!(reopened.level("s1"), None);
        assert_eq!(reopened.level("decoy"), None);
    }

    /// A session belongs to the token that bound it: another token binding it takes it over
    /// without its level, and may not set a level on it through `elevated.directive`.
    #[test]
    fn ties_a_session_and_its_level_to_the_token_that_bound_it() {
        let dir = tempfile::tempdir().unwrap();
        let sessions =
            Sessions::open(&dir.path().join("sessions.json"), Platforms::default()).unwrap();
        let owner = telegram_owner();
        sessions.bind("s1", route("4242", None), Some("a")).unwrap();
        sessions
            .set_level("s1", ElevatedLevel::Full, &owner, Some("a"))
            .unwrap();
        let refused = sessions
            .set_level("s1", ElevatedLevel::Full, &owner, Some("b"))
            .unwrap_err();
        assert!(
            matches!(refused, ServiceError::SessionNotOwned { .. }),
            "{refused:?}"
        );
        assert_eq!(
            sessions.stored_level("s1").unwrap().bound_by.as_deref(),
            Some("a")
        );
        // The same route from another token is a move.
        assert_eq!(
            sessions.bind("s1", route("4242", None), Some("b")).unwrap(),
            ["s1"]
        );
        assert_eq!(sessions.level("s1"), None);
        // A level set for an unbound session makes its relaying token the owner.
        sessions
            .set_level("s9", ElevatedLevel::On, &owner, Some("c"))
            .unwrap();
        assert_eq!(
            sessions.stored_level("s9").unwrap().bound_by.as_deref(),
            Some("c")
        );
    }

    #[test]
    fn denies_starting_on_a_malformed_sessions_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.json");
        fs::write(&path, "{ not json").unwrap();
        let refused = Sessions::open(&path, Platforms::default()).unwrap_err();
        assert!(matches!(refused, ServiceError::Store { .. }), "{refused:?}");
    }
}
