//! Error responses: `{"error": {"code", "message", "field"?}}` with the matching status.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::model::{ErrorBody, ErrorDetail};
use crate::state::StateError;

/// An error answer of the API.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    field: Option<String>,
    retry_after_secs: Option<u32>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            field: None,
            retry_after_secs: None,
        }
    }

    /// 400 `invalid_request`, naming `field` when known.
    pub fn bad_request(field: Option<String>, message: impl Into<String>) -> Self {
        ApiError {
            field,
            ..ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
        }
    }

    /// 409 `failed_precondition`: the request cannot apply to the resource as it is.
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::CONFLICT, "failed_precondition", message)
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong bearer token",
        )
    }

    /// 404 `not_found` for a path no route serves.
    pub fn no_route(path: &str) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no route for {path}"),
        )
    }

    /// 405 `method_not_allowed`.
    pub fn method_not_allowed() -> Self {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "method not allowed on this route",
        )
    }

    /// 429 `rate_limited` with `Retry-After: retry_after_secs`.
    pub fn throttled(retry_after_secs: u32) -> Self {
        ApiError {
            retry_after_secs: Some(retry_after_secs),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("too many requests; retry after {retry_after_secs} s"),
            )
        }
    }

    /// 500 `internal` injected by the fault configuration.
    pub fn injected(applied: bool) -> Self {
        let message = if applied {
            "injected fault: the request was applied, its response lost"
        } else {
            "injected fault: the request was not applied"
        };
        ApiError::internal(message)
    }

    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 503 `unavailable`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// Replaces the status (for rejections whose status axum knows better).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }
}

impl From<StateError> for ApiError {
    fn from(e: StateError) -> Self {
        let message = e.to_string();
        let conflict = |code| ApiError::new(StatusCode::CONFLICT, code, message.clone());
        match &e {
            StateError::InvalidField { field, .. } => {
                ApiError::bad_request(Some((*field).to_owned()), message)
            }
            StateError::NotFound { .. } => {
                ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
            }
            StateError::TokenMismatch { .. } => conflict("idempotency_mismatch"),
            StateError::NoNetwork { .. }
            | StateError::NotReady { .. }
            | StateError::Failed { .. } => conflict("failed_precondition"),
            StateError::Immutable { field, .. } => ApiError {
                field: Some((*field).to_owned()),
                ..conflict("immutable_field")
            },
            StateError::TokenOfDeleted { .. }
            | StateError::AlreadyExists { .. }
            | StateError::NetworkInUse { .. }
            | StateError::Busy { .. } => conflict("conflict"),
            StateError::Exhausted { .. } => conflict("resource_exhausted"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
                field: self.field,
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after_secs {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_is_told_apart_from_a_conflict() {
        let exhausted = ApiError::from(StateError::Exhausted {
            what: "network blocks".into(),
        });
        assert_eq!(
            (exhausted.status, exhausted.code),
            (StatusCode::CONFLICT, "resource_exhausted")
        );
        let second = ApiError::from(StateError::AlreadyExists {
            cluster: "c1".into(),
            kind: "network",
            id: "net-1".into(),
        });
        assert_eq!(second.code, "conflict");
    }
}
