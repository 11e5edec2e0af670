//! What needs no provider: the probe on adapters, the types' JSON (closed requests, tolerant
//! answers), and the client's retries against a scripted HTTP server on a local port.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use spoke_memory_client::prelude::*;

/// An in-memory port of a test: answers `describe` and refuses the rest as UnknownOp.
struct Fake {
    manifest: Option<Value>,
}

macro_rules! refuse {
    ($($name:ident: $req:ty => $resp:ty),* $(,)?) => {
        $(fn $name(&self, _: &String, _: &$req) -> Result<$resp, SpokeError> {
            Err(SpokeError::from_info(ErrorInfo::new("unknown_op", Some(404), "not here")))
        })*
    };
}

impl MemoryPort<String> for Fake {
    refuse! {
        candidates_dismiss: CandidatesDismissRequest => CandidatesDismissResponse,
        candidates_get: CandidatesGetRequest => CandidatesGetResponse,
        candidates_list: CandidatesListRequest => CandidatesListResponse,
        candidates_review: CandidatesReviewRequest => CandidatesReviewResponse,
        capture: CaptureRequest => CaptureResponse,
        describe: DescribeRequest => DescribeResponse,
        exports_create: ExportsCreateRequest => ExportsCreateResponse,
        exports_get: ExportsGetRequest => ExportsGetResponse,
        grants_grant: GrantsGrantRequest => GrantsGrantResponse,
        grants_list: GrantsListRequest => GrantsListResponse,
        grants_revoke: GrantsRevokeRequest => GrantsRevokeResponse,
        imports_activate: ImportsActivateRequest => ImportsActivateResponse,
        imports_discard: ImportsDiscardRequest => ImportsDiscardResponse,
        imports_stage: ImportsStageRequest => ImportsStageResponse,
        profile_get: ProfileGetRequest => ProfileGetResponse,
        profile_update: ProfileUpdateRequest => ProfileUpdateResponse,
        recall: RecallRequest => RecallResponse,
        receipts_get: ReceiptsGetRequest => ReceiptsGetResponse,
        records_create: RecordsCreateRequest => RecordsCreateResponse,
        records_delete: RecordsDeleteRequest => RecordsDeleteResponse,
        records_get: RecordsGetRequest => RecordsGetResponse,
        records_promote: RecordsPromoteRequest => RecordsPromoteResponse,
        records_update: RecordsUpdateRequest => RecordsUpdateResponse,
        reflections_generate: ReflectionsGenerateRequest => ReflectionsGenerateResponse,
        reflections_state: ReflectionsStateRequest => ReflectionsStateResponse,
        spaces_freeze: SpacesFreezeRequest => SpacesFreezeResponse,
        spaces_list: SpacesListRequest => SpacesListResponse,
        spaces_unfreeze: SpacesUnfreezeRequest => SpacesUnfreezeResponse,
        subjects_ensure: SubjectsEnsureRequest => SubjectsEnsureResponse,
        subjects_fence: SubjectsFenceRequest => SubjectsFenceResponse,
        subjects_get: SubjectsGetRequest => SubjectsGetResponse,
    }

    fn records_list(&self, _: &String, _: &RecordsListRequest) -> Result<RecordsListResponse, SpokeError> {
        Ok(RecordsListResponse::new(vec![], 0, None))
    }

    fn reflections_list(
        &self,
        _: &String,
        request: &ReflectionsListRequest,
    ) -> Result<ReflectionsListResponse, SpokeError> {
        // Two pages: the first without a cursor, the second at "c2"; then a stale cursor.
        match request.cursor.as_deref() {
            None => Ok(ReflectionsListResponse::new(vec![], Some("c2".into()))),
            Some("c2") => Ok(ReflectionsListResponse::new(vec![], Some("stale".into()))),
            _ => Err(SpokeError::from_info(ErrorInfo::new(
                "CURSOR_INVALID",
                Some(409),
                "stale",
            ))),
        }
    }
}

