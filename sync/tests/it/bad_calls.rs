//! A `Test` whose calls the object does not run is a mistake in the test: it panics naming
//! the call, before any exploration, instead of reporting the object as failing (issue 26).

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::{unknown, Arg, Call, IntoValue, Object, Test, Value};

struct Register(AtomicI64);

impl Object for Register {
    fn new() -> Self {
        Register(AtomicI64::new(0))
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("write", [v]) => {
                self.0.store(v.int()?, SeqCst);
                Ok(().into_value())
            }
            ("read", []) => Ok(self.0.load(SeqCst).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
#[should_panic(
    expected = "fgvt test `typo`: threads[1][0], `raed()`: unknown operation: the object's `Object::call` has no arm for `raed` with 0 arguments"
)]
fn an_unknown_operation_panics_naming_it() {
    let _ = Test::<Register>::new("typo")
        .thread(&["write(1)"])
        .thread(&["raed()"])
        .localize();
}

#[test]
#[should_panic(expected = "threads[0][0], `write(1, 2)`: unknown operation")]
fn a_wrong_arity_panics_naming_it() {
    let _ = Test::<Register>::new("arity")
        .thread(&["write(1, 2)"])
        .check();
}

#[test]
#[should_panic(expected = "final[0], `write(null)`: expected an integer, got null")]
fn a_wrong_argument_panics_naming_it() {
    let _ = Test::<Register>::new("argument")
        .thread(&["read()"])
        .finally(&["write(null)"])
        .explore();
}
