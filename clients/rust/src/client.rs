//! `MemoryClient`: the wire over HTTP (ureq, blocking): session negotiation through `/v1/connect`,
//! an idempotency key on every mutation, bounded retries with backoff honouring `Retry-After`,
//! typed errors. The op methods are the generated `impl MemoryPort<Token> for MemoryClient`
//! (port.rs); this module holds the one request path they share (`MemoryClient::call`).

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::sync::Mutex;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::errors::{ErrorInfo, SpokeError};
use crate::port::op_info;
use crate::types::{ConnectResponse, Session};

/// The crate's version, sent in `User-Agent`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The largest answer read (bytes): a bigger one is `UnexpectedResponse`.
const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// A bearer token: the principal of `MemoryPort<Token>`. `Debug` shows `Token(<redacted>)`; it
/// has no `Display`, and no error or view of the client shows it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Token(String);

impl Token {
    pub fn new(token: impl Into<String>) -> Self {
        Token(token.into())
    }

    /// The secret itself (to hand it on deliberately).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Options of `MemoryClient::with_options`.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The capability flags to negotiate: the first call of each token opens a session
    /// (`POST /v1/connect`) and every call names it. Without, calls are judged with
    /// `["spoke-memory"]`.
    pub capabilities: Option<Vec<String>>,
    /// Per attempt (default 30 s); a timed-out attempt counts as no answer.
    pub timeout: Duration,
    /// Re-sends after the first attempt (default 4).
    pub max_retries: u32,
    /// First backoff (default 200 ms), doubling per attempt, with jitter...
    pub backoff: Duration,
    /// ...up to this (default 10 s).
    pub max_backoff: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            capabilities: None,
            timeout: Duration::from_secs(30),
            max_retries: 4,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(10),
        }
    }
}

impl ClientOptions {
    /// The defaults, negotiating `capabilities`.
    pub fn capabilities<I, S>(capabilities: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ClientOptions {
            capabilities: Some(capabilities.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }
}

/// A fresh key for one logical mutation (reused by every retry of it): `rs-` and 128 random bits.
pub fn new_idempotency_key() -> String {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).expect("the system's random source");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("rs-{hex}")
}

/// A client of one provider: `MemoryPort<Token>`, each call made as the principal of the token
/// it is given (`client.records_get(&token, &request)`). Sessions are kept per token.
pub struct MemoryClient {
    base_url: String,
    options: ClientOptions,
    agent: ureq::Agent,
    sessions: Mutex<HashMap<Token, Session>>,
}

impl fmt::Debug for MemoryClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sessions = self.sessions.lock().map(|s| s.len()).unwrap_or(0);
        f.debug_struct("MemoryClient")
            .field("base_url", &self.base_url)
            .field("capabilities", &self.options.capabilities)
            .field("sessions", &sessions)
            .finish()
    }
}

/// How an attempt ended: an answer (status, body, Retry-After) or none (why).
enum Attempt {
    Answer(u16, Vec<u8>, Option<Duration>),
    NoAnswer(String),
}

impl MemoryClient {
    /// A client of the provider at `base_url`, with the default options (no session).
    pub fn new(base_url: &str) -> Self {
        Self::with_options(base_url, ClientOptions::default())
    }

