"""The MCP server (issue 28): agents reach the same memory, grants and review gate as the REST
API, over streamable HTTP at /mcp/<space_id> (http.py) and over stdio (`manage.py spoke mcp`).
tools.py maps each tool onto its op; server.py is the SDK server; docs/mcp.md explains it."""
