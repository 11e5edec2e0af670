"""The hybrid engines' vectors, by job (memory.services.hybrid_store is their front):
`queue` (the embedding backlog and its drain) and `cache` (the per-process vector cache) build on
`store` (the stored vectors, their erasure and generation); `ranking` (the cosine side) on
`cache`."""
