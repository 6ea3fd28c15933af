//! Extractors whose rejections are API errors: JSON bodies that name the bad field, and
//! query strings read as key/value pairs.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::error::Category;

use super::ApiError;

/// A JSON body of type `T`. A body that does not fit answers 400 `invalid_request`, with the
/// dotted path of the offending field in `error.field` when there is one.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|r| {
            ApiError::bad_request(None, format!("unreadable request body: {}", r.body_text()))
                .with_status(r.status())
        })?;
        parse_body(&bytes).map(ApiJson)
    }
}

/// `bytes` as a `T`, or the 400 that says which field is wrong.
fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(body_error)?;
    de.end()
        .map_err(|e| ApiError::bad_request(None, format!("request body is not valid JSON: {e}")))?;
    Ok(value)
}

fn body_error(err: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = err.path().to_string();
    let inner = err.into_inner();
    if inner.classify() != Category::Data {
        return ApiError::bad_request(None, format!("request body is not valid JSON: {inner}"));
    }
    let message = inner.to_string();
    match field_of(&path, &message) {
        Some(field) => ApiError::bad_request(
            Some(field.clone()),
            format!("invalid request body: field `{field}`: {message}"),
        ),
        None => ApiError::bad_request(None, format!("invalid request body: {message}")),
    }
}

/// The field a data error is about: its path, extended by the name in a missing- or
/// unknown-field message (serde reports those at the enclosing object).
fn field_of(path: &str, message: &str) -> Option<String> {
    let base = if path == "." { "" } else { path };
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next());
    let field = match named {
        Some(name) if base.is_empty() => name.to_owned(),
        Some(name) if base == name || base.ends_with(&format!(".{name}")) => base.to_owned(),
        Some(name) => format!("{base}.{name}"),
        None => base.to_owned(),
    };
    (!field.is_empty()).then_some(field)
}

/// The query string as key/value pairs, in order; repeated keys kept.
#[derive(Debug)]
pub struct ApiQuery(pub Vec<(String, String)>);

impl ApiQuery {
    /// Checks every key is one of `allowed`.
    ///
    /// # Errors
    ///
    /// 400 naming the first unknown parameter.
    pub fn only(&self, allowed: &[&str]) -> Result<(), ApiError> {
        match self.0.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            Some((key, _)) => Err(ApiError::bad_request(
                Some(key.clone()),
                format!(
                    "unknown query parameter `{key}`; known: {}",
                    allowed.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    /// The last value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub fn all(&self, key: &str) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ApiQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map(|Query(pairs)| ApiQuery(pairs))
            .map_err(|r| ApiError::bad_request(None, r.body_text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named() {
        assert_eq!(
            field_of(".", "missing field `version`"),
            Some("version".into())
        );
        assert_eq!(
            field_of(".", "unknown field `replica`, expected one of ..."),
            Some("replica".into())
        );
        assert_eq!(
            field_of("replicas", "invalid type: string \"x\", expected u32"),
            Some("replicas".into())
        );
        assert_eq!(
            field_of("tags", "unknown field `tags`"),
            Some("tags".into())
        );
        assert_eq!(field_of("a.b", "missing field `c`"), Some("a.b.c".into()));
        assert_eq!(
            field_of(".", "invalid type: integer, expected struct"),
            None
        );
    }
}
