use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

#[tokio::test]
async fn binary_prints_one_base_url_per_fake_and_serves_controls() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse-fakes"))
        .args([
            "--telegram",
            "127.0.0.1:0",
            "--discord",
            "127.0.0.1:0",
            "--slack",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut urls = Vec::new();
    for platform in ["telegram", "discord", "slack"] {
        let line = lines.next().unwrap().unwrap();
        let (name, url) = line.split_once(' ').unwrap();
        assert_eq!(name, platform);
        urls.push(url.to_owned());
    }
    assert!(urls[2].ends_with("/api"));
    for url in &urls {
        let root = url.trim_end_matches("/api");
        let calls: Value = reqwest::get(format!("{root}/_fake/calls"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(calls, Value::Array(Vec::new()));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn binary_refuses_to_start_with_nothing_to_serve() {
    let output = Command::new(env!("CARGO_BIN_EXE_gatehouse-fakes"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing to serve"));
}

#[tokio::test]
async fn binary_serves_dns_from_a_zone_file() {
    let dir = std::env::temp_dir().join(format!("gatehouse-fakes-dns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zone = dir.join("zone.json");
    std::fs::write(&zone, r#"{"ops.test": {"a": ["192.0.2.7"]}}"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse-fakes"))
        .args(["--dns", "127.0.0.1:0", "--dns-zone"])
        .arg(&zone)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    let addr: std::net::SocketAddr = line.strip_prefix("dns ").unwrap().parse().unwrap();
    let found: Vec<std::net::IpAddr> = crate::dns::resolver_at(addr, false)
        .lookup_ip("ops.test.")
        .await
        .unwrap()
        .iter()
        .collect();
    assert_eq!(found, ["192.0.2.7".parse::<std::net::IpAddr>().unwrap()]);
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn binary_serves_scripted_model_apis() {
    let dir = std::env::temp_dir().join(format!("gatehouse-fakes-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    std::fs::write(&script, r#"[{"name": "Bash", "input": {"command": "ls"}}]"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse-fakes"))
        .args(["--anthropic", "127.0.0.1:0", "--anthropic-script"])
        .arg(&script)
        .args(["--openai", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let anthropic = lines.next().unwrap().unwrap();
    let openai = lines.next().unwrap().unwrap();
    let anthropic = anthropic.strip_prefix("anthropic ").unwrap();
    let openai = openai.strip_prefix("openai ").unwrap();
    assert!(openai.ends_with("/v1"));
    let client = reqwest::Client::new();
    let message: Value = client
        .post(format!("{anthropic}/v1/messages"))
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .json(&serde_json::json!({"model": "m", "max_tokens": 8,
            "messages": [{"role": "user", "content": "go"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][0]["name"], "Bash");
    let response: Value = client
        .post(format!("{openai}/responses"))
        .bearer_auth("k")
        .json(&serde_json::json!({"model": "gpt-5", "input": "go"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(response["output"][0]["content"][0]["text"], "done");
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
