"""The HTTP edge: authentication, sessions, the gates of docs/protocol.md#dispatch, the error envelope."""
