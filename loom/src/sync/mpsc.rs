//! loom's `sync::mpsc`: an unbounded channel on fgvt-sync's locks. A receive waits while the
//! channel is empty and some sender lives; each send happens before the receive that takes it.

use std::collections::VecDeque;
use std::sync::Arc;

use fgvt_sync::{Condvar, Mutex};

pub use std::sync::mpsc::{RecvError, SendError, TryRecvError};

struct Channel<T> {
    state: Mutex<State<T>>,
    condvar: Condvar,
}

struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    receiver: bool,
}

/// The sending half of a [`channel`].
pub struct Sender<T> {
    channel: Arc<Channel<T>>,
}

/// The receiving half of a [`channel`].
pub struct Receiver<T> {
    channel: Arc<Channel<T>>,
}

/// A new unbounded channel.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let channel = Arc::new(Channel {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            receiver: true,
        }),
        condvar: Condvar::new(),
    });
    (
        Sender {
            channel: Arc::clone(&channel),
        },
        Receiver { channel },
    )
}

impl<T> Sender<T> {
    /// Sends `value`; `Err` with it when the receiver is gone.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let mut state = self.channel.state.lock().unwrap();
        if !state.receiver {
            return Err(SendError(value));
        }
        state.queue.push_back(value);
        drop(state);
        self.channel.condvar.notify_one();
        Ok(())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.channel.state.lock().unwrap().senders += 1;
        Sender {
            channel: Arc::clone(&self.channel),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.channel.state.lock().unwrap_or_else(|e| e.into_inner());
        state.senders -= 1;
        let last = state.senders == 0;
        drop(state);
        if last {
            self.channel.condvar.notify_all();
        }
    }
}

impl<T> Receiver<T> {
    /// The next value, waiting for one while a sender lives; `Err` once every sender is gone
    /// and the channel is empty.
    pub fn recv(&self) -> Result<T, RecvError> {
        let mut state = self.channel.state.lock().unwrap();
        loop {
            if let Some(value) = state.queue.pop_front() {
                return Ok(value);
            }
            if state.senders == 0 {
                return Err(RecvError);
            }
            state = self.channel.condvar.wait(state).unwrap();
        }
    }

    /// The next value if there is one now.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut state = self.channel.state.lock().unwrap();
        match state.queue.pop_front() {
            Some(value) => Ok(value),
            None if state.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.channel.state.lock().unwrap_or_else(|e| e.into_inner());
        state.receiver = false;
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}
