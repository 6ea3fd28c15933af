//! The transport: one request through `wasi:http/outgoing-handler`, blocking on its pollables.

use std::time::Duration;

use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, Method as WasiMethod, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

use super::{HttpError, Method, Request, Response, Target};

/// `blocking-write-and-flush` accepts at most this many bytes per call (wasi:io 0.2).
const WRITE_CHUNK: usize = 4096;

/// Bytes asked for per read of the response body.
const READ_CHUNK: u64 = 64 * 1024;

pub(super) fn send(request: Request, target: Target) -> Result<Response, HttpError> {
    let Request {
        method,
        headers,
        body,
        timeout,
        ..
    } = request;
    let authority = target.authority.clone();
    let url = format!(
        "{}://{}{}",
        scheme_name(target.https),
        target.authority,
        target.path_with_query
    );

    let mut entries = headers;
    let has_length = entries
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
    if !body.is_empty() && !has_length {
        // Without a length the host streams the body chunked, which some APIs refuse.
        entries.push((
            String::from("content-length"),
            body.len().to_string().into_bytes(),
        ));
    }
    let fields = Fields::from_list(&entries).map_err(|_| HttpError::InvalidHeader {
        name: first_bad_header(&entries),
    })?;

    let outgoing = OutgoingRequest::new(fields);
    let invalid = |reason| HttpError::InvalidUrl {
        url: url.clone(),
        reason,
    };
    outgoing
        .set_method(&wasi_method(method))
        .map_err(|()| HttpError::Other(String::from("the host refused the method")))?;
    let scheme = if target.https {
        Scheme::Https
    } else {
        Scheme::Http
    };
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("the host refused the scheme"))?;
    outgoing
        .set_authority(Some(&target.authority))
        .map_err(|()| invalid("the host refused the authority"))?;
    outgoing
        .set_path_with_query(Some(&target.path_with_query))
        .map_err(|()| invalid("the host refused the path"))?;

    // The body resource must be taken before the request is handed over, and written after:
    // its stream has a bounded buffer that only drains once the request is on its way.
    let outgoing_body = if body.is_empty() {
        None
    } else {
        Some(
            outgoing
                .body()
                .map_err(|()| HttpError::Other(String::from("request body already taken")))?,
        )
    };

    let future = outgoing_handler::handle(outgoing, timeout.map(options))
        .map_err(|code| error_from(code, &authority, &url))?;

    if let Some(outgoing_body) = outgoing_body {
        write_body(&outgoing_body, &body)?;
        OutgoingBody::finish(outgoing_body, None)
            .map_err(|code| error_from(code, &authority, &url))?;
    }

    future.subscribe().block();
    let incoming = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(error_from(code, &authority, &url)),
        Some(Err(())) => {
            return Err(HttpError::Other(String::from("response already taken")));
        }
        None => return Err(HttpError::Other(String::from("response not ready"))),
    };

    let status = incoming.status();
    let headers = incoming.headers().entries();
    let incoming_body = incoming
        .consume()
        .map_err(|()| HttpError::Other(String::from("response body already taken")))?;
    let body = read_body(&incoming_body, &authority, &url)?;
    // Trailers are not exposed; finishing releases the body's resources.
    drop(IncomingBody::finish(incoming_body));

    Ok(Response {
        status,
        headers,
        body,
    })
}

fn write_body(body: &OutgoingBody, data: &[u8]) -> Result<(), HttpError> {
    let stream = body
        .write()
        .map_err(|()| HttpError::Other(String::from("request body stream already taken")))?;
    for chunk in data.chunks(WRITE_CHUNK) {
        stream.blocking_write_and_flush(chunk).map_err(|e| {
            HttpError::Other(format!("writing the request body: {}", stream_error(e)))
        })?;
    }
    // The stream is a child of the body: it must be gone before the body is finished.
    drop(stream);
    Ok(())
}

fn read_body(body: &IncomingBody, authority: &str, url: &str) -> Result<Vec<u8>, HttpError> {
    let stream = body
        .stream()
        .map_err(|()| HttpError::Other(String::from("response body stream already taken")))?;
    let mut data = Vec::new();
    loop {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) => data.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(match wasip2::http::types::http_error_code(&e) {
                    Some(code) => error_from(code, authority, url),
                    None => HttpError::Other(format!(
                        "reading the response body: {}",
                        e.to_debug_string()
                    )),
                });
            }
        }
    }
    drop(stream);
    Ok(data)
}

fn stream_error(e: StreamError) -> String {
    match e {
        StreamError::Closed => String::from("stream closed"),
        StreamError::LastOperationFailed(e) => e.to_debug_string(),
    }
}

fn options(timeout: Duration) -> RequestOptions {
    let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    let options = RequestOptions::new();
    // A host that does not support a timeout refuses to set it; the call's deadline still
    // bounds the request, so the refusal is not an error.
    let _ = options.set_connect_timeout(Some(nanos));
    let _ = options.set_first_byte_timeout(Some(nanos));
    let _ = options.set_between_bytes_timeout(Some(nanos));
    options
}

fn wasi_method(method: Method) -> WasiMethod {
    match method {
        Method::Get => WasiMethod::Get,
        Method::Head => WasiMethod::Head,
        Method::Post => WasiMethod::Post,
        Method::Put => WasiMethod::Put,
        Method::Patch => WasiMethod::Patch,
        Method::Delete => WasiMethod::Delete,
    }
}

fn scheme_name(https: bool) -> &'static str {
    if https { "https" } else { "http" }
}

/// The header the host refused; `from-list` does not say which, so ask one at a time.
fn first_bad_header(entries: &[(String, Vec<u8>)]) -> String {
    entries
        .iter()
        .find(|entry| Fields::from_list(std::slice::from_ref(*entry)).is_err())
        .map(|(name, _)| name.clone())
        .unwrap_or_default()
}

fn error_from(code: ErrorCode, authority: &str, url: &str) -> HttpError {
    let authority = authority.to_owned();
    match code {
        // The host refuses hosts outside the provider's grants with this code.
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            HttpError::Denied { authority }
        }
        ErrorCode::DnsTimeout
        | ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => HttpError::Timeout {
            authority,
            detail: format!("{code:?}"),
        },
        ErrorCode::DnsError(_)
        | ErrorCode::DestinationNotFound
        | ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::ConnectionRefused
        | ErrorCode::ConnectionTerminated
        | ErrorCode::ConnectionLimitReached => HttpError::Connect {
            authority,
            detail: format!("{code:?}"),
        },
        ErrorCode::HttpRequestUriInvalid | ErrorCode::HttpRequestUriTooLong => {
            HttpError::InvalidUrl {
                url: url.to_owned(),
                reason: "the host refused the URL",
            }
        }
        other => HttpError::Other(format!("{other:?}")),
    }
}