    pub fn with_options(base_url: &str, mut options: ClientOptions) -> Self {
        if let Some(caps) = options.capabilities.as_mut() {
            caps.sort();
            caps.dedup();
        }
        let agent = ureq::AgentBuilder::new()
            .timeout(options.timeout)
            .user_agent(&format!("spoke-memory-client-rust/{VERSION}"))
            .build();
        MemoryClient {
            base_url: base_url.trim_end_matches('/').to_string(),
            options,
            agent,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// The session open for `token` (with `capabilities`), if any.
    pub fn session(&self, token: &Token) -> Option<Session> {
        self.sessions.lock().expect("sessions").get(token).cloned()
    }

    /// Open (or reopen) the session of `token` for `capabilities`; the first call does it when needed.
    pub fn connect(&self, token: &Token) -> Result<Session, SpokeError> {
        let capabilities = self.options.capabilities.clone().unwrap_or_default();
        self.sessions.lock().expect("sessions").remove(token);
        let body = json!({ "capabilities": capabilities });
        let answer = self.post("/v1/connect", Some(token), None, &body, true)?;
        let answer: ConnectResponse = decode("/v1/connect", answer)?;
        self.sessions
            .lock()
            .expect("sessions")
            .insert(token.clone(), answer.session.clone());
        Ok(answer.session)
    }

    /// Close the session of `token`, if one is open (`POST /v1/disconnect`); an expired or
    /// unreachable one is closed too.
    pub fn close(&self, token: &Token) {
        let session = self.sessions.lock().expect("sessions").remove(token);
        if let Some(session) = session {
            let _ = self.post("/v1/disconnect", Some(token), Some(&session), &json!({}), true);
        }
    }

    /// The provider's `HostCapabilityManifest` (`GET /v1/manifest`, no token), as sent: the
    /// `{"manifest": {...}}` answer. `MemoryPorts::serves` reads it.
    pub fn manifest(&self) -> Result<Value, SpokeError> {
        let url = format!("{}/v1/manifest", self.base_url);
        for attempt in 0.. {
            let outcome = match self.agent.get(&url).set("Accept", "application/json").call() {
                Ok(response) => read(response),
                Err(ureq::Error::Status(_, response)) => read(response),
                Err(ureq::Error::Transport(t)) => Attempt::NoAnswer(t.kind().to_string()),
            };
            match self.judge(outcome, attempt, true) {
                Ok(Some(map)) => return Ok(Value::Object(map)),
                Ok(None) => continue,
                Err(error) => return Err(error),
            }
        }
        unreachable!()
    }

    /// Any op by its full name, as plain JSON (an op newer than this client). Not re-sent after
    /// no answer unless it is an op the client knows (a mutation it can key) or carries a key.
    pub fn op(&self, token: &Token, name: &str, body: Value) -> Result<Map<String, Value>, SpokeError> {
        self.send(token, name, body)
    }

    /// One op: the request as JSON, a fresh idempotency key for a mutating op that has none,
    /// the session, the retries; the answer decoded as `R`.
    pub fn call<Q: Serialize, R: DeserializeOwned>(
        &self,
        token: &Token,
        op: &str,
        request: &Q,
    ) -> Result<R, SpokeError> {
        let body = serde_json::to_value(request).expect("a generated request serializes to JSON");
        decode(op, self.send(token, op, body)?)
    }

    fn send(&self, token: &Token, op: &str, mut body: Value) -> Result<Map<String, Value>, SpokeError> {
        // A body that is not an object is sent as it is: the provider answers it (400).
        let info = op_info(op);
        if let Some(map) = body.as_object_mut() {
            if info.map_or(false, |i| i.mutating) && !map.contains_key("idempotency_key") {
                map.insert("idempotency_key".into(), Value::String(new_idempotency_key()));
            }
        }
        let keyed = body.get("idempotency_key").is_some();
        let resendable = info.map_or(false, |i| !i.mutating) || keyed;
        let path = format!("/v1/ops/{op}");
        if self.options.capabilities.is_none() {
            return self.post(&path, Some(token), None, &body, resendable);
        }
        let session = match self.session(token) {
            Some(session) => session,
            None => self.connect(token)?,
        };
        match self.post(&path, Some(token), Some(&session), &body, resendable) {
            Err(SpokeError::SessionInvalid(_)) => {
                // Expired or closed: a new session, the same request (the same key) once more.
                let session = self.connect(token)?;
                self.post(&path, Some(token), Some(&session), &body, resendable)
            }
            other => other,
        }
    }

    /// One request, re-sent per the retry policy; the answer's JSON object.
    fn post(
        &self,
        path: &str,
        token: Option<&Token>,
        session: Option<&Session>,
        body: &Value,
        resendable: bool,
    ) -> Result<Map<String, Value>, SpokeError> {
        let payload = body.to_string();
        let url = format!("{}{}", self.base_url, path);
        for attempt in 0.. {
            let mut request = self
                .agent
                .post(&url)
                .set("Content-Type", "application/json")
                .set("Accept", "application/json");
            if let Some(token) = token {
                request = request.set("Authorization", &format!("Bearer {}", token.0));
            }
            if let Some(session) = session {
                request = request.set("Spoke-Session", &session.session_id);
            }
            let outcome = match request.send_string(&payload) {
                Ok(response) => read(response),
                Err(ureq::Error::Status(_, response)) => read(response),
                Err(ureq::Error::Transport(t)) => Attempt::NoAnswer(t.kind().to_string()),
            };
            match self.judge(outcome, attempt, resendable) {
                Ok(Some(map)) => return Ok(map),
                Ok(None) => continue,
                Err(error) => return Err(error),
            }
        }
        unreachable!()
    }

    /// The answer of an attempt, `Ok(None)` to send again (after the pause), or the error.
    fn judge(
        &self,
        outcome: Attempt,
        attempt: u32,
        resendable: bool,
    ) -> Result<Option<Map<String, Value>>, SpokeError> {
        let last = attempt >= self.options.max_retries;
        match outcome {
            Attempt::NoAnswer(why) => {
                if !resendable || last {
                    let message = format!("no answer from the provider ({why})");
                    return Err(SpokeError::ConnectionFailed(
                        ErrorInfo::new("connection_failed", None, message).into(),
                    ));
                }
                std::thread::sleep(self.delay(attempt, None));
                Ok(None)
            }
            Attempt::Answer(status, bytes, retry_after) => {
                let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
                if status == 200 {
                    return match parsed {
                        Some(Value::Object(map)) => Ok(Some(map)),
                        _ => Err(SpokeError::UnexpectedResponse(
                            ErrorInfo::new(
                                "unexpected_response",
                                Some(200),
                                "the answer is not a JSON object",
                            )
                            .into(),
                        )),
                    };
                }
                let error = error_from(status, parsed.as_ref(), retry_after);
                if matches!(error, SpokeError::Unavailable(_) | SpokeError::RateLimited(_)) && !last {
                    std::thread::sleep(self.delay(attempt, retry_after));
                    return Ok(None);
                }
                Err(error)
            }
        }
    }

    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(Duration::from_secs(60));
        }
        let base = self
            .options
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(self.options.max_backoff);
        let mut byte = [0u8; 1];
        let _ = getrandom::getrandom(&mut byte);
        base.mul_f64(0.5 + f64::from(byte[0]) / 510.0)
    }
}

