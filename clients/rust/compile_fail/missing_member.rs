// expect: E0063 (memory.records.get requires record_id)
use spoke_memory_client::prelude::*;

fn main() {
    let client = MemoryClient::new("http://127.0.0.1:8000");
    let token = Token::new("spk_x");
    let get = RecordsGetRequest { space_id: "demo".into() };
    let _ = client.records_get(&token, &get);
}
