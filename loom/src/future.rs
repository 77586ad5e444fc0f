//! loom's `future` (the `futures` feature): [`block_on`] and [`AtomicWaker`], on fgvt-sync's
//! atomics and locks.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use fgvt_sync::atomic::{
    AtomicBool,
    Ordering::{AcqRel, Acquire, Release},
};
use fgvt_sync::Mutex;

/// Wakes [`block_on`]'s thread: a flag its next turn reads.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Release);
    }
}

/// Runs `future` to completion on the calling thread: polls it, and while it is pending, waits
/// (a waiting loop, one state to fgvt) until its waker is woken, then polls again.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(Arc::clone(&flag));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        // Waits by loads (a turn that writes nothing is one state to fgvt), then takes the
        // wake: one that comes after the take is for the poll that follows, which sees it.
        while !flag.0.load(Acquire) {
            fgvt_sync::hint::spin_loop();
        }
        flag.0.swap(false, AcqRel);
    }
}

/// loom's `AtomicWaker`: one waker, registered by the task that waits and woken by another.
#[derive(Debug, Default)]
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// No waker registered.
    pub fn new() -> AtomicWaker {
        AtomicWaker::default()
    }

    /// Registers `waker` (a clone of it), replacing the one before.
    pub fn register_by_ref(&self, waker: &Waker) {
        *self.waker.lock().unwrap() = Some(waker.clone());
    }

    /// Registers `waker`, replacing the one before.
    pub fn register(&self, waker: Waker) {
        *self.waker.lock().unwrap() = Some(waker);
    }

    /// Wakes the registered waker, if any, and takes it.
    pub fn wake(&self) {
        if let Some(waker) = self.take_waker() {
            waker.wake();
        }
    }

    /// Takes the registered waker, if any.
    pub fn take_waker(&self) -> Option<Waker> {
        self.waker.lock().unwrap().take()
    }
}
