use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::{unknown, Call, IntoValue, Object, Test, Value};

/// A counter whose increment reads, then writes: two increments can both read 0.
struct Counter(AtomicI64);

impl Counter {
    fn inc(&self) {
        let v = self.0.load(SeqCst);
        self.0.store(v + 1, SeqCst);
    }

    fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

/// The operations a test names: `inc()` and `get()`.
impl Object for Counter {
    fn new() -> Self {
        Counter(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "inc" => {
                self.inc();
                Ok(Value::Unit)
            }
            "get" => Ok(self.get().into_value()),
            _ => Err(unknown(call)),
        }
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
