"""The Model Context Protocol: tools of external MCP servers offered in Navi (`config`,
`connection`, `tools`, `manager`); Navi offered as an MCP server is `navi/api/mcp_server.py`."""
