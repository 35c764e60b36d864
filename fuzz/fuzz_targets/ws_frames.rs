//! The server side of the WebSocket frame and message decoder, with the bridge's own settings
//! (tungstenite, as tokio-tungstenite drives it in the bridge): arbitrary bytes after the
//! handshake must give messages or errors, never a panic, an allocation beyond the message limit,
//! or a text message that is not UTF-8.
#![no_main]

use claude_context_core::server::ws_config;
use libfuzzer_sys::fuzz_target;
use std::io::{self, Cursor, Read, Write};
use tungstenite::protocol::{Role, WebSocket};
use tungstenite::Message;

const MAX: usize = 1 << 16;

/// Reads the fuzz input, then reports WouldBlock (the socket has no more data for now) once and
/// EOF after; writes go nowhere.
struct Stream {
    input: Cursor<Vec<u8>>,
    blocked_once: bool,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.input.read(buf)?;
        if n == 0 && !self.blocked_once {
            self.blocked_once = true;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
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
    let stream = Stream {
        input: Cursor::new(data.to_vec()),
        blocked_once: false,
    };
    let mut ws = WebSocket::from_raw_socket(stream, Role::Server, Some(ws_config(MAX)));
    for _ in 0..10_000 {
        match ws.read() {
            Ok(Message::Text(t)) => {
                assert!(t.len() <= MAX);
                assert!(std::str::from_utf8(t.as_bytes()).is_ok());
                let _ = ws.send(Message::text("{}"));
            }
            Ok(Message::Binary(b)) => assert!(b.len() <= MAX),
            Ok(Message::Ping(p)) | Ok(Message::Pong(p)) => assert!(p.len() <= 125),
            Ok(Message::Close(_)) | Ok(Message::Frame(_)) => {}
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => {
                // What the bridge does on an error: queue a close frame and stop.
                let _ = ws.close(None);
                break;
            }
        }
    }
});
