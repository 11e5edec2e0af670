//! Hand-written helpers of the generated code: the pager of the list ops (`Pages`), the poll of
//! `receipts_wait`, and the serde helper of members that are both optional and nullable.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Deserializer};

use crate::errors::{ErrorInfo, SpokeError};
use crate::types::{MemoryReceipt, MemoryReceiptStatus};

/// An optional and nullable member: absent is `None`, `null` is `Some(None)`.
pub fn double_option<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

type Fetch<'a, T> = Box<dyn FnMut(Option<String>) -> Result<(Vec<T>, Option<String>), SpokeError> + 'a>;

/// Every item of a list op, page after page: each page is fetched when the previous one is
/// used up, following `next_cursor`. An error is yielded once and ends the iteration (a write in
/// between makes the cursor stale: `SpokeError::CursorInvalid`, start again).
pub struct Pages<'a, T> {
    fetch: Fetch<'a, T>,
    buffer: VecDeque<T>,
    // The cursor of the next page to fetch (`Some(None)`: the first, without one); None: done.
    next: Option<Option<String>>,
}

impl<'a, T> Pages<'a, T> {
    /// Pages from `first` (the request's own cursor, or none) on, each fetched by `fetch`.
    pub fn new(
        first: Option<String>,
        fetch: impl FnMut(Option<String>) -> Result<(Vec<T>, Option<String>), SpokeError> + 'a,
    ) -> Self {
        Pages {
            fetch: Box::new(fetch),
            buffer: VecDeque::new(),
            next: Some(first),
        }
    }
}

impl<T> Iterator for Pages<'_, T> {
    type Item = Result<T, SpokeError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.buffer.pop_front() {
                return Some(Ok(item));
            }
            let cursor = self.next.take()?;
            match (self.fetch)(cursor) {
                Ok((items, next)) => {
                    self.buffer.extend(items);
                    self.next = next.map(Some);
                }
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl<T> std::fmt::Debug for Pages<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("buffered", &self.buffer.len())
            .field("done", &self.next.is_none())
            .finish()
    }
}

/// Polls `poll` (a memory.receipts.get) with a growing pause (50 ms, then half as long again each
/// time, at most 1 s) until the receipt is no longer pending, or `ReceiptTimeout` after `timeout`.
pub fn wait(
    timeout: Duration,
    mut poll: impl FnMut() -> Result<MemoryReceipt, SpokeError>,
) -> Result<MemoryReceipt, SpokeError> {
    let started = Instant::now();
    let mut interval = Duration::from_millis(50);
    loop {
        let receipt = poll()?;
        if receipt.status != MemoryReceiptStatus::Pending {
            return Ok(receipt);
        }
        let spent = started.elapsed();
        if spent >= timeout {
            let info = ErrorInfo::new(
                "receipt_timeout",
                None,
                format!("receipt {} still pending after {:?}", receipt.receipt_id, timeout),
            );
            return Err(SpokeError::ReceiptTimeout(Box::new(info), Box::new(receipt)));
        }
        std::thread::sleep(interval.min(timeout - spent));
        interval = (interval * 3 / 2).min(Duration::from_secs(1));
    }
}

impl crate::types::Placement {
    /// `{"scope": "shared"}`.
    pub fn shared() -> Self {
        Self::Shared(crate::types::PlacementShared::new())
    }

    /// `{"scope": "context", "context_id": ...}`.
    pub fn context(context_id: impl Into<String>) -> Self {
        Self::Context(crate::types::PlacementContext::new(context_id))
    }
}