fn read(response: ureq::Response) -> Attempt {
    let status = response.status();
    let retry_after = response
        .header("Retry-After")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64);
    let mut bytes = Vec::new();
    match response
        .into_reader()
        .take(MAX_ANSWER_BYTES)
        .read_to_end(&mut bytes)
    {
        Ok(_) => Attempt::Answer(status, bytes, retry_after),
        Err(error) => Attempt::NoAnswer(format!("the answer broke off: {}", error.kind())),
    }
}

/// The error of an error answer: the variant of its code, `Other` for a code unknown here,
/// `UnexpectedResponse` without an error envelope.
pub fn error_from(status: u16, body: Option<&Value>, retry_after: Option<Duration>) -> SpokeError {
    let envelope = body.and_then(|b| b.get("error")).and_then(Value::as_object);
    let error = match envelope.filter(|e| e.get("code").map_or(false, Value::is_string)) {
        Some(error) => error,
        None => {
            let message = format!("HTTP {status} without an error envelope");
            let info = ErrorInfo::new("unexpected_response", Some(status), message);
            return SpokeError::UnexpectedResponse(info.into());
        }
    };
    let object = |key: &str| {
        error
            .get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    SpokeError::from_info(ErrorInfo {
        code: error["code"].as_str().unwrap_or_default().to_string(),
        status: Some(status),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        details: object("details"),
        extensions: object("extensions"),
        retry_after,
    })
}

/// The answer of `op` as its generated type; an answer off the schema is `UnexpectedResponse`
/// (where, never what: answers hold stored content).
fn decode<R: DeserializeOwned>(op: &str, answer: Map<String, Value>) -> Result<R, SpokeError> {
    serde_json::from_value(Value::Object(answer)).map_err(|error| {
        let message = format!(
            "the answer of {op} does not fit its type ({:?} error)",
            error.classify()
        );
        SpokeError::UnexpectedResponse(ErrorInfo::new("unexpected_response", Some(200), message).into())
    })
}
