use fgvt_sync::{Condvar, Mutex};

/// loom's `Notify`: a thread [`wait`](Notify::wait)s until another [`notify`](Notify::notify)s
/// (a notify before the wait is kept), which orders what the notifier did before what the
/// waiter does next.
#[derive(Debug, Default)]
pub struct Notify {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Notify {
    /// A `Notify` with no notification kept.
    pub fn new() -> Notify {
        Notify::default()
    }

    /// Wakes the waiter, or lets the next wait return at once.
    pub fn notify(&self) {
        *self.notified.lock().unwrap() = true;
        self.condvar.notify_one();
    }

    /// Waits until notified, and takes the notification.
    pub fn wait(&self) {
        let mut notified = self.notified.lock().unwrap();
        while !*notified {
            notified = self.condvar.wait(notified).unwrap();
        }
        *notified = false;
    }
}
