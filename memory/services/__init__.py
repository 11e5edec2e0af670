"""Write machinery shared by the op families: the mutation framework, the record store,
derived copies, content admission, embeddings and the transfer jobs. Imports models, access,
engine and wire; never an op family."""
