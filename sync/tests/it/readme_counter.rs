use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::Test;

/// A counter whose increment reads, then writes: two increments can both read 0.
#[derive(Default)]
struct Counter(AtomicI64);

/// Its operations are its `pub` methods: a test calls `inc()` and `get()`.
#[fgvt_sync::operations]
impl Counter {
    pub fn inc(&self) {
        let v = self.0.load(SeqCst);
        self.0.store(v + 1, SeqCst);
    }

    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

#[test]
#[should_panic(expected = "NOT LINEARIZABLE")]
fn two_increments_are_linearizable() {
    Test::<Counter>::new("counter")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .assert_linearizable();
}
