// expect: E0308 (expected_revision is an integer, not a string)
use spoke_memory_client::prelude::*;

fn main() {
    let client = MemoryClient::new("http://127.0.0.1:8000");
    let token = Token::new("spk_x");
    let update = RecordsUpdateRequest::new("demo", "rec_1", "1").with_kind("fact");
    let _ = client.records_update(&token, &update);
}
