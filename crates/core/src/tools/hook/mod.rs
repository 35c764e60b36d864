//! The hook tool: Claude Code's hook before each tool, called on the plugin's MCP server.

pub mod claude_context_hook;
