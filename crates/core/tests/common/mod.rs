//! Shared helpers for the integration tests: a real server on a loopback port (its lock file in a
//! temporary directory) and a raw WebSocket client that can craft any frame, valid or not.
#![allow(dead_code)]

pub mod bridge;

use claude_context_core::config::Config;
use claude_context_core::editor::{EditorState, NoEditor};
use claude_context_core::server::Server;
use serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// How long any single read in a test may block before the test fails (a stall, not a timing
/// assertion: every answer normally arrives in milliseconds).
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);

pub struct TestServer {
    pub server: Server,
    pub dir: tempfile::TempDir,
    /// The project root (the editor's cwd): canonical, with a couple of files.
    pub root: PathBuf,
    pub lock_dir: PathBuf,
    pub token: String,
    pub port: u16,
}

/// Starts a server with `overrides` merged over the defaults (JSON, as `setup()` passes it).
pub fn start(overrides: Value) -> TestServer {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("write");
    std::fs::write(root.join("README.md"), "# test project\n").expect("write");
    let root = root.canonicalize().expect("canonical root");
    let lock_dir = dir.path().join("ide");
    let mut cfg = json!({ "lock_dir": lock_dir, "state_dir": dir.path().join("state") });
    if let (Some(c), Some(o)) = (cfg.as_object_mut(), overrides.as_object()) {
        for (k, v) in o {
            c.insert(k.clone(), v.clone());
        }
    }
    let config = Config::from_json(&cfg.to_string()).expect("config");
    let state = EditorState {
        cwd: Some(root.clone()),
        nvim_version: "0.11.4".into(),
        ..Default::default()
    };
    let server = Server::start(config, state, Arc::new(NoEditor)).expect("server starts");
    let token = server.shared().token().to_string();
    let port = server.port();
    TestServer {
        server,
        dir,
        root,
        lock_dir,
        token,
        port,
    }
}

impl TestServer {
    pub fn client(&self) -> Raw {
        Raw::connect(self.port, &self.token)
    }
}

/// A frame as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub fin: bool,
    pub opcode: u8,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The status code of a close frame (1005 when it carries none).
    pub fn close_code(&self) -> u16 {
        assert_eq!(self.opcode, 0x8, "not a close frame: {self:?}");
        if self.payload.len() >= 2 {
            u16::from_be_bytes([self.payload[0], self.payload[1]])
        } else {
            1005
        }
    }
}

/// A raw WebSocket client over a blocking socket.
pub struct Raw {
    pub s: TcpStream,
    buf: Vec<u8>,
    next_id: u64,
}

