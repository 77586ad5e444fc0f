//! The `self` spec of a Rust object: Line-Up's, the object's own serial runs on a fresh object.

use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{Call, ThreadId};

use crate::object::Object;
use crate::runtime::panic_message;

/// The spec whose state is the operations applied so far: applying one more runs them all, in
/// order, on a fresh object, then the new one, and takes its result.
pub(crate) struct SelfSpec<O>(PhantomData<fn() -> O>);

impl<O: Object> SelfSpec<O> {
    pub(crate) fn new() -> Self {
        SelfSpec(PhantomData)
    }
}

impl<O: Object> Spec for SelfSpec<O> {
    type State = Vec<Call>;

    fn initial(&self) -> Vec<Call> {
        Vec::new()
    }

    fn apply(&self, state: &Vec<Call>, _thread: ThreadId, call: &Call) -> Apply<Vec<Call>> {
        let run = catch_unwind(AssertUnwindSafe(|| {
            let object = O::new();
            for earlier in state {
                object.call(earlier)?;
            }
            object.call(call)
        }));
        match run {
            Ok(Ok(value)) => {
                let mut next = state.clone();
                next.push(call.clone());
                Apply::Returns { value, state: next }
            }
            Ok(Err(message)) => Apply::Invalid(message),
            Err(payload) => Apply::Invalid(format!(
                "`{call}` panicked in a serial run: {}",
                panic_message(payload.as_ref())
            )),
        }
    }

    fn name(&self) -> String {
        "self".to_string()
    }
}
