"""The HTTP edge: authentication, sessions, the gates of SPEC §1.4, the error envelope."""
