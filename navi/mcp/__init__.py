"""The Model Context Protocol: tools of external MCP servers offered in Navi (`config`,
`connection`, `tools`, `manager`), and Navi offered as an MCP server."""
