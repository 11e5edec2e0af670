//! `ErrorInfo`, what every `SpokeError` variant carries. Messages come from the provider and never
//! hold stored content; the token is never in one.

use std::fmt;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::errors::SpokeError;

/// An error answer's envelope (docs/protocol.md#errors), or the client's own error in the same shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorInfo {
    /// The wire code (`REVISION_CONFLICT`), or the client's (`connection_failed`,
    /// `unexpected_response`, `receipt_timeout`).
    pub code: String,
    /// The HTTP status of the answer; `None` when none arrived.
    pub status: Option<u16>,
    pub message: String,
    pub details: Map<String, Value>,
    pub extensions: Map<String, Value>,
    /// On 429 and 503: the `Retry-After` the provider sent.
    pub retry_after: Option<Duration>,
}

impl ErrorInfo {
    /// An error of `code` with no details.
    pub fn new(code: &str, status: Option<u16>, message: impl Into<String>) -> Self {
        ErrorInfo {
            code: code.to_string(),
            status,
            message: message.into(),
            details: Map::new(),
            extensions: Map::new(),
            retry_after: None,
        }
    }

    /// The details as the typed struct of their code (`RevisionConflictDetails`), if they fit it.
    pub fn details_as<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(Value::Object(self.details.clone())).ok()
    }
}

impl SpokeError {
    /// The wire code (or the client's own).
    pub fn code(&self) -> &str {
        &self.info().code
    }

    /// The HTTP status; `None` when no answer arrived.
    pub fn status(&self) -> Option<u16> {
        self.info().status
    }

    pub fn message(&self) -> &str {
        &self.info().message
    }

    pub fn details(&self) -> &Map<String, Value> {
        &self.info().details
    }

    /// A read or mutation the client would send again (the provider was unreachable or busy).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            SpokeError::Unavailable(_) | SpokeError::RateLimited(_) | SpokeError::ConnectionFailed(_)
        )
    }
}

impl fmt::Display for SpokeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.info();
        match info.status {
            Some(status) => write!(f, "{} ({}): {}", info.code, status, info.message),
            None => write!(f, "{}: {}", info.code, info.message),
        }
    }
}

impl std::error::Error for SpokeError {}
