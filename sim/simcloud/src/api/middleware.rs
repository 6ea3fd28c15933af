//! Bearer-token authentication and fault injection, as axum middleware.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiError;
use crate::faults::Fault;
use crate::server::{App, lock};

/// Answers 401 unless the request carries `Authorization: Bearer <the configured token>`.
pub async fn require_bearer(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let authorised = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .is_some_and(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("bearer")
                && constant_time_eq(token.trim().as_bytes(), app.token.as_bytes())
        });
    if !authorised {
        return ApiError::unauthorized().into_response();
    }
    next.run(req).await
}

/// Compares in time independent of where the inputs differ, so the token cannot be guessed
/// byte by byte from response times.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Applies the fault decided for this request: hang until the sim stops, wait the added
/// latency, then throttle, fail, or pass the request on.
pub async fn inject_faults(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let decision = lock(&app.faults).decide();
    let mut stopped = app.stopped.clone();
    let stopping = || ApiError::unavailable("the sim is shutting down").into_response();
    if decision.fault == Fault::Hang {
        // An error means the sim is gone: stop hanging too.
        let _ = stopped.wait_for(|stop| *stop).await;
        return stopping();
    }
    if !decision.latency.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(decision.latency) => {}
            _ = stopped.wait_for(|stop| *stop) => return stopping(),
        }
    }
    match decision.fault {
        Fault::Throttle { retry_after_secs } => {
            ApiError::throttled(retry_after_secs).into_response()
        }
        Fault::Error { after_apply: false } => ApiError::injected(false).into_response(),
        Fault::Error { after_apply: true } => {
            let _lost = next.run(req).await;
            ApiError::injected(true).into_response()
        }
        Fault::None | Fault::Hang => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn compares_exactly() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret!"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
