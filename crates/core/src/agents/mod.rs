//! Background Claude Code sessions (`claude --bg`, started and watched from the editor by
//! `lua/claude_context/agents/`): what the native side adds for them — their permission
//! requests answered in the editor ([`permission`]).

pub mod permission;
