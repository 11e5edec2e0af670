//! The client against the live provider that tests/clients/test_rust.py starts (with a real
//! worker): the scenario the TypeScript and Python clients' suites run. Without `SPOKE_URL` each
//! test says it was skipped (the Python side asserts none was).

use std::env;
use std::time::Duration;

use serde_json::json;
use spoke_memory_client::prelude::*;
use spoke_memory_client::Pages;

struct Live {
    client: MemoryClient,
    token: Token,
    space: String,
}

fn var(name: &str) -> String {
    env::var(name).unwrap_or_else(|_| panic!("{name} is set with SPOKE_URL"))
}

/// A client negotiating every flag the provider serves, or None (skipped: no provider given).
fn live(test: &str) -> Option<Live> {
    let url = match env::var("SPOKE_URL") {
        Ok(url) => url,
        Err(_) => {
            eprintln!("SKIPPED {test}: no live provider (set SPOKE_URL, SPOKE_TOKEN, ...)");
            return None;
        }
    };
    let token = Token::new(var("SPOKE_TOKEN"));
    let served = MemoryClient::new(&url)
        .describe(&token, &DescribeRequest::new())
        .unwrap()
        .provider
        .served_capabilities;
    let client = MemoryClient::with_options(&url, ClientOptions::capabilities(served));
    Some(Live {
        client,
        token,
        space: var("SPOKE_SPACE"),
    })
}