impl Adapter<String> for Fake {
    fn manifest(&self) -> Option<Value> {
        self.manifest.clone()
    }

    fn memory_port(&self) -> Option<&dyn MemoryPort<String>> {
        Some(self)
    }
}

/// An adapter of another family: a manifest, no memory port.
struct Other;

impl Adapter<String> for Other {
    fn manifest(&self) -> Option<Value> {
        Some(json!({"manifest": {"role": "memory-provider", "capabilities": ["spoke-memory"]}}))
    }
}

fn manifest(role: &str, caps: &[&str]) -> Value {
    json!({"manifest": {"schema_version": 1, "provider_id": "p", "protocol_version": "1", "role": role, "capabilities": caps, "extensions": {}}})
}

#[test]
fn the_probe_answers_a_port_only_for_a_memory_manifest_and_a_port() {
    let good = Fake {
        manifest: Some(manifest(
            "memory-provider",
            &["spoke-memory", "spoke-memory-reflection"],
        )),
    };
    let port = MemoryPorts::as_memory(&good).expect("a memory adapter");
    assert_eq!(
        port.records_list(&"me".to_string(), &RecordsListRequest::new("s"))
            .unwrap()
            .total_authorized,
        0
    );
    for manifest in [
        manifest("search-provider", &["spoke-memory"]),
        manifest("memory-provider", &["spoke-search"]),
        json!({}),
        json!("x"),
    ] {
        assert!(
            MemoryPorts::as_memory(&Fake {
                manifest: Some(manifest.clone())
            })
            .is_none(),
            "{manifest}"
        );
    }
    assert!(MemoryPorts::as_memory(&Fake { manifest: None }).is_none());
    assert!(
        MemoryPorts::as_memory(&Other).is_none(),
        "a memory manifest without a port"
    );
    assert!(MemoryPorts::serves(
        &manifest("memory-provider", &["spoke-memory"])["manifest"]
    ));
}

#[test]
fn pages_follow_the_cursor_and_stop_after_an_error() {
    let fake = Fake { manifest: None };
    let port: &dyn MemoryPort<String> = &fake;
    let results: Vec<_> = port
        .reflections_iter(&"me".to_string(), &ReflectionsListRequest::new("s", "u"))
        .collect();
    assert_eq!(results.len(), 1);
    assert!(matches!(results[0], Err(SpokeError::CursorInvalid(_))));
}

#[test]
fn requests_refuse_unknown_members_and_answers_ignore_them() {
    let request: Result<RecordsGetRequest, _> =
        serde_json::from_value(json!({"space_id": "s", "record_id": "r", "extra": 1}));
    assert!(request.is_err());
    let ok: RecordsGetRequest = serde_json::from_value(json!({"space_id": "s", "record_id": "r"})).unwrap();
    assert_eq!(ok, RecordsGetRequest::new("s", "r"));
    let answer: RecordsListResponse = serde_json::from_value(
        json!({"records": [], "total_authorized": 0, "next_cursor": null, "newer": true}),
    )
    .unwrap();
    assert_eq!(answer.next_cursor, None);
    let placement = serde_json::to_value(Placement::context("trip")).unwrap();
    assert_eq!(placement, json!({"scope": "context", "context_id": "trip"}));
    assert_eq!(
        serde_json::to_value(Placement::shared()).unwrap(),
        json!({"scope": "shared"})
    );
    let decision: ReviewDecision = serde_json::from_value(json!({"action": "drop"})).unwrap();
    assert_eq!(decision, ReviewDecision::Drop(ReviewDecisionDrop::new()));
    assert!(serde_json::from_value::<ReviewDecision>(json!({"action": "keep"})).is_err());
    // An optional member left out is absent from the JSON, not null.
    assert_eq!(
        serde_json::to_value(SubjectsEnsureRequest::new("s", "u")).unwrap(),
        json!({"space_id": "s", "subject_id": "u"})
    );
}

