//! Request bodies as the platforms accept them: JSON, url-encoded forms and query strings,
//! merged into one JSON object so every fake validates one shape.

use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use serde_json::{Map, Value};

/// Why a body could not be read; each platform words this its own way.
#[derive(Debug, PartialEq)]
pub(crate) enum BodyError {
    /// The content type said JSON but the bytes were not.
    BadJson(String),
    /// A JSON body that was not an object.
    NotAnObject,
    /// A form body that could not be decoded.
    BadForm(String),
    /// Multipart and other encodings the fakes do not speak.
    Unsupported(String),
}

/// Parses query string and body into one object (body fields win over query fields); a
/// JSON array body without query fields is returned as it is.
pub(crate) fn parse(
    headers: &HeaderMap,
    query: Option<&str>,
    bytes: &[u8],
) -> Result<Value, BodyError> {
    let mut fields = Map::new();
    if let Some(query) = query {
        merge_form(&mut fields, query.as_bytes())?;
    }
    let raw_content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let content_type = raw_content_type.to_ascii_lowercase();
    if !bytes.is_empty() {
        if content_type.starts_with("application/json") || content_type.is_empty() {
            let value: Value =
                serde_json::from_slice(bytes).map_err(|e| BodyError::BadJson(e.to_string()))?;
            match value {
                Value::Object(object) => fields.extend(object),
                // A bare array (Discord's bulk command overwrite) is the whole body.
                Value::Array(_) if fields.is_empty() => return Ok(value),
                _ => return Err(BodyError::NotAnObject),
            }
        } else if content_type.starts_with("application/x-www-form-urlencoded") {
            merge_form(&mut fields, bytes)?;
        } else if content_type.starts_with("multipart/form-data") {
            merge_multipart(&mut fields, raw_content_type, bytes)?;
        } else {
            return Err(BodyError::Unsupported(content_type));
        }
    }
    Ok(Value::Object(fields))
}

fn merge_form(fields: &mut Map<String, Value>, bytes: &[u8]) -> Result<(), BodyError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_bytes(bytes).map_err(|e| BodyError::BadForm(e.to_string()))?;
    for (key, value) in pairs {
        fields.insert(key, Value::String(value));
    }
    Ok(())
}

/// Text parts become strings; file parts become `{"file": "<filename>"}` (contents dropped).
fn merge_multipart(
    fields: &mut Map<String, Value>,
    content_type: &str,
    bytes: &[u8],
) -> Result<(), BodyError> {
    let bad = |what: &str| BodyError::BadForm(format!("multipart: {what}"));
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"'))
        .ok_or_else(|| bad("no boundary"))?;
    let text = String::from_utf8_lossy(bytes);
    let delimiter = format!("--{boundary}");
    for part in text.split(delimiter.as_str()).skip(1) {
        if part.starts_with("--") {
            return Ok(());
        }
        let part = part.strip_prefix("\r\n").unwrap_or(part);
        let (head, value) = part
            .split_once("\r\n\r\n")
            .ok_or_else(|| bad("part without headers"))?;
        let value = value.strip_suffix("\r\n").unwrap_or(value);
        let name = disposition_param(head, "name").ok_or_else(|| bad("part without a name"))?;
        let value = match disposition_param(head, "filename") {
            Some(file) => serde_json::json!({"file": file}),
            None => Value::String(value.to_owned()),
        };
        fields.insert(name, value);
    }
    Err(bad("no closing boundary"))
}

fn disposition_param(head: &str, param: &str) -> Option<String> {
    let line = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))?;
    line.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once('=')?;
        (key == param).then(|| value.trim_matches('"').to_owned())
    })
}

/// Adds the fields of `defaults` that `target` lacks; injected updates are completed this way.
pub(crate) fn fill_defaults(target: &mut Value, defaults: Value) {
    if let (Some(fields), Value::Object(defaults)) = (target.as_object_mut(), defaults) {
        for (key, value) in defaults {
            fields.entry(key).or_insert(value);
        }
    }
}

/// Reads an integer field sent either as a JSON number or as a decimal string (forms).
pub(crate) fn int_field(body: &Value, key: &str) -> Option<i64> {
    match body.get(key)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Reads a string field; numbers are rendered, since forms and JSON disagree on ids.
pub(crate) fn str_field(body: &Value, key: &str) -> Option<String> {
    match body.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Reads a boolean field sent as JSON or as `true`/`false` text.
pub(crate) fn bool_field(body: &Value, key: &str) -> Option<bool> {
    match body.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Reads a field that holds JSON, either inline or as a JSON-encoded string (forms).
pub(crate) fn json_field(body: &Value, key: &str) -> Option<Result<Value, String>> {
    match body.get(key)? {
        Value::Null => None,
        Value::String(s) => Some(serde_json::from_str(s).map_err(|e| e.to_string())),
        other => Some(Ok(other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(content_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
        headers
    }

    #[test]
    fn merges_query_and_form_fields() {
        let body = parse(
            &headers("application/x-www-form-urlencoded"),
            Some("a=1&b=2"),
            b"b=3&reply_markup=%7B%22x%22%3A1%7D",
        )
        .unwrap();
        assert_eq!(body["a"], "1");
        assert_eq!(body["b"], "3");
        assert_eq!(json_field(&body, "reply_markup").unwrap().unwrap()["x"], 1);
        assert_eq!(int_field(&body, "a"), Some(1));
    }

    #[test]
    fn reads_multipart_text_and_file_parts() {
        let body = b"--B\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\nhttps://x/h\r\n--B\r\nContent-Disposition: form-data; name=\"certificate\"; filename=\"c.pem\"\r\n\r\n---\r\n--B--\r\n";
        let body = parse(&headers("multipart/form-data; boundary=B"), None, body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"url": "https://x/h", "certificate": {"file": "c.pem"}})
        );
        assert!(
            parse(
                &headers("multipart/form-data; boundary=B"),
                None,
                b"--B\r\nx"
            )
            .is_err()
        );
    }

    #[test]
    fn refuses_json_that_is_not_an_object() {
        assert_eq!(
            parse(&headers("application/json"), Some("a=1"), b"[1]"),
            Err(BodyError::NotAnObject)
        );
        assert_eq!(
            parse(&headers("application/json"), None, b"[1]"),
            Ok(serde_json::json!([1]))
        );
        assert!(matches!(
            parse(&headers("application/json"), None, b"{"),
            Err(BodyError::BadJson(_))
        ));
        assert!(matches!(
            parse(&headers("text/plain"), None, b"x"),
            Err(BodyError::Unsupported(_))
        ));
    }
}
