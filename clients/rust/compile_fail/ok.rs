// expect: builds
use spoke_memory_client::prelude::*;

fn main() {
    let client = MemoryClient::new("http://127.0.0.1:8000");
    let token = Token::new("spk_x");
    let update = RecordsUpdateRequest::new("demo", "rec_1", 1).with_kind("fact");
    let _ = client.records_update(&token, &update);
    let get = RecordsGetRequest { space_id: "demo".into(), record_id: "rec_1".into() };
    let _ = client.records_get(&token, &get);
}