#[test]
fn every_wire_code_has_its_variant() {
    assert_eq!(ERRORS.len(), 31);
    for (code, name, status) in ERRORS {
        let error = SpokeError::from_info(ErrorInfo::new(code, Some(*status), "m"));
        assert!(!matches!(error, SpokeError::Other(_)), "{code}");
        assert!(format!("{error:?}").starts_with(name), "{code} is {error:?}");
        assert_eq!(error.status(), Some(*status));
    }
    assert!(matches!(
        SpokeError::from_info(ErrorInfo::new("NEWER_CODE", Some(409), "m")),
        SpokeError::Other(_)
    ));
    assert_eq!(spoke_memory_client::OPS.len(), 33);
}

// --- a scripted HTTP server: what the live provider cannot be made to answer -------------------

#[derive(Default)]
struct Seen {
    bodies: Vec<Value>,
    heads: Vec<String>,
}

/// Serves each planned answer in turn ("503" with Retry-After: 0, "drop" closes the connection
/// without an answer, anything else is a 200 body), recording the request bodies.
fn scripted(plan: Vec<&'static str>) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    thread::spawn(move || {
        for (stream, answer) in listener.incoming().zip(plan) {
            let mut stream = stream.unwrap();
            let (head, body) = read_request(&mut stream);
            let mut seen = record.lock().unwrap();
            seen.heads.push(head);
            seen.bodies
                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            drop(seen);
            let reply = match answer {
                "drop" => continue,
                "503" => http(
                    503,
                    "Retry-After: 0\r\n",
                    r#"{"error":{"code":"unavailable","message":"down","details":{}}}"#,
                ),
                "429" => http(
                    429,
                    "Retry-After: 0\r\n",
                    r#"{"error":{"code":"rate_limited","message":"slow","details":{}}}"#,
                ),
                "html" => http(502, "", "<html>bad gateway</html>"),
                "expired" => http(
                    401,
                    "",
                    r#"{"error":{"code":"session_invalid","message":"expired","details":{}}}"#,
                ),
                body => http(200, "", body),
            };
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, seen)
}

