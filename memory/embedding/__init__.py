"""Sentence embeddings for the hybrid recall engine: the model's identity (a digest of its files),
the local forward pass (the bundled model on torch, or its int8 ONNX form exported on this machine
by a subprocess under a file lock), and the OpenAI-compatible embeddings-server client. The I/O the
pure policy package (memory.engine) may not do lives here; Django-free (settings arrive from the
environment or `embed.configure`)."""