fn ref_of(receipt: &MemoryReceipt, kind: RefType) -> String {
    receipt
        .refs
        .iter()
        .find(|r| r.r#type == kind)
        .expect("the receipt names it")
        .id
        .clone()
}

fn create(l: &Live, subject: &str, text: &str) -> MemoryReceipt {
    let request =
        RecordsCreateRequest::new(&l.space, subject, "fact", Content::new(text), Placement::shared());
    l.client.records_create(&l.token, &request).unwrap().receipt
}

#[test]
fn describe_and_the_session_the_first_call_opened() {
    let l = match live("describe") {
        Some(l) => l,
        None => return,
    };
    assert!(l.client.session(&l.token).is_none());
    let provider = l
        .client
        .describe(&l.token, &DescribeRequest::new())
        .unwrap()
        .provider;
    assert!(provider.served_capabilities.iter().any(|c| c == "spoke-memory"));
    let session = l.client.session(&l.token).expect("a session was opened");
    let mut served = provider.served_capabilities.clone();
    served.sort();
    let mut negotiated = session.negotiated_capabilities.clone();
    negotiated.sort();
    assert_eq!(negotiated, served);
    l.client.close(&l.token);
    assert!(l.client.session(&l.token).is_none());
}

#[test]
fn ensure_capture_review_dismiss_and_recall() {
    let l = match live("capture") {
        Some(l) => l,
        None => return,
    };
    let ensured = l
        .client
        .subjects_ensure(
            &l.token,
            &SubjectsEnsureRequest::new(&l.space, "user:lin").with_kind("acme:user"),
        )
        .unwrap();
    assert_eq!(ensured.receipt.status, MemoryReceiptStatus::Committed);
    assert_eq!(ensured.receipt.op, "memory.subjects.ensure");
    let items = vec![
        CaptureRequestItemsItem::new(Content::new("Lin prefers green tea over coffee.")),
        CaptureRequestItemsItem::new(Content::new("ok thanks")),
    ];
    let capture = CaptureRequest::new(
        &l.space,
        "user:lin",
        CaptureScope::new(Placement::shared()),
        items,
    );
    let captured = l.client.capture(&l.token, &capture).unwrap();
    let ids: Vec<String> = captured.receipt.refs.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    let pending = CandidatesListRequest::new(&l.space)
        .with_subject_id("user:lin")
        .with_states(vec![CandidatesListRequestStatesItem::Pending]);
    let mut listed: Vec<String> = l
        .client
        .candidates_list(&l.token, &pending)
        .unwrap()
        .candidates
        .into_iter()
        .map(|c| c.candidate_id)
        .collect();
    listed.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(listed, expected);
    let got = l
        .client
        .candidates_get(&l.token, &CandidatesGetRequest::new(&l.space, &ids[0]))
        .unwrap();
    assert_eq!(
        got.candidate.proposed.content.text,
        "Lin prefers green tea over coffee."
    );
    let decision = ReviewDecision::Promote(ReviewDecisionPromote::new().with_kind("preference"));
    let reviewed = l
        .client
        .candidates_review(
            &l.token,
            &CandidatesReviewRequest::new(&l.space, &ids[0], decision),
        )
        .unwrap();
    let record_id = ref_of(&reviewed.receipt, RefType::Record);
    l.client
        .candidates_dismiss(&l.token, &CandidatesDismissRequest::new(&l.space, &ids[1]))
        .unwrap();
    let dismissed = l
        .client
        .candidates_get(&l.token, &CandidatesGetRequest::new(&l.space, &ids[1]))
        .unwrap();
    assert_eq!(dismissed.candidate.state, MemoryCandidateState::Dismissed);
    let recall = RecallRequest::new(&l.space, "user:lin", RecallRequestQuery::new("green tea"));
    let results = l.client.recall(&l.token, &recall).unwrap().recall.results;
    assert_eq!(
        results
            .iter()
            .map(|r| r.record.record_id.clone())
            .collect::<Vec<_>>(),
        vec![record_id]
    );
    assert_eq!(results[0].rank, 1);
}

#[test]
fn create_update_and_a_stale_revision_is_revision_conflict() {
    let l = match live("conflict") {
        Some(l) => l,
        None => return,
    };
    l.client
        .subjects_ensure(&l.token, &SubjectsEnsureRequest::new(&l.space, "user:cas"))
        .unwrap();
    let record_id = ref_of(&create(&l, "user:cas", "lives in Lisbon"), RefType::Record);
    let update =
        RecordsUpdateRequest::new(&l.space, &record_id, 1).with_content(Content::new("lives in Porto"));
    l.client.records_update(&l.token, &update).unwrap();
    let stale =
        RecordsUpdateRequest::new(&l.space, &record_id, 1).with_content(Content::new("lives in Faro"));
    match l.client.records_update(&l.token, &stale) {
        Err(SpokeError::RevisionConflict(info)) => {
            assert_eq!(info.code, "REVISION_CONFLICT");
            assert_eq!(info.status, Some(409));
            assert_eq!(info.details["current_revision"], json!(2));
            assert_eq!(
                info.details_as::<RevisionConflictDetails>(),
                Some(RevisionConflictDetails::new(2))
            );
        }
        other => panic!("expected RevisionConflict, got {other:?}"),
    }
    let record = l
        .client
        .records_get(&l.token, &RecordsGetRequest::new(&l.space, &record_id))
        .unwrap()
        .record;
    assert_eq!(
        (record.revision, record.content.text.as_str()),
        (2, "lives in Porto")
    );
    let missing = l.client.records_get(
        &l.token,
        &RecordsGetRequest::new(&l.space, "rec_00000000000000000000000000"),
    );
    let error = missing.unwrap_err();
    assert!(matches!(error, SpokeError::NotFound(_)), "{error:?}");
    assert_eq!((error.code(), error.status()), ("NOT_FOUND", Some(404)));
}

#[test]
fn pages_by_hand_and_by_the_iterator() {
    let l = match live("pages") {
        Some(l) => l,
        None => return,
    };
    l.client
        .subjects_ensure(&l.token, &SubjectsEnsureRequest::new(&l.space, "user:pages"))
        .unwrap();
    let mut made: Vec<String> = (0..7)
        .map(|n| ref_of(&create(&l, "user:pages", &format!("note {n}")), RefType::Record))
        .collect();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = RecordsListRequest::new(&l.space)
            .with_subject_id("user:pages")
            .with_page_size(3);
        request.cursor = cursor.clone();
        let page = l.client.records_list(&l.token, &request).unwrap();
        assert_eq!(page.total_authorized, 7);
        seen.extend(page.records.into_iter().map(|r| r.record_id));
        pages += 1;
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    let request = RecordsListRequest::new(&l.space)
        .with_subject_id("user:pages")
        .with_page_size(3);
    let pager: Pages<'_, RetainedRecord> = l.client.records_iter(&l.token, &request);
    let walked: Vec<String> = pager.map(|r| r.unwrap().record_id).collect();
    assert_eq!(walked, seen);
    seen.sort();
    made.sort();
    assert_eq!(seen, made);
}

#[test]
fn a_reflection_answers_pending_and_receipts_wait_returns_it_committed() {
    let l = match live("reflections") {
        Some(l) => l,
        None => return,
    };
    l.client
        .subjects_ensure(&l.token, &SubjectsEnsureRequest::new(&l.space, "user:ref"))
        .unwrap();
    let limits = l
        .client
        .describe(&l.token, &DescribeRequest::new())
        .unwrap()
        .provider
        .limits;
    let texts = [
        "prefers green tea",
        "lives in Lisbon",
        "plans a trip to Porto",
        "learns Portuguese",
        "runs on Sundays",
    ];
    for text in texts.iter().take(limits.reflection_min_records.max(3) as usize) {
        create(&l, "user:ref", text);
    }
    let state = l
        .client
        .reflections_state(&l.token, &ReflectionsStateRequest::new(&l.space, "user:ref"))
        .unwrap();
    assert!(state.state.data_sufficiency.sufficient);
    let receipt = l
        .client
        .reflections_generate(&l.token, &ReflectionsGenerateRequest::new(&l.space, "user:ref"))
        .unwrap()
        .receipt;
    assert_eq!(receipt.status, MemoryReceiptStatus::Pending);
    let done = l
        .client
        .receipts_wait(&l.token, &receipt.receipt_id, Duration::from_secs(120))
        .unwrap();
    assert_eq!(done.status, MemoryReceiptStatus::Committed, "{:?}", done.failure);
    let reflection_id = ref_of(&done, RefType::Reflection);
    let request = ReflectionsListRequest::new(&l.space, "user:ref");
    let walked: Vec<String> = l
        .client
        .reflections_iter(&l.token, &request)
        .map(|r| r.unwrap().reflection_id)
        .collect();
    assert_eq!(walked, vec![reflection_id]);
}

#[test]
fn an_export_is_made_by_the_worker_and_read_chunk_by_chunk() {
    let l = match live("export") {
        Some(l) => l,
        None => return,
    };
    l.client
        .subjects_ensure(&l.token, &SubjectsEnsureRequest::new(&l.space, "user:exp"))
        .unwrap();
    create(&l, "user:exp", "exported fact");
    let request = ExportsCreateRequest::new(&l.space).with_subject_ids(vec!["user:exp".to_string()]);
    let created = l.client.exports_create(&l.token, &request).unwrap().receipt;
    assert_eq!(created.status, MemoryReceiptStatus::Pending);
    let exported = l
        .client
        .receipts_wait(&l.token, &created.receipt_id, Duration::from_secs(120))
        .unwrap();
    assert_eq!(
        exported.status,
        MemoryReceiptStatus::Committed,
        "{:?}",
        exported.failure
    );
    let export_id = exported.refs[0].id.clone();
    let first = l
        .client
        .exports_get(&l.token, &ExportsGetRequest::new(&l.space, &export_id, 0))
        .unwrap();
    assert_eq!(first.bundle.export_id, export_id);
    let mut objects = first.chunk.objects.len();
    for n in 1..first.bundle.chunk_count {
        objects += l
            .client
            .exports_get(&l.token, &ExportsGetRequest::new(&l.space, &export_id, n))
            .unwrap()
            .chunk
            .objects
            .len();
    }
    assert!(objects >= 2, "the subject and its record");
}

#[test]
fn keys_a_fresh_one_per_mutation_or_the_callers_own_replayed() {
    let l = match live("keys") {
        Some(l) => l,
        None => return,
    };
    let ensure = SubjectsEnsureRequest::new(&l.space, "user:keys");
    let a = l.client.subjects_ensure(&l.token, &ensure).unwrap().receipt;
    let b = l.client.subjects_ensure(&l.token, &ensure).unwrap().receipt;
    assert_ne!(a.receipt_id, b.receipt_id);
    assert!(a.idempotency_key.as_deref().unwrap().starts_with("rs-"));
    let mine = ensure.clone().with_idempotency_key("rs-mine-1");
    let first = l.client.subjects_ensure(&l.token, &mine).unwrap().receipt;
    let again = l.client.subjects_ensure(&l.token, &mine).unwrap().receipt;
    assert_eq!(first, again, "the same key replays the first receipt");
    let by_key = ReceiptsGetRequest::new()
        .with_space_id(&l.space)
        .with_op("memory.subjects.ensure")
        .with_idempotency_key("rs-mine-1");
    assert_eq!(l.client.receipts_get(&l.token, &by_key).unwrap().receipt, first);
    let by_name = l
        .client
        .op(
            &l.token,
            "memory.subjects.get",
            json!({"space_id": l.space, "subject_id": "user:keys"}),
        )
        .unwrap();
    assert_eq!(by_name["subject"]["subject_id"], json!("user:keys"));
}

#[test]
fn a_wrong_token_is_unauthenticated_and_no_view_shows_a_token() {
    let l = match live("token") {
        Some(l) => l,
        None => return,
    };
    let secret = Token::new("spk_not_a_real_token_123456");
    let error = l.client.describe(&secret, &DescribeRequest::new()).unwrap_err();
    assert!(matches!(error, SpokeError::Unauthenticated(_)), "{error:?}");
    assert_eq!(error.status(), Some(401));
    l.client.describe(&l.token, &DescribeRequest::new()).unwrap();
    let views = [
        format!("{secret:?}"),
        format!("{:?}", l.client),
        format!("{:#?}", l.client),
        format!("{error:?}"),
        error.to_string(),
        format!("{:?}", l.token),
    ];
    for view in views {
        assert!(
            !view.contains("spk_not_a_real_token") && !view.contains(l.token.expose()),
            "{view}"
        );
    }
    assert_eq!(format!("{secret:?}"), "Token(<redacted>)");
}

#[test]
fn the_probe_answers_the_port_of_a_memory_provider() {
    let l = match live("probe") {
        Some(l) => l,
        None => return,
    };
    let url = var("SPOKE_URL");
    let manifest = l.client.manifest().unwrap();
    assert!(MemoryPorts::serves(&manifest));
    let port = MemoryPorts::as_memory(&l.client).expect("the client serves the family");
    let answer = port.subjects_get(&l.token, &SubjectsGetRequest::new(&l.space, "user:lin"));
    assert!(answer.is_ok() || matches!(answer, Err(SpokeError::NotFound(_))));
    let probed = MemoryPorts::probe(&url, ClientOptions::default())
        .unwrap()
        .expect("a memory provider");
    assert_eq!(probed.base_url(), url.trim_end_matches('/'));
    // Nothing listens on port 9 (discard): no manifest is an error, not a port.
    let nowhere = ClientOptions {
        max_retries: 0,
        ..ClientOptions::default()
    };
    assert!(matches!(
        MemoryPorts::probe("http://127.0.0.1:9", nowhere),
        Err(SpokeError::ConnectionFailed(_))
    ));
}