fn http(status: u16, extra: &str, body: &str) -> String {
    format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

fn read_request(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

fn quick() -> ClientOptions {
    ClientOptions {
        backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        max_retries: 2,
        ..ClientOptions::default()
    }
}

const SUBJECT: &str = r#"{"receipt":{"schema_version":1,"receipt_id":"rct_1","space_id":"s","op":"memory.subjects.ensure","status":"committed","payload_digest":"sha256:00","refs":[],"created_at":"2026-01-01T00:00:00Z","extensions":{}}}"#;

#[test]
fn a_mutation_is_retried_on_503_429_and_no_answer_with_the_same_key() {
    let (url, seen) = scripted(vec!["503", "drop", "429", SUBJECT]);
    let client = MemoryClient::with_options(
        &url,
        ClientOptions {
            max_retries: 3,
            ..quick()
        },
    );
    let answer = client
        .subjects_ensure(&Token::new("t"), &SubjectsEnsureRequest::new("s", "u"))
        .unwrap();
    assert_eq!(answer.receipt.receipt_id, "rct_1");
    let keys: Vec<Value> = seen
        .lock()
        .unwrap()
        .bodies
        .iter()
        .map(|b| b["idempotency_key"].clone())
        .collect();
    assert_eq!(keys.len(), 4);
    assert!(keys[0].as_str().unwrap().starts_with("rs-"));
    assert!(
        keys.iter().all(|k| *k == keys[0]),
        "every retry carries the first attempt's key"
    );
}

#[test]
fn retries_end_in_the_last_error_or_connection_failed() {
    let (url, seen) = scripted(vec!["503", "503", "503"]);
    let error = MemoryClient::with_options(&url, quick())
        .describe(&Token::new("t"), &DescribeRequest::new())
        .unwrap_err();
    assert!(
        matches!(error, SpokeError::Unavailable(ref i) if i.retry_after == Some(Duration::ZERO)),
        "{error:?}"
    );
    assert_eq!(
        seen.lock().unwrap().bodies.len(),
        3,
        "the first attempt and max_retries re-sends"
    );
    let (url, seen) = scripted(vec!["drop", "drop", "drop"]);
    let error = MemoryClient::with_options(&url, quick())
        .describe(&Token::new("t"), &DescribeRequest::new())
        .unwrap_err();
    assert!(matches!(error, SpokeError::ConnectionFailed(_)), "{error:?}");
    assert_eq!(error.status(), None);
    assert_eq!(seen.lock().unwrap().bodies.len(), 3);
    let (url, _) = scripted(vec!["html"]);
    let error = MemoryClient::with_options(&url, quick())
        .describe(&Token::new("t"), &DescribeRequest::new())
        .unwrap_err();
    assert!(matches!(error, SpokeError::UnexpectedResponse(_)), "{error:?}");
    assert_eq!(error.status(), Some(502));
}

#[test]
fn an_op_unknown_to_the_client_is_not_resent_and_an_answer_off_schema_is_unexpected() {
    let (url, seen) = scripted(vec!["drop", "{}"]);
    let client = MemoryClient::with_options(&url, quick());
    let error = client
        .op(&Token::new("t"), "memory.someday.new", json!({"a": 1}))
        .unwrap_err();
    assert!(matches!(error, SpokeError::ConnectionFailed(_)));
    assert_eq!(
        seen.lock().unwrap().bodies.len(),
        1,
        "an unkeyed unknown op is sent once"
    );
    assert_eq!(seen.lock().unwrap().bodies[0], json!({"a": 1}));
    let error = client
        .describe(&Token::new("t"), &DescribeRequest::new())
        .unwrap_err();
    assert!(matches!(error, SpokeError::UnexpectedResponse(_)), "{error:?}");
}

fn session(id: &str) -> &'static str {
    let session = json!({"session": {"schema_version": 1, "session_id": id, "principal_id": "p",
        "negotiated_capabilities": ["spoke-memory"], "opened_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-01T00:00:00Z", "extensions": {}}});
    Box::leak(session.to_string().into_boxed_str())
}

#[test]
fn an_expired_session_is_reopened_once_and_the_same_request_sent_again() {
    let (url, seen) = scripted(vec![session("ses_1"), "expired", session("ses_2"), SUBJECT]);
    let client = MemoryClient::with_options(
        &url,
        ClientOptions {
            capabilities: Some(vec!["spoke-memory".into()]),
            ..quick()
        },
    );
    let token = Token::new("t");
    client
        .subjects_ensure(&token, &SubjectsEnsureRequest::new("s", "u"))
        .unwrap();
    let seen = seen.lock().unwrap();
    let lines: Vec<&str> = seen.heads.iter().map(|h| h.lines().next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "POST /v1/connect HTTP/1.1",
            "POST /v1/ops/memory.subjects.ensure HTTP/1.1",
            "POST /v1/connect HTTP/1.1",
            "POST /v1/ops/memory.subjects.ensure HTTP/1.1"
        ]
    );
    assert!(seen.heads[1]
        .to_ascii_lowercase()
        .contains("spoke-session: ses_1"));
    assert!(seen.heads[3]
        .to_ascii_lowercase()
        .contains("spoke-session: ses_2"));
    assert!(seen.heads[0].contains("Bearer t"));
    assert_eq!(
        seen.bodies[1]["idempotency_key"], seen.bodies[3]["idempotency_key"],
        "the same key"
    );
    assert_eq!(seen.bodies[0], json!({"capabilities": ["spoke-memory"]}));
    assert_eq!(client.session(&token).unwrap().session_id, "ses_2");
}
