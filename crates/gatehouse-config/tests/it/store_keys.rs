//! `gateway.store`: SQLite stays the default; PostgreSQL takes exactly one URL source, read
//! like every other secret; a key of the other kind is refused at its own key.

use std::path::{Path, PathBuf};

use gatehouse_config::model::{StoreConfig, StoreKind};
use gatehouse_config::{SecretSource, load_str};

use crate::errors::problems;

fn store(text: &str) -> Option<StoreConfig> {
    let loaded = load_str(text, Path::new("gh.json5")).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.config.gateway.store
}

#[test]
fn absent_means_sqlite_in_the_data_directory_and_both_kinds_load() {
    assert_eq!(store("{}"), None);
    let sqlite =
        store("{ gateway: { store: { kind: 'sqlite', path: '/srv/gh/approvals.db' } } }").unwrap();
    assert_eq!(sqlite.kind, StoreKind::Sqlite);
    assert_eq!(sqlite.path, Some(PathBuf::from("/srv/gh/approvals.db")));
    let postgres = store(
        "{ gateway: { store: { kind: 'postgres', urlFile: '/etc/gatehouse/db-url', maxConnections: 4 } } }",
    )
    .unwrap();
    assert_eq!(postgres.kind, StoreKind::Postgres);
    assert_eq!(
        postgres.url_source(),
        Some(SecretSource::File("/etc/gatehouse/db-url".into()))
    );
    assert_eq!(postgres.max_connections, Some(4));
}

#[test]
fn the_url_is_a_secret_listed_by_its_key_and_never_shown() {
    let text = "{ gateway: { store: { kind: 'postgres', url: 'postgres://gh:hunter2@db/gh' } } }";
    let config = load_str(text, Path::new("gh.json5")).unwrap().config;
    let keys: Vec<String> = config.secrets().into_iter().map(|s| s.key).collect();
    assert_eq!(keys, ["gateway.store.url"]);
    assert!(!format!("{config:?}").contains("hunter2"));
}

#[test]
fn refuses_a_postgres_store_without_exactly_one_url_source() {
    let found = problems("{ gateway: { store: { kind: 'postgres' } } }");
    assert_eq!(found[0].key.as_deref(), Some("gateway.store.kind"));
    assert!(found[0].message.contains("urlFile"), "{}", found[0].message);
    let found = problems(
        "{ gateway: { store: { kind: 'postgres', url: 'postgres://db/gh', urlEnv: 'U' } } }",
    );
    assert_eq!(found[0].key.as_deref(), Some("gateway.store"));
    assert!(
        found[0].message.contains("only one"),
        "{}",
        found[0].message
    );
}

#[test]
fn refuses_keys_of_the_other_kind_a_bad_url_and_an_empty_pool_at_their_keys() {
    let found =
        problems("{ gateway: { store: { kind: 'sqlite', urlEnv: 'U', maxConnections: 2 } } }");
    let keys: Vec<_> = found
        .iter()
        .map(|d| d.key.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        keys,
        ["gateway.store.urlEnv", "gateway.store.maxConnections"]
    );
    let found = problems(
        "{ gateway: { store: { kind: 'postgres', path: 'x.db', url: 'mysql://root:hunter2@db', maxConnections: 0 } } }",
    );
    let keys: Vec<_> = found
        .iter()
        .map(|d| d.key.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        keys,
        [
            "gateway.store.path",
            "gateway.store.url",
            "gateway.store.maxConnections"
        ]
    );
    assert!(found.iter().all(|d| !d.message.contains("hunter2")));
    let found = problems("{ gateway: { store: { kind: 'mysql' } } }");
    assert_eq!(found[0].key.as_deref(), Some("gateway.store.kind"));
    assert!(
        found[0].message.contains("postgres"),
        "{}",
        found[0].message
    );
}
