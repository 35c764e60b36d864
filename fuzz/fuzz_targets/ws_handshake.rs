//! The HTTP upgrade request and the bridge's handshake check (token, no Origin): arbitrary bytes
//! must be refused or accepted without a panic, and only a request carrying the token is
//! accepted.
#![no_main]

use claude_context_core::server::{check_handshake, ws_config, AUTH_HEADER};
use libfuzzer_sys::fuzz_target;
use std::io::{self, Cursor, Read, Write};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

struct Stream(Cursor<Vec<u8>>);

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut token_seen = false;
    let cb = |req: &tungstenite::handshake::server::Request,
              resp: tungstenite::handshake::server::Response| {
        token_seen = req
            .headers()
            .get(AUTH_HEADER)
            .is_some_and(|v| v.as_bytes() == TOKEN.as_bytes());
        check_handshake(TOKEN, req, resp)
    };
    let accepted = tungstenite::accept_hdr_with_config(
        Stream(Cursor::new(data.to_vec())),
        cb,
        Some(ws_config(1 << 16)),
    )
    .is_ok();
    if accepted {
        assert!(token_seen, "accepted without the token");
    }
});
