//! A client connection's socket, owned by the connection's one task: nothing else reads or
//! writes it, so there is no lock around it and no writer task to wake.
//!
//! Answers come two ways. One the reader made in its own poll (most of them: answered from a
//! snapshot, a `ping`) is fed to the socket there, with no queue, no budget and no other
//! thread involved. One whose request waited (the editor, the disk) comes through the
//! connection's queue from the task that answered it, within the queue's byte budget (see
//! `conn`). Either way what is fed goes out in one flush once no message is waiting to be read
//! (or after [`FLUSH_EVERY`] of them), as the batched echo of `bench_rpc` does.
//!
//! Backpressure: while the socket does not take what is fed (the client is not reading), the
//! reader does not read either.

use crate::state::client::Outgoing;
use futures_util::{Sink, Stream};
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

pub(super) type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

/// Messages fed, or read, before a flush even while more are waiting to be read.
const FLUSH_EVERY: u32 = 64;

/// What reading the socket gave.
pub(super) enum Read {
    /// A message, an error, or `None` at the end of the stream.
    Msg(Option<Result<Message, WsError>>),
    /// The writing side ended (a close frame went out, or the socket failed): the client is gone.
    WriterEnded,
}

pub(super) struct Socket {
    ws: Ws,
    /// Answers of requests that waited, and requests to the client.
    rx: mpsc::Receiver<Outgoing>,
    rx_open: bool,
    /// What the reader made in its own poll, and close frames, in order.
    local: VecDeque<Outgoing>,
    /// A message the socket could not take yet (the client is not reading).
    held: Option<Outgoing>,
    /// Messages fed since the last flush.
    unflushed: u32,
    /// Messages read since the last flush.
    read: u32,
    closing: bool,
    ended: bool,
}

impl Socket {
    pub(super) fn new(ws: Ws, rx: mpsc::Receiver<Outgoing>) -> Socket {
        Socket {
            ws,
            rx,
            rx_open: true,
            local: VecDeque::new(),
            held: None,
            unflushed: 0,
            read: 0,
            closing: false,
            ended: false,
        }
    }

    /// Queues an answer made by the reader, to go out ahead of anything not yet taken from the
    /// queue.
    pub(super) fn push(&mut self, msg: Message) {
        self.local.push_back(Outgoing::unbudgeted(msg));
    }

    /// Queues a close frame after everything queued so far (answers already in the queue go
    /// out before it; nothing after it does).
    pub(super) fn push_close(&mut self, msg: Message) {
        while let Ok(m) = self.rx.try_recv() {
            self.local.push_back(m);
        }
        self.local.push_back(Outgoing::unbudgeted(msg));
    }

    /// Feeds what is waiting to the socket as far as it takes it; `Ready` when the writing side
    /// ended.
    fn feed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while !self.ended && !self.closing {
            let next = match self.held.take().or_else(|| self.local.pop_front()) {
                Some(m) => m,
                None if !self.rx_open => break,
                None => match self.rx.poll_recv(cx) {
                    Poll::Ready(Some(m)) => m,
                    Poll::Ready(None) => {
                        self.rx_open = false;
                        break;
                    }
                    Poll::Pending => break,
                },
            };
            match Pin::new(&mut self.ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => self.ended = true,
                Poll::Pending => {
                    self.held = Some(next);
                    return Poll::Pending;
                }
            }
            if self.ended {
                break;
            }
            self.closing = matches!(next.msg, Message::Close(_));
            // (The message's share of the byte budget is given back here: it is the socket's.)
            if Pin::new(&mut self.ws).start_send(next.msg).is_err() {
                self.ended = true;
            }
            self.unflushed += 1;
            if self.unflushed >= FLUSH_EVERY {
                let _ = self.flush(cx);
            }
        }
        self.end()
    }

    /// Flushes what was fed; `Ready` when the writing side ended (a close frame flushed
    /// included).
    fn flush(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.unflushed > 0 {
            match Pin::new(&mut self.ws).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = 0,
                Poll::Ready(Err(_)) => self.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
        self.read = 0;
        if self.closing && self.unflushed == 0 {
            self.ended = true;
        }
        self.end()
    }

    /// `Ready` once the writing side ended.
    fn end(&self) -> Poll<()> {
        if self.ended {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Writes and flushes what is waiting; `Ready` only when the writing side ended. (Polled
    /// beside whatever else the reader waits for.)
    pub(super) fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.feed(cx).is_ready() {
            return Poll::Ready(());
        }
        self.flush(cx)
    }

    /// The next message read, with what is waiting written meanwhile: read only while the
    /// socket takes what is written, and flushed once nothing more is there to read.
    pub(super) fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Read> {
        if self.feed(cx).is_ready() {
            return Poll::Ready(Read::WriterEnded);
        }
        // (A long run of messages that need no answer, or that are read from what tungstenite
        // has buffered already, does not hold back what was fed before them.)
        if self.read >= FLUSH_EVERY && self.flush(cx).is_ready() {
            return Poll::Ready(Read::WriterEnded);
        }
        if self.held.is_none() && !self.closing {
            if let Poll::Ready(m) = Pin::new(&mut self.ws).poll_next(cx) {
                self.read = self.read.saturating_add(1);
                return Poll::Ready(Read::Msg(m));
            }
        }
        self.flush(cx).map(|()| Read::WriterEnded)
    }

    /// After the reading ended: writes until everything is out (the queue closed: every
    /// request answered) or the writing side ended; then closes the socket.
    pub(super) async fn drain(&mut self) {
        // What tungstenite queued itself (the reply to a client's close, a pong) goes out now,
        // not only once every answer is in.
        self.unflushed = self.unflushed.max(1);
        std::future::poll_fn(|cx| {
            if self.poll_write(cx).is_ready() {
                return Poll::Ready(());
            }
            let empty = !self.rx_open && self.held.is_none() && self.local.is_empty();
            if empty && self.unflushed == 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        let _ = std::future::poll_fn(|cx| Pin::new(&mut self.ws).poll_close(cx)).await;
    }
}