/// Encodes a client frame. `len` overrides the length written in the header (to lie about it).
pub fn encode(
    fin: bool,
    rsv: u8,
    opcode: u8,
    payload: &[u8],
    mask: bool,
    len: Option<u64>,
) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | ((rsv & 7) << 4) | (opcode & 0xf)];
    let n = len.unwrap_or(payload.len() as u64);
    let m = if mask { 0x80 } else { 0 };
    if n < 126 {
        out.push(m | n as u8);
    } else if n <= 0xffff {
        out.push(m | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&n.to_be_bytes());
    }
    if mask {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// The bytes of a handshake request carrying `headers`.
pub fn handshake_request(port: u16, headers: &[(&str, &str)]) -> String {
    handshake_request_path(port, "/", headers)
}

/// [`handshake_request`] to request path `path`.
pub fn handshake_request_path(port: u16, path: &str, headers: &[(&str, &str)]) -> String {
    let mut req = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req
}

impl Raw {
    /// Connects and completes the handshake with `token`; panics unless the server answers 101.
    pub fn connect(port: u16, token: &str) -> Raw {
        let (status, raw) = Raw::try_connect(port, &[(AUTH_HEADER, token)]).expect("connect");
        assert!(
            status.starts_with("HTTP/1.1 101"),
            "handshake refused: {status}"
        );
        raw
    }

    /// Sends a handshake with `headers`; returns the status line and the client.
    pub fn try_connect(port: u16, headers: &[(&str, &str)]) -> io::Result<(String, Raw)> {
        Raw::try_connect_path(port, "/", headers)
    }

    /// [`Raw::try_connect`] to request path `path`.
    pub fn try_connect_path(
        port: u16,
        path: &str,
        headers: &[(&str, &str)],
    ) -> io::Result<(String, Raw)> {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(READ_TIMEOUT))?;
        s.set_write_timeout(Some(READ_TIMEOUT))?;
        s.set_nodelay(true)?;
        let mut raw = Raw {
            s,
            buf: Vec::new(),
            next_id: 1,
        };
        raw.s
            .write_all(handshake_request_path(port, path, headers).as_bytes())?;
        let end = loop {
            if let Some(i) = raw.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if raw.fill()? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "no handshake response",
                ));
            }
        };
        let head = String::from_utf8_lossy(&raw.buf[..end]).into_owned();
        raw.buf.drain(..end);
        let status = head.lines().next().unwrap_or("").to_string();
        Ok((status, raw))
    }

    fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 64 * 1024];
        let n = self.s.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    fn need(&mut self, n: usize) -> io::Result<()> {
        while self.buf.len() < n {
            if self.fill()? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed",
                ));
            }
        }
        Ok(())
    }

    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.s.write_all(bytes)
    }

    /// Sends one masked frame.
    pub fn send_frame(&mut self, fin: bool, opcode: u8, payload: &[u8]) -> io::Result<()> {
        self.send_raw(&encode(fin, 0, opcode, payload, true, None))
    }

    pub fn send_text(&mut self, text: &str) -> io::Result<()> {
        self.send_frame(true, 0x1, text.as_bytes())
    }

    /// Reads one frame from the server (which must not mask).
    pub fn read_frame(&mut self) -> io::Result<Frame> {
        self.need(2)?;
        let (b0, b1) = (self.buf[0], self.buf[1]);
        assert_eq!(b1 & 0x80, 0, "the server masked a frame");
        let (len, hdr) = match b1 & 0x7f {
            126 => {
                self.need(4)?;
                (u64::from(u16::from_be_bytes([self.buf[2], self.buf[3]])), 4)
            }
            127 => {
                self.need(10)?;
                let mut b = [0u8; 8];
                b.copy_from_slice(&self.buf[2..10]);
                (u64::from_be_bytes(b), 10)
            }
            n => (u64::from(n), 2),
        };
        let total = hdr + len as usize;
        self.need(total)?;
        let payload = self.buf[hdr..total].to_vec();
        self.buf.drain(..total);
        Ok(Frame {
            fin: b0 & 0x80 != 0,
            opcode: b0 & 0x0f,
            payload,
        })
    }

    /// The next text message (fragments joined; pings and pongs skipped).
    pub fn recv_text(&mut self) -> io::Result<String> {
        let mut data = Vec::new();
        loop {
            let f = self.read_frame()?;
            match f.opcode {
                0x9 | 0xa => continue,
                0x8 => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("server closed with {}", f.close_code()),
                    ))
                }
                _ => {
                    data.extend_from_slice(&f.payload);
                    if f.fin {
                        return String::from_utf8(data)
                            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                }
            }
        }
    }

    pub fn recv_json(&mut self) -> Value {
        let t = self.recv_text().expect("a reply");
        serde_json::from_str(&t).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {t}"))
    }

    /// Sends `text` and returns the parsed reply.
    pub fn roundtrip(&mut self, text: &str) -> Value {
        self.send_text(text).expect("send");
        self.recv_json()
    }

    /// Calls `method` and returns the whole reply; asserts the id came back.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let r = self.roundtrip(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        assert_eq!(r["id"], json!(id), "reply to another request: {r}");
        r
    }

    /// Calls a tool; returns the JSON-RPC `result` (a CallToolResult).
    pub fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert!(r.get("result").is_some(), "tools/call {name} failed: {r}");
        r["result"].clone()
    }

    /// Asserts the connection still answers (a `ping` round trip).
    pub fn assert_alive(&mut self) {
        let r = self.call("ping", json!({}));
        assert_eq!(r["result"], json!({}), "{r}");
    }

    /// Reads until a close frame arrives; returns it. Data frames before it are ignored.
    pub fn expect_close(&mut self) -> Frame {
        loop {
            let f = self
                .read_frame()
                .unwrap_or_else(|e| panic!("expected a close frame, got {e}"));
            if f.opcode == 0x8 {
                return f;
            }
        }
    }

    /// After the close frame: the server must end the TCP connection (EOF or reset), not hang.
    pub fn expect_eof(&mut self) {
        loop {
            match self.fill() {
                Ok(0) => return,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return,
                Err(e) => panic!("the server did not close the connection: {e}"),
            }
        }
    }
}

/// A `{"jsonrpc":"2.0","id":…,"method":"ping"}` request padded (inside `params`) to exactly `len`
/// bytes.
pub fn padded_ping(id: u64, len: usize) -> String {
    let base =
        json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"pad": ""}}).to_string();
    assert!(len >= base.len());
    let pad = "x".repeat(len - base.len());
    let s =
        json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"pad": pad}}).to_string();
    assert_eq!(s.len(), len);
    s
}
