// expect: E0599 (a placement is shared or a context: there is no public one)
use spoke_memory_client::prelude::*;

fn main() {
    let client = MemoryClient::new("http://127.0.0.1:8000");
    let token = Token::new("spk_x");
    let request = RecordsPromoteRequest::new("demo", "rec_1", 1, Placement::Public(PlacementShared::new()));
    let _ = client.records_promote(&token, &request);
}
